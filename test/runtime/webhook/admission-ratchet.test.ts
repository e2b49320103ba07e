import { exemptUpdate, introducedViolations, parseFieldPath } from '../../../lib/runtime/webhook/admission-ratchet.js';
import type { JSONSchemaProps } from '../../../lib/operator/schema/structural-schema.js';

const cr = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'm', namespace: 'a', ...metadata }, spec });

describe('exemptUpdate', () => {
  test('GIVEN a CREATE (no old object) THEN not exempt', () => {
    expect(exemptUpdate(cr({ replicas: 1 }), undefined)).toBeUndefined();
  });

  test('GIVEN an old object with a deletionTimestamp THEN Terminating, whatever changed', () => {
    const old = cr({ replicas: 3 }, { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['x/y'] });
    expect(exemptUpdate(cr({ replicas: 3 }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), old)).toBe('Terminating');
    expect(exemptUpdate(cr({ replicas: 4 }, { deletionTimestamp: '2026-01-01T00:00:00Z' }), old)).toBe('Terminating');
  });

  test('GIVEN labels, annotations, finalizers or ownerReferences changed and spec and status equal THEN MetadataOnly', () => {
    const old = { ...cr({ replicas: 3, cache: { memoryMiB: 64 } }), status: { observedGeneration: 1 } };
    const changed = { ...cr({ cache: { memoryMiB: 64 }, replicas: 3 }, { labels: { a: 'b' }, annotations: { c: 'd' }, finalizers: ['x/y'], ownerReferences: [{ uid: 'u' }], resourceVersion: '9' }), status: { observedGeneration: 1 } };
    expect(exemptUpdate(changed, old)).toBe('MetadataOnly');
  });

  test('GIVEN spec, status or another top-level field changed THEN not exempt', () => {
    const old = { ...cr({ replicas: 3 }), status: { observedGeneration: 1 } };
    expect(exemptUpdate({ ...cr({ replicas: 4 }), status: { observedGeneration: 1 } }, old)).toBeUndefined();
    expect(exemptUpdate({ ...cr({ replicas: 3 }), status: { observedGeneration: 2 } }, old)).toBeUndefined();
    expect(exemptUpdate({ ...cr({ replicas: 3 }) }, old)).toBeUndefined();
    expect(exemptUpdate({ ...cr({ replicas: 3 }), status: { observedGeneration: 1 }, data: {} }, old)).toBeUndefined();
  });
});

describe('parseFieldPath', () => {
  test.each([
    ['spec.replicas', ['spec', 'replicas']],
    ['spec.ports[0].name', ['spec', 'ports', 0, 'name']],
    ['spec.ports[12]', ['spec', 'ports', 12]],
    ['metadata.labels["app.kubernetes.io/name"]', ['metadata', 'labels', 'app.kubernetes.io/name']],
    ['metadata.labels[app.kubernetes.io/name]', ['metadata', 'labels', 'app.kubernetes.io/name']],
    ['spec["a\\"b"].c', ['spec', 'a"b', 'c']],
  ])('GIVEN %s THEN its segments', (path, segments) => {
    expect(parseFieldPath(path)).toEqual(segments);
  });

  test.each(['', 'spec.', 'spec..a', 'spec[0', 'spec["a]', '.spec'])('GIVEN the malformed path %j THEN undefined or empty', (path) => {
    const parsed = parseFieldPath(path);
    expect(parsed === undefined || parsed.length === 0).toBe(true);
  });
});

