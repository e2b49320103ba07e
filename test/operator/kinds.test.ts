import { UnknownKindError } from '../../lib/operator/errors.js';
import { lookupBuiltInKind, parseApiVersion, resolveKind } from '../../lib/operator/kinds.js';

describe('kinds', () => {
  test.each([
    ['v1', 'Service', 'services', true],
    ['v1', 'Namespace', 'namespaces', false],
    ['apps/v1', 'StatefulSet', 'statefulsets', true],
    ['batch/v1', 'CronJob', 'cronjobs', true],
    ['networking.k8s.io/v1', 'Ingress', 'ingresses', true],
    ['policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false],
    ['autoscaling/v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true],
    ['storage.k8s.io/v1', 'StorageClass', 'storageclasses', false],
    ['coordination.k8s.io/v1', 'Lease', 'leases', true],
  ])('GIVEN %s %s WHEN looked up THEN plural is %s and namespaced is %s', (apiVersion, kind, plural, namespaced) => {
    expect(lookupBuiltInKind(apiVersion, kind)).toMatchObject({ plural, namespaced });
  });

  test('GIVEN an unknown kind WHEN resolved without a declaration THEN UnknownKindError says how to declare it; WITH one THEN it resolves', () => {
    expect(() => resolveKind({ apiVersion: 'example.com/v1', kind: 'Widget' })).toThrow(UnknownKindError);
    expect(() => resolveKind({ apiVersion: 'example.com/v1', kind: 'Widget' })).toThrow(/declare it in the operator's `owns` with its plural and namespaced/);
    expect(resolveKind({ apiVersion: 'example.com/v1', kind: 'Widget' }, [{ apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets', namespaced: false }])).toEqual({
      apiVersion: 'example.com/v1',
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      namespaced: false,
    });
  });

  test('GIVEN api versions WHEN parsed THEN the core group is empty', () => {
    expect(parseApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(parseApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
  });
});
