/**
 * The RBAC self-check against a real kube-apiserver running `--authorization-mode=RBAC`: the check runs as
 * a ServiceAccount through impersonation, so only that ServiceAccount's bindings apply.
 * - one permission taken away → exactly that one is reported, worded like `kubectl auth can-i`;
 * - the RBAC the example operators synthesize (their ClusterRole, leader-election Role and metrics-auth
 *   ClusterRole, which lets them create the TokenReviews and SubjectAccessReviews of secure metrics) →
 *   nothing missing.
 */
import { App } from 'cdk8s';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { resourcePath, type ResourceRef } from '../../lib/runtime/client/resource-path.js';
import { RbacSelfCheckError, assertAccess, checkAccess, describeMissing, requiredAccess } from '../../lib/runtime/startup/rbac-self-check.js';
import type { Operator } from '../../lib/operator/operator.js';
import { leaderElectionRules, type PolicyRule } from '../../lib/operator/manifests/rbac.js';
import { addOperators } from '../../operators/index.js';
import { serviceAccountUser } from '../support/cluster.js';

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 90_000;

let plane: ControlPlane;
let admin: ApiClient;
let operators: Operator[];
const clients: ApiClient[] = [];

const REFS: Record<string, ResourceRef> = {
  Namespace: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true },
  ClusterRole: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', namespaced: false },
  Role: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', namespaced: true },
  RoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', namespaced: true },
};

beforeAll(async () => {
  plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  operators = addOperators(new App());
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  for (const client of clients) client.close();
  admin?.close();
  await plane?.stop();
});

async function create(object: KubeObject): Promise<void> {
  const ref = REFS[object.kind!];
  if (!ref) throw new Error(`no REST mapping for ${object.kind} in this test`);
  await admin.request('POST', resourcePath(ref, object.metadata?.namespace), { body: object });
}

/**
 * The RBAC authorizer reads bindings from an informer, so a binding just created may not count yet:
 * repeats `check` until `done` accepts its result (or returns the last result after 20 s).
 */
async function settled<T>(check: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A client acting as ServiceAccount `namespace/name`, with the groups the API server gives service accounts. */
function asServiceAccount(namespace: string, name: string): ApiClient {
  const client = new ApiClient({
    kubeConfig: plane.kubeConfig,
    impersonate: serviceAccountUser(namespace, name),
  });
  clients.push(client);
  return client;
}

/** `rules` with one verb on one resource taken away (one rule per resource after the cut, so nothing else changes). */
function withoutPermission(rules: readonly PolicyRule[], verb: string, group: string, resource: string): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const rule of rules) {
    for (const g of rule.apiGroups) {
      for (const r of rule.resources) {
        const verbs = rule.verbs.filter((v) => !(v === verb && g === group && r === resource));
        if (verbs.length > 0) out.push({ apiGroups: [g], resources: [r], verbs });
      }
    }
  }
  return out;
}

function clusterRoleRules(operator: Operator): PolicyRule[] {
  const role = operator.toJson().find((o: KubeObject) => o.kind === 'ClusterRole') as { rules: PolicyRule[] } | undefined;
  if (!role) throw new Error(`${operator.operatorName} synthesizes no ClusterRole`);
  return role.rules;
}

