/**
 * Render beyond the CR, against the real local control plane: related objects (a referenced ConfigMap
 * rolls exactly the Apps that reference it; a missing one holds the App at Ready=False
 * ReferenceNotFound until it exists), observed children and ordering (the Database's migration Job
 * waits for its StatefulSet; a test operator's gate opened by hand), custom status (memcached's
 * status.nodes, written once, not at idle) and requeueAfter (fires without a change, and an unrelated
 * event in between does not postpone it).
 *
 * Render calls are counted per CR through the manager's `render` option, which wraps the default
 * `renderCustomResource`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App, Duration } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { dependsOn, readyWhen } from '../../lib/operator/render/child-ordering.js';
import { Operator, type CustomResource, type RenderContext, type RenderResult } from '../../lib/operator/operator.js';
import { renderCustomResource } from '../../lib/operator/render/render-children.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import type { Condition } from '../../lib/runtime/reconcile/conditions.js';
import { Manager } from '../../lib/runtime/manager.js';
import { OperatorMetrics } from '../../lib/runtime/metrics/metrics.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { AppOperator, CONFIG_REF_HASH_ANNOTATION } from '../../operators/app/index.js';
import { DatabaseOperator } from '../../operators/database/index.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { createTestNamespace } from '../support/cluster.js';
import { eventually as waitFor } from '../support/eventually.js';
import { settled as settledController } from '../support/settled.js';

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 240_000;
/** The timed requeue of the Ticker test operator. */
const REQUEUE_MS = 8_000;

const GatedSpec = z.object({ greeting: z.string().default('hello') });

/**
 * A ConfigMap `<name>-gate` that counts as ready once someone labels it `gate=open` (a label the
 * operator does not own, so it is never reverted), and a ConfigMap `<name>-after` that depends on it.
 */
class GatedOperator extends Operator<typeof GatedSpec> {
  constructor(scope: Construct) {
    super(scope, 'gated', { group: 'test.cdk8s.io', version: 'v1', kind: 'Gated', spec: GatedSpec, owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }] });
  }

  render(cr: CustomResource<z.output<typeof GatedSpec>>, scope: Construct): void {
    const gate = new ApiObject(scope, 'gate', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${cr.metadata.name}-gate` }, data: { role: 'gate' } });
    readyWhen(gate, (observed) => observed.metadata.labels?.gate === 'open');
    const after = new ApiObject(scope, 'after', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${cr.metadata.name}-after` }, data: { greeting: cr.spec.greeting } });
    dependsOn(after, gate);
  }
}

const TickerSpec = z.object({ note: z.string().default('') });
const TickerStatus = z.object({ configMaps: z.int().min(0) });

/** Asks to be reconciled again after {@link REQUEUE_MS}; reports how many of its children it observed. */
class TickerOperator extends Operator<typeof TickerSpec, typeof TickerStatus> {
  constructor(scope: Construct) {
    super(scope, 'ticker', {
      group: 'test.cdk8s.io',
      version: 'v1',
      kind: 'Ticker',
      spec: TickerSpec,
      status: TickerStatus,
      owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
    });
  }

  render(cr: CustomResource<z.output<typeof TickerSpec>>, scope: Construct, context: RenderContext): RenderResult<z.input<typeof TickerStatus>> {
    new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cr.metadata.name }, data: { note: cr.spec.note } });
    return { status: { configMaps: context.observed.list({ apiVersion: 'v1', kind: 'ConfigMap' }).length }, requeueAfter: Duration.millis(REQUEUE_MS) };
  }
}

let plane: ControlPlane;
let admin: ApiClient;
let manager: Manager;
let dir: string;
const app = new App();
const appOperator = new AppOperator(app);
const databaseOperator = new DatabaseOperator(app);
const memcachedOperator = new MemcachedOperator(app);
const gatedOperator = new GatedOperator(app);
const tickerOperator = new TickerOperator(app);
const logFile = join(tmpdir(), `render-context-it-${process.pid}.log`);
/** `Kind ns/name` → times (ms since epoch) render ran for it. */
const renders = new Map<string, number[]>();
const requests: RequestRecord[] = [];
const metrics = new OperatorMetrics();

