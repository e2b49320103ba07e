/**
 * Tracing end to end (issue 21 item 6): `cdk8s-operator run` as a user runs it, a child process against
 * the real control plane, told by the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `…_PROTOCOL`)
 * to export to an OTLP/HTTP receiver in this test process (test/support/otlp-receiver.ts). The operator
 * is the test-only Exposer (fixtures/diff-operators.ts: a ConfigMap and a Service on `spec.port`, which
 * the API server refuses for port 70000).
 *
 * - create: the first reconcile of a new CR is one span with render, an apply per child (sent: missing),
 *   prune and a status write (sent), and the reconcile's attributes, its reconcileID the log line's;
 * - no-op: a reconcile caused by an annotation sends nothing: every apply skipped as unchanged, the status
 *   write not sent;
 * - failed: the refused Service makes its apply span and the reconcile span ERROR, with the exception and
 *   the error's reason and step;
 * - a graceful stop (SIGTERM) exits 0.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { startCli } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';
import { type ReceivedSpan, OtlpReceiver } from '../support/otlp-receiver.js';
import { addOperators } from './fixtures/diff-operators.js';

const NS = 'traced';
const [, exposer] = addOperators(new App());
const RECONCILE = 'reconcile exposer-operator';

let plane: ControlPlane;
let admin: ApiClient;
let receiver: OtlpReceiver;
let dir: string;
let operator: ChildProcess;
let exited: Promise<number | null>;
let output: () => string;

beforeAll(async () => {
  // Nothing but the operator touches the objects: no controllers, scheduler or kubelet.
  plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  receiver = await OtlpReceiver.start();
  dir = await mkdtemp(join(tmpdir(), 'tracing-'));
  const crd = join(dir, 'exposer-crd.json');
  await writeFile(crd, JSON.stringify(exposer!.customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [crd]);
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  ({ child: operator, output, exited } = startCli(
    [
      'run', '--module', 'test/integration/fixtures/diff-operators.ts', '--operators', 'exposer-operator',
      '--kubeconfig', plane.kubeconfigPath, '--namespace', NS, '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
    ],
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Export each batch soon after its spans end (the spec's default is 5 s).
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: undefined,
      OTEL_RESOURCE_ATTRIBUTES: undefined,
      OTEL_TRACES_EXPORTER: undefined,
      OTEL_SDK_DISABLED: undefined,
      CDK8S_OPERATOR_TEST_KUBECONFIG: '',
    },
  ));
  await eventually('the operator running', async () => output().includes('"operators running"'), { timeoutMs: 120_000, context: () => `; output:\n${output()}` });
}, 10 * 60_000);

afterAll(async () => {
  if (operator && operator.exitCode === null) {
    operator.kill('SIGKILL');
    await exited;
  }
  admin?.close();
  await receiver?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The reconcile spans of CR `name`, in start order. */
function reconcilesOf(name: string): ReceivedSpan[] {
  return receiver
    .spans()
    .filter((s) => s.name === RECONCILE && s.attributes['cdk8s_operator.name'] === name)
    .sort((a, b) => a.startMs - b.startMs);
}

/** The child spans of `span` named `name`. */
function steps(span: ReceivedSpan, name: string): ReceivedSpan[] {
  return receiver.childrenOf(span).filter((s) => s.name === name);
}

/** `{kind: attributes}` of the apply spans of a reconcile. */
function appliesByKind(span: ReceivedSpan): Record<string, Record<string, unknown>> {
  return Object.fromEntries(steps(span, 'apply').map((s) => [String(s.attributes['cdk8s_operator.child.kind']), s.attributes]));
}

