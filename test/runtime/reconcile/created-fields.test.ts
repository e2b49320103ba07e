/**
 * created-fields.ts: the fields a create (POST) left under our `Update` entry are handed to our `Apply`
 * entry before the first changed render is applied, from the cache when the entries' indices are known
 * (a guarded JSON patch, no read), else by a GET and a whole-list patch. Against the real API server:
 * test/integration/created-fields.test.ts.
 */
import { rememberManagedFieldsPosition } from '../../../lib/runtime/cache/managed-fields-position.js';
import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { convertCreatedFields, createdFieldsPatch, hasCreatedFields } from '../../../lib/runtime/reconcile/created-fields.js';
import type { ManagedFieldsEntry } from '../../../lib/runtime/reconcile/managed-fields.js';
import { ConflictError } from '../../../lib/runtime/errors.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { managedFieldsEntry } from '../../support/managed-fields-entry.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const path = '/api/v1/namespaces/ns/configmaps/c';
const entry = managedFieldsEntry;
/** A cached child holding `entries` (ours only, as the informer keeps them), each remembered at the given index of the stored list. */
const cached = (...entries: [ManagedFieldsEntry, number | undefined][]): KubeObject => {
  for (const [e, index] of entries) if (index !== undefined) rememberManagedFieldsPosition(e, index);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', resourceVersion: '7', managedFields: entries.map(([e]) => e) } };
};

describe('hasCreatedFields', () => {
  test('GIVEN our main-resource Update entry THEN true; an Apply entry, another manager, or a subresource entry THEN false', () => {
    expect(hasCreatedFields(cached([entry('op', 'Update', {}), 0]), 'op')).toBe(true);
    expect(hasCreatedFields(cached([entry('op', 'Apply', {}), 0]), 'op')).toBe(false);
    expect(hasCreatedFields(cached([entry('kubectl', 'Update', {}), 0]), 'op')).toBe(false);
    expect(hasCreatedFields(cached([entry('op', 'Update', {}, { subresource: 'status' }), 0]), 'op')).toBe(false);
    expect(hasCreatedFields(undefined, 'op')).toBe(false);
  });
});

describe('createdFieldsPatch', () => {
  test('GIVEN only our Update entry at index 2 THEN a patch guarded on its manager and operation turns it into Apply', () => {
    expect(createdFieldsPatch(cached([entry('op', 'Update', { 'f:data': {} }), 2]), 'op')).toEqual([
      { op: 'test', path: '/metadata/managedFields/2/manager', value: 'op' },
      { op: 'test', path: '/metadata/managedFields/2/operation', value: 'Update' },
      { op: 'replace', path: '/metadata/managedFields/2/operation', value: 'Apply' },
    ]);
  });

  test('GIVEN our Apply entry too THEN the Update fields are merged into it (guarded on both) and the Update entry removed', () => {
    const apply = entry('op', 'Apply', { 'f:data': { 'f:x': {} } });
    const update = entry('op', 'Update', { 'f:data': { 'f:y': {} }, 'f:metadata': { 'f:labels': {} } });
    expect(createdFieldsPatch(cached([apply, 0], [update, 3]), 'op')).toEqual([
      { op: 'test', path: '/metadata/managedFields/3/manager', value: 'op' },
      { op: 'test', path: '/metadata/managedFields/3/operation', value: 'Update' },
      { op: 'test', path: '/metadata/managedFields/0/manager', value: 'op' },
      { op: 'test', path: '/metadata/managedFields/0/operation', value: 'Apply' },
      { op: 'replace', path: '/metadata/managedFields/0/fieldsV1', value: { 'f:data': { 'f:x': {}, 'f:y': {} }, 'f:metadata': { 'f:labels': {} } } },
      { op: 'remove', path: '/metadata/managedFields/3' },
    ]);
  });

  test('GIVEN an unknown index, two Update entries, or entries of different apiVersions THEN no guarded patch (the GET fallback handles them)', () => {
    expect(createdFieldsPatch(cached([entry('op', 'Update', {}), undefined]), 'op')).toBeUndefined();
    expect(createdFieldsPatch(cached([entry('op', 'Update', {}), 0], [entry('op', 'Update', {}, { apiVersion: 'v2' }), 1]), 'op')).toBeUndefined();
    expect(createdFieldsPatch(cached([entry('op', 'Apply', {}, { apiVersion: 'v2' }), 0], [entry('op', 'Update', {}), 1]), 'op')).toBeUndefined();
  });
});

