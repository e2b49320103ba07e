/**
 * The reconcile runtime (lib/runtime: manager → controller → reconciler) against the real local control
 * plane: etcd + kube-apiserver + kube-controller-manager (GC, Deployments) + scheduler + kwok (Pods
 * become Ready, so Deployments become Available).
 *
 * A small test operator (`Widget`) renders a Deployment and, optionally, a ConfigMap; the memcached
 * example runs in the same manager (shared Deployment informer). Writes of the operator are counted
 * through the ApiClient's onRequest hook and cross-checked with the API server's
 * `apiserver_request_total`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator, type CustomResource } from '../../lib/operator/operator.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { DESIRED_HASH_ANNOTATION } from '../../lib/runtime/reconcile/child-diff.js';
import type { Condition } from '../../lib/runtime/reconcile/conditions.js';
import { Manager } from '../../lib/runtime/manager.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { eventually as waitFor } from '../support/eventually.js';
import { settled as settledController } from '../support/settled.js';

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 180_000;
/** The quiet window of the idle test. */
const IDLE_WINDOW_MS = Number(process.env.RUNTIME_IDLE_WINDOW_MS ?? 10_000);

const WidgetSpec = z.object({
  replicas: z.int().min(0).default(1),
  image: z.string().default('nginx:1.27'),
  /** Render a ConfigMap too. */
  config: z.boolean().default(true),
  /** Set env var A on the container when given. */
  env: z.string().optional(),
  /** Make render() throw. */
  failRender: z.boolean().default(false),
});
type WidgetSpec = z.output<typeof WidgetSpec>;

/** Names of CRs whose finalize() must fail, and the calls seen. */
const failFinalize = new Set<string>();
const finalizeCalls: { name: string; ok: boolean }[] = [];

class WidgetOperator extends Operator<typeof WidgetSpec> {
  constructor(scope: Construct, kind = 'Widget') {
    super(scope, kind.toLowerCase(), {
      group: 'test.cdk8s.io',
      version: 'v1',
      kind,
      spec: WidgetSpec,
      owns: [
        { apiVersion: 'apps/v1', kind: 'Deployment' },
        { apiVersion: 'v1', kind: 'ConfigMap' },
      ],
      examples: [{ apiVersion: 'test.cdk8s.io/v1', kind, metadata: { name: 'example', namespace: 'default' }, spec: { replicas: 1 } }],
    });
  }