test(
  'GIVEN a ServiceAccount with a Role granting all but patch on deployments WHEN the check runs as it THEN exactly that rule is named',
  async () => {
    const memcached = operators.find((o) => o.operatorName === 'memcached-operator')!;
    const ns = 'rbac-role';
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'limited', namespace: ns } });
    await create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'limited', namespace: ns },
      rules: withoutPermission(clusterRoleRules(memcached), 'patch', 'apps', 'deployments'),
    } as KubeObject);
    await create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'limited', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'limited' },
      subjects: [{ kind: 'ServiceAccount', name: 'limited', namespace: ns }],
    } as KubeObject);

    const client = asServiceAccount(ns, 'limited');
    const required = requiredAccess([memcached], { namespace: ns });
    const missing = await settled(() => checkAccess(client, required), (m) => m.length <= 1);
    expect(missing.map(describeMissing)).toEqual([`cannot patch deployments.apps in namespace "${ns}"`]);

    const err = await assertAccess(client, required, { subject: `system:serviceaccount:${ns}:limited` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RbacSelfCheckError);
    expect((err as Error).message).toContain(`system:serviceaccount:${ns}:limited lacks 1 permission`);
    expect((err as Error).message).toContain(`  - cannot patch deployments.apps in namespace "${ns}"`);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a ClusterRole without list on the CR WHEN the cluster-wide check runs THEN it names the missing list at the cluster scope',
  async () => {
    const memcached = operators.find((o) => o.operatorName === 'memcached-operator')!;
    const ns = 'rbac-cluster';
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'no-list', namespace: ns } });
    await create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'no-list' },
      rules: withoutPermission(clusterRoleRules(memcached), 'list', 'cache.example.com', 'memcacheds'),
    } as KubeObject);
    await create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'no-list' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'no-list' },
      subjects: [{ kind: 'ServiceAccount', name: 'no-list', namespace: ns }],
    } as KubeObject);

    const client = asServiceAccount(ns, 'no-list');
    const missing = await settled(() => checkAccess(client, requiredAccess([memcached], { leaderElectionNamespace: ns })), (m) => m.length <= 4);
    // The leases are missing too: this ServiceAccount has no leader-election Role.
    expect(missing.map(describeMissing)).toEqual([
      'cannot list memcacheds.cache.example.com at the cluster scope',
      `cannot get leases.coordination.k8s.io in namespace "${ns}"`,
      `cannot create leases.coordination.k8s.io in namespace "${ns}"`,
      `cannot update leases.coordination.k8s.io in namespace "${ns}"`,
    ]);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN the RBAC each example operator synthesizes WHEN the check runs as its ServiceAccount (with leader election and the secure metrics reviews) THEN nothing is missing',
  async () => {
    expect(operators.map((o) => o.operatorName)).toEqual(['memcached-operator', 'app-operator', 'database-operator']);
    for (const operator of operators) {
      for (const object of operator.toJson() as KubeObject[]) {
        if (REFS[object.kind!]) await create(object);
      }
      const client = asServiceAccount(operator.operatorNamespace, operator.operatorName);
      // With the secure metrics server's reviews: the synthesized metrics-auth ClusterRole grants them.
      const required = requiredAccess([operator], { leaderElectionNamespace: operator.operatorNamespace, metricsAuthorization: true });
      expect(required.some((r) => r.resource === 'leases')).toBe(true);
      expect(required.filter((r) => ['tokenreviews', 'subjectaccessreviews'].includes(r.resource)).map(describeMissing)).toEqual([
        'cannot create tokenreviews.authentication.k8s.io at the cluster scope',
        'cannot create subjectaccessreviews.authorization.k8s.io at the cluster scope',
      ]);
      await settled(() => checkAccess(client, required), (m) => m.length === 0);
      await expect(assertAccess(client, required)).resolves.toBeUndefined();
    }
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN sharding WHEN the check runs as a ServiceAccount with the sharded leader-election Role THEN nothing is missing; with the unsharded Role (no delete on leases) THEN exactly that is named',
  async () => {
    const memcached = operators.find((o) => o.operatorName === 'memcached-operator')!;
    for (const [name, sharded] of [['sharded', true], ['elected', false]] as const) {
      const ns = `rbac-${name}`;
      await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });
      await create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `shard-${name}` }, rules: clusterRoleRules(memcached) } as KubeObject);
      await create({
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `shard-${name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `shard-${name}` }, subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
      } as KubeObject);
      await create({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'leases', namespace: ns }, rules: leaderElectionRules(sharded) } as KubeObject);
      await create({
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'leases', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leases' }, subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
      } as KubeObject);
      const required = requiredAccess([memcached], { shardingNamespace: ns });
      const expected = sharded ? [] : [`cannot delete leases.coordination.k8s.io in namespace "${ns}"`];
      const missing = await settled(() => checkAccess(asServiceAccount(ns, name), required), (m) => m.length === expected.length);
      expect(missing.map(describeMissing)).toEqual(expected);
    }
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a ServiceAccount with no bindings WHEN the check runs THEN every permission is reported, none is skipped',
  async () => {
    const memcached = operators.find((o) => o.operatorName === 'memcached-operator')!;
    const ns = 'rbac-none';
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nobody', namespace: ns } });
    const required = requiredAccess([memcached], { namespace: ns });
    const missing = await checkAccess(asServiceAccount(ns, 'nobody'), required);
    expect(missing.map(describeMissing)).toEqual(required.map(describeMissing));
  },
  TEST_TIMEOUT_MS,
);
