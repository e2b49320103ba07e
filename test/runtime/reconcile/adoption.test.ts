/**
 * Adoption's pure parts: the managedFields take-over (kubectl's client-side to server-side apply
 * migration, client-go util/csaupgrade, generalised to every Update manager) and the decision on an
 * object found under a child's name; and, through the reconciler with a fake client, that only the
 * create path pays the lookup. The flows against a real API server are in test/integration/adoption.test.ts.
 */
import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import {
  ADOPT_ANNOTATION,
  AdoptionRefusedError,
  ChildAdoption,
  takeOverManagedFields,
  unionFieldSets,
} from '../../../lib/runtime/reconcile/adoption.js';
import { isOwnedBy } from '../../../lib/runtime/reconcile/ownership.js';
import { ReconcileError } from '../../../lib/runtime/errors.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { managedFieldsEntry } from '../../support/managed-fields-entry.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const cr: KubeObject = { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '10' }, spec: {} };

const entry = managedFieldsEntry;

describe('takeOverManagedFields', () => {
  test('GIVEN only a kubectl-create Update entry THEN it becomes our Apply entry with the same fields', () => {
    const fields = { 'f:data': { 'f:a': {}, 'f:stray': {} }, 'f:metadata': { 'f:labels': { 'f:team': {} } } };
    expect(takeOverManagedFields([entry('kubectl-create', 'Update', fields)], 'op')).toEqual([entry('op', 'Apply', fields)]);
  });

  test('GIVEN our Apply entry and several Update managers THEN their fields are merged into ours and the Update entries dropped; other Apply managers and subresource entries are kept', () => {
    const ours = entry('op', 'Apply', { 'f:data': { 'f:a': {} } });
    const other = entry('other-applier', 'Apply', { 'f:metadata': { 'f:annotations': { 'f:keep': {} } } });
    const status = entry('kube-controller-manager', 'Update', { 'f:status': { 'f:x': {} } }, { subresource: 'status' });
    const result = takeOverManagedFields(
      [
        entry('kubectl-client-side-apply', 'Update', { 'f:data': { 'f:b': {} }, 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } }),
        ours,
        other,
        entry('kubectl-edit', 'Update', { 'f:data': { 'f:c': {} } }),
        status,
      ],
      'op',
    );
    expect(result).toEqual([
      { ...ours, fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {}, 'f:c': {} }, 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } } },
      other,
      status,
    ]);
  });

  test('GIVEN an Update entry of another apiVersion THEN it is dropped without merging (field sets do not convert), as csaupgrade does', () => {
    const result = takeOverManagedFields(
      [entry('kubectl-create', 'Update', { 'f:spec': { 'f:a': {} } }, { apiVersion: 'autoscaling/v2' }), entry('before-first-apply', 'Update', { 'f:spec': { 'f:b': {} } }, { apiVersion: 'autoscaling/v1' })],
      'op',
    );
    expect(result).toEqual([entry('op', 'Apply', { 'f:spec': { 'f:a': {} } }, { apiVersion: 'autoscaling/v2' })]);
  });

  test('GIVEN no Update entry on the main resource (or no managedFields) THEN there is nothing to take over', () => {
    expect(takeOverManagedFields([entry('op', 'Apply', {}), entry('kcm', 'Update', {}, { subresource: 'status' })], 'op')).toBeUndefined();
    expect(takeOverManagedFields(undefined, 'op')).toBeUndefined();
    expect(takeOverManagedFields([], 'op')).toBeUndefined();
  });

  test('GIVEN entries THEN the input is not modified', () => {
    const input = [entry('kubectl-create', 'Update', { 'f:data': { 'f:a': {} } })];
    const copy = structuredClone(input);
    takeOverManagedFields(input, 'op');
    expect(input).toEqual(copy);
  });

  test('unionFieldSets merges nested tries', () => {
    expect(unionFieldSets({ 'f:a': { 'f:b': {} }, 'f:x': {} }, { 'f:a': { 'k:{"name":"c"}': { '.': {} } }, 'f:y': {} })).toEqual({
      'f:a': { 'f:b': {}, 'k:{"name":"c"}': { '.': {} } },
      'f:x': {},
      'f:y': {},
    });
  });
});

