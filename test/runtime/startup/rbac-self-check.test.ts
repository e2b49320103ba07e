import { Testing } from 'cdk8s';
import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import {
  AccessReviewError,
  RbacSelfCheckError,
  assertAccess,
  checkAccess,
  describeMissing,
  requiredAccess,
  SHARDING_LEASE_ACCESS_VERBS,
  type AccessCheckedOperator,
  type AccessRequirement,
} from '../../../lib/runtime/startup/rbac-self-check.js';
import { leaderElectionRules } from '../../../lib/operator/manifests/rbac.js';
import { MemcachedOperator } from '../../../operators/index.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const memcachedLike = (extra: Partial<AccessCheckedOperator> = {}): AccessCheckedOperator => ({
  crd: { group: 'cache.example.com', plural: 'memcacheds', namespaced: true },
  childKinds: () => [
    { group: '', plural: 'services', namespaced: true },
    { group: 'apps', plural: 'deployments', namespaced: true },
  ],
  ...extra,
});

const line = (r: AccessRequirement) => describeMissing(r).replace(/^cannot /, '');

describe('requiredAccess', () => {
  test('GIVEN an operator watching all namespaces without finalize THEN CR, status, children and events are required at the cluster scope', () => {
    expect(requiredAccess([memcachedLike()]).map(line)).toEqual([
      'get memcacheds.cache.example.com at the cluster scope',
      'list memcacheds.cache.example.com at the cluster scope',
      'watch memcacheds.cache.example.com at the cluster scope',
      'patch memcacheds.cache.example.com at the cluster scope',
      'update memcacheds.cache.example.com at the cluster scope',
      'patch memcacheds.cache.example.com/status at the cluster scope',
      'get services at the cluster scope',
      'list services at the cluster scope',
      'watch services at the cluster scope',
      'create services at the cluster scope',
      'patch services at the cluster scope',
      'delete services at the cluster scope',
      'get deployments.apps at the cluster scope',
      'list deployments.apps at the cluster scope',
      'watch deployments.apps at the cluster scope',
      'create deployments.apps at the cluster scope',
      'patch deployments.apps at the cluster scope',
      'delete deployments.apps at the cluster scope',
      'create events.events.k8s.io at the cluster scope',
      'patch events.events.k8s.io at the cluster scope',
    ]);
  });

  test('GIVEN sharding THEN the ring namespace\'s leases may be listed, created, updated and deleted (what membership sends), and the synthesized sharding Role grants them', () => {
    const reqs = requiredAccess([memcachedLike()], { shardingNamespace: 'ops' });
    expect(reqs.filter((r) => r.resource === 'leases').map(line)).toEqual([
      'list leases.coordination.k8s.io in namespace "ops"',
      'create leases.coordination.k8s.io in namespace "ops"',
      'update leases.coordination.k8s.io in namespace "ops"',
      'delete leases.coordination.k8s.io in namespace "ops"',
    ]);
    const granted = leaderElectionRules(true)[0]!.verbs;
    for (const verb of SHARDING_LEASE_ACCESS_VERBS) expect(granted).toContain(verb);
    expect(requiredAccess([memcachedLike()], {}).some((r) => r.resource === 'leases')).toBe(false);
  });

  test('GIVEN finalize, a watched namespace and leader election THEN finalizers, namespaced checks and leases are required', () => {
    const reqs = requiredAccess([memcachedLike({ finalize: async () => undefined, watchNamespace: 'team-a' })], { leaderElectionNamespace: 'memcached-operator-system' });
    expect(reqs).toContainEqual({ verb: 'update', group: 'cache.example.com', resource: 'memcacheds', subresource: 'finalizers', namespace: 'team-a' });
    expect(reqs.every((r) => r.namespace !== undefined)).toBe(true);
    expect(reqs.filter((r) => r.resource === 'leases').map(line)).toEqual([
      'get leases.coordination.k8s.io in namespace "memcached-operator-system"',
      'create leases.coordination.k8s.io in namespace "memcached-operator-system"',
      'update leases.coordination.k8s.io in namespace "memcached-operator-system"',
    ]);
  });

  test('GIVEN a cluster-scoped CR with a cluster-scoped child THEN both are checked at the cluster scope and events in "default"', () => {
    const reqs = requiredAccess(
      [{ crd: { group: 'example.com', plural: 'tenants', namespaced: false }, childKinds: () => [{ group: '', plural: 'namespaces', namespaced: false }], watchNamespace: undefined }],
      { namespace: 'ignored-for-cluster-scoped' },
    );
    expect(reqs.filter((r) => r.resource !== 'events').every((r) => r.namespace === undefined)).toBe(true);
    expect(reqs.filter((r) => r.resource === 'events').map(line)).toEqual(['create events.events.k8s.io in namespace "default"', 'patch events.events.k8s.io in namespace "default"']);
  });

  test('GIVEN two operators sharing a child kind THEN each permission is listed once', () => {
    const reqs = requiredAccess([memcachedLike(), memcachedLike({ crd: { group: 'apps.example.com', plural: 'apps', namespaced: true } })]);
    const keys = reqs.map(line);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((k) => k === 'patch deployments.apps at the cluster scope')).toHaveLength(1);
  });

  test('GIVEN a retired kind THEN get and delete on it are required (in the watched namespace), nothing else', () => {
    const reqs = requiredAccess([memcachedLike({ retiredKinds: [{ group: '', plural: 'configmaps', namespaced: true }] })], { namespace: 'team-a' });
    expect(reqs.filter((r) => r.resource === 'configmaps').map(line)).toEqual(['get configmaps in namespace "team-a"', 'delete configmaps in namespace "team-a"']);
  });

  test('GIVEN several versions and all namespaces watched THEN the storage-version migration\'s get on the CRD and update on its status, by name, are required; not when one namespace is watched', () => {
    const crdLines = (reqs: AccessRequirement[]) => reqs.filter((r) => r.resource === 'customresourcedefinitions').map(line);
    expect(crdLines(requiredAccess([memcachedLike({ versions: [1, 2] })]))).toEqual([
      'get customresourcedefinitions.apiextensions.k8s.io "memcacheds.cache.example.com"',
      'update customresourcedefinitions.apiextensions.k8s.io/status "memcacheds.cache.example.com"',
    ]);
    expect(crdLines(requiredAccess([memcachedLike({ versions: [1, 2] })], { namespace: 'team-a' }))).toEqual([]);
    expect(crdLines(requiredAccess([memcachedLike({ versions: [1] })]))).toEqual([]);
  });

  test('GIVEN the example memcached operator THEN its derived children are required', () => {
    const operator = new MemcachedOperator(Testing.app());
    const reqs = requiredAccess([operator]);
    expect(reqs.map(line)).toContain('patch deployments.apps at the cluster scope');
    expect(reqs.map(line)).toContain(`list ${operator.crd.plural}.${operator.crd.group} at the cluster scope`);
  });
});