/** Sum of `cdk8s_operator_renders_skipped_total` for one operator's controller. */
async function rendersSkipped(operatorName: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric('cdk8s_operator_renders_skipped_total')!.get();
  return metric.values.filter((v) => v.labels.controller === operatorName).reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  plane = await startControlPlane({ log: (line) => process.env.CONTROL_PLANE_DEBUG && console.log(line) });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'render-context-test' });
  dir = await mkdtemp(join(tmpdir(), 'render-context-it-'));
  const files: string[] = [];
  for (const operator of [appOperator, databaseOperator, memcachedOperator, gatedOperator, tickerOperator]) {
    const file = join(dir, `${operator.operatorName}-crd.json`);
    await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
    files.push(file);
  }
  await installCRDs(plane.kubeConfig, files);
  manager = new Manager({
    kubeConfig: plane.kubeConfig,
    operators: [appOperator, databaseOperator, memcachedOperator, gatedOperator, tickerOperator],
    logger: pino({ level: 'debug' }, pino.destination({ dest: logFile, sync: true })),
    onRequest: (record) => requests.push(record),
    metrics,
    render: (operator, cr, inputs) => {
      const key = `${cr.kind} ${cr.metadata?.namespace}/${cr.metadata?.name}`;
      renders.set(key, [...(renders.get(key) ?? []), Date.now()]);
      return renderCustomResource(operator, cr as never, inputs);
    },
  });
  await manager.start();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitFor(what, check, { timeoutMs, context: () => `; operator log: ${logFile}` });
}

const renderCount = (kind: string, ns: string, name: string) => renders.get(`${kind} ${ns}/${name}`)?.length ?? 0;

const newNamespace = (prefix: string) => createTestNamespace(prefix, admin);

async function get(path: string): Promise<KubeObject | undefined> {
  try {
    return await admin.request('GET', path);
  } catch (err) {
    if (isApiError(err, 404)) return undefined;
    throw err;
  }
}

function condition(obj: KubeObject | undefined, type: string): Condition | undefined {
  return ((obj?.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}

async function ready(path: string): Promise<KubeObject> {
  return eventually(`${path} Ready`, async () => {
    const cr = await get(path);
    const observed = (cr?.status as { observedGeneration?: number } | undefined)?.observedGeneration;
    return condition(cr, 'Ready')?.status === 'True' && observed === cr?.metadata?.generation ? cr : undefined;
  });
}

/** Waits until the operator caught up with `key` (test/support/settled.ts). */
const settled = (operatorName: string, key: string) =>
  settledController(manager.controllers.find((c) => c.name === operatorName)!, key, { context: () => `; operator log: ${logFile}` });

const appPath = (ns: string, name?: string) => `/apis/apps.example.com/v1alpha1/namespaces/${ns}/apps${name ? `/${name}` : ''}`;
const configMapPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const deploymentPath = (ns: string, name: string) => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;

async function createConfigMap(ns: string, name: string, data: Record<string, string>): Promise<void> {
  await admin.request('POST', configMapPath(ns), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data } });
}

async function createApp(ns: string, name: string, configMap?: string): Promise<void> {
  await admin.request('POST', appPath(ns), {
    body: {
      apiVersion: 'apps.example.com/v1alpha1',
      kind: 'App',
      metadata: { name, namespace: ns },
      spec: { image: 'ghcr.io/example/hello:1.4.2', ...(configMap ? { configMapRef: { name: configMap } } : {}) },
    },
  });
}