describe('ChildAdoption.decide', () => {
  const existing = (metadata: KubeObject['metadata'] = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'w-config', namespace: 'ns', managedFields: [entry('kubectl-create', 'Update', {})], ...metadata },
  });
  const adoption = (policy?: 'refuse' | 'adopt') => new ChildAdoption({ client: new FakeKubeClient(), fieldManager: 'widget-operator', policy });
  /** A fake server holding `objects` whose creates of a name it holds answer 409 AlreadyExists, as the API server does. */
  const server = (objects: Record<string, unknown> = {}) => withTakenNames(new FakeKubeClient(objects));

  test('GIVEN an object with an ownerReference to the CR or our owner-uid label THEN it is ours: apply as usual', () => {
    expect(adoption().decide(configMapKind, existing({ ownerReferences: [{ apiVersion: 'x.io/v1', uid: 'uid-1', kind: 'Widget', name: 'w' }] }), cr)).toBeUndefined();
    expect(adoption().decide(configMapKind, existing({ labels: { 'operator.cdk8s.io/owner-uid': 'uid-1' } }), cr)).toBeUndefined();
    expect(isOwnedBy(existing({ labels: { 'operator.cdk8s.io/owner-uid': 'uid-2' } }), 'uid-1')).toBe(false);
  });

  test('GIVEN a child not cached WHEN applied THEN it is created (one POST); a taken name is looked up, and the result says whether it was already ours (existed) or adopted', async () => {
    const desired: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns' }, data: { a: '1' } };
    const path = '/api/v1/namespaces/ns/configmaps/w-config';
    const free = server();
    const nothing = await new ChildAdoption({ client: free, fieldManager: 'widget-operator' }).apply(configMapKind, desired, cr, { appliedBefore: false });
    expect([nothing.created, nothing.existed, nothing.adopted, nothing.lookupMs]).toEqual([true, undefined, undefined, undefined]);
    expect(free.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /api/v1/namespaces/ns/configmaps']);
    const cached = await new ChildAdoption({ client: server(), fieldManager: 'widget-operator' }).apply(configMapKind, desired, cr, { appliedBefore: true });
    expect([cached.created, cached.lookupMs]).toEqual([undefined, undefined]);
    const ours = existing({ labels: { 'operator.cdk8s.io/owner-uid': 'uid-1' } });
    const taken = server({ [path]: ours });
    const found = await new ChildAdoption({ client: taken, fieldManager: 'widget-operator' }).apply(configMapKind, desired, cr, { appliedBefore: false });
    expect([found.created, found.existed, found.adopted]).toEqual([undefined, true, undefined]);
    expect(found.lookupMs).toBeGreaterThanOrEqual(0);
    // the create refused, the GET, the apply over our own object
    expect(taken.calls.map((c) => `${c.method} ${c.contentType ?? ''}`.trim())).toEqual(['POST', 'GET', 'PATCH application/apply-patch+yaml']);
    const adopted = await new ChildAdoption({ client: server({ [path]: existing() }), fieldManager: 'widget-operator', policy: 'adopt' }).apply(configMapKind, desired, cr, { appliedBefore: false });
    expect([adopted.existed, adopted.adopted]).toEqual([undefined, ['kubectl-create']]);
  });

  test('GIVEN a create answered 409 AlreadyExists but the GET finds nothing (deleted meanwhile) THEN it is applied as usual', async () => {
    const client = new FakeKubeClient();
    client.fail = (call) => (call.method === 'POST' ? new ApiError('POST', call.path, 409, 'AlreadyExists', undefined, 'configmaps "w-config" already exists') : undefined);
    const desired: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns' }, data: { a: '1' } };
    const result = await new ChildAdoption({ client, fieldManager: 'widget-operator' }).apply(configMapKind, desired, cr, { appliedBefore: false });
    expect([result.created, result.existed, result.adopted]).toEqual([undefined, undefined, undefined]);
    expect(client.calls.map((c) => `${c.method} ${c.contentType ?? ''}`.trim())).toEqual(['POST', 'GET', 'PATCH application/apply-patch+yaml']);
  });

  test('GIVEN an object not ours and the default policy THEN AdoptionRefused names it, who set it and how to opt in', () => {
    const err = (() => {
      try {
        adoption().decide(configMapKind, existing(), cr);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AdoptionRefusedError);
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as ReconcileError).reason).toBe('AdoptionRefused');
    expect((err as Error).message).toBe(
      "adoption refused: ConfigMap ns/w-config already exists and was not made by this Widget (no ownerReference to it, no operator.cdk8s.io/owner-uid label; set by kubectl-create); " +
        "delete it, or let the operator adopt it: `kubectl annotate configmaps/w-config -n ns operator.cdk8s.io/adopt=widget-operator`, or the operator's `adoption: 'adopt'`",
    );
  });

  test("GIVEN adoption: 'adopt', or the object's adopt annotation naming this operator THEN it is adopted; an annotation naming another operator is not enough", () => {
    const obj = existing();
    expect(adoption('adopt').decide(configMapKind, obj, cr)).toBe(obj);
    const annotated = existing({ annotations: { [ADOPT_ANNOTATION]: 'widget-operator' } });
    expect(adoption().decide(configMapKind, annotated, cr)).toBe(annotated);
    expect(() => adoption().decide(configMapKind, existing({ annotations: { [ADOPT_ANNOTATION]: 'other-operator' } }), cr)).toThrow(AdoptionRefusedError);
  });

  test('GIVEN an object controlled by another owner THEN it is refused whatever the policy', () => {
    const owned = existing({ ownerReferences: [{ apiVersion: 'x.io/v1', uid: 'uid-2', kind: 'Widget', name: 'other', controller: true }] });
    expect(() => adoption('adopt').decide(configMapKind, owned, cr)).toThrow('adoption refused: ConfigMap ns/w-config already exists and is controlled by Widget other (uid uid-2)');
  });
});

