/**
 * Failures through the real layers (issue 22): a real Operator construct (test/integration/fixtures/
 * failing-operator.ts) rendered by lib/operator's renderCustomResource, the real Reconciler, Controller,
 * Workqueue, EventRecorder and OperatorMetrics, wired by the reconciler harness; only the API client
 * is the recording fake and the informers are in-memory caches (test/support/reconciler-harness.ts;
 * the same flows run against the real API server in test/integration/failures-told.test.ts).
 */
import { App } from 'cdk8s';
import type { CustomResource } from '../../../lib/operator/custom-resource.js';
import { renderCustomResource } from '../../../lib/operator/render/render-children.js';
import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { RequestTimeoutError } from '../../../lib/runtime/client/request-timeout-error.js';
import { OperatorMetrics } from '../../../lib/runtime/metrics/metrics.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';
import { FailingOperator } from '../../integration/fixtures/failing-operator.js';
import type { FakeKubeClient } from '../../support/fake-kube-client.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

function setup() {
  const operator = new FailingOperator(new App());
  // The rate limiter records every retry it is asked for; 1 ms, so a retry would run at once (a timer,
  // so the test gets its turn between retries).
  const retries: string[] = [];
  const failures = new Map<string, number>();
  const rateLimiter = {
    when: (key: string) => (retries.push(key), failures.set(key, (failures.get(key) ?? 0) + 1), 1),
    forget: (key: string) => void failures.delete(key),
    numRequeues: (key: string) => failures.get(key) ?? 0,
  };
  const queue = new Workqueue({ name: operator.operatorName, rateLimiter });
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  const logs: LogLine[] = [];
  const line = (level: string) => (fields: object, msg: string) => void logs.push({ level, fields: fields as Record<string, unknown>, msg });
  const logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
  const { client, crs, events, controller } = reconcilerHarness({
    operator,
    render: (cr, inputs) => renderCustomResource(operator, cr as unknown as CustomResource, inputs),
    statusFields: ['url'],
    logger,
    controller: { queue, metrics },
  });
  return { operator, client, crs, queue, retries, metrics, logs, events: events!, controller: controller! };
}

