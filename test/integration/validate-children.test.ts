/**
 * `run --validate-children` (issue 23), read from a real `node bin/cdk8s-operator.js run` process against
 * the run's shared control plane: a CR whose render holds a child the API server would refuse (a headless
 * Service with two unnamed ports) becomes Stalled=True `ChildRefused` with the server's own field path and
 * message, a Warning Event and an error log line, and none of its children is applied; a valid CR beside
 * it converges; fixing the spec makes the refused CR Ready. The server's own answer to the same Service
 * (a dry-run create) is read and compared, so the message is the server's, not a guess.
 * A validator that cannot load stops `run --validate-children` at start, naming the file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { ApiError, type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { VALIDATOR_WASM_ENV } from '../../lib/validator/validator-wasm-file.js';
import { TEST_KUBECONFIG_ENV, createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { type CliProcess, killCliProcesses, startCli } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';
import { HeadlessServiceOperator } from './fixtures/headless-service-operator.js';

const MODULE = 'test/integration/fixtures/headless-service-operator.ts';

let admin: ApiClient;
let dir: string;

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig() });
  dir = await mkdtemp(join(tmpdir(), 'validate-children-'));
  const file = join(dir, 'headless-crd.json');
  await writeFile(file, JSON.stringify(new HeadlessServiceOperator(new App()).customResourceDefinition.toJson()));
  await installCRDs(testKubeConfig(), [file], 60_000);
}, 120_000);

afterAll(async () => {
  await killCliProcesses();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts `run --module … --validate-children` in namespace `ns`; collects its output. */
function startRun(ns: string, env: NodeJS.ProcessEnv = {}): CliProcess {
  return startCli(['run', '--module', MODULE, '--validate-children', '--kubeconfig', process.env[TEST_KUBECONFIG_ENV]!, '-n', ns, '--metrics-bind-address', '0', '--health-probe-bind-address', '0'], env);
}

const crPath = (ns: string, name = '') => `/apis/headless.example.com/v1/namespaces/${ns}/headlesses${name ? `/${name}` : ''}`;
const servicePath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/services${name ? `/${name}` : ''}`;

async function condition(ns: string, name: string, type: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const cr = await admin.request<KubeObject>('GET', crPath(ns, name)).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
  return ((cr?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

async function serviceExists(ns: string, name: string): Promise<boolean> {
  return admin.request('GET', servicePath(ns, name)).then(() => true, (err) => (isApiError(err, 404) ? false : Promise.reject(err)));
}

test('GIVEN run --validate-children WHEN a render holds a Service the API server would refuse THEN its CR is Stalled ChildRefused with the server\'s words, an Event and an error line, nothing of it is applied, and a valid CR beside it converges', async () => {
  const ns = await createTestNamespace('validate', admin);
  const run = startRun(ns);
  const context = () => `\n--- run output ---\n${run.output().slice(-4000)}`;
  const create = (name: string, spec: object) =>
    admin.request('POST', crPath(ns), { body: { apiVersion: 'headless.example.com/v1', kind: 'Headless', metadata: { name, namespace: ns }, spec } });
  try {
    await create('bad', { ports: [5432, 8008], named: false });
    await create('good', { ports: [5432, 8008], named: true });

    // The server's own verdict on the Service that `bad` renders (dry run: nothing is stored).
    const refusedByServer = await admin
      .request('POST', `${servicePath(ns)}?dryRun=All`, {
        body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'bad-headless', namespace: ns }, spec: { clusterIP: 'None', selector: { app: 'bad' }, ports: [{ port: 5432 }, { port: 8008 }] } },
      })
      .then(() => undefined, (err: unknown) => err);
    expect(refusedByServer).toBeInstanceOf(ApiError);
    const causes = ((refusedByServer as ApiError).status?.details as { causes?: { field: string; message: string }[] } | undefined)?.causes ?? [];
    const serverCause = causes.find((c) => c.field === 'spec.ports[1].name');
    expect(serverCause).toBeDefined();

    const stalled = await eventually('bad Stalled', async () => (await condition(ns, 'bad', 'Stalled'))?.status === 'True' && condition(ns, 'bad', 'Stalled'), { timeoutMs: 120_000, context });
    expect(stalled).toMatchObject({ reason: 'ChildRefused' });
    expect(stalled!.message).toContain(`Service ${ns}/bad-headless: spec.ports[1].name: ${serverCause!.message.replace(/^spec\.ports\[1\]\.name: /, '')}`);
    expect(await condition(ns, 'bad', 'Ready')).toMatchObject({ status: 'False' });

    const event = await eventually('ChildRefused event', async () => {
      const list = await admin.request<{ items: { type: string; reason: string; note: string; regarding: { name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return list.items.find((e) => e.type === 'Warning' && e.reason === 'ChildRefused' && e.regarding.name === 'bad');
    }, { context });
    expect(event.note).toContain('spec.ports[1].name');
    const errorLine = await eventually('error line', async () => run.logLines().find((l) => l.level >= 50 && l.name === 'bad'), { context });
    expect(errorLine).toMatchObject({ msg: 'Reconciler error', step: 'render', reason: 'ChildRefused', terminal: true });

    await eventually('good Ready', async () => (await condition(ns, 'good', 'Ready'))?.status === 'True', { timeoutMs: 120_000, context });
    expect(await serviceExists(ns, 'good-headless')).toBe(true);
    expect(await serviceExists(ns, 'bad-headless')).toBe(false); // refused before any apply

    // Fixing the spec: a new render, a new verdict.
    await admin.request('PATCH', crPath(ns, 'bad'), { body: { spec: { named: true } }, contentType: 'application/merge-patch+json' });
    await eventually('bad Ready after the fix', async () => (await condition(ns, 'bad', 'Ready'))?.status === 'True', { timeoutMs: 120_000, context });
    expect(await serviceExists(ns, 'bad-headless')).toBe(true);
    expect(await condition(ns, 'bad', 'Stalled')).toMatchObject({ status: 'False' });
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
}, 300_000);

test('GIVEN run --validate-children WHEN the validator file is corrupt THEN the run exits 1 at start, naming the file', async () => {
  const corrupt = join(dir, 'corrupt-validator.wasm');
  await writeFile(corrupt, 'not a WebAssembly module');
  const run = startRun('default', { [VALIDATOR_WASM_ENV]: corrupt });
  const code = await run.exited;
  expect(code).toBe(1);
  expect(run.output()).toContain(corrupt);
  expect(run.output()).toContain('cannot start');
}, 120_000);
