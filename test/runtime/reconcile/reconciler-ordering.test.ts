/**
 * The reconciler with a real render (renderCustomResource of a test operator), in-memory caches and a
 * recording fake client: dependsOn/readyWhen ordering, ReferenceNotFound, the operator's own status
 * fields and requeueAfter. The same flows against a real API server live in test/integration/.
 */
import { ApiObject, App, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { z } from 'zod';
import { dependsOn, readyWhen } from '../../../lib/operator/render/child-ordering.js';
import type { CustomResource } from '../../../lib/operator/custom-resource.js';
import { resolveKind } from '../../../lib/operator/kinds.js';
import type { RelatedDeclaration } from '../../../lib/operator/render/related.js';
import { relatedLookupOf, renderCustomResource } from '../../../lib/operator/render/render-children.js';
import type { KubeResource } from '../../../lib/operator/render/render-context.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ContextOperator, REF_UID, configMap, type ContextScript, type RefSpec } from '../../operator/fixtures/context-operators.js';
import type { FakeKubeClient } from '../../support/fake-kube-client.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const CHILD_KINDS = [
  { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'batch/v1', kind: 'Job' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
].map((k) => resolveKind(k));

const Status = z.object({ nodes: z.array(z.string()), endpoint: z.string().optional() });
const STATUS_FIELDS = Object.keys(Status.shape);

type Related = Record<string, RelatedDeclaration<CustomResource<RefSpec>>>;

/**
 * `renderSkip: false` for a script whose output changes through a variable the test sets between
 * reconciles: an input the render memo cannot see (render-memo.test.ts covers the skip).
 */
function setup(script: ContextScript<typeof Status>, options: { related?: Related; spec?: Partial<RefSpec>; applyConcurrency?: number; renderSkip?: boolean } = {}) {
  const operator = new ContextOperator<typeof Status>(new App(), { status: Status, related: options.related, renderSkip: options.renderSkip }, script);
  /** Objects that exist in the cluster, where related references are looked up. */
  const relatedObjects: KubeResource[] = [];
  const harness = reconcilerHarness({
    operator,
    render: (cr, inputs) => renderCustomResource(operator, cr as unknown as CustomResource, inputs),
    related: { get: (...args) => relatedLookupOf(relatedObjects).get(...args), select: (...args) => relatedLookupOf(relatedObjects).select(...args) },
    statusFields: STATUS_FIELDS,
    childKinds: CHILD_KINDS,
    crs: [{ apiVersion: 'demo.example.com/v1', kind: 'Ref', metadata: { name: 'shop', namespace: 'team-a', uid: REF_UID, generation: 1, resourceVersion: '10' }, spec: { ...options.spec } }],
    applyConcurrency: options.applyConcurrency,
  });
  return { ...harness, operator, relatedObjects };
}

type Condition = { type: string; status: string; reason: string; message: string };
const condition = (status: { conditions: Condition[] }, type: string) => status.conditions.find((c) => c.type === type)!;

const STS = '/apis/apps/v1/namespaces/team-a/statefulsets/shop-db';
const SVC = '/api/v1/namespaces/team-a/services/shop-db-service';
const JOB = '/apis/batch/v1/namespaces/team-a/jobs/shop-migrate';

/** A StatefulSet (with its headless Service) and a Job that dependsOn it. */
const dbAndMigration: ContextScript<typeof Status> = (_cr, scope) => {
  const db = new kplus.StatefulSet(scope, 'db', { containers: [{ image: 'postgres:16', portNumber: 5432 }] });
  const migrate = new kplus.Job(scope, 'migrate', { containers: [{ image: 'migrate:1' }] });
  dependsOn(migrate, db);
};
const readySts = (obj: KubeObject) => (obj.kind === 'StatefulSet' ? { observedGeneration: 1, readyReplicas: 1 } : undefined);

describe('Reconciler: dependsOn', () => {
  test('GIVEN a Job that dependsOn a StatefulSet that is not ready THEN the Job is not applied and status.children and Reconciling say what it waits for', async () => {
    const { reconcile, applies, lastStatus } = setup(dbAndMigration);
    const result = await reconcile('team-a/shop');
    expect(result).toBeUndefined();
    expect(applies().sort()).toEqual([SVC, STS].sort());
    const status = lastStatus();
    const job = status.children.find((c: { kind: string }) => c.kind === 'Job');
    expect(job).toEqual({ apiVersion: 'batch/v1', kind: 'Job', name: 'shop-migrate', namespace: 'team-a', ready: false, waitingFor: ['StatefulSet team-a/shop-db'] });
    for (const other of status.children.filter((c: { kind: string }) => c.kind !== 'Job')) expect(other.waitingFor).toBeUndefined();
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ChildrenNotReady' });
    const reconciling = condition(status, 'Reconciling');
    expect(reconciling).toMatchObject({ status: 'True', reason: 'ChildrenNotReady' });
    expect(reconciling.message).toContain('Job team-a/shop-migrate waits for StatefulSet team-a/shop-db');
    expect(reconciling.message).toContain('StatefulSet shop-db: 0/1 replicas ready');
    expect(condition(status, 'Stalled').status).toBe('False');
  });

  test('GIVEN the StatefulSet becomes ready in the cache THEN the next reconcile applies the Job, which no longer waits', async () => {
    const { client, reconcile, sync, cache, applies, lastStatus } = setup(dbAndMigration);
    await reconcile('team-a/shop');
    sync(); // stored, not ready yet
    let n = client.calls.length;
    await reconcile('team-a/shop');
    expect(applies(n)).toEqual([]);
    expect(lastStatus().children.find((c: { kind: string }) => c.kind === 'Job').waitingFor).toEqual(['StatefulSet team-a/shop-db']);

    const sts = cache('statefulsets').get('team-a', 'shop-db')!;
    cache('statefulsets').put({ ...sts, metadata: { ...sts.metadata, resourceVersion: 'ready' }, status: readySts(sts) });
    n = client.calls.length;
    await reconcile('team-a/shop');
    expect(applies(n)).toEqual([JOB]);
    const status = lastStatus();
    expect(status.children.find((c: { kind: string }) => c.kind === 'Job')).toEqual({ apiVersion: 'batch/v1', kind: 'Job', name: 'shop-migrate', namespace: 'team-a', ready: false });
    expect(status.children.find((c: { kind: string }) => c.kind === 'StatefulSet').ready).toBe(true);
    // the Job itself is not complete yet: that is the only thing left
    expect(condition(status, 'Reconciling').message).toBe('Job shop-migrate: not complete');
  });

  test('GIVEN a waiting child that already exists THEN it is neither updated nor pruned, and reported with its own readiness', async () => {
    let image = 'migrate:1';
    const { client, reconcile, sync, cache, applies, lastStatus } = setup((_cr, scope) => {
      const db = new kplus.StatefulSet(scope, 'db', { containers: [{ image: 'postgres:16', portNumber: 5432 }] });
      const config = new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { image } });
      dependsOn(config, db);
    });
    await reconcile('team-a/shop');
    sync(readySts);
    await reconcile('team-a/shop'); // the StatefulSet is ready: the ConfigMap is created
    sync(readySts);
    expect(cache('configmaps').get('team-a', 'shop-config')).toBeDefined();
    // the StatefulSet is no longer ready, and render changes the ConfigMap
    const sts = cache('statefulsets').get('team-a', 'shop-db')!;
    cache('statefulsets').put({ ...sts, metadata: { ...sts.metadata, resourceVersion: 'degraded' }, status: { observedGeneration: 1, readyReplicas: 0 } });
    image = 'migrate:2';
    const n = client.calls.length;
    await reconcile('team-a/shop');
    expect(applies(n)).toEqual([]);
    expect(client.calls.slice(n).filter((c) => c.method === 'DELETE')).toEqual([]);
    const entry = lastStatus().children.find((c: { kind: string }) => c.kind === 'ConfigMap');
    expect(entry).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'shop-config', namespace: 'team-a', ready: true, waitingFor: ['StatefulSet team-a/shop-db'] });
  });

  test('GIVEN a dependsOn cycle THEN cdk8s refuses it: RenderFailed names the cycle and nothing is applied', async () => {
    const { reconcile, applies, lastStatus } = setup((_cr, scope) => {
      const a = new ApiObject(scope, 'a', { apiVersion: 'v1', kind: 'ConfigMap' });
      const b = new ApiObject(scope, 'b', { apiVersion: 'v1', kind: 'ConfigMap' });
      dependsOn(a, b);
      dependsOn(b, a);
    });
    await expect(reconcile('team-a/shop')).rejects.toMatchObject({ reason: 'RenderFailed', message: expect.stringContaining('Dependency cycle detected: shop/a => shop/b => shop/a') });
    expect(applies()).toEqual([]);
    expect(condition(lastStatus(), 'Stalled')).toMatchObject({ status: 'True', reason: 'RenderFailed' });
  });
});


