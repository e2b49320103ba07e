/**
 * Reconciler decision logic with in-memory caches and a recording fake client. The same flows run against
 * the real API server in test/integration/runtime.test.ts; this covers the branches that are hard to
 * provoke there (cache lag, 409, 403, prune before sync).
 */
import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { DESIRED_HASH_ANNOTATION } from '../../../lib/runtime/reconcile/child-diff.js';
import { ConflictError, ReconcileError } from '../../../lib/runtime/errors.js';
import { fieldTypeOfSchema, QUANTITY_SCHEMA } from '../../../lib/runtime/reconcile/field-type.js';
import type { Logger } from '../../../lib/runtime/logger.js';
import type { FieldTypeSource } from '../../../lib/runtime/reconcile/openapi-field-types.js';
import type { FakeKubeClient } from '../../support/fake-kube-client.js';
import { MapCache } from '../../support/map-cache.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';


const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const deploymentKind = { apiVersion: 'apps/v1', group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true };
const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

function setup(
  options: {
    render?: (cr: KubeObject) => KubeObject[];
    finalize?: (this: unknown, cr: KubeObject, context: { signal: AbortSignal }) => Promise<void>;
    synced?: boolean;
    signal?: AbortSignal;
    fieldTypes?: FieldTypeSource;
    logger?: Logger;
  } = {},
) {
  const cr: KubeObject = { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '10' }, spec: { replicas: 2 } };
  const labels = { 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': 'uid-1' };
  const render =
    options.render ??
    ((c: KubeObject) => [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w', namespace: 'ns', labels }, spec: { replicas: (c.spec as { replicas: number }).replicas } },
    ]);
  const harness = reconcilerHarness({
    operator: { operatorName: 'widget-operator', crd, ...(options.finalize ? { finalize: options.finalize } : {}) } as never,
    render,
    childKinds: [deploymentKind, configMapKind],
    crs: [cr],
    synced: options.synced,
    // a synced Deployment is Available
    childStatus: (child) => (child.kind === 'Deployment' ? { observedGeneration: 1, conditions: [{ type: 'Available', status: 'True' }] } : undefined),
    signal: options.signal,
    fieldTypes: options.fieldTypes,
    logger: options.logger,
  });
  return { ...harness, deployments: harness.cache('deployments'), configMaps: harness.cache('configmaps'), labels };
}

const writes = (client: FakeKubeClient) => client.calls.filter((c) => c.method !== 'GET');

