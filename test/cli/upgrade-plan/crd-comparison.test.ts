import { compareCrd, crdChanges } from '../../../lib/cli/upgrade-plan/crd-comparison.js';

const crd = (versions: { name: string; served?: boolean; storage?: boolean; schema?: unknown }[], storedVersions?: string[]) => ({
  metadata: { name: 'widgets.example.com' },
  spec: { versions },
  ...(storedVersions ? { status: { storedVersions } } : {}),
});
const schema = (max?: number) => ({ openAPIV3Schema: { type: 'object', properties: { size: { type: 'integer', ...(max ? { maximum: max } : {}) } } } });

test('GIVEN a version dropped that status.storedVersions still lists THEN it is reported still stored, with the migration to run first', () => {
  const installed = crd([{ name: 'v1alpha1', served: true, storage: false, schema: schema() }, { name: 'v1', served: true, storage: true, schema: schema() }], ['v1alpha1', 'v1']);
  const next = crd([{ name: 'v1', served: true, storage: true, schema: schema(100) }]);
  const comparison = compareCrd(next, installed);
  expect(comparison).toMatchObject({
    name: 'widgets.example.com', installed: true, versionsDropped: [{ name: 'v1alpha1', stillStored: true }],
    servedAdded: [], servedRemoved: ['v1alpha1'], schemaChanged: ['v1'], storedVersions: ['v1alpha1', 'v1'],
  });
  expect(comparison.migration).toMatch(/^v1alpha1 still in status\.storedVersions: the API server refuses this CRD until .* trims storedVersions/);
  expect(crdChanges(comparison)).toBe(true);
});

test('GIVEN a version dropped that is no longer stored, a version added and storage moved THEN no migration is asked for, and each change is listed', () => {
  const installed = crd([{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: false, storage: false }], ['v1alpha1']);
  const next = crd([{ name: 'v1beta1', served: true, storage: true }, { name: 'v1', served: true, storage: false }]);
  const comparison = compareCrd(next, { ...installed, status: { storedVersions: ['v1beta1'] } });
  expect(comparison).toMatchObject({ versionsDropped: [{ name: 'v1alpha1', stillStored: false }], servedAdded: ['v1beta1', 'v1'], servedRemoved: ['v1alpha1'], storageVersion: { from: 'v1alpha1', to: 'v1beta1' } });
  expect(comparison.migration).toBeUndefined();
});

test('GIVEN the same CRD THEN nothing changes; GIVEN none installed THEN installed is false and it counts as a change', () => {
  const same = crd([{ name: 'v1', served: true, storage: true, schema: schema(3) }], ['v1']);
  expect(crdChanges(compareCrd(same, same))).toBe(false);
  const absent = compareCrd(same, undefined);
  expect(absent).toMatchObject({ installed: false, versionsDropped: [] });
  expect(crdChanges(absent)).toBe(true);
});
