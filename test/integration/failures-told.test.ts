/**
 * Every failure is told, read from a real `node bin/cdk8s-operator.js run --module …` process at the
 * default log level, against the run's shared control plane (issue 22 items 1–3):
 * - render() throws → an error line `Reconciler error` (CR, step render), Stalled=True, a Warning Event;
 * - render() or finalize() throws a TerminalError → the same, `terminal: true`, and no requeue;
 * - the API server refuses the status write → an error line with its message, a Warning Event
 *   StatusWriteFailed, Stalled=True StatusWriteFailed (the minimal status), the metric.
 *
 * The refusal is real: the CRD installed here is the operator's own with `status.url` taken out of its
 * schema, so server-side apply of the status render returns fails with "field not declared in schema"
 * (what a spoke version lacking the hub's status fields answers, issue 22).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { TEST_KUBECONFIG_ENV, createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { killCliProcesses, startCli, type LogLine } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { FailingOperator } from './fixtures/failing-operator.js';

const MODULE = 'test/integration/fixtures/failing-operator.ts';

let admin: ApiClient;
let dir: string;

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig() });
  dir = await mkdtemp(join(tmpdir(), 'failures-told-'));
  const crd = new FailingOperator(new App()).customResourceDefinition.toJson() as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } } }[] };
  };
  for (const version of crd.spec.versions) {
    const status = version.schema.openAPIV3Schema.properties.status.properties;
    expect(status.url).toBeDefined(); // the operator declares it; this CRD does not
    delete status.url;
  }
  const file = join(dir, 'failing-crd.json');
  await writeFile(file, JSON.stringify(crd));
  await installCRDs(testKubeConfig(), [file], 60_000);
}, 120_000);

afterAll(async () => {
  await killCliProcesses();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const path = (ns: string, name = '') => `/apis/failing.example.com/v1/namespaces/${ns}/failings${name ? `/${name}` : ''}`;

async function condition(ns: string, name: string, type: string): Promise<{ status: string; reason: string; message: string } | undefined> {
  const cr = await admin.request<KubeObject>('GET', path(ns, name)).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
  return ((cr?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

async function warning(ns: string, name: string, reason: string): Promise<{ note: string } | undefined> {
  const list = await admin.request<{ items: { type: string; reason: string; note: string; regarding: { name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
  return list.items.find((e) => e.type === 'Warning' && e.reason === reason && e.regarding.name === name);
}

test('GIVEN failing renders, a refused status write and a terminal finalize THEN each gives an error line at the default level, a Warning Event and a Stalled condition; terminal ones are not requeued', async () => {
  const ns = await createTestNamespace('told', admin);
  const metricsPort = await freePort();
  const run = startCli(['run', '--module', MODULE, '--kubeconfig', process.env[TEST_KUBECONFIG_ENV]!, '-n', ns, '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--metrics-secure=false', '--health-probe-bind-address', '0']);
  const { child, exited } = run;
  /** The process's JSON log lines at error level (pino 50), about CR `name`. */
  const errorsAbout = (name: string): LogLine[] =>
    run.logLines().filter((l) => l.level >= 50 && l.name === name);
  const context = () => `\n--- run output ---\n${run.output().slice(-4000)}`;
  const create = (name: string, mode: string) =>
    admin.request('POST', path(ns), { body: { apiVersion: 'failing.example.com/v1', kind: 'Failing', metadata: { name, namespace: ns }, spec: { mode } } });
  try {
    // 1. render() throws a TerminalError
    await create('terminal', 'terminal');
    const terminalStalled = await eventually('terminal Stalled', async () => (await condition(ns, 'terminal', 'Stalled'))?.status === 'True' && condition(ns, 'terminal', 'Stalled'), { timeoutMs: 90_000, context });
    expect(terminalStalled).toMatchObject({ reason: 'RenderFailed', message: expect.stringMatching(/^render\(\) threw: spec\.mode terminal cannot be rendered/) });
    const [terminalLine] = await eventually('terminal error line', async () => errorsAbout('terminal').length > 0 && errorsAbout('terminal'), { context });
    expect(terminalLine).toMatchObject({ msg: 'Reconciler error', cr: `Failing ${ns}/terminal`, step: 'render', reason: 'RenderFailed', terminal: true });
    expect(await eventually('terminal event', () => warning(ns, 'terminal', 'RenderFailed'))).toBeDefined();

    // 2. render() throws a plain Error: retried, each failure an error line
    await create('throws', 'throw');
    const throwsLines = await eventually('throws error lines', async () => errorsAbout('throws').length >= 2 && errorsAbout('throws'), { context });
    expect(throwsLines[0]).toMatchObject({ msg: 'Reconciler error', cr: `Failing ${ns}/throws`, step: 'render', reason: 'RenderFailed', terminal: false });
    expect((throwsLines[0].err as { message: string }).message).toContain('render failed on purpose');
    // The stack where render threw, the operator module's file:line first (tsx maps it to the .ts line);
    // a retry failing the same way is one short line, without it.
    expect((throwsLines[0].err as { stack: string }).stack.split('\n')[1]).toMatch(/^\s+at .*fixtures\/failing-operator\.ts:32:\d+\)?$/);
    expect(throwsLines[1]).toMatchObject({ msg: 'Reconciler error (again)', step: 'render', reason: 'RenderFailed', message: expect.stringContaining('render failed on purpose') });
    expect(throwsLines[1].err).toBeUndefined();
    expect(await condition(ns, 'throws', 'Stalled')).toMatchObject({ status: 'True', reason: 'RenderFailed' });
    expect(await eventually('throws event', () => warning(ns, 'throws', 'RenderFailed'))).toBeDefined();

    // 3. the API server refuses the status write (status.url is not in the installed schema)
    await create('url', 'url');
    const refused = await eventually('url StatusWriteFailed', async () => (await condition(ns, 'url', 'Stalled'))?.reason === 'StatusWriteFailed' && condition(ns, 'url', 'Stalled'), { timeoutMs: 90_000, context });
    expect(refused).toMatchObject({ status: 'True', message: expect.stringContaining('.status.url') });
    const urlLines = await eventually('url error lines', async () => errorsAbout('url').some((l) => l.msg === 'Reconciler error') && errorsAbout('url'), { context });
    expect(urlLines.find((l) => l.msg === 'status write refused')).toMatchObject({ step: 'status', serverMessage: expect.stringContaining('.status.url') });
    expect(urlLines.find((l) => l.msg === 'Reconciler error')).toMatchObject({ step: 'status', reason: 'StatusWriteFailed', terminal: false, code: expect.any(Number) });
    const event = await eventually('url event', () => warning(ns, 'url', 'StatusWriteFailed'));
    expect(event.note).toMatch(/^status write refused \(\d+ \w+\): .*\.status\.url/);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(Number(/cdk8s_operator_status_write_errors_total\{controller="failing-operator"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    // 4. finalize() throws a TerminalError: the finalizer stays, Stalled=True FinalizeFailed
    await create('fin', 'terminal-finalize');
    await eventually('fin Ready', async () => (await condition(ns, 'fin', 'Ready'))?.status === 'True', { timeoutMs: 90_000, context });
    await admin.request('DELETE', path(ns, 'fin'));
    const finStalled = await eventually('fin Stalled', async () => (await condition(ns, 'fin', 'Stalled'))?.reason === 'FinalizeFailed' && condition(ns, 'fin', 'Stalled'), { timeoutMs: 90_000, context });
    expect(finStalled).toMatchObject({ status: 'True', message: expect.stringMatching(/^finalize cannot clean up on purpose/) });
    const [finLine] = await eventually('fin error line', async () => errorsAbout('fin').length > 0 && errorsAbout('fin'), { context });
    expect(finLine).toMatchObject({ msg: 'Reconciler error', step: 'finalize', reason: 'FinalizeFailed', terminal: true });
    expect(((await admin.request<KubeObject>('GET', path(ns, 'fin'))).metadata?.finalizers ?? [])).toContain('operator.cdk8s.io/failing-operator');

    // Not requeued: a terminal CR fails once per change of the CR (its creation, our finalizer added,
    // its deletion), never again by itself, while `throws` keeps being retried with backoff.
    const terminalCount = errorsAbout('terminal').length;
    const finCount = errorsAbout('fin').length;
    const throwsCount = errorsAbout('throws').length;
    await eventually('throws retried once more', async () => errorsAbout('throws').length > throwsCount, { context });
    expect(errorsAbout('terminal')).toHaveLength(terminalCount);
    expect(errorsAbout('fin')).toHaveLength(finCount);
    expect(terminalCount).toBeLessThanOrEqual(2);
    expect(finCount).toBeLessThanOrEqual(2);
    const after = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(Number(/controller_runtime_terminal_reconcile_errors_total\{controller="failing-operator"\} (\d+)/.exec(after)?.[1])).toBe(terminalCount + finCount);
  } finally {
    child.kill('SIGTERM');
    await exited;
    // the finalizer left behind on purpose: take it off so the namespace's objects can go
    await admin.request('PATCH', path(ns, 'fin'), { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
  }
}, 300_000);