describe('convertCreatedFields', () => {
  test('GIVEN the indices are known THEN one guarded JSON patch and no GET', async () => {
    const client = new FakeKubeClient();
    await convertCreatedFields(client, configMapKind, cached([entry('op', 'Update', {}), 1]), 'op');
    expect(client.calls.map((c) => `${c.method} ${c.path} ${c.contentType}`)).toEqual([`PATCH ${path} application/json-patch+json`]);
  });

  test('GIVEN the guarded patch is refused (a failed test: 422) THEN a GET, and only our Update entries are taken over under a resourceVersion precondition; other managers keep theirs', async () => {
    const stored = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: 'ns',
        resourceVersion: '9',
        managedFields: [entry('kubectl-edit', 'Update', { 'f:data': { 'f:z': {} } }), entry('op', 'Update', { 'f:data': { 'f:x': {} } })],
      },
    };
    const client = new FakeKubeClient({ [path]: stored });
    client.fail = (call) => (call.method === 'PATCH' && call.body[0].op === 'test' ? new ApiError('PATCH', path, 422, 'Invalid', undefined, 'testing value /metadata/managedFields/1/manager failed') : undefined);
    await convertCreatedFields(client, configMapKind, cached([entry('op', 'Update', {}), 1]), 'op');
    expect(client.calls.map((c) => c.method)).toEqual(['PATCH', 'GET', 'PATCH']);
    expect(client.calls[2].body).toEqual([
      { op: 'replace', path: '/metadata/managedFields', value: [entry('kubectl-edit', 'Update', { 'f:data': { 'f:z': {} } }), entry('op', 'Apply', { 'f:data': { 'f:x': {} } })] },
      { op: 'replace', path: '/metadata/resourceVersion', value: '9' },
    ]);
  });

  test('GIVEN no index THEN the GET fallback; GIVEN the stored object has no Update entry of ours THEN nothing is written; GIVEN it is gone THEN nothing', async () => {
    const converted = new FakeKubeClient({ [path]: { metadata: { name: 'c', namespace: 'ns', resourceVersion: '9', managedFields: [entry('op', 'Apply', {})] } } });
    await convertCreatedFields(converted, configMapKind, cached([entry('op', 'Update', {}), undefined]), 'op');
    expect(converted.calls.map((c) => c.method)).toEqual(['GET']);
    const gone = new FakeKubeClient();
    await convertCreatedFields(gone, configMapKind, cached([entry('op', 'Update', {}), undefined]), 'op');
    expect(gone.calls.map((c) => c.method)).toEqual(['GET']);
  });

  test('GIVEN the whole-list patch answers 409 (changed since the GET) THEN ConflictError naming the child (the reconcile is retried)', async () => {
    const client = new FakeKubeClient({ [path]: { metadata: { name: 'c', namespace: 'ns', resourceVersion: '9', managedFields: [entry('op', 'Update', {})] } } });
    client.fail = (call) => (call.method === 'PATCH' ? new ApiError('PATCH', path, 409, 'Conflict', undefined, 'the object has been modified') : undefined);
    const err = await convertCreatedFields(client, configMapKind, cached([entry('op', 'Update', {}), undefined]), 'op').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toContain('ConfigMap ns/c (handing the fields its create set to server-side apply)');
  });
});

describe('Reconciler: the first changed render of a created child', () => {
  test('GIVEN the conversion and the apply were sent WHEN a reconcile runs while the cache shows only the conversion THEN it sends nothing (our own write, not drift)', async () => {
    const labels = { 'app.kubernetes.io/managed-by': 'op', 'operator.cdk8s.io/owner-uid': 'uid-1' };
    const cr: KubeObject = { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '10' }, spec: { a: '1' } };
    const harness = reconcilerHarness({
      operator: { operatorName: 'op', crd: { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true } },
      render: (current) => [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels }, data: { a: (current.spec as { a: string }).a } }],
      childKinds: [configMapKind],
      crs: [cr],
    });
    const childCalls = (from: number) => harness.client.calls.slice(from).filter((c) => c.path.includes('/configmaps')).map((c) => `${c.method} ${c.contentType ?? ''}`.trim());
    await harness.reconcile('ns/w');
    expect(childCalls(0)).toEqual(['POST']);
    // The cache shows the create: the created fields under our Update entry, at a known index.
    const createdBody = harness.client.calls.find((c) => c.method === 'POST')!.body as KubeObject;
    const created = { ...createdBody, metadata: { ...createdBody.metadata, resourceVersion: '20', ownerReferences: [{ apiVersion: 'x.io/v1', uid: 'uid-1', kind: 'Widget', name: 'w', controller: true }], managedFields: [entry('op', 'Update', { 'f:data': { 'f:a': {} } })] } };
    rememberManagedFieldsPosition((created.metadata.managedFields as ManagedFieldsEntry[])[0], 0);
    harness.cache('configmaps').put(created);
    harness.crs.put({ ...cr, metadata: { ...cr.metadata, generation: 2, resourceVersion: '11' }, spec: { a: '2' } });
    let from = harness.client.calls.length;
    await harness.reconcile('ns/w');
    expect(childCalls(from)).toEqual(['PATCH application/json-patch+json', 'PATCH application/apply-patch+yaml']);
    // The cache catches up with the conversion only (its answer's resourceVersion), not yet with the apply.
    const conversion = harness.client.calls.slice(from).find((c) => c.contentType === 'application/json-patch+json')!;
    const conversionVersion = String(harness.client.calls.indexOf(conversion) + 1);
    harness.cache('configmaps').put({ ...created, metadata: { ...created.metadata, resourceVersion: conversionVersion, managedFields: [entry('op', 'Apply', { 'f:data': { 'f:a': {} } })] } });
    from = harness.client.calls.length;
    await harness.reconcile('ns/w');
    expect(childCalls(from)).toEqual([]);
  });
});