describe('introducedViolations (KEP-4008 ratcheting)', () => {
  const v = (path: string) => ({ path, message: 'Invalid value' });

  test('GIVEN a CREATE THEN every violation is introduced', () => {
    expect(introducedViolations([v('spec.replicas')], cr({ replicas: 5 }), undefined)).toEqual([v('spec.replicas')]);
  });

  test('GIVEN the violating value unchanged THEN kept (not introduced)', () => {
    expect(introducedViolations([v('spec.replicas'), v('metadata.name')], cr({ replicas: 5, other: 1 }), cr({ replicas: 5, other: 0 }))).toEqual([]);
  });

  test('GIVEN the violating value changed (worsened or only partly corrected) THEN introduced', () => {
    expect(introducedViolations([v('spec.replicas')], cr({ replicas: 6 }), cr({ replicas: 5 }))).toEqual([v('spec.replicas')]);
    expect(introducedViolations([v('spec.replicas')], cr({ replicas: 4 }), cr({ replicas: 5 }))).toEqual([v('spec.replicas')]);
  });

  test('GIVEN the path absent in the old object, or removed in the new one THEN introduced', () => {
    expect(introducedViolations([v('spec.cache.memoryMiB')], cr({ cache: { memoryMiB: 1 } }), cr({}))).toHaveLength(1);
    expect(introducedViolations([v('spec.cache')], cr({}), cr({ cache: {} }))).toHaveLength(1);
    expect(introducedViolations([v('spec.cache')], cr({}), cr({}))).toHaveLength(1); // absent in both: nothing to compare
  });

  test('GIVEN a violation inside an item of a list that is not a list-map (no schema: atomic) THEN kept only when the whole list is unchanged; a whole-object path compares the whole object', () => {
    const old = cr({ ports: [{ name: 'a' }, { name: 'b' }] });
    expect(introducedViolations([v('spec.ports[1].name')], cr({ ports: [{ name: 'a' }, { name: 'b' }] }), old)).toEqual([]);
    expect(introducedViolations([v('spec.ports[1].name')], cr({ ports: [{ name: 'x' }, { name: 'b' }] }), old)).toHaveLength(1);
    expect(introducedViolations([v('spec.ports[1].name')], cr({ ports: [{ name: 'b' }, { name: 'a' }] }), old)).toHaveLength(1);
    expect(introducedViolations([v('spec')], cr({ ports: [{ name: 'a' }, { name: 'b' }] }), old)).toEqual([]);
    expect(introducedViolations([v('spec')], cr({ ports: [] }), old)).toHaveLength(1);
  });

  test('GIVEN a list-map in the schema THEN an item is compared with the old item of the same keys, wherever it stands (KEP-4008)', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } } },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          },
        },
      },
    };
    const old = cr({ ports: [{ name: 'a', port: 1 }, { name: 'b', port: 99999 }], tags: ['x', 'y'] });
    // An item inserted before b: b's violating port, unchanged, is kept (by index it would be compared with nothing).
    const inserted = cr({ ports: [{ name: 'new', port: 2 }, { name: 'a', port: 1 }, { name: 'b', port: 99999 }], tags: ['x', 'y'] });
    expect(introducedViolations([v('spec.ports[2].port')], inserted, old, schema)).toEqual([]);
    expect(introducedViolations([v('spec.ports[2].port')], inserted, old)).toHaveLength(1); // without the schema: atomic
    // Reordered: still b's own port.
    expect(introducedViolations([v('spec.ports[0].port')], cr({ ports: [{ name: 'b', port: 99999 }, { name: 'a', port: 1 }] }), old, schema)).toEqual([]);
    // The item of that key changed, or a new key: introduced.
    expect(introducedViolations([v('spec.ports[1].port')], cr({ ports: [{ name: 'a', port: 1 }, { name: 'b', port: 88888 }] }), old, schema)).toHaveLength(1);
    expect(introducedViolations([v('spec.ports[1].port')], cr({ ports: [{ name: 'a', port: 1 }, { name: 'c', port: 99999 }] }), old, schema)).toHaveLength(1);
    // A set is not correlated item by item (as the API server): kept only while the whole list is unchanged.
    expect(introducedViolations([v('spec.tags[1]')], cr({ ports: [], tags: ['x', 'y'] }), old, schema)).toEqual([]);
    expect(introducedViolations([v('spec.tags[1]')], cr({ ports: [], tags: ['z', 'y'] }), old, schema)).toHaveLength(1);
  });

  test('GIVEN an unparseable path THEN introduced (denying is the safe side)', () => {
    expect(introducedViolations([v(''), v('spec..x')], cr({}), cr({}))).toHaveLength(2);
  });
});
