/**
 * asKubeResource and asCustomResource, the checked narrowing that stands in for `as unknown as` casts:
 * the same object back when apiVersion, kind and metadata.name are there; a TypeError naming the object
 * and the missing field when not. And resourceKey, the one group/version/plural key.
 */
import { resourceKey } from '../../lib/operator/kinds.js';
import { asCustomResource, asKubeResource } from '../../lib/operator/object-shape.js';

describe('asKubeResource / asCustomResource', () => {
  test('GIVEN an object with apiVersion, kind and metadata.name WHEN narrowed THEN the same object comes back', () => {
    const object = { apiVersion: 'example.com/v1', kind: 'Memcached', metadata: { name: 'web', namespace: 'shop' }, spec: { size: 1 } };
    expect(asCustomResource(object)).toBe(object);
    expect(asKubeResource(object)).toBe(object);
  });

  test.each([
    [{ kind: 'Memcached', metadata: { name: 'web', namespace: 'shop' } }, 'Memcached shop/web is not a Kubernetes object: apiVersion must be a string'],
    [{ apiVersion: 'v1', metadata: { name: 'web' } }, '<no kind> web is not a Kubernetes object: kind must be a string'],
    [{ apiVersion: 'v1', kind: 'ConfigMap' }, 'ConfigMap <unnamed> is not a Kubernetes object: metadata must be an object'],
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'shop' } }, 'ConfigMap shop/<unnamed> is not a Kubernetes object: metadata.name must be a string'],
  ])('GIVEN %j WHEN narrowed THEN a TypeError names the object and the field', (object, message) => {
    expect(() => asCustomResource(object)).toThrow(new TypeError(message));
    expect(() => asKubeResource(object)).toThrow(TypeError);
  });
});

describe('resourceKey', () => {
  test('GIVEN a resource of a named group and one of the core group WHEN keyed THEN group/version/plural, empty group for the core', () => {
    expect(resourceKey({ group: 'apps', version: 'v1', plural: 'deployments' })).toBe('apps/v1/deployments');
    expect(resourceKey({ group: '', version: 'v1', plural: 'configmaps' })).toBe('/v1/configmaps');
  });
});
