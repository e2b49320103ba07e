/**
 * Two replicas of `cdk8s-operator run --leader-elect --webhook-bind-address …` (in-process): the standby
 * serves the webhooks too, and keeps serving while leadership moves to it. Self-managed certificates:
 * the first replica creates the Secret and writes the CA into the caBundles; the second loads the same.
 *
 * Own control plane: the memcached webhook configurations (failurePolicy: Fail) would refuse other test
 * files' Memcached writes once these replicas stop.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { runRun } from '../../lib/cli/run-command.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { createCertificateAuthority } from '../../lib/runtime/webhook/x509.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';

const NS = 'leadership';
const LEASE = 'memcached-webhook-test';

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'webhook-leadership-'));
  for (const name of [NS, 'memcached-operator-system']) {
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  }
}, 10 * 60_000);

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Replica {
  readonly stop: AbortController;
  readonly exit: Promise<number>;
  readonly started: Promise<void>;
}

function replica(name: string, webhookPort: number, healthProbeBindAddress = '0'): Replica {
  const stop = new AbortController();
  let started!: () => void;
  const ready = new Promise<void>((r) => (started = r));
  const exit = runRun(
    {
      operators: 'memcached-operator',
      kubeconfig: plane.kubeconfigPath,
      metricsBindAddress: '0',
      healthProbeBindAddress,
      leaderElect: true,
      leaderElectionNamespace: NS,
      leaderElectionId: LEASE,
      webhookBindAddress: `127.0.0.1:${webhookPort}`,
      webhookCertHosts: '127.0.0.1',
      gracefulShutdownTimeoutMs: 5000,
    },
    { signal: stop.signal, onStarted: () => started(), logger: pino(pino.destination({ dest: join(dir, `${name}.log`), sync: true })) },
  );
  return { stop, exit, started: ready };
}

async function holder(): Promise<string | undefined> {
  const lease = await admin.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE}`).catch(() => undefined);
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
}

test('GIVEN two replicas with leader election WHEN leadership moves from the first to the second THEN the webhooks, pointed at the second, answer every request throughout', async () => {
  const [portA, portB, probesB] = [await freePort(), await freePort(), await freePort()];
  // The CRD and webhook configurations point at replica B; the CA is a stand-in until A writes its own.
  const file = join(dir, 'memcached.json');
  const operator = new MemcachedOperator(new App());
  const objects = operator.node.findAll().filter((c) => 'kind' in c && ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes((c as { kind: string }).kind));
  await writeFile(file, objects.map((o) => JSON.stringify((o as unknown as { toJson(): unknown }).toJson())).join('\n---\n'));
  await installCRDs(plane.kubeConfig, [file], 60_000, { webhook: { url: `https://127.0.0.1:${portB}`, caPem: createCertificateAuthority('stand-in', { notAfter: new Date(Date.now() + 86400_000) }).certPem } });

  const a = replica('a', portA);
  await a.started;
  await eventually('replica a leads', async () => (await holder()) !== undefined);
  const leaderBefore = await holder();
  const b = replica('b', portB, `127.0.0.1:${probesB}`);
  await b.started;
  // The standby is Ready, its webhook server counted in /readyz.
  const readyz = await fetch(`http://127.0.0.1:${probesB}/readyz?verbose`);
  expect(readyz.status).toBe(200);
  expect(await readyz.text()).toContain('[+]webhooks ok');

  // Through the standby: a v1alpha1 create (validating + mutating hooks, then /convert to store v1beta1).
  const body = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'through-standby' }, spec: { size: 1 } };
  await eventually('the standby serves admission and conversion', async () => {
    const dry = await admin.request('POST', `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds`, { body, query: { dryRun: 'All' } });
    return dry.metadata?.labels?.['app.kubernetes.io/name'] === 'memcached';
  });
  await admin.request('POST', `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds`, { body });
  const created = await admin.request('GET', `/apis/cache.example.com/v1beta1/namespaces/${NS}/memcacheds/through-standby`);
  expect(created.metadata?.labels).toEqual({ 'app.kubernetes.io/name': 'memcached' });
  expect(await holder()).toBe(leaderBefore);

  let failures = 0;
  let served = 0;
  const errors: string[] = [];
  const stopTraffic = new AbortController();
  const traffic = (async () => {
    for (let i = 0; !stopTraffic.signal.aborted; i++) {
      try {
        await admin.request('PATCH', `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds/through-standby`, {
          body: { spec: { size: (i % 2) + 1 } },
          contentType: 'application/merge-patch+json',
        });
        served++;
      } catch (err) {
        failures++;
        errors.push((err as Error).message);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  })();
  try {
    // Leadership moves: A stops gracefully and releases the lease; B takes it at its next retry.
    a.stop.abort();
    expect(await a.exit).toBe(0);
    await eventually('replica b leads', async () => {
      const now = await holder();
      return now !== undefined && now !== '' && now !== leaderBefore;
    }, { timeoutMs: 60_000 });
    const servedAtTakeover = served;
    await eventually('writes after the takeover', async () => served >= servedAtTakeover + 3);
  } finally {
    stopTraffic.abort();
    await traffic;
  }
  expect(errors).toEqual([]);
  expect(failures).toBe(0);
  expect(served).toBeGreaterThan(3);
  b.stop.abort();
  expect(await b.exit).toBe(0);
}, 300_000);