describe('Reconciler: concurrent applies', () => {
  /** Two ConfigMaps and a Secret: `a` and `b` wait for nothing, `c` dependsOn both. */
  const twoLevels: ContextScript<typeof Status> = (_cr, scope) => {
    const a = new ApiObject(scope, 'a', { apiVersion: 'v1', kind: 'ConfigMap' });
    const b = new ApiObject(scope, 'b', { apiVersion: 'v1', kind: 'Secret' });
    const c = new ApiObject(scope, 'c', { apiVersion: 'v1', kind: 'ConfigMap' });
    dependsOn(c, a, b);
  };
  /** Each child apply is answered a macrotask later; returns the start/end trace of the applies. */
  const traceApplies = (client: FakeKubeClient) => {
    const trace: string[] = [];
    client.hold = async (call) => {
      // a child's write: its create (POST to its collection) or its server-side apply
      const childWrite = (call.method === 'POST' && !call.path.includes('/events')) || (call.contentType === 'application/apply-patch+yaml' && !call.path.endsWith('/status'));
      if (!childWrite) return;
      const name = call.body.metadata.name as string;
      trace.push(`start ${name}`);
      await new Promise((resolve) => setImmediate(resolve));
      trace.push(`end ${name}`);
    };
    return trace;
  };

  test('GIVEN children that do not wait for each other THEN their applies are in flight together, and a dependent child starts only after both ended', async () => {
    const { client, reconcile, lastStatus } = setup(twoLevels);
    const trace = traceApplies(client);
    await reconcile('team-a/shop');
    expect(trace).toEqual(['start shop-a', 'start shop-b', 'end shop-a', 'end shop-b', 'start shop-c', 'end shop-c']);
    expect(lastStatus().children.map((c: { name: string }) => c.name).sort()).toEqual(['shop-a', 'shop-b', 'shop-c']);
    expect(condition(lastStatus(), 'Ready').status).toBe('True');
  });

  test('GIVEN applyConcurrency 1 THEN one apply at a time, in render order', async () => {
    const { client, reconcile } = setup(twoLevels, { applyConcurrency: 1 });
    const trace = traceApplies(client);
    await reconcile('team-a/shop');
    expect(trace).toEqual(['start shop-a', 'end shop-a', 'start shop-b', 'end shop-b', 'start shop-c', 'end shop-c']);
  });

  test('GIVEN one apply of a level fails THEN its siblings are still applied, the dependent is not, and the failure is reported', async () => {
    const { client, reconcile, applies, lastStatus } = setup(twoLevels);
    client.fail = (call) => (call.method === 'POST' && call.path.endsWith('/secrets') && call.body.metadata.name === 'shop-b' ? Object.assign(new Error('admission webhook denied the request'), { statusCode: 422 }) : undefined);
    await expect(reconcile('team-a/shop')).rejects.toThrow(/denied/);
    expect(applies()).toEqual(['/api/v1/namespaces/team-a/configmaps/shop-a', '/api/v1/namespaces/team-a/secrets/shop-b']);
    const status = lastStatus();
    expect(condition(status, 'Stalled')).toMatchObject({ status: 'True', reason: 'ApplyFailed' });
    expect(status.children.find((c: { name: string }) => c.name === 'shop-c').waitingFor).toEqual(['Secret team-a/shop-b']);
  });
});

