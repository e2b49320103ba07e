/**
 * `cdk8s-operator deploy`'s last wait, `/readyz` read through the API server's pod proxy
 * (`pods/NAME:8081/proxy/readyz`), answered by a real operator process.
 *
 * kwok runs no container, and the API server refuses to proxy to a loopback or link-local address, so
 * the Pod's address must be one of this machine's own that is neither: the first non-internal IPv4
 * address of its interfaces. A fake Node of this file's own gets `spec.podCIDR` `<that address − 1>/32`
 * (kwok hands out the addresses after a CIDR's first one, in order: its first Pod gets exactly that
 * address), the other Nodes are cordoned, and `cdk8s-operator run` of the same operator listens on
 * `<address>:8081` (the port of the Deployment's readiness probe) on this machine. A machine with no such
 * address fails this test, saying so: it is never skipped.
 *
 * Checked, in this order:
 * - deployed while no process listens there: deploy still succeeds, saying in a `note:` that `/readyz`
 *   is not reachable through the pod proxy (the Pod's Ready condition is reported);
 * - `run` started on that address (its own `/readyz` answers 200 directly);
 * - deployed again: `/readyz answered 200 (through the API server's pod proxy)` for the Pod, no note.
 */
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runDeploy } from '../../lib/cli/deploy-command.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { fakeNode } from '../../lib/testing/kwok-node.js';
import { PROBES_PORT } from '../../lib/operator/manifests/operator-deployment.js';
import { killCliProcesses, startCli } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'operators/index.ts';
const APP = 'app-operator';
const NAMESPACE = 'app-operator-system';
const NODE = 'readyz-node';

let plane: ControlPlane;
let admin: ApiClient;

/** The first IPv4 address of this machine's interfaces that is neither internal (loopback) nor link-local. */
function dialableAddress(): string {
  const addresses = Object.values(networkInterfaces()).flat().filter((a) => a !== undefined);
  const found = addresses.find((a) => a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.'));
  if (!found) {
    throw new Error(`no non-loopback, non-link-local IPv4 address on this machine (${addresses.map((a) => a.address).join(', ')}): `
      + "the API server's pod proxy could not reach a process here");
  }
  return found.address;
}

/** `a.b.c.d` minus one, as a dotted quad. */
function previousAddress(address: string): string {
  const n = address.split('.').reduce((sum, octet) => sum * 256 + Number(octet), 0) - 1;
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

async function deploy(): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = { code: -1, stdout: '', stderr: '' };
  run.code = await runDeploy(
    { kubeconfig: plane.kubeconfigPath, module: MODULE, operators: APP, timeoutMs: 240_000 },
    { cwd: REPO, writeStdout: (t) => (run.stdout += t), writeStderr: (t) => (run.stderr += t), env: {} },
  );
  if (run.code !== 0) throw new Error(`deploy exited ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  return run;
}

beforeAll(async () => {
  plane = await startControlPlane();
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
}, 10 * 60_000);

afterAll(async () => {
  await killCliProcesses();
  admin?.close();
  await plane?.stop();
});

test("GIVEN the operator's Pod at an address of this machine WHEN deploy runs before and after the operator listens there THEN /readyz is first unreachable (a note) and then answered 200 through the API server's pod proxy", async () => {
  const address = dialableAddress();

  // Every other Node cordoned; a fake Node whose first Pod gets `address`.
  const nodes = await admin.request<{ items: KubeObject[] }>('GET', '/api/v1/nodes');
  for (const node of nodes.items) {
    await admin.request('PATCH', `/api/v1/nodes/${node.metadata!.name}`, { body: { spec: { unschedulable: true } }, contentType: 'application/merge-patch+json' });
  }
  const node = fakeNode(NODE);
  await admin.request('POST', '/api/v1/nodes', { body: { ...node, spec: { podCIDR: `${previousAddress(address)}/32` } } });
  await eventually(`fake Node ${NODE} Ready`, async () => {
    const ready = await admin.request('GET', `/api/v1/nodes/${NODE}`);
    expect((ready.status as { conditions?: { type: string; status: string }[] }).conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    return true;
  }, { timeoutMs: 120_000 });

  // Nothing listens on the Pod's address yet: deploy succeeds and says /readyz was not reachable.
  const first = await deploy();
  const pods = await admin.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
  expect(pods.items).toHaveLength(1);
  const pod = pods.items[0]!;
  expect((pod.spec as { nodeName?: string }).nodeName).toBe(NODE);
  expect((pod.status as { podIP?: string }).podIP).toBe(address);
  expect(first.stderr).toContain(`note: Pod ${NAMESPACE}/${pod.metadata!.name}: Ready, but /readyz is not reachable through the API server's pod proxy`);

  // The operator, as the Pod's container would run it, listening on the Pod's address.
  const operator = startCli([
    'run', '--module', MODULE, '--operators', APP, '--kubeconfig', plane.kubeconfigPath,
    '--health-probe-bind-address', `${address}:${PROBES_PORT}`, '--metrics-bind-address', '0',
  ]);
  await eventually(`run's /readyz on ${address}:${PROBES_PORT}`, async () => {
    if (operator.child.exitCode !== null) throw new Error(`run exited ${operator.child.exitCode}:\n${operator.output()}`);
    const response = await fetch(`http://${address}:${PROBES_PORT}/readyz`).catch((err: Error) => ({ status: err.message }));
    expect(response.status).toBe(200);
    return true;
  }, { timeoutMs: 120_000 });

  // Deployed again: the same Pod's /readyz answers through the API server's pod proxy.
  const second = await deploy();
  expect(second.stderr).toContain(`Pod ${NAMESPACE}/${pod.metadata!.name}: Ready, /readyz answered 200 (through the API server's pod proxy)`);
  expect(second.stderr).not.toContain('note: Pod');
}, 9 * 60_000);