describe('describeMissing', () => {
  test('words a permission like kubectl auth can-i', () => {
    expect(describeMissing({ verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'x' })).toBe('cannot patch deployments.apps in namespace "x"');
    expect(describeMissing({ verb: 'list', group: 'cache.example.com', resource: 'memcacheds' })).toBe('cannot list memcacheds.cache.example.com at the cluster scope');
    expect(describeMissing({ verb: 'create', group: '', resource: 'services', namespace: 'y' })).toBe('cannot create services in namespace "y"');
  });
});

/** Answers SelfSubjectAccessReviews from a set of allowed `verb group/resource/sub ns` strings. */
function fakeAuthorizer(allowed: (attrs: Record<string, string>) => boolean) {
  const state = { inFlight: 0, maxInFlight: 0, reviews: 0 };
  const client = new FakeKubeClient();
  client.respond = async ({ method, path, body }) => {
    expect(method).toBe('POST');
    expect(path).toBe('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    state.reviews++;
    await new Promise((r) => setImmediate(r));
    state.inFlight--;
    const ok = allowed(body.spec.resourceAttributes);
    return { status: { allowed: ok, ...(ok ? {} : { reason: '' }) } };
  };
  return { client, state };
}

describe('checkAccess / assertAccess', () => {
  const reqs = requiredAccess([memcachedLike()], { namespace: 'x' });

  test('GIVEN everything allowed THEN nothing is missing, one review per permission, at most `concurrency` in flight', async () => {
    const { client, state } = fakeAuthorizer(() => true);
    expect(await checkAccess(client, reqs, { concurrency: 3 })).toEqual([]);
    expect(state.reviews).toBe(reqs.length);
    expect(state.maxInFlight).toBe(3);
    await expect(assertAccess(client, reqs)).resolves.toBeUndefined();
  });

  test('GIVEN patch on deployments denied THEN exactly that one is reported, worded like kubectl', async () => {
    const { client } = fakeAuthorizer((a) => !(a.verb === 'patch' && a.resource === 'deployments'));
    const missing = await checkAccess(client, reqs);
    expect(missing).toEqual([{ verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'x' }]);
    const err = await assertAccess(client, reqs, { subject: 'system:serviceaccount:ops:memcached-operator' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RbacSelfCheckError);
    expect((err as RbacSelfCheckError).missing).toHaveLength(1);
    expect((err as Error).message).toBe(
      'RBAC self-check: system:serviceaccount:ops:memcached-operator lacks 1 permission the operator needs:\n' +
        '  - cannot patch deployments.apps in namespace "x"\n' +
        "Grant them in the operator's ClusterRole/Role (re-run `cdk8s synth` and apply its RBAC).",
    );
  });

  test('GIVEN several denials THEN they are listed in the requirements\' order', async () => {
    const { client } = fakeAuthorizer((a) => a.verb !== 'delete');
    expect((await checkAccess(client, reqs)).map(describeMissing)).toEqual(['cannot delete services in namespace "x"', 'cannot delete deployments.apps in namespace "x"']);
  });

  test('GIVEN a review request that fails THEN AccessReviewError says which question could not be asked', async () => {
    const client = new FakeKubeClient();
    client.fail = (call) => new ApiError(call.method, call.path, 503, 'ServiceUnavailable', undefined, 'try later');
    const err = await checkAccess(client, reqs.slice(0, 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessReviewError);
    expect((err as Error).message).toContain('could not ask whether the operator can get memcacheds.cache.example.com in namespace "x"');
    expect((err as Error).cause).toBeInstanceOf(ApiError);
  });
});