describe('Reconciler: readyWhen', () => {
  test('GIVEN readyWhen on a child THEN the predicate, not the built-in rule, decides its readiness and what waits on it', async () => {
    const { client, reconcile, sync, cache, applies, lastStatus } = setup((_cr, scope) => {
      const web = new kplus.Deployment(scope, 'web', { containers: [{ image: 'web:1' }] });
      // ready once someone marked it warmed, whatever its conditions say
      readyWhen(web, (o) => o.metadata.annotations?.['example.com/warmed'] === 'true');
      const config = new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
      dependsOn(config, web);
    });
    await reconcile('team-a/shop');
    // built-in rule satisfied (Available=True), predicate not: still not ready
    sync((o) => (o.kind === 'Deployment' ? { observedGeneration: 1, conditions: [{ type: 'Available', status: 'True' }] } : undefined));
    let n = client.calls.length;
    await reconcile('team-a/shop');
    expect(applies(n)).toEqual([]);
    let status = lastStatus();
    expect(status.children.find((c: { kind: string }) => c.kind === 'Deployment').ready).toBe(false);
    expect(condition(status, 'Reconciling').message).toContain('Deployment team-a/shop-web: readyWhen not met');

    const web = cache('deployments').get('team-a', 'shop-web')!;
    cache('deployments').put({ ...web, metadata: { ...web.metadata, resourceVersion: 'warmed', annotations: { ...web.metadata?.annotations, 'example.com/warmed': 'true' } }, status: {} });
    n = client.calls.length;
    await reconcile('team-a/shop');
    expect(applies(n)).toEqual(['/api/v1/namespaces/team-a/configmaps/shop-config']);
    status = lastStatus();
    expect(status.children.find((c: { kind: string }) => c.kind === 'Deployment').ready).toBe(true);
    expect(condition(status, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
  });

  test('GIVEN a readyWhen predicate that throws THEN the child is not ready and the message says so, without failing the reconcile', async () => {
    const { reconcile, lastStatus } = setup((_cr, scope) => {
      const config = new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
      readyWhen(config, () => {
        throw new Error('no data yet');
      });
    });
    await expect(reconcile('team-a/shop')).resolves.toBeUndefined();
    const status = lastStatus();
    expect(status.children).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'shop-config', namespace: 'team-a', ready: false }]);
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ChildrenNotReady', message: 'ConfigMap team-a/shop-config: readyWhen threw: no data yet' });
  });
});