describe('Reconciler: the lookup before a create', () => {
  /** @param objects what the fake server holds, by path (a GET of anything else is 404) */
  function setup(objects: Record<string, KubeObject> = {}, adoption?: 'adopt') {
    const labels = { 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': 'uid-1' };
    const harness = reconcilerHarness({
      operator: { operatorName: 'widget-operator', crd: { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true }, ...(adoption ? { adoption } : {}) },
      render: () => [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns', labels }, data: { a: '1' } }],
      childKinds: [configMapKind],
      crs: [cr],
    });
    for (const [path, object] of Object.entries(objects)) harness.client.objects.set(path, object);
    withTakenNames(harness.client);
    return { client: harness.client, configMaps: harness.cache('configmaps'), reconcile: harness.reconcile };
  }
  const childCalls = (client: FakeKubeClient, from = 0) => client.calls.slice(from).filter((c) => c.path.includes('/configmaps')).map((c) => `${c.method} ${c.contentType ?? ''}`.trim());

  test('GIVEN a child that is created THEN one POST and no GET; later reconciles (cache lag, converged, drift) send no GET', async () => {
    const { client, configMaps, reconcile } = setup();
    await reconcile('ns/w');
    expect(childCalls(client)).toEqual(['POST']);
    let n = client.calls.length;
    await reconcile('ns/w'); // the cache has not caught up: our own write is remembered
    expect(childCalls(client, n)).toEqual([]);
    const applied = client.calls.find((c) => c.method === 'POST' && c.path.includes('/configmaps'))!.body;
    configMaps.put({ ...applied, metadata: { ...applied.metadata, resourceVersion: '5', ownerReferences: [{ uid: 'uid-1', kind: 'Widget', name: 'w', controller: true }] } });
    n = client.calls.length;
    await reconcile('ns/w');
    expect(childCalls(client, n)).toEqual([]);
    // Drift in the cache: an update, not a create: no GET.
    configMaps.put({ ...applied, data: { a: 'changed' }, metadata: { ...applied.metadata, resourceVersion: '6', ownerReferences: [{ uid: 'uid-1', kind: 'Widget', name: 'w', controller: true }] } });
    n = client.calls.length;
    await reconcile('ns/w');
    expect(childCalls(client, n)).toEqual(['PATCH application/apply-patch+yaml']);
  });

  test('GIVEN an object not ours under the name THEN no write to it, Stalled AdoptionRefused, and the error says so through its cause', async () => {
    const { client, reconcile } = setup({ '/api/v1/namespaces/ns/configmaps/w-config': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns', resourceVersion: '3' } } });
    const err = await reconcile('ns/w').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as Error).cause).toBeInstanceOf(AdoptionRefusedError);
    expect(childCalls(client)).toEqual(['POST', 'GET']);
    const status = client.calls.find((c) => c.path.endsWith('/status'))!.body.status;
    expect(status.conditions.find((c: { type: string }) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'AdoptionRefused', message: expect.stringContaining('ConfigMap ns/w-config already exists') });
    // Retried: the next reconcile tries again (the name may have been freed).
    await reconcile('ns/w').catch(() => undefined);
    expect(childCalls(client)).toEqual(['POST', 'GET', 'POST', 'GET']);
  });

  test("GIVEN adoption: 'adopt' and an object not ours WHEN a reconcile runs while the cache shows only the managedFields take-over THEN it sends nothing (our own write, not drift)", async () => {
    const path = '/api/v1/namespaces/ns/configmaps/w-config';
    const existing: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns', resourceVersion: '3', managedFields: [entry('kubectl-create', 'Update', { 'f:data': { 'f:a': {} } })] }, data: { a: '0' } };
    const { client, configMaps, reconcile } = setup({ [path]: existing }, 'adopt');
    await reconcile('ns/w');
    // the create refused, the lookup, the take-over (a JSON patch), the apply
    expect(childCalls(client)).toEqual(['POST', 'GET', 'PATCH application/json-patch+json', 'PATCH application/apply-patch+yaml']);
    const takeOver = client.calls.find((c) => c.contentType === 'application/json-patch+json')!;
    // The cache catches up with the take-over only (the fake answers a write with its call number as resourceVersion).
    configMaps.put({ ...existing, metadata: { ...existing.metadata, resourceVersion: String(client.calls.indexOf(takeOver) + 1), managedFields: [entry('widget-operator', 'Apply', { 'f:data': { 'f:a': {} } })] } });
    const n = client.calls.length;
    await reconcile('ns/w');
    expect(childCalls(client, n)).toEqual([]);
  });

  test('GIVEN a cached child controlled by another CR THEN it is refused without a request', async () => {
    const { client, configMaps, reconcile } = setup();
    configMaps.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns', resourceVersion: '3', ownerReferences: [{ apiVersion: 'x.io/v1', uid: 'uid-2', kind: 'Widget', name: 'other', controller: true }] } });
    await expect(reconcile('ns/w')).rejects.toThrow(/controlled by Widget other/);
    expect(childCalls(client)).toEqual([]);
  });
});

/**
 * Makes `client`'s creates answer as the API server does for a name it holds: 409 AlreadyExists when its
 * `objects` has the created object's path (the fake's own POST answers the body, storing nothing).
 */
function withTakenNames(client: FakeKubeClient): FakeKubeClient {
  client.fail = (call) => {
    if (call.method !== 'POST' || call.path.includes('/events')) return undefined;
    const name = call.body?.metadata?.name as string;
    return client.objects.has(`${call.path}/${name}`) ? new ApiError('POST', call.path, 409, 'AlreadyExists', { reason: 'AlreadyExists' }, `configmaps "${name}" already exists`) : undefined;
  };
  return client;
}