  render(cr: CustomResource<WidgetSpec>, scope: Construct): void {
    if (cr.spec.failRender) throw new Error('failRender is set');
    const name = cr.metadata.name;
    const labels = { app: 'widget', widget: name };
    if (cr.spec.config) {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-config` }, data: { replicas: String(cr.spec.replicas) } });
    }
    new ApiObject(scope, 'deployment', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: {
        replicas: cr.spec.replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            containers: [
              {
                name: 'main',
                image: cr.spec.image,
                ports: [{ containerPort: 8080 }],
                // Non-canonical quantities on purpose: the API server stores 500m and 1Gi.
                resources: { limits: { cpu: '0.5', memory: '1024Mi' }, requests: { cpu: '100m', memory: '64Mi' } },
                ...(cr.spec.env === undefined ? {} : { env: [{ name: 'A', value: cr.spec.env }] }),
              },
            ],
          },
        },
      },
    });
  }

  override async finalize(cr: CustomResource<WidgetSpec>): Promise<void> {
    const ok = !failFinalize.has(cr.metadata.name);
    finalizeCalls.push({ name: cr.metadata.name, ok });
    if (!ok) throw new Error('finalize refused by the test');
  }
}

let plane: ControlPlane;
let admin: ApiClient;
let manager: Manager;
let dir: string;
const requests: RequestRecord[] = [];
const app = new App();
const widgetOperator = new WidgetOperator(app);
const memcachedOperator = new MemcachedOperator(app);
/** Same operator on another kind, run by a second manager as a user without `patch deployments`. */
const gadgetOperator = new WidgetOperator(app, 'Gadget');
const logFile = join(tmpdir(), `runtime-it-${process.pid}.log`);

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, log: (line) => process.env.CONTROL_PLANE_DEBUG && console.log(line) });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'runtime-test' });
  dir = await mkdtemp(join(tmpdir(), 'runtime-it-'));
  const crdFile = join(dir, 'crds.json');
  // One JSON document per file is valid YAML.
  await writeFile(crdFile, JSON.stringify(widgetOperator.customResourceDefinition.toJson()));
  const memcachedCrd = join(dir, 'memcached-crd.json');
  await writeFile(memcachedCrd, JSON.stringify(memcachedOperator.customResourceDefinition.toJson()));
  const gadgetCrd = join(dir, 'gadget-crd.json');
  await writeFile(gadgetCrd, JSON.stringify(gadgetOperator.customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [crdFile, memcachedCrd, gadgetCrd]);
  manager = new Manager({
    kubeConfig: plane.kubeConfig,
    operators: [widgetOperator, memcachedOperator],
    logger: pino({ level: 'debug' }, pino.destination({ dest: logFile, sync: true })),
    onRequest: (record) => requests.push(record),
  });
  await manager.start();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const writes = (since: number, filter: (r: RequestRecord) => boolean = () => true) =>
  requests.slice(since).filter((r) => !r.watch && r.method !== 'GET' && filter(r));

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Polls until `check` holds; the operator log's path goes into the timeout message. */
function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 90_000): Promise<T> {
  return waitFor(what, check, { timeoutMs, context: () => `; operator log: ${logFile}` });
}

/** Waits until the operator caught up with `key` (test/support/settled.ts). */
const settled = (key: string, operatorName = 'widget-operator') =>
  settledController(manager.controllers.find((c) => c.name === operatorName)!, key, { context: () => `; operator log: ${logFile}` });

let nsCounter = 0;
async function newNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${process.pid}-${++nsCounter}`;
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

const widgetPath = (ns: string, name?: string) => `/apis/test.cdk8s.io/v1/namespaces/${ns}/widgets${name ? '/' + name : ''}`;
const deploymentPath = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
const configMapPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;

async function get(path: string): Promise<KubeObject | undefined> {
  try {
    return await admin.request('GET', path);
  } catch (err) {
    if (isApiError(err, 404)) return undefined;
    throw err;
  }
}

async function createWidget(ns: string, name: string, spec: Partial<WidgetSpec>): Promise<KubeObject> {
  return admin.request('POST', widgetPath(ns), { body: { apiVersion: 'test.cdk8s.io/v1', kind: 'Widget', metadata: { name, namespace: ns }, spec } });
}

async function patchWidgetSpec(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await admin.request('PATCH', widgetPath(ns, name), { body: { spec }, contentType: 'application/merge-patch+json' });
}

function condition(obj: KubeObject | undefined, type: string): Condition | undefined {
  return ((obj?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

async function readyWidget(ns: string, name: string, generation?: number): Promise<KubeObject> {
  return eventually(`Widget ${ns}/${name} Ready`, async () => {
    const cr = await get(widgetPath(ns, name));
    const ready = condition(cr, 'Ready');
    const observed = (cr?.status as { observedGeneration?: number } | undefined)?.observedGeneration;
    return ready?.status === 'True' && observed === (generation ?? cr?.metadata?.generation) ? cr : undefined;
  });
}

/** Sum of apiserver_request_total for write verbs on these resources. */
async function serverWrites(resources: string[]): Promise<number> {
  const response = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/metrics');
  if (response.statusCode !== 200) throw new Error(`/metrics: HTTP ${response.statusCode}`);
  let sum = 0;
  for (const line of String(response.body).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1];
    const resource = /resource="([^"]*)"/.exec(line)?.[1];
    if (!verb || !resource || !resources.includes(resource)) continue;
    if (!['APPLY', 'PATCH', 'POST', 'PUT', 'DELETE', 'CREATE', 'UPDATE'].includes(verb)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

describe('one Widget through its life', () => {
  let ns: string;
  const name = 'w1';
  const key = () => `${ns}/${name}`;

  beforeAll(async () => {
    ns = await newNamespace('rt-life');
  });

  test('GIVEN a new CR THEN its children appear (by apply), the finalizer is added, and it is Ready once the Deployment is Available', async () => {
    const before = requests.length;
    await createWidget(ns, name, { replicas: 2 });
    const cr = await readyWidget(ns, name, 1);
    const deployment = (await get(deploymentPath(ns, name)))!;
    expect(condition(deployment, 'Available')?.status).toBe('True');
    expect(deployment.metadata?.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': cr.metadata?.uid });
    expect(deployment.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Widget', name, uid: cr.metadata?.uid, controller: true })]);
    expect(deployment.metadata?.annotations?.[DESIRED_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{20}$/);
    expect(await get(configMapPath(ns, `${name}-config`))).toBeDefined();
    expect(cr.metadata?.finalizers).toEqual(['operator.cdk8s.io/widget-operator']);
    expect(cr.status).toMatchObject({
      observedGeneration: 1,
      children: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: ns, ready: true },
        { apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-config`, namespace: ns, ready: true },
      ],
    });
    expect((cr.status as { conditions: Condition[] }).conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Ready=True', 'Reconciling=False', 'Stalled=False']);
    // each child created by one POST (adoption.ts: refused when the name is taken), never PUT; later writes are applies (PATCH)
    const childWrites = writes(before, (r) => /\/(deployments|configmaps)(\/|\?|$)/.test(r.path));
    expect(childWrites.filter((r) => r.method === 'POST').map((r) => r.path.split('?')[0]).sort()).toEqual([configMapPath(ns, ''), deploymentPath(ns, '')].map((p) => p.replace(/\/$/, '')).sort());
    expect(childWrites.every((r) => r.method === 'POST' || r.method === 'PATCH')).toBe(true);
  }, TEST_TIMEOUT_MS);

  test('GIVEN the converged CR WHEN reconciled twice more and left alone THEN nothing is written', async () => {
    await settled(key());
    const before = requests.length;
    const metricsBefore = await serverWrites(['widgets', 'deployments', 'configmaps']);
    expect(metricsBefore).toBeGreaterThan(0); // the metric is read and parsed at all
    const controller = manager.controllers.find((c) => c.name === 'widget-operator')!;
    await controller.reconciler.reconcile(key());
    await controller.reconciler.reconcile(key());
    expect(controller.reconciler.lastStats.get(key())).toEqual({ applied: 0, pruned: 0, statusWritten: false });
    await sleep(IDLE_WINDOW_MS);
    const metricsAfter = await serverWrites(['widgets', 'deployments', 'configmaps']);
    const idle = writes(before);
    console.log(`idle window ${IDLE_WINDOW_MS} ms: operator writes ${idle.length}, API server writes on widgets/deployments/configmaps ${metricsAfter - metricsBefore}`);
    expect(idle).toEqual([]);
    expect(metricsAfter - metricsBefore).toBe(0);
  }, TEST_TIMEOUT_MS);

  test('GIVEN a spec change THEN the children are updated and observedGeneration follows', async () => {
    await patchWidgetSpec(ns, name, { replicas: 3, env: 'x' });
    await eventually('Deployment updated', async () => {
      const d = await get(deploymentPath(ns, name));
      const spec = d?.spec as { replicas: number; template: { spec: { containers: { env?: { name: string; value: string }[] }[] } } };
      return spec.replicas === 3 && spec.template.spec.containers[0].env?.[0]?.value === 'x';
    });
    // The ConfigMap is applied after the Deployment, in the same reconcile: wait for it too.
    await eventually('ConfigMap updated', async () => ((await get(configMapPath(ns, `${name}-config`)))?.data as { replicas?: string } | undefined)?.replicas === '3');
    expect((await get(configMapPath(ns, `${name}-config`)))?.data).toEqual({ replicas: '3' });
    await readyWidget(ns, name, 2);
  }, TEST_TIMEOUT_MS);

  test('GIVEN render stops setting a field THEN the field disappears from the child', async () => {
    await patchWidgetSpec(ns, name, { env: null });
    await eventually('env removed', async () => {
      const d = await get(deploymentPath(ns, name));
      const containers = (d?.spec as { template: { spec: { containers: { env?: unknown[] }[] } } }).template.spec.containers;
      return containers[0].env === undefined;
    });
  }, TEST_TIMEOUT_MS);

  test('GIVEN drift on a field we set THEN it is reverted; GIVEN another manager sets a field render leaves out THEN it is left alone', async () => {
    await admin.request('PATCH', deploymentPath(ns, name), {
      query: { fieldManager: 'drifter' },
      body: { spec: { replicas: 7 } },
      contentType: 'application/merge-patch+json',
    });
    await eventually('replicas reverted to 3', async () => ((await get(deploymentPath(ns, name)))?.spec as { replicas: number }).replicas === 3);

    await settled(key());
    const before = requests.length;
    await admin.request('PATCH', deploymentPath(ns, name), {
      query: { fieldManager: 'someone-else' },
      body: { metadata: { annotations: { 'example.com/note': 'hello' } }, spec: { revisionHistoryLimit: 4 } },
      contentType: 'application/merge-patch+json',
    });
    // Once the operator's cache holds the other manager's change, a reconcile of it must write nothing.
    await eventually('the change in the operator cache', async () => {
      const deployments = manager.informers.all().filter((i) => i.describe().includes('deployments'));
      return deployments.some((i) => (i.get(ns, name)?.spec as { revisionHistoryLimit?: number } | undefined)?.revisionHistoryLimit === 4);
    });
    await settled(key());
    const d = (await get(deploymentPath(ns, name)))!;
    expect((d.spec as { revisionHistoryLimit: number }).revisionHistoryLimit).toBe(4);
    expect(d.metadata?.annotations?.['example.com/note']).toBe('hello');
    expect(writes(before, (r) => r.path.includes('/deployments/'))).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN a spec change that drops a child THEN it is pruned, and objects of other controllers are untouched', async () => {
    await patchWidgetSpec(ns, name, { config: false });
    await eventually('ConfigMap pruned', async () => (await get(configMapPath(ns, `${name}-config`))) === undefined);
    const replicaSets = await admin.request<{ items: KubeObject[] }>('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`);
    expect(replicaSets.items.length).toBeGreaterThan(0);
    const cr = await readyWidget(ns, name);
    expect((cr.status as { children: unknown[] }).children).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: ns, ready: true }]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN the CR is deleted THEN finalize runs once, the finalizer goes, and GC removes the children', async () => {
    const callsBefore = finalizeCalls.length;
    await admin.request('DELETE', widgetPath(ns, name));
    await eventually('CR gone', async () => (await get(widgetPath(ns, name))) === undefined);
    expect(finalizeCalls.slice(callsBefore)).toEqual([{ name, ok: true }]);
    await eventually('Deployment garbage-collected', async () => (await get(deploymentPath(ns, name))) === undefined);
  }, TEST_TIMEOUT_MS);
});

test('GIVEN a CR whose render throws THEN it is Stalled with a Warning event, while another CR converges', async () => {
  const ns = await newNamespace('rt-bad');
  await createWidget(ns, 'bad', { failRender: true });
  await createWidget(ns, 'good', { replicas: 1 });
  const bad = await eventually('bad Stalled', async () => {
    const cr = await get(widgetPath(ns, 'bad'));
    return condition(cr, 'Stalled')?.status === 'True' ? cr : undefined;
  });
  expect(condition(bad, 'Stalled')).toMatchObject({ reason: 'RenderFailed', message: expect.stringContaining('failRender is set') });
  expect(condition(bad, 'Ready')?.status).toBe('False');
  expect(condition(bad, 'Reconciling')?.status).toBe('False');
  await readyWidget(ns, 'good');
  const events = await eventually('Warning event', async () => {
    const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
    const found = list.items.filter((e) => (e.regarding as { name?: string }).name === 'bad' && e.reason === 'RenderFailed');
    return found.length > 0 ? found : undefined;
  });
  expect(events[0]).toMatchObject({ type: 'Warning', reportingController: 'cdk8s.io/widget-operator' });

  // fixing the spec clears Stalled
  await patchWidgetSpec(ns, 'bad', { failRender: false });
  const fixed = await readyWidget(ns, 'bad', 2);
  expect(condition(fixed, 'Stalled')?.status).toBe('False');
}, TEST_TIMEOUT_MS);

test('GIVEN finalize fails THEN the finalizer stays, Stalled=FinalizeFailed, and it is retried until it succeeds once', async () => {
  const ns = await newNamespace('rt-fin');
  await createWidget(ns, 'fin', { replicas: 1 });
  await readyWidget(ns, 'fin');
  failFinalize.add('fin');
  const callsBefore = finalizeCalls.length;
  await admin.request('DELETE', widgetPath(ns, 'fin'));
  await eventually('finalize retried', async () => finalizeCalls.slice(callsBefore).filter((c) => c.name === 'fin').length >= 2);
  const cr = await eventually('FinalizeFailed condition', async () => {
    const obj = await get(widgetPath(ns, 'fin'));
    return condition(obj, 'Stalled')?.reason === 'FinalizeFailed' ? obj : undefined;
  });
  expect(cr.metadata?.deletionTimestamp).toBeDefined();
  expect(cr.metadata?.finalizers).toContain('operator.cdk8s.io/widget-operator');
  failFinalize.delete('fin');
  await eventually('CR gone', async () => (await get(widgetPath(ns, 'fin'))) === undefined);
  const calls = finalizeCalls.slice(callsBefore).filter((c) => c.name === 'fin');
  expect(calls.filter((c) => c.ok)).toHaveLength(1);
  expect(calls[calls.length - 1].ok).toBe(true);
}, TEST_TIMEOUT_MS);

test('GIVEN a foreign finalizer on the CR THEN ours is removed by value and theirs is kept', async () => {
  const ns = await newNamespace('rt-foreign');
  await admin.request('POST', widgetPath(ns), {
    body: { apiVersion: 'test.cdk8s.io/v1', kind: 'Widget', metadata: { name: 'f', namespace: ns, finalizers: ['example.com/keep'] }, spec: {} },
  });
  const cr = await readyWidget(ns, 'f');
  expect(cr.metadata?.finalizers).toEqual(['example.com/keep', 'operator.cdk8s.io/widget-operator']);
  await admin.request('DELETE', widgetPath(ns, 'f'));
  const left = await eventually('our finalizer removed', async () => {
    const obj = await get(widgetPath(ns, 'f'));
    return obj && JSON.stringify(obj.metadata?.finalizers) === JSON.stringify(['example.com/keep']) ? obj : undefined;
  });
  expect(left.metadata?.deletionTimestamp).toBeDefined();
  await admin.request('PATCH', widgetPath(ns, 'f'), { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
}, TEST_TIMEOUT_MS);

test('GIVEN the memcached example in the same manager THEN its CR converges (shared Deployment informer)', async () => {
  const ns = await newNamespace('rt-mc');
  await admin.request('POST', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`, {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'mc', namespace: ns }, spec: { replicas: 2 } },
  });
  const cr = await eventually('Memcached Ready', async () => {
    const obj = await get(`/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds/mc`);
    return condition(obj, 'Ready')?.status === 'True' ? obj : undefined;
  });
  expect((cr.status as { children: { kind: string }[] }).children.map((c) => c.kind).sort()).toEqual(['Deployment', 'Service']);
  // settled: a reconcile writes nothing
  await settled(`${ns}/mc`, 'memcached-operator');
  const controller = manager.controllers.find((c) => c.name === 'memcached-operator')!;
  await controller.reconciler.reconcile(`${ns}/mc`);
  expect(controller.reconciler.lastStats.get(`${ns}/mc`)).toEqual({ applied: 0, pruned: 0, statusWritten: false });
}, TEST_TIMEOUT_MS);

/** Compacts etcd at its current revision, so a watch resuming from an older resourceVersion gets 410 Gone. */
async function compactEtcd(): Promise<number> {
  const post = async (path: string, body: unknown) =>
    (await fetch(`${plane.etcdEndpoint}${path}`, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<{ header?: { revision?: string } }>;
  const revision = Number((await post('/v3/kv/range', { key: Buffer.from('/').toString('base64') })).header?.revision);
  await post('/v3/kv/compaction', { revision, physical: true });
  return revision;
}

test('GIVEN etcd is compacted and the API server restarts THEN the watches recover (relist on 410) and no change is missed', async () => {
  const ns = await newNamespace('rt-restart');
  await createWidget(ns, 'r', { replicas: 1 });
  await readyWidget(ns, 'r');
  const logBefore = (await readFile(logFile, 'utf8')).split('\n').length;
  await compactEtcd();
  await plane.restartApiServer();
  // Change things at once, while the operator's watches are still reconnecting with backoff.
  await eventually('API server back', async () => (await get(widgetPath(ns, 'r'))) !== undefined);
  await admin.request('DELETE', configMapPath(ns, 'r-config'));
  await patchWidgetSpec(ns, 'r', { replicas: 2 });
  await eventually('Deployment scaled after restart', async () => ((await get(deploymentPath(ns, 'r')))?.spec as { replicas: number }).replicas === 2, 120_000);
  await eventually('deleted ConfigMap re-created', async () => ((await get(configMapPath(ns, 'r-config')))?.data as { replicas?: string } | undefined)?.replicas === '2', 120_000);
  await readyWidget(ns, 'r', 2);
  const lines = (await readFile(logFile, 'utf8')).split('\n').slice(logBefore);
  const relists = lines.filter((l) => l.includes('relisting')).length;
  const failures = lines.filter((l) => l.includes('watch failed')).length;
  console.log(`after compaction + restart: ${relists} relist(s) on 410, ${failures} watch failure(s) retried`);
}, TEST_TIMEOUT_MS);

test('GIVEN the operator may not create Deployments THEN Stalled=Forbidden names the missing permission, and other children are still applied', async () => {
  const ns = await newNamespace('rt-rbac');
  const rules = [
    { apiGroups: ['test.cdk8s.io'], resources: ['gadgets'], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
    { apiGroups: ['test.cdk8s.io'], resources: ['gadgets/status'], verbs: ['get', 'patch', 'update'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
  ];
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'gadget-limited' }, rules },
  });
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'gadget-limited' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gadget-limited' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'gadget-user' }],
    },
  });
  const limited = new Manager({
    kubeConfig: plane.kubeConfig,
    operators: [gadgetOperator],
    impersonate: { user: 'gadget-user' },
    logger: pino({ level: 'debug' }, pino.destination({ dest: logFile + '.gadget', sync: true })),
  });
  await limited.start();
  try {
    await admin.request('POST', `/apis/test.cdk8s.io/v1/namespaces/${ns}/gadgets`, {
      body: { apiVersion: 'test.cdk8s.io/v1', kind: 'Gadget', metadata: { name: 'g', namespace: ns }, spec: {} },
    });
    const cr = await eventually('Gadget Stalled', async () => {
      const obj = await get(`/apis/test.cdk8s.io/v1/namespaces/${ns}/gadgets/g`);
      return condition(obj, 'Stalled')?.status === 'True' ? obj : undefined;
    });
    expect(condition(cr, 'Stalled')).toMatchObject({ reason: 'Forbidden', message: expect.stringContaining(`cannot create apps/deployments in namespace "${ns}"`) });
    expect(await get(configMapPath(ns, 'g-config'))).toBeDefined();
    expect(await get(deploymentPath(ns, 'g'))).toBeUndefined();
  } finally {
    await limited.stop();
  }
}, TEST_TIMEOUT_MS);