describe('Reconciler: related objects', () => {
  const related: Related = { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' } };
  const usingConfig: ContextScript<typeof Status> = (_cr, scope, context) => {
    new ApiObject(scope, 'copy', { apiVersion: 'v1', kind: 'ConfigMap', data: { ...context.related.config[0]?.data } });
  };

  test('GIVEN a required ConfigMap that does not exist THEN Ready=False and Reconciling=True with reason ReferenceNotFound naming it, a Warning event, no apply, no prune, no throw', async () => {
    const { client, reconcile, cache, lastStatus } = setup(usingConfig, { related, spec: { configMapRef: { name: 'settings' } } });
    // an owned child from an earlier reconcile: kept while the reference is missing
    const labels = { 'app.kubernetes.io/managed-by': 'ref-operator', 'operator.cdk8s.io/owner-uid': REF_UID };
    cache('configmaps').put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-copy', namespace: 'team-a', uid: 'c1', labels, managedFields: [{ manager: 'ref-operator' }] } });
    await expect(reconcile('team-a/shop')).resolves.toBeUndefined();
    // the Event is written in the background: in either order with the status write
    expect(client.calls.map((c) => `${c.method} ${c.path}`).sort()).toEqual([
      'PATCH /apis/demo.example.com/v1/namespaces/team-a/refs/shop/status',
      'POST /apis/events.k8s.io/v1/namespaces/team-a/events',
    ]);
    expect(client.calls.find((c) => c.method === 'POST')!.body).toMatchObject({ type: 'Warning', reason: 'ReferenceNotFound' });
    const status = lastStatus();
    // The reason first, the CR named once, at the end (failure-message.ts).
    const message = 'ConfigMap team-a/settings (spec.configMapRef.name) not found (render Ref team-a/shop)';
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ReferenceNotFound', message });
    expect(condition(status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'ReferenceNotFound', message });
    expect(condition(status, 'Stalled')).toMatchObject({ status: 'False', reason: 'ReferenceNotFound' });
  });

  test('GIVEN a custom status was written WHEN the reference goes missing THEN the ReferenceNotFound status keeps the custom fields and children', async () => {
    const { client, reconcile, sync, relatedObjects, applies, statusWrites } = setup(
      (_cr, scope, context) => {
        new ApiObject(scope, 'copy', { apiVersion: 'v1', kind: 'ConfigMap', data: { ...context.related.config[0]?.data } });
        return { status: { nodes: ['a'] } };
      },
      { related, spec: { configMapRef: { name: 'settings' } } },
    );
    relatedObjects.push(configMap('settings'));
    await reconcile('team-a/shop');
    sync();
    relatedObjects.pop();
    const n = client.calls.length;
    await expect(reconcile('team-a/shop')).resolves.toBeUndefined();
    const writes = statusWrites(n);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({ nodes: ['a'], children: [{ kind: 'ConfigMap', name: 'shop-copy', ready: true }] });
    expect(condition(writes[0], 'Ready')).toMatchObject({ status: 'False', reason: 'ReferenceNotFound' });
    expect(applies(n)).toEqual([]);
  });

  test('GIVEN the referenced ConfigMap is created THEN the next reconcile renders with it', async () => {
    const { client, reconcile, relatedObjects, lastStatus } = setup(usingConfig, { related, spec: { configMapRef: { name: 'settings' } } });
    await reconcile('team-a/shop');
    relatedObjects.push(configMap('settings', 'team-a', { greeting: 'hello' }));
    const n = client.calls.length;
    await reconcile('team-a/shop');
    const apply = client.calls.slice(n).find((c) => c.method === 'POST' && c.path === '/api/v1/namespaces/team-a/configmaps' && c.body.metadata.name === 'shop-copy')!;
    expect(apply.body.data).toEqual({ greeting: 'hello' });
    expect(condition(lastStatus(), 'Ready')).toMatchObject({ status: 'True' });
  });
});

describe('Reconciler: the operator\'s own status and requeueAfter', () => {
  test('GIVEN render returns a status and requeueAfter THEN both are used; a second reconcile with identical inputs writes nothing', async () => {
    const { client, reconcile, sync, reconciler, lastStatus } = setup((cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
      return { status: { nodes: [cr.metadata.name], endpoint: 'http://shop' }, requeueAfter: Duration.minutes(5) };
    });
    expect(await reconcile('team-a/shop')).toEqual({ requeueAfterMs: 300_000 });
    const status = lastStatus();
    expect(status).toMatchObject({ nodes: ['shop'], endpoint: 'http://shop', observedGeneration: 1 });
    expect(Object.keys(status).sort()).toEqual(['children', 'conditions', 'endpoint', 'nodes', 'observedGeneration']);
    sync();
    const n = client.calls.length;
    expect(await reconcile('team-a/shop')).toEqual({ requeueAfterMs: 300_000 });
    expect(client.calls.slice(n)).toEqual([]);
    expect(reconciler.lastStats.get('team-a/shop')).toEqual({ applied: 0, pruned: 0, statusWritten: false });
  });

  test('GIVEN only the custom status changes THEN it is written, and a field render leaves out is not sent', async () => {
    let status: { nodes: string[]; endpoint?: string } = { nodes: ['a'], endpoint: 'http://shop' };
    const { client, reconcile, sync, lastStatus, statusWrites } = setup((_cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
      return { status };
    }, { renderSkip: false });
    await reconcile('team-a/shop');
    sync();
    status = { nodes: ['a', 'b'] };
    const n = client.calls.length;
    expect(await reconcile('team-a/shop')).toBeUndefined();
    expect(statusWrites(n)).toHaveLength(1);
    expect(lastStatus().nodes).toEqual(['a', 'b']);
    expect('endpoint' in lastStatus()).toBe(false);
  });

  test('GIVEN render fails after a status was written THEN the Stalled status write keeps the custom fields', async () => {
    let fail = false;
    const { client, reconcile, sync, lastStatus, statusWrites } = setup((_cr, scope) => {
      if (fail) throw new Error('boom');
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
      return { status: { nodes: ['a'], endpoint: 'http://shop' } };
    }, { renderSkip: false });
    await reconcile('team-a/shop');
    sync();
    fail = true;
    const n = client.calls.length;
    await expect(reconcile('team-a/shop')).rejects.toThrow('boom');
    expect(statusWrites(n)).toHaveLength(1);
    const status = lastStatus();
    expect(status).toMatchObject({ nodes: ['a'], endpoint: 'http://shop' });
    expect(condition(status, 'Stalled')).toMatchObject({ status: 'True', reason: 'RenderFailed' });
  });

  test('GIVEN render returns no status after it returned one THEN the existing custom fields are kept (re-sent)', async () => {
    let withStatus = true;
    const { reconcile, sync, crs, applies, statusWrites } = setup((_cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { v: String(withStatus) } });
      return withStatus ? { status: { nodes: ['a'] } } : undefined;
    }, { renderSkip: false });
    await reconcile('team-a/shop');
    sync();
    withStatus = false;
    await reconcile('team-a/shop');
    sync();
    // the child changed (applied), the status (conditions, children, nodes) did not: no status write
    expect(applies()).toEqual(['/api/v1/namespaces/team-a/configmaps/shop-config', '/api/v1/namespaces/team-a/configmaps/shop-config']);
    expect(statusWrites()).toHaveLength(1);
    expect(crs.get('team-a', 'shop')!.status).toMatchObject({ nodes: ['a'] });
  });

  test('GIVEN an apply fails after a status was written THEN the Stalled status write keeps the custom fields', async () => {
    let image = 'a';
    const { client, reconcile, sync, statusWrites } = setup((_cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', data: { image } });
      return image === 'a' ? { status: { nodes: ['a'] } } : undefined;
    }, { renderSkip: false });
    await reconcile('team-a/shop');
    sync();
    image = 'b';
    client.fail = (call) => (call.path.includes('/configmaps/') ? new Error('apply rejected') : undefined);
    const n = client.calls.length;
    await expect(reconcile('team-a/shop')).rejects.toThrow('apply rejected');
    const writes = statusWrites(n);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatchObject({ nodes: ['a'] });
    expect(condition(writes[0], 'Stalled')).toMatchObject({ status: 'True', reason: 'ApplyFailed' });
  });
});