const failing = (mode: string, meta: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject => ({
  apiVersion: 'failing.example.com/v1',
  kind: 'Failing',
  metadata: { name: 'f', namespace: 'ns', uid: 'uid-f', generation: 1, resourceVersion: '1', ...meta },
  spec: { mode },
});

async function metric(metrics: OperatorMetrics, name: string): Promise<number> {
  const text = await metrics.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{controller="failing-operator"}`));
  return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? NaN);
}

/** Resolves once `check` holds, polling the event loop (no wall-clock wait). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (await check()) return;
    await new Promise(setImmediate);
  }
  throw new Error('condition never held');
}

const stalledOf = (client: FakeKubeClient) =>
  client.calls.filter((c) => c.path.endsWith('/status')).at(-1)?.body.status.conditions.find((c: { type: string }) => c.type === 'Stalled');

describe('failures through Operator → renderCustomResource → Reconciler → Controller → Workqueue', () => {
  test('GIVEN render() throws a TerminalError THEN Stalled=True, a Warning event, an error line, the terminal metric, and no requeue', async () => {
    const { client, crs, queue, retries, metrics, logs, events, controller } = setup();
    controller.startWorkers();
    crs.put(failing('terminal'));
    await until(async () => (await metric(metrics, 'controller_runtime_terminal_reconcile_errors_total')) === 1);
    await events.flush();
    await controller.stop(); // drains: a retry would have been queued (at 0 ms) before the workers exit
    expect(retries).toEqual([]);
    expect(queue.numRequeues('ns/f')).toBe(0);
    expect(await metric(metrics, 'controller_runtime_reconcile_errors_total')).toBe(1);
    expect(stalledOf(client)).toMatchObject({ status: 'True', reason: 'RenderFailed', message: expect.stringMatching(/^render\(\) threw: spec\.mode terminal cannot be rendered/) });
    const event = client.calls.find((c) => c.path.includes('/events'))!;
    expect(event.body).toMatchObject({ type: 'Warning', reason: 'RenderFailed', action: 'Render' });
    const errors = logs.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: 'Reconciler error', fields: { cr: 'Failing ns/f', step: 'render', reason: 'RenderFailed', terminal: true } });
  });

  test('GIVEN render() throws a plain Error THEN an error line names the CR and the step, and it is retried with backoff', async () => {
    const { crs, retries, logs, controller } = setup();
    controller.startWorkers();
    crs.put(failing('throw'));
    await until(() => retries.length >= 2);
    controller.abort();
    const error = logs.find((l) => l.level === 'error')!;
    expect(error).toMatchObject({ msg: 'Reconciler error', fields: { cr: 'Failing ns/f', step: 'render', reason: 'RenderFailed', terminal: false, retries: 1 } });
    expect((error.fields.err as { message: string }).message).toContain('render failed on purpose');
  });

  test('GIVEN render() throws a plain Error THEN the error line keeps its stack, first frame the throw in the operator file; the condition stays one line', async () => {
    const { client, crs, retries, logs, controller } = setup();
    controller.startWorkers();
    crs.put(failing('throw'));
    await until(() => retries.length >= 1);
    controller.abort();
    const err = logs.find((l) => l.level === 'error' && l.msg === 'Reconciler error')!.fields.err as { message: string; stack: string };
    const [first, frame] = err.stack.split('\n');
    expect(first).toBe('Error: render failed on purpose (spec.mode is throw)');
    expect(frame).toMatch(/^\s+at .*test\/integration\/fixtures\/failing-operator\.ts:32:\d+\)?$/);
    expect(stalledOf(client).message).not.toContain('\n');
  });

  test('GIVEN render() fails the same way on each retry THEN the first failure is logged with its stack, each retry as one short error line without it (the stack at debug)', async () => {
    const { crs, retries, logs, controller } = setup();
    controller.startWorkers();
    crs.put(failing('throw'));
    await until(() => retries.length >= 3);
    controller.abort();
    const errors = logs.filter((l) => l.level === 'error');
    expect(errors[0]).toMatchObject({ msg: 'Reconciler error', fields: { retries: 1, err: { stack: expect.stringContaining('failing-operator.ts:32:') } } });
    expect(errors[1]).toMatchObject({ msg: 'Reconciler error (again)', fields: { cr: 'Failing ns/f', step: 'render', reason: 'RenderFailed', retries: 2 } });
    expect(errors[1].fields.message).toMatch(/render failed on purpose/);
    expect(errors.slice(1).every((l) => l.fields.err === undefined && !String(l.fields.message).includes('\n'))).toBe(true);
    expect(logs.filter((l) => l.level === 'debug' && l.msg === 'Reconciler error').map((l) => l.fields.retries)).toContain(2);
  });

  test('GIVEN finalize() throws a TerminalError on deletion THEN Stalled=True FinalizeFailed, the finalizer kept, no requeue', async () => {
    const { client, crs, retries, metrics, logs, controller } = setup();
    controller.startWorkers();
    const finalizer = 'operator.cdk8s.io/failing-operator';
    crs.put(failing('terminal-finalize', { finalizers: [finalizer], deletionTimestamp: '2026-01-01T00:00:00Z' }));
    await until(async () => (await metric(metrics, 'controller_runtime_terminal_reconcile_errors_total')) === 1);
    await controller.stop();
    expect(retries).toEqual([]);
    expect(stalledOf(client)).toMatchObject({ status: 'True', reason: 'FinalizeFailed', message: expect.stringMatching(/^finalize cannot clean up on purpose/) });
    expect(client.calls.some((c) => c.method === 'PATCH' && c.body?.metadata?.finalizers !== undefined)).toBe(false); // finalizer kept
    expect(logs.find((l) => l.level === 'error')).toMatchObject({ msg: 'Reconciler error', fields: { step: 'finalize', reason: 'FinalizeFailed', terminal: true } });
  });

  test('GIVEN the API server refuses the status write THEN an error line, a Warning event StatusWriteFailed with the server message, the metric, a minimal status with Stalled=True, and a retry with backoff', async () => {
    const { client, crs, retries, metrics, logs, events, controller } = setup();
    const refusal = '.status.url: field not declared in schema';
    client.fail = (call) =>
      call.path.endsWith('/status') && call.body?.status?.url !== undefined
        ? new ApiError('PATCH', call.path, 500, 'InternalError', { message: `failed to create typed patch object (failing.example.com/v1, Kind=Failing) ns/f: ${refusal}` }, 'refused')
        : undefined;
    controller.startWorkers();
    crs.put(failing('url'));
    await until(() => retries.length >= 1);
    controller.abort();
    await events.flush();
    expect(await metric(metrics, 'cdk8s_operator_status_write_errors_total')).toBeGreaterThanOrEqual(1);
    const refused = logs.find((l) => l.msg === 'status write refused')!;
    expect(refused).toMatchObject({ level: 'error', fields: { cr: 'Failing ns/f', step: 'status', code: 500 } });
    expect(refused.fields.serverMessage).toContain(refusal);
    expect(logs.find((l) => l.msg === 'Reconciler error')).toMatchObject({ level: 'error', fields: { step: 'status', reason: 'StatusWriteFailed', code: 500 } });
    const warning = client.calls.find((c) => c.path.includes('/events') && c.body?.reason === 'StatusWriteFailed')!;
    expect(warning.body).toMatchObject({ type: 'Warning', action: 'Status' });
    expect(warning.body.note).toMatch(/^status write refused \(500 InternalError\): failed to create typed patch object .*field not declared in schema/);
    // the minimal status: no `url`, Stalled=True with the reason
    const minimal = client.calls.find((c) => c.path.endsWith('/status') && c.body.status.url === undefined)!;
    expect(minimal.body.status.observedGeneration).toBe(1);
    expect(minimal.body.status.conditions.find((c: { type: string }) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'StatusWriteFailed' });
  });

  test('GIVEN a status write that gets no answer (the client times out) THEN it is told as no answer, not a refusal: no serverMessage, the timeout named, and no second write', async () => {
    const { client, crs, retries, metrics, logs, events, controller } = setup();
    client.fail = (call) => (call.path.endsWith('/status') ? new RequestTimeoutError('PATCH', call.path, 30_000) : undefined);
    controller.startWorkers();
    crs.put(failing('ok'));
    await until(() => retries.length >= 1);
    controller.abort();
    await events.flush();
    expect(await metric(metrics, 'cdk8s_operator_status_write_errors_total')).toBeGreaterThanOrEqual(1);
    expect(logs.some((l) => l.msg.includes('refused'))).toBe(false);
    const line = logs.find((l) => l.msg === 'status write got no answer')!;
    expect(line).toMatchObject({ level: 'error', fields: { cr: 'Failing ns/f', step: 'status', timeoutMs: 30_000 } });
    expect(line.fields.serverMessage).toBeUndefined();
    expect(line.fields.code).toBeUndefined();
    const warning = client.calls.find((c) => c.path.includes('/events') && c.body?.reason === 'StatusWriteFailed')!;
    expect(warning.body.note).toMatch(/^status write got no answer within 30 s \(the API server or its storage did not respond; not a refusal\): PATCH \S+\/status/);
    expect(logs.find((l) => l.msg === 'Reconciler error')).toMatchObject({ level: 'error', fields: { step: 'status', reason: 'StatusWriteFailed' } });
    // No minimal second write (Stalled=True StatusWriteFailed) after no answer: the wait is one request timeout, not two.
    const statusWrites = client.calls.filter((c) => c.path.endsWith('/status'));
    expect(statusWrites.length).toBeGreaterThanOrEqual(1);
    expect(statusWrites.filter((c) => c.body?.status?.conditions?.some((k: { reason?: string }) => k.reason === 'StatusWriteFailed'))).toEqual([]);
  });

  test('GIVEN the minimal status write is refused too THEN both refusals are counted and logged at error, and it is still retried', async () => {
    const { client, crs, retries, metrics, logs, controller } = setup();
    client.fail = (call) => (call.path.endsWith('/status') ? new ApiError('PATCH', call.path, 403, 'Forbidden', { message: 'cannot patch failings/status' }, 'forbidden') : undefined);
    controller.startWorkers();
    crs.put(failing('ok'));
    await until(() => retries.length >= 1);
    controller.abort();
    expect(await metric(metrics, 'cdk8s_operator_status_write_errors_total')).toBeGreaterThanOrEqual(2);
    expect(logs.filter((l) => l.level === 'error').map((l) => l.msg).slice(0, 3)).toEqual([
      'status write refused',
      "status write refused again without the operator's own status fields; the CR shows no condition",
      'Reconciler error',
    ]);
  });

  test('GIVEN a 409 on a status write THEN it is retried quietly: no error line, no StatusWriteFailed', async () => {
    const { client, crs, retries, metrics, logs, controller } = setup();
    let once = true;
    client.fail = (call) => (call.path.endsWith('/status') && once ? ((once = false), new ApiError('PATCH', call.path, 409, 'Conflict', { message: 'conflict' }, 'conflict')) : undefined);
    controller.startWorkers();
    crs.put(failing('ok'));
    await until(() => retries.length >= 1);
    await controller.stop();
    expect(logs.filter((l) => l.level === 'error')).toEqual([]);
    expect(await metric(metrics, 'cdk8s_operator_status_write_errors_total')).toBe(0);
  });
});

describe('Reconciler.lastStats', () => {
  test('GIVEN a CR deleted, forgotten, then its key reconciled again (a child event after GC) THEN no entry is left behind', async () => {
    const { crs, controller } = setup();
    const cr = failing('ok');
    crs.put(cr);
    await controller.reconciler.reconcile('ns/f');
    expect(controller.reconciler.lastStats.has('ns/f')).toBe(true);
    crs.objects.delete('ns/f');
    controller.reconciler.forget(cr);
    expect(controller.reconciler.lastStats.has('ns/f')).toBe(false);
    await controller.reconciler.reconcile('ns/f'); // the CR is gone: nothing to keep
    expect(controller.reconciler.lastStats.size).toBe(0);
  });

  test('GIVEN more CRs than the bound THEN at most 1024 entries, the least recently reconciled dropped', async () => {
    const { crs, controller } = setup();
    for (let i = 0; i < 1030; i++) crs.objects.set(`ns/f${i}`, failing('ok', { name: `f${i}`, uid: `uid-${i}` }));
    for (let i = 0; i < 1030; i++) await controller.reconciler.reconcile(`ns/f${i}`);
    expect(controller.reconciler.lastStats.size).toBe(1024);
    expect(controller.reconciler.lastStats.has('ns/f0')).toBe(false);
    expect(controller.reconciler.lastStats.has('ns/f1029')).toBe(true);
  });
});
