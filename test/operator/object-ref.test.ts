/**
 * ObjectRef, the one identity of an object (children, inventory, prune, events, logs), and kindKey, the
 * one key of a kind: key ↔ ref round trips, version independence, messages, cluster-scoped objects and
 * the core group; the cache key (namespace/name) and the incarnation key (uid, else the cache key) the
 * informer cache, the workqueue, the status writer and the event recorder use.
 */
import fc from 'fast-check';
import { groupKindOf, kindKey } from '../../lib/operator/kinds.js';
import { ObjectRef } from '../../lib/operator/object-ref.js';

describe('ObjectRef', () => {
  test('GIVEN a namespaced object of a named group WHEN referenced THEN key is group/Kind/namespace/name and toString is Kind namespace/name', () => {
    const ref = ObjectRef.of({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } });
    expect(ref).toMatchObject({ group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
    expect(ref.apiVersion).toBe('apps/v1');
    expect(ref.key()).toBe('apps/Deployment/shop/web');
    expect(ref.toString()).toBe('Deployment shop/web');
    expect(`${ref}`).toBe('Deployment shop/web');
  });

  test('GIVEN an object of the core group WHEN referenced THEN its group is empty, its apiVersion the bare version, and its key starts with /', () => {
    const ref = ObjectRef.of({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' } });
    expect(ref.group).toBe('');
    expect(ref.apiVersion).toBe('v1');
    expect(ref.key()).toBe('/ConfigMap/shop/settings');
    expect(ref.toString()).toBe('ConfigMap shop/settings');
  });

  test('GIVEN a cluster-scoped object WHEN referenced THEN it has no namespace: an empty key segment, Kind name as text', () => {
    const ref = ObjectRef.of({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:admin' } });
    expect(ref.namespace).toBeUndefined();
    expect(ref.key()).toBe('rbac.authorization.k8s.io/ClusterRole//system:admin');
    expect(ref.toString()).toBe('ClusterRole system:admin');
    expect(new ObjectRef({ group: '', kind: 'Namespace', namespace: '', name: 'shop' }).namespace).toBeUndefined();
  });

  test('GIVEN the same object in two versions of its group THEN the keys are equal (identity is version-independent) and the versions are kept', () => {
    const v1 = ObjectRef.of({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'ns' } });
    const v2 = ObjectRef.fromEntry({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace: 'ns', name: 'h' });
    expect(v1.key()).toBe(v2.key());
    expect(v1.equals(v2)).toBe(true);
    expect([v1.version, v2.version]).toEqual(['v1', 'v2']);
    expect(v1.equals(ObjectRef.of({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'other' } }))).toBe(false);
  });

  test('GIVEN an inventory entry (status.children as every version stored it) THEN fromEntry names the object its manifest names', () => {
    const entry = { apiVersion: 'v1', kind: 'Secret', name: 'creds', namespace: 'shop', ready: true };
    const manifest = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'shop' } };
    expect(ObjectRef.fromEntry(entry).key()).toBe(ObjectRef.of(manifest).key());
    expect(ObjectRef.fromEntry({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', name: 'fast' }).key()).toBe('storage.k8s.io/StorageClass//fast');
  });

  test('GIVEN a key WHEN parsed THEN the same reference without version; a key with too few parts is refused', () => {
    const ref = ObjectRef.fromKey('batch/Job/shop/shop-migrate');
    expect(ref).toMatchObject({ group: 'batch', kind: 'Job', namespace: 'shop', name: 'shop-migrate' });
    expect(ref.version).toBeUndefined();
    expect(ref.apiVersion).toBeUndefined();
    expect(ObjectRef.fromKey('/Namespace//shop')).toMatchObject({ group: '', kind: 'Namespace', name: 'shop' });
    expect(() => ObjectRef.fromKey('apps/Deployment/web')).toThrow('invalid object key "apps/Deployment/web": expected group/Kind/namespace/name');
  });

  test('GIVEN any group, kind, namespace and name THEN fromKey(key()) gives the same key, and two refs share a key exactly when all four parts agree', () => {
    const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
    const parts = fc.record({
      group: fc.oneof(fc.constant(''), fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((labels) => labels.join('.'))),
      kind: fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,12}$/),
      namespace: fc.option(dnsLabel, { nil: undefined }),
      // Names are path segments: anything but '/' and '%' (':' and '.' included, as RBAC names use them).
      name: fc.stringMatching(/^[a-z0-9:.@_-]{1,20}$/),
    });
    fc.assert(
      fc.property(parts, parts, (a, b) => {
        const ref = new ObjectRef(a);
        const back = ObjectRef.fromKey(ref.key());
        expect(back).toMatchObject({ group: a.group, kind: a.kind, name: a.name });
        expect(back.namespace).toBe(a.namespace);
        expect(back.key()).toBe(ref.key());
        const same = a.group === b.group && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
        expect(ref.key() === new ObjectRef(b).key()).toBe(same);
      }),
    );
  });

  test('GIVEN an object missing its fields THEN of() never throws; the missing parts read as empty', () => {
    const ref = ObjectRef.of({});
    expect(ref.key()).toBe('///');
    expect(ref.apiVersion).toBeUndefined();
  });
});

describe('kindKey', () => {
  test('GIVEN a kind of a named group, of the core group, or given by apiVersion THEN group/Kind, the prefix of its objects\' keys', () => {
    expect(kindKey({ group: 'apps', kind: 'Deployment' })).toBe('apps/Deployment');
    expect(kindKey({ group: '', kind: 'ConfigMap' })).toBe('/ConfigMap');
    expect(kindKey(groupKindOf('autoscaling/v2', 'HorizontalPodAutoscaler'))).toBe(kindKey(groupKindOf('autoscaling/v1', 'HorizontalPodAutoscaler')));
    const ref = ObjectRef.of({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop' } });
    expect(kindKey(ref)).toBe('apps/Deployment');
    expect(ref.key().startsWith(`${kindKey(ref)}/`)).toBe(true);
  });
});

describe('ObjectRef cache key', () => {
  test('GIVEN namespaced and cluster-scoped objects WHEN keyed for a cache THEN namespace/name, or the name alone', () => {
    expect(ObjectRef.cacheKeyOf({ metadata: { name: 'web', namespace: 'shop' } })).toBe('shop/web');
    expect(ObjectRef.cacheKeyOf({ metadata: { name: 'admin' } })).toBe('admin');
    expect(ObjectRef.cacheKeyOf({ metadata: { name: 'admin', namespace: '' } })).toBe('admin');
    expect(ObjectRef.cacheKeyOf({})).toBe('');
    expect(ObjectRef.cacheKey('shop', 'web')).toBe('shop/web');
    expect(ObjectRef.cacheKey(undefined, 'admin')).toBe('admin');
    expect(ObjectRef.of({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'shop' } }).cacheKey()).toBe('shop/web');
  });

  test('GIVEN any namespace and name WHEN a cache key is split THEN the parts come back', () => {
    fc.assert(
      fc.property(fc.option(fc.stringMatching(/^[a-z0-9-]{1,20}$/), { nil: undefined }), fc.stringMatching(/^[a-z0-9.-]{1,30}$/), (namespace, name) => {
        expect(ObjectRef.splitCacheKey(ObjectRef.cacheKey(namespace, name))).toEqual({ namespace, name });
      }),
    );
  });
});

describe('ObjectRef.incarnationKeyOf', () => {
  test('GIVEN an object with a uid WHEN keyed THEN the uid (a recreated object is another incarnation)', () => {
    expect(ObjectRef.incarnationKeyOf({ metadata: { name: 'web', namespace: 'shop', uid: 'u-1' } })).toBe('u-1');
  });

  test('GIVEN objects without a uid WHEN keyed THEN namespace/name, or the name when cluster-scoped', () => {
    expect(ObjectRef.incarnationKeyOf({ metadata: { name: 'web', namespace: 'shop' } })).toBe('shop/web');
    expect(ObjectRef.incarnationKeyOf({ metadata: { name: 'admin' } })).toBe('admin');
  });
});