function createExposer(name: string, port: number): Promise<unknown> {
  return admin.request('POST', resourcePath(exposer!.crd, NS), {
    body: { apiVersion: 'exposer.example.com/v1', kind: 'Exposer', metadata: { name, namespace: NS }, spec: { port } },
  });
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('GIVEN a new CR THEN its first reconcile is one span with render, an apply per child (created), prune and a written status', async () => {
  await createExposer('web', 80);
  const first = await eventually('a reconcile span of web', async () => reconcilesOf('web')[0], { timeoutMs: 120_000 });

  expect(first.parentSpanId).toBe('');
  expect(first.scope).toBe('cdk8s-operator-sdk');
  expect(first.resource['service.name']).toBe('exposer-operator');
  expect(first.attributes).toMatchObject({
    'cdk8s_operator.controller': 'exposer-operator',
    'cdk8s_operator.controller_kind': 'Exposer',
    'k8s.namespace.name': NS,
    'cdk8s_operator.name': 'web',
    'cdk8s_operator.result': 'success',
  });
  expect(first.status.code).not.toBe(2);
  const reconcileID = String(first.attributes['cdk8s_operator.reconcile_id']);
  expect(reconcileID).toMatch(uuid);

  expect(receiver.childrenOf(first).map((s) => s.name).sort()).toEqual(['apply', 'apply', 'prune', 'render', 'status']);
  expect(steps(first, 'render')[0]?.attributes).toMatchObject({ 'cdk8s_operator.render.children': 2 });
  expect(appliesByKind(first)).toEqual({
    // a create (one POST): no lookup of the name was sent, so no lookup_ms (it is set only when a create found the name taken)
    ConfigMap: {
      'cdk8s_operator.child.api_version': 'v1', 'cdk8s_operator.child.kind': 'ConfigMap', 'cdk8s_operator.child.name': 'web-settings', 'k8s.namespace.name': NS,
      'cdk8s_operator.apply.skipped': false, 'cdk8s_operator.apply.reason': 'missing',
    },
    Service: {
      'cdk8s_operator.child.api_version': 'v1', 'cdk8s_operator.child.kind': 'Service', 'cdk8s_operator.child.name': 'web-headless', 'k8s.namespace.name': NS,
      'cdk8s_operator.apply.skipped': false, 'cdk8s_operator.apply.reason': 'missing',
    },
  });
  expect(steps(first, 'prune')[0]?.attributes).toMatchObject({ 'cdk8s_operator.prune.deleted': 0 });
  expect(steps(first, 'status')[0]?.attributes).toMatchObject({ 'cdk8s_operator.status.written': true });
  for (const step of receiver.childrenOf(first)) expect(step.status.code).not.toBe(2);

  // The span's reconcileID is the one on the reconcile's log lines.
  const created = output().split('\n').filter((line) => line.includes('"created child"') && line.includes('web-settings'));
  expect(created.map((line) => (JSON.parse(line) as { reconcileID?: string }).reconcileID)).toEqual([reconcileID]);
});

test('GIVEN a settled CR WHEN an annotation changes THEN its reconcile span shows every apply skipped as unchanged and no status write', async () => {
  await eventually('web Ready', async () => {
    const cr = await admin.request('GET', resourcePath(exposer!.crd, NS, 'web'));
    const conditions = (cr.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
  });
  const since = Date.now();
  await admin.request('PATCH', resourcePath(exposer!.crd, NS, 'web'), {
    body: { metadata: { annotations: { 'example.com/touched': String(since) } } },
    contentType: 'application/merge-patch+json',
  });
  const after = await eventually('a reconcile span of web after the annotation', async () => reconcilesOf('web').filter((s) => s.startMs >= since)[0], { timeoutMs: 120_000 });

  expect(after.attributes).toMatchObject({ 'cdk8s_operator.name': 'web', 'cdk8s_operator.result': 'success' });
  expect(after.status.code).not.toBe(2);
  const applies = appliesByKind(after);
  expect(Object.keys(applies).sort()).toEqual(['ConfigMap', 'Service']);
  for (const attributes of Object.values(applies)) {
    expect(attributes).toMatchObject({ 'cdk8s_operator.apply.skipped': true, 'cdk8s_operator.apply.reason': 'unchanged' });
    expect(attributes).not.toHaveProperty(['cdk8s_operator.apply.lookup_ms']);
  }
  expect(steps(after, 'status').map((s) => s.attributes['cdk8s_operator.status.written'])).toEqual([false]);
  expect(steps(after, 'render')).toHaveLength(1);
});

test('GIVEN a CR whose Service the API server refuses THEN the apply span and the reconcile span are errors with the exception', async () => {
  await createExposer('bad', 70000);
  const first = await eventually('a reconcile span of bad', async () => reconcilesOf('bad')[0], { timeoutMs: 120_000 });

  expect(first.attributes).toMatchObject({
    'cdk8s_operator.name': 'bad',
    'cdk8s_operator.result': 'error',
    'error.type': 'ApplyFailed',
    'cdk8s_operator.step': 'apply',
  });
  expect(first.status.code).toBe(2);
  expect(first.status.message).toContain('70000');
  expect(first.events.map((e) => e.name)).toContain('exception');

  const applies = Object.fromEntries(steps(first, 'apply').map((s) => [String(s.attributes['cdk8s_operator.child.kind']), s]));
  expect(applies.ConfigMap?.status.code).not.toBe(2);
  expect(applies.ConfigMap?.attributes).toMatchObject({ 'cdk8s_operator.apply.skipped': false, 'cdk8s_operator.apply.reason': 'missing' });
  expect(applies.Service?.status.code).toBe(2);
  expect(applies.Service?.attributes).toMatchObject({ 'cdk8s_operator.child.name': 'bad-headless', 'cdk8s_operator.apply.skipped': false, 'cdk8s_operator.apply.reason': 'missing' });
  const exception = applies.Service?.events.find((e) => e.name === 'exception');
  expect(String(exception?.attributes['exception.message'])).toMatch(/bad-headless.*70000/s);
  // The Stalled condition is still written, in its own span.
  expect(steps(first, 'status').map((s) => s.attributes['cdk8s_operator.status.written'])).toEqual([true]);
});

test('GIVEN SIGTERM THEN the operator stops gracefully and exits 0', async () => {
  operator.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output()).toContain('tracing on: exporting spans over OTLP');
}, 120_000);