describe('Reconciler', () => {
  test('GIVEN a new CR THEN each child is created (POST: fieldManager, strict validation) and status is written via /status; no Event for a success', async () => {
    const { client, reconcile } = setup();
    await reconcile('ns/w');
    // The create (adoption.ts: a POST, refused when the name is taken), then the status write; creating
    // children records no Normal Event (outcome-reporter.ts).
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /apis/apps/v1/namespaces/ns/deployments', 'PATCH /apis/x.io/v1/namespaces/ns/widgets/w/status']);
    const create = client.calls[0];
    expect(create.query).toEqual({ fieldManager: 'widget-operator', fieldValidation: 'Strict' });
    expect(create.body.metadata.name).toBe('w');
    expect(create.body.metadata.annotations[DESIRED_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{20}$/);
    const status = client.calls.find((c) => c.path.endsWith('/status'))!.body.status;
    expect(status.observedGeneration).toBe(1);
    // the apply's answer has no status yet: waiting for the Deployment
    expect(status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`)).toEqual(['Ready=False', 'Reconciling=True', 'Stalled=False']);
    expect(status.conditions[0]).toMatchObject({ reason: 'ChildrenNotReady', message: 'Deployment w: 0/2 replicas available' });
  });

  test('GIVEN the Events API does not answer THEN the reconcile still finishes, status written; the Event goes out when it answers', async () => {
    const { client, reconcile, reconciler, events, sync, deployments } = setup();
    await reconcile('ns/w');
    sync();
    const d = deployments.get('ns', 'w')!;
    deployments.put({ ...d, metadata: { ...d.metadata, resourceVersion: 'edited' }, spec: { replicas: 9 } }); // drift: an Applied event
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    client.hold = (call) => (call.path.includes('/events') ? answered : Promise.resolve());
    const n = client.calls.length;
    await reconciler.reconcile('ns/w'); // the Reconciler itself: the harness's reconcile() would wait for the Event
    // the apply done and the reconcile returned (status unchanged: no write) while the Event waits
    expect(client.calls.slice(n).map((c) => `${c.method} ${c.path}`).sort()).toEqual(['PATCH /apis/apps/v1/namespaces/ns/deployments/w', 'POST /apis/events.k8s.io/v1/namespaces/ns/events']);
    answer();
    await events!.flush();
  });

  test('GIVEN the cache has not caught up with our writes yet THEN a second reconcile writes nothing', async () => {
    const { client, reconcile } = setup();
    await reconcile('ns/w');
    const n = client.calls.length;
    await reconcile('ns/w');
    expect(client.calls.length).toBe(n);
  });

  test('GIVEN the cache shows our writes THEN a second reconcile writes nothing', async () => {
    const { client, reconcile, reconciler, sync, crs } = setup();
    await reconcile('ns/w');
    sync(); // the Deployment is now Available
    await reconcile('ns/w');
    expect(writes(client).map((c) => c.path).sort()).toEqual([
      '/apis/apps/v1/namespaces/ns/deployments',
      '/apis/x.io/v1/namespaces/ns/widgets/w/status',
      '/apis/x.io/v1/namespaces/ns/widgets/w/status',
    ]);
    sync();
    expect((crs.get('ns', 'w')!.status as { conditions: { status: string }[] }).conditions[0].status).toBe('True');
    const n = client.calls.length;
    await reconcile('ns/w');
    await reconcile('ns/w');
    expect(client.calls.length).toBe(n);
    expect(reconciler.lastStats.get('ns/w')).toEqual({ applied: 0, pruned: 0, statusWritten: false });
  });

  test('GIVEN drift on a field we set THEN apply again, with an Applied event; a second drift joins its series', async () => {
    const { client, reconcile, sync, deployments } = setup();
    await reconcile('ns/w');
    sync();
    const drift = (rv: string) => {
      const d = deployments.get('ns', 'w')!;
      deployments.put({ ...d, metadata: { ...d.metadata, resourceVersion: rv }, spec: { replicas: 9 } });
    };
    drift('edited');
    let n = client.calls.length;
    await reconcile('ns/w');
    expect(client.calls.slice(n).map((c) => c.method + ' ' + c.path)).toEqual(['PATCH /apis/apps/v1/namespaces/ns/deployments/w', 'POST /apis/events.k8s.io/v1/namespaces/ns/events']);
    const apply = client.calls[n];
    expect(apply.contentType).toBe('application/apply-patch+yaml');
    expect(apply.query).toMatchObject({ fieldManager: 'widget-operator', force: true });
    const event = client.calls.at(-1)!;
    expect(event.body).toMatchObject({ type: 'Normal', reason: 'Applied', action: 'Apply', note: 'applied Deployment ns/w' });
    drift('edited-again');
    n = client.calls.length;
    await reconcile('ns/w');
    // the apply, and the repeated Applied event joins the first one's series
    expect(client.calls.slice(n).map((c) => c.method + ' ' + c.path)).toEqual([
      'PATCH /apis/apps/v1/namespaces/ns/deployments/w',
      `PATCH /apis/events.k8s.io/v1/namespaces/ns/events/${event.body.metadata.name}`,
    ]);
    expect(client.calls.at(-1)!.body.series.count).toBe(2);
  });

  test('GIVEN an owned, applied child no longer rendered THEN it is deleted with a UID precondition, but only once caches synced', async () => {
    for (const synced of [false, true]) {
      const { client, reconcile, sync, configMaps, labels } = setup({ synced });
      await reconcile('ns/w');
      sync();
      configMaps.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: 'ns', uid: 'cm-uid', labels, managedFields: [{ manager: 'widget-operator' }] } });
      configMaps.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs', namespace: 'ns', uid: 'cm-2', labels, managedFields: [] } });
      const n = client.calls.length;
      await reconcile('ns/w');
      const deletes = client.calls.slice(n).filter((c) => c.method === 'DELETE');
      if (!synced) expect(deletes).toEqual([]);
      else {
        expect(deletes.map((c) => c.path)).toEqual(['/api/v1/namespaces/ns/configmaps/old']);
        expect(deletes[0].body).toMatchObject({ propagationPolicy: 'Background', preconditions: { uid: 'cm-uid' } });
        await reconcile('ns/w'); // cache still shows it: not deleted twice
        expect(client.calls.filter((c) => c.method === 'DELETE')).toHaveLength(1);
      }
    }
  });

  test('GIVEN sharded caches (bucketOf) THEN the reconcile reads its CR\'s bucket only: render observes, apply finds and prune deletes its children there, not those of the whole cache', async () => {
    const observed: string[][] = [];
    const labels = { 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': 'uid-1' };
    const harness = reconcilerHarness({
      operator: { operatorName: 'widget-operator', crd } as never,
      render: (_cr, inputs) => {
        observed.push((inputs.observed ?? []).map((c) => c.metadata.name).sort());
        return [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w', namespace: 'ns', labels }, data: { a: '1' } }];
      },
      childKinds: [configMapKind],
      crs: [{ apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '10' }, spec: {} }],
      bucketOf: (key) => (key === 'ns/w' ? 3 : 0),
    });
    const whole = harness.cache('configmaps');
    const bucket3 = new MapCache();
    const asked: number[] = [];
    whole.inBucket = (bucket) => {
      asked.push(bucket);
      return bucket === 3 ? bucket3 : undefined;
    };
    const owned = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels, managedFields: [{ manager: 'widget-operator' }] }, data });
    whole.put(owned('elsewhere')); // in the whole cache only (another bucket): neither observed nor pruned
    whole.put(owned('w', { a: '1' })); // likewise: the reconcile does not find it, so it creates w
    bucket3.put(owned('stale')); // the CR's bucket: observed, and pruned (no longer rendered)
    const n = harness.client.calls.length;
    await harness.reconcile('ns/w');
    expect(new Set(asked)).toEqual(new Set([3]));
    expect(observed).toEqual([['stale']]);
    const calls = harness.client.calls.slice(n).filter((c) => c.method !== 'GET' && !c.path.includes('/events')).map((c) => `${c.method} ${c.path}`);
    expect(calls).toEqual(['POST /api/v1/namespaces/ns/configmaps', 'DELETE /api/v1/namespaces/ns/configmaps/stale', 'PATCH /apis/x.io/v1/namespaces/ns/widgets/w/status']);
  });

  test('GIVEN render throws THEN Stalled=RenderFailed, one Warning event, ReconcileError; a retry only counts the event again', async () => {
    const { client, reconcile } = setup({
      render: () => {
        throw new Error('boom');
      },
    });
    await expect(reconcile('ns/w')).rejects.toThrow(ReconcileError);
    // the Event is written in the background: in either order with the status write
    expect(client.calls.map((c) => `${c.method} ${c.path}`).sort()).toEqual([
      'PATCH /apis/x.io/v1/namespaces/ns/widgets/w/status',
      'POST /apis/events.k8s.io/v1/namespaces/ns/events',
    ]);
    const event = client.calls.find((c) => c.method === 'POST')!;
    expect(event.body).toMatchObject({ type: 'Warning', reason: 'RenderFailed', action: 'Render', regarding: { kind: 'Widget', name: 'w', uid: 'uid-1' } });
    const stalled = client.calls.find((c) => c.path.endsWith('/status'))!.body.status.conditions.find((c: { type: string }) => c.type === 'Stalled');
    expect(stalled).toMatchObject({ status: 'True', reason: 'RenderFailed', message: 'boom (render Widget ns/w)' });
    await expect(reconcile('ns/w')).rejects.toThrow('boom');
    // no new Event and no status write: the existing Event's series count goes up
    expect(client.calls.slice(2).map((c) => `${c.method} ${c.path}`)).toEqual([`PATCH /apis/events.k8s.io/v1/namespaces/ns/events/${event.body.metadata.name}`]);
    expect(client.calls[2].body).toEqual({ series: { count: 2, lastObservedTime: expect.stringMatching(/Z$/) } });
  });

  test('GIVEN a 409 Conflict on a child\'s write THEN ConflictError, no condition, no event', async () => {
    const { client, reconcile } = setup();
    client.fail = (call) => (call.method === 'POST' ? new ApiError('POST', '/x', 409, 'Conflict', undefined, 'the object has been modified') : undefined);
    await expect(reconcile('ns/w')).rejects.toThrow(ConflictError);
    expect(client.calls.map((c) => c.method)).toEqual(['POST']);
  });

  test('GIVEN a 403 on apply THEN the message names verb, group, resource and namespace', async () => {
    const { client, reconcile } = setup();
    client.fail = (call) =>
      call.method === 'POST' && call.path.includes('/deployments') ? new ApiError('POST', call.path, 403, 'Forbidden', { message: 'deployments.apps "w" is forbidden' }, 'forbidden') : undefined;
    const err = await reconcile('ns/w').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as ReconcileError).reason).toBe('Forbidden');
    expect((err as Error).message).toContain('cannot create apps/deployments in namespace "ns"');
    const status = client.calls.find((c) => c.path.endsWith('/status'))!.body.status;
    expect(status.conditions.find((c: { type: string }) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'Forbidden' });
  });

  test('GIVEN a 403 on apply THEN the Warning event says action Apply; GIVEN a 403 on the prune of a child no longer rendered THEN it says Prune', async () => {
    const applyDenied = setup();
    applyDenied.client.fail = (call) => (call.method === 'POST' && call.path.includes('/deployments') ? new ApiError('POST', call.path, 403, 'Forbidden', { message: 'forbidden' }, 'forbidden') : undefined);
    await applyDenied.reconcile('ns/w').catch(() => undefined);
    expect(applyDenied.client.calls.filter((c) => c.path.includes('/events')).map((c) => [c.body.reason, c.body.action])).toEqual([['Forbidden', 'Apply']]);

    const { client, reconcile, configMaps, labels } = setup();
    configMaps.put({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'old', namespace: 'ns', uid: 'cm-uid', labels, resourceVersion: '3', managedFields: [{ manager: 'widget-operator' }], ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Widget', name: 'w', uid: 'uid-1', controller: true }] },
    });
    client.fail = (call) => (call.method === 'DELETE' ? new ApiError('DELETE', call.path, 403, 'Forbidden', { message: 'configmaps "old" is forbidden' }, 'forbidden') : undefined);
    const err = await reconcile('ns/w').catch((e: unknown) => e);
    expect((err as ReconcileError).reason).toBe('Forbidden');
    expect((err as Error).message).toContain('cannot delete configmaps in namespace "ns"');
    const warnings = client.calls.filter((c) => c.path.includes('/events') && c.body.type === 'Warning');
    expect(warnings.map((c) => [c.body.reason, c.body.action])).toEqual([['Forbidden', 'Prune']]);
  });

  test('GIVEN finalize is defined THEN the finalizer is added by merge patch with a resourceVersion precondition', async () => {
    const { client, reconcile } = setup({ finalize: async () => undefined });
    await reconcile('ns/w');
    expect(client.calls[0]).toMatchObject({
      method: 'PATCH',
      path: '/apis/x.io/v1/namespaces/ns/widgets/w',
      contentType: 'application/merge-patch+json',
      body: { metadata: { finalizers: ['operator.cdk8s.io/widget-operator'], resourceVersion: '10' } },
    });
  });

  test('GIVEN the CR is being deleted THEN finalize is called as a method of the operator, with the reconciler\'s stop signal', async () => {
    const stop = new AbortController();
    const calls: { self: unknown; signal: AbortSignal }[] = [];
    const { reconcile, crs } = setup({
      signal: stop.signal,
      async finalize(_cr, context) {
        calls.push({ self: this, signal: context.signal });
      },
    });
    const cr = crs.get('ns', 'w')!;
    crs.put({ ...cr, metadata: { ...cr.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['operator.cdk8s.io/widget-operator'] } });
    await reconcile('ns/w');
    expect(calls).toHaveLength(1);
    expect((calls[0].self as { operatorName: string }).operatorName).toBe('widget-operator');
    expect(calls[0].signal).toBe(stop.signal);
  });

  test('GIVEN the CR is being deleted THEN finalize runs and only our finalizer is removed; a failure keeps it', async () => {
    let fail = true;
    const calls: string[] = [];
    const { client, crs, reconcile } = setup({
      finalize: async (cr) => {
        calls.push(cr.metadata?.name ?? '');
        if (fail) throw new Error('not yet');
      },
    });
    const cr = crs.get('ns', 'w')!;
    crs.put({ ...cr, metadata: { ...cr.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['a.io/x', 'operator.cdk8s.io/widget-operator', 'b.io/y'] } });
    await expect(reconcile('ns/w')).rejects.toThrow('not yet');
    expect(writes(client).some((c) => c.path === '/apis/x.io/v1/namespaces/ns/widgets/w')).toBe(false);
    fail = false;
    await reconcile('ns/w');
    const patch = client.calls.find((c) => c.path === '/apis/x.io/v1/namespaces/ns/widgets/w')!;
    expect(patch.body.metadata.finalizers).toEqual(['a.io/x', 'b.io/y']);
    expect(calls).toEqual(['w', 'w']);
    // the cache still shows our finalizer: no second run of the hook
    await reconcile('ns/w');
    expect(calls).toEqual(['w', 'w']);
  });
});

describe('Reconciler with field types', () => {
  const schemas = {
    [QUANTITY_SCHEMA]: { type: 'string' },
    Deployment: { type: 'object', properties: { spec: { type: 'object', properties: { template: { type: 'object', properties: { spec: { $ref: '#/components/schemas/PodSpec' } } } } } } },
    PodSpec: { type: 'object', properties: { overhead: { type: 'object', additionalProperties: { $ref: `#/components/schemas/${QUANTITY_SCHEMA}` } } } },
  };
  const labels = { 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': 'uid-1' };
  const render = () => [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w', namespace: 'ns', labels }, spec: { template: { spec: { overhead: { cpu: '0.5' } } } } },
  ];
  /** Applies once, then makes the cache show the server's canonical form `500m` (a later resourceVersion, as after a restart). */
  async function appliedAndStored(options: Parameters<typeof setup>[0]) {
    const context = setup({ render, ...options });
    await context.reconcile('ns/w');
    context.sync();
    const cached = context.deployments.get('ns', 'w')!;
    context.deployments.put({ ...cached, metadata: { ...cached.metadata, resourceVersion: 'later' }, spec: { template: { spec: { overhead: { cpu: '500m' } } } } });
    return context;
  }
  const applies = (client: FakeKubeClient) => client.calls.filter((c) => (c.method === 'PATCH' || c.method === 'POST') && c.path.includes('/deployments')).length;

  test('GIVEN the field types say overhead holds quantities THEN the stored 500m matches the rendered 0.5: no apply', async () => {
    const fieldTypes: FieldTypeSource = { forKind: async (apiVersion, kind) => (apiVersion === 'apps/v1' ? fieldTypeOfSchema(schemas, kind) : undefined) };
    const { client, reconcile } = await appliedAndStored({ fieldTypes });
    await reconcile('ns/w');
    expect(applies(client)).toBe(1);
  });

  test('GIVEN the field types cannot be read THEN scalars compare exactly (one more apply) and a warning is logged once', async () => {
    const warnings: unknown[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: (fields: unknown, message: string) => warnings.push([fields, message]), error: () => undefined } as unknown as Logger;
    const fieldTypes: FieldTypeSource = { forKind: async () => Promise.reject(new Error('reading the OpenAPI v3 schema GET /openapi/v3: 403 Forbidden')) };
    const { client, reconcile } = await appliedAndStored({ fieldTypes, logger });
    await reconcile('ns/w');
    await reconcile('ns/w');
    expect(applies(client)).toBe(2); // the memory of the last apply stops the second
    const missing = warnings.filter((w) => (w as [unknown, string])[1].includes('no field types'));
    expect(missing).toHaveLength(1);
    expect(JSON.stringify(missing[0])).toContain('403 Forbidden');
  });
});