async function podTemplateHash(ns: string, name: string): Promise<string | undefined> {
  const deployment = await get(deploymentPath(ns, name));
  const template = (deployment?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template;
  return template?.metadata?.annotations?.[CONFIG_REF_HASH_ANNOTATION];
}

describe('related objects', () => {
  test('GIVEN Apps referencing ConfigMaps WHEN one ConfigMap is edited THEN exactly the Apps that reference it roll, and no other App reconciles', async () => {
    const ns = await newNamespace('related');
    await createConfigMap(ns, 'shared', { 'app.properties': 'color=blue' });
    await createConfigMap(ns, 'other', { 'app.properties': 'color=red' });
    await createApp(ns, 'a1', 'shared');
    await createApp(ns, 'a2', 'shared');
    await createApp(ns, 'b1', 'other');
    await createApp(ns, 'c1');
    for (const name of ['a1', 'a2', 'b1', 'c1']) await ready(appPath(ns, name));
    for (const name of ['a1', 'a2', 'b1', 'c1']) await settled(appOperator.operatorName, `${ns}/${name}`);

    const before = { a1: await podTemplateHash(ns, 'a1'), a2: await podTemplateHash(ns, 'a2'), b1: await podTemplateHash(ns, 'b1') };
    expect(before.a1).toMatch(/^[0-9a-f]{64}$/);
    expect(before.a2).toBe(before.a1);
    expect(before.b1).not.toBe(before.a1);
    expect(await podTemplateHash(ns, 'c1')).toBeUndefined();
    const untouched = { b1: renderCount('App', ns, 'b1'), c1: renderCount('App', ns, 'c1') };

    await admin.request('PATCH', configMapPath(ns, 'shared'), { body: { data: { 'app.properties': 'color=green' } }, contentType: 'application/merge-patch+json' });
    for (const name of ['a1', 'a2']) {
      await eventually(`App ${name} rolled`, async () => {
        const hash = await podTemplateHash(ns, name);
        return hash !== undefined && hash !== before.a1;
      });
    }
    for (const name of ['a1', 'a2']) await ready(appPath(ns, name));

    expect(await podTemplateHash(ns, 'b1')).toBe(before.b1);
    expect({ b1: renderCount('App', ns, 'b1'), c1: renderCount('App', ns, 'c1') }).toEqual(untouched);
    const controller = manager.controllers.find((c) => c.name === appOperator.operatorName)!;
    expect(controller.relatedIndex.referencing(appOperator.relatedKinds.configMap, { metadata: { namespace: ns, name: 'shared' } })).toEqual([`${ns}/a1`, `${ns}/a2`]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN an App whose referenced ConfigMap is deleted THEN it is Ready=False naming the ConfigMap, nothing is pruned, and it converges once the ConfigMap exists again', async () => {
    const ns = await newNamespace('missing');
    await createConfigMap(ns, 'settings', { 'app.properties': 'a=1' });
    await createApp(ns, 'web', 'settings');
    await ready(appPath(ns, 'web'));

    await admin.request('DELETE', configMapPath(ns, 'settings'));
    const waiting = await eventually('Ready=False ReferenceNotFound', async () => {
      const cr = await get(appPath(ns, 'web'));
      const readyCondition = condition(cr, 'Ready');
      return readyCondition?.status === 'False' && readyCondition.reason === 'ReferenceNotFound' ? cr : undefined;
    });
    expect(condition(waiting, 'Ready')?.message).toContain(`ConfigMap ${ns}/settings (spec.configMapRef.name) not found`);
    expect(condition(waiting, 'Reconciling')?.status).toBe('True');
    expect(condition(waiting, 'Stalled')?.status).toBe('False');
    // The children stay: a missing reference is not a reason to tear the App down.
    expect(await get(deploymentPath(ns, 'web'))).toBeDefined();
    // No hot loop: no retry with backoff while it waits, so a few direct calls add renders, not a storm.
    const whileWaiting = renderCount('App', ns, 'web');
    await admin.request('PATCH', appPath(ns, 'web'), { body: { metadata: { labels: { nudge: '1' } } }, contentType: 'application/merge-patch+json' });
    await eventually('the nudge reconciled', async () => renderCount('App', ns, 'web') > whileWaiting);
    expect(renderCount('App', ns, 'web') - whileWaiting).toBeLessThanOrEqual(2);

    await createConfigMap(ns, 'settings', { 'app.properties': 'a=2' });
    await ready(appPath(ns, 'web'));
    expect(await podTemplateHash(ns, 'web')).toMatch(/^[0-9a-f]{64}$/);
  }, TEST_TIMEOUT_MS);
});

describe('ordering', () => {
  test('GIVEN a child that dependsOn a gate WHEN the gate is not ready THEN the child is not created and is reported waiting; WHEN the gate opens THEN it is created', async () => {
    const ns = await newNamespace('gated');
    const path = `/apis/test.cdk8s.io/v1/namespaces/${ns}/gateds`;
    await admin.request('POST', path, { body: { apiVersion: 'test.cdk8s.io/v1', kind: 'Gated', metadata: { name: 'g', namespace: ns }, spec: {} } });
    const waiting = await eventually('the after ConfigMap reported waiting', async () => {
      const cr = await get(`${path}/g`);
      const children = (cr?.status as { children?: { name: string; waitingFor?: string[] }[] } | undefined)?.children ?? [];
      return children.find((c) => c.name === 'g-after' && c.waitingFor?.length) ? cr : undefined;
    });
    expect(condition(waiting, 'Reconciling')?.message).toContain(`ConfigMap ${ns}/g-after waits for ConfigMap ${ns}/g-gate`);
    expect(await get(configMapPath(ns, 'g-gate'))).toBeDefined();
    await settled(gatedOperator.operatorName, `${ns}/g`);
    expect(await get(configMapPath(ns, 'g-after'))).toBeUndefined();

    await admin.request('PATCH', configMapPath(ns, 'g-gate'), { body: { metadata: { labels: { gate: 'open' } } }, contentType: 'application/merge-patch+json' });
    await eventually('the after ConfigMap created', async () => get(configMapPath(ns, 'g-after')));
    const readyCr = await ready(`${path}/g`);
    const children = (readyCr.status as { children: { name: string; waitingFor?: string[]; ready: boolean }[] }).children;
    expect(children.map((c) => [c.name, c.ready, c.waitingFor ?? null])).toEqual([['g-after', true, null], ['g-gate', true, null]]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN a Database with a migration WHEN it converges THEN the migration Job was created only after the StatefulSet was ready, and status reports the endpoint and ready replicas', async () => {
    const ns = await newNamespace('database');
    const path = `/apis/databases.example.com/v1alpha1/namespaces/${ns}/databases`;
    await admin.request('POST', path, {
      body: {
        apiVersion: 'databases.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: 'orders', namespace: ns },
        spec: { version: '16', storageSize: '1Gi', migration: { image: 'ghcr.io/example/orders-migrate:2.3.0' } },
      },
    });
    const jobs = await eventually('the migration Job exists', async () => {
      const list = await admin.request('GET', `/apis/batch/v1/namespaces/${ns}/jobs`);
      const items = (list as { items?: KubeObject[] }).items ?? [];
      return items.length > 0 ? items : undefined;
    }, 240_000);
    expect(jobs.map((j) => j.metadata?.name)).toEqual([expect.stringMatching(/^orders-migrate-[0-9a-f]{8}$/)]);
    const jobCreated = Date.parse(jobs[0].metadata?.creationTimestamp as string);

    const sts = await get(`/apis/apps/v1/namespaces/${ns}/statefulsets/orders`);
    expect((sts?.status as { readyReplicas?: number } | undefined)?.readyReplicas).toBe(1);
    // The pod became Ready no later than the Job was created (both at seconds precision).
    const pod = await get(`/api/v1/namespaces/${ns}/pods/orders-0`);
    const podReady = ((pod?.status as { conditions?: { type: string; status: string; lastTransitionTime: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
    expect(podReady?.status).toBe('True');
    expect(Date.parse(podReady!.lastTransitionTime)).toBeLessThanOrEqual(jobCreated);

    const cr = await eventually('Database status with readyReplicas 1', async () => {
      const obj = await get(`${path}/orders`);
      return (obj?.status as { readyReplicas?: number } | undefined)?.readyReplicas === 1 ? obj : undefined;
    });
    expect((cr.status as { endpoint?: string }).endpoint).toBe(`orders-0.orders.${ns}.svc:5432`);
  }, 360_000);
});

describe('custom status and requeueAfter', () => {
  test('GIVEN a Memcached WHEN its pods run THEN status.nodes (from its status() hook) lists them without rendering again for each Pod, and an idle reconcile writes nothing', async () => {
    const ns = await newNamespace('memcached');
    const path = `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`;
    await admin.request('POST', path, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'cache', namespace: ns }, spec: { replicas: 2 } } });
    await ready(`${path}/cache`);
    const cr = await eventually('status.nodes lists two pods', async () => {
      const obj = await get(`${path}/cache`);
      const nodes = (obj?.status as { nodes?: string[] } | undefined)?.nodes ?? [];
      return nodes.length === 2 ? obj : undefined;
    });
    const pods = (await admin.request('GET', `/api/v1/namespaces/${ns}/pods`)) as { items: KubeObject[] };
    expect((cr.status as { nodes: string[] }).nodes).toEqual(pods.items.map((p) => p.metadata?.name).sort());
    // render reads no Pod: the reconciles their appearance caused reused the first render (before
    // status() a Pod appearing among the related Pods rendered again: at least 2 renders).
    expect(await rendersSkipped(memcachedOperator.operatorName)).toBeGreaterThan(0);
    expect(renderCount('Memcached', ns, 'cache')).toBe(1);

    await settled(memcachedOperator.operatorName, `${ns}/cache`);
    const since = requests.length;
    await settled(memcachedOperator.operatorName, `${ns}/cache`);
    expect(requests.slice(since).filter((r) => r.method !== 'GET' && !r.watch && r.path.includes(ns))).toEqual([]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN a render that asks for requeueAfter WHEN nothing changes THEN it is reconciled again after the delay; an unrelated event in between does not postpone it', async () => {
    const ns = await newNamespace('ticker');
    const path = `/apis/test.cdk8s.io/v1/namespaces/${ns}/tickers`;
    await admin.request('POST', path, { body: { apiVersion: 'test.cdk8s.io/v1', kind: 'Ticker', metadata: { name: 't', namespace: ns }, spec: {} } });
    const cr = await ready(`${path}/t`);
    expect((cr.status as { configMaps?: number }).configMaps).toBeGreaterThanOrEqual(0);
    const times = () => renders.get(`Ticker ${ns}/t`) ?? [];

    // Without any change, renders keep coming, REQUEUE_MS apart (the first ones may be closer: child
    // events reconcile too, without postponing the timer).
    const timed = await eventually('a timed requeue', async () => {
      const t = times();
      const i = t.findIndex((time, index) => index > 0 && time - t[index - 1] >= REQUEUE_MS - 50);
      return i > 0 ? t[i] : undefined;
    }, 60_000);

    // An unrelated event (a label) shortly after: it reconciles at once, and the timer armed by the
    // previous reconcile still fires: before the one the event's reconcile armed would.
    await admin.request('PATCH', `${path}/t`, { body: { metadata: { labels: { unrelated: 'yes' } } }, contentType: 'application/merge-patch+json' });
    const afterEvent = await eventually('the event reconciled', async () => times().find((t) => t > timed));
    const next = await eventually('the timed requeue after the event', async () => times().find((t) => t > afterEvent), 60_000);
    expect(next - timed).toBeGreaterThanOrEqual(REQUEUE_MS - 50);
    expect(next - afterEvent).toBeLessThan(REQUEUE_MS);
    expect((await get(configMapPath(ns, 't')))?.data).toEqual({ note: '' });
  }, TEST_TIMEOUT_MS);
});
