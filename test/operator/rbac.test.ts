import { App } from 'cdk8s';
import { resolveKind } from '../../lib/operator/kinds.js';
import { deriveOperatorRules, leaderElectionRules, mergeGrants, type PolicyRule } from '../../lib/operator/manifests/rbac.js';
import { renderChildren } from '../../lib/operator/render/render-children.js';
import { rawObject, ScriptedOperator, WEB_SAMPLE, WebOperator } from './fixtures/test-operators.js';

type Json = Record<string, any>;

function objects(operator: { toJson(): Json[] }, kind: string): Json[] {
  return operator.toJson().filter((o) => o.kind === kind);
}

/** resource (group/plural) → verbs, from a list of rules. */
function grants(rules: PolicyRule[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const rule of rules) for (const group of rule.apiGroups) for (const resource of rule.resources) out[`${group}/${resource}`] = [...(out[`${group}/${resource}`] ?? []), ...rule.verbs].sort();
  return out;
}

describe('deriveOperatorRules', () => {
  const web = { apiVersion: 'demo.example.com/v1', group: 'demo.example.com', version: 'v1', kind: 'Web', plural: 'webs', namespaced: true };

  test('GIVEN a CR kind and two child kinds WHEN rules are derived THEN each resource gets exactly the documented verbs', () => {
    const rules = deriveOperatorRules(web, [resolveKind({ apiVersion: 'apps/v1', kind: 'Deployment' }), resolveKind({ apiVersion: 'v1', kind: 'Service' })]);

    expect(grants(rules)).toEqual({
      'demo.example.com/webs': ['get', 'list', 'patch', 'update', 'watch'],
      'demo.example.com/webs/status': ['get', 'patch', 'update'],
      'demo.example.com/webs/finalizers': ['update'],
      'apps/deployments': ['create', 'delete', 'get', 'list', 'patch', 'watch'],
      '/services': ['create', 'delete', 'get', 'list', 'patch', 'watch'],
      '/events': ['create', 'patch'],
      'events.k8s.io/events': ['create', 'patch'],
    });
  });

  test('GIVEN child kinds in any order WHEN rules are derived twice THEN the output is identical and holds no wildcard', () => {
    const a = deriveOperatorRules(web, [resolveKind({ apiVersion: 'v1', kind: 'Service' }), resolveKind({ apiVersion: 'apps/v1', kind: 'Deployment' })]);
    const b = deriveOperatorRules(web, [resolveKind({ apiVersion: 'apps/v1', kind: 'Deployment' }), resolveKind({ apiVersion: 'v1', kind: 'Service' })]);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toContain('*');
  });

  test('GIVEN two resources of one group with the same verbs WHEN merged THEN they share one rule', () => {
    const rules = mergeGrants([
      { group: '', resource: 'services', verbs: ['get'] },
      { group: '', resource: 'configmaps', verbs: ['get'] },
    ]);
    expect(rules).toEqual([{ apiGroups: [''], resources: ['configmaps', 'services'], verbs: ['get'] }]);
    expect(() => mergeGrants([{ group: '', resource: '*', verbs: ['get'] }])).toThrow(/wildcard/);
  });

  test('GIVEN leader election WHEN rules are derived THEN leases get exactly get, list, watch, create, update, patch', () => {
    expect(leaderElectionRules()).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update'] },
    ]);
  });
});

describe('Operator RBAC', () => {
  test('GIVEN the Web operator WHEN synthesized THEN every kind any example renders is granted in the ClusterRole', () => {
    const operator = new WebOperator(new App());
    const [clusterRole] = objects(operator, 'ClusterRole');
    const granted = grants(clusterRole.rules);

    const rendered = renderChildren(operator, { ...WEB_SAMPLE, metadata: { ...WEB_SAMPLE.metadata, uid: 'u' } });
    expect(rendered.length).toBeGreaterThan(0);
    for (const child of rendered) {
      const kind = resolveKind({ apiVersion: child.apiVersion, kind: child.kind });
      expect(granted[`${kind.group}/${kind.plural}`]).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']);
    }
    expect(JSON.stringify(clusterRole.rules)).not.toContain('*');
  });

  test('GIVEN owns with a kind no example renders WHEN synthesized THEN it is granted too, including a declared CRD kind', () => {
    const operator = new WebOperator(new App(), 'web-operator', {
      owns: [
        { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
        { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', plural: 'servicemonitors', namespaced: true },
      ],
    });
    const granted = grants(objects(operator, 'ClusterRole')[0].rules);
    expect(granted['policy/poddisruptionbudgets']).toBeDefined();
    expect(granted['monitoring.coreos.com/servicemonitors']).toBeDefined();
    expect(operator.childKinds().map((k) => k.kind)).toEqual(['ConfigMap', 'Service', 'Deployment', 'ServiceMonitor', 'PodDisruptionBudget']);
  });

  test('GIVEN a cluster-wide operator WHEN synthesized THEN it gets a ClusterRole + binding to its ServiceAccount and a leases Role in its own namespace', () => {
    const operator = new WebOperator(new App());
    const [binding] = objects(operator, 'ClusterRoleBinding');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'web-operator' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'web-operator', namespace: 'web-operator-system' }]);
    expect(binding.metadata.namespace).toBeUndefined();

    const roles = objects(operator, 'Role');
    expect(roles.map((r) => [r.metadata.name, r.metadata.namespace])).toEqual([['web-operator-leader-election', 'web-operator-system']]);
    expect(roles[0].rules).toEqual(leaderElectionRules());
    expect(objects(operator, 'RoleBinding')[0].roleRef.name).toBe('web-operator-leader-election');
  });

  test('GIVEN an operator watching one namespace WHEN synthesized THEN its rules are a Role + RoleBinding in that namespace and the only ClusterRoles are the metrics ones', () => {
    const operator = new WebOperator(new App(), 'web-operator', { deployment: { watchNamespace: 'team-a' } });
    // The metrics reviews are cluster-scoped resources, which no Role can grant (metrics-objects.ts).
    expect(objects(operator, 'ClusterRole').map((r) => [r.metadata.name, r.rules])).toEqual([
      ['web-operator-metrics-auth', [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ]],
      ['web-operator-metrics-reader', [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]],
    ]);
    const role = objects(operator, 'Role').find((r) => r.metadata.name === 'web-operator')!;
    expect(role.metadata.namespace).toBe('team-a');
    expect(grants(role.rules)['demo.example.com/webs']).toBeDefined();
    const binding = objects(operator, 'RoleBinding').find((r) => r.metadata.name === 'web-operator')!;
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'web-operator' });
  });

  test('GIVEN an operator watching one namespace that owns a cluster-scoped kind WHEN synthesized THEN synthesis fails naming the kind', () => {
    const operator = new WebOperator(new App(), 'web-operator', {
      deployment: { watchNamespace: 'team-a' },
      owns: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }],
    });
    expect(() => operator.toJson()).toThrow(/watchNamespace team-a gives a namespaced Role, which cannot grant the cluster-scoped child or related kinds ClusterRole \(rbac\.authorization\.k8s\.io\/v1\)/);
  });

  test('GIVEN an example rendering a kind that is neither built in nor owned WHEN synthesized THEN synthesis fails naming the kind', () => {
    const operator = new ScriptedOperator(new App(), 'x-operator', { examples: [WEB_SAMPLE] }, (_cr, scope) => {
      rawObject(scope, 'monitor', 'monitoring.coreos.com/v1', 'ServiceMonitor');
    });
    expect(() => operator.toJson()).toThrow(/kind ServiceMonitor \(monitoring\.coreos\.com\/v1\) is not a built-in kind: declare it in the operator's `owns`/);
  });
});

describe('retiredKinds', () => {
  const web = { apiVersion: 'demo.example.com/v1', group: 'demo.example.com', version: 'v1', kind: 'Web', plural: 'webs', namespaced: true };

  test('GIVEN a retired kind WHEN rules are derived THEN it gets exactly get and delete (no list, watch, create or patch)', () => {
    const rules = deriveOperatorRules(web, [resolveKind({ apiVersion: 'apps/v1', kind: 'Deployment' })], [resolveKind({ apiVersion: 'v1', kind: 'ConfigMap' })]);
    const granted = grants(rules);
    expect(granted['/configmaps']).toEqual(['delete', 'get']);
    expect(granted['apps/deployments']).toEqual(['create', 'delete', 'get', 'list', 'patch', 'watch']);
  });

  test('GIVEN an operator that no longer renders PodDisruptionBudgets and retires them WHEN synthesized THEN its ClusterRole keeps get and delete on them, and it does not watch them', () => {
    const operator = new WebOperator(new App(), 'web-operator', { retiredKinds: [{ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }] });
    const granted = grants(objects(operator, 'ClusterRole')[0].rules);
    expect(granted['policy/poddisruptionbudgets']).toEqual(['delete', 'get']);
    expect(operator.retiredKinds.map((k) => `${k.group}/${k.plural}`)).toEqual(['policy/poddisruptionbudgets']);
    expect(operator.childKinds().map((k) => k.kind)).not.toContain('PodDisruptionBudget');
  });

  test('GIVEN a retired kind the examples still render WHEN synthesized THEN synthesis fails naming the kind', () => {
    const operator = new WebOperator(new App(), 'web-operator', { retiredKinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }] });
    expect(() => operator.toJson()).toThrow(/retiredKinds lists ConfigMap \(v1\), which render\(\) still emits for the examples; remove it from retiredKinds/);
  });

  test('GIVEN a retired kind that is also owned WHEN constructed THEN it throws naming retiredKinds[0]', () => {
    const construct = () =>
      new WebOperator(new App(), 'web-operator', { owns: [{ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }], retiredKinds: [{ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }] });
    expect(construct).toThrow(/retiredKinds\[0\]: PodDisruptionBudget \(policy\/v1\) is also in owns; a kind is either owned or retired/);
  });

  test('GIVEN a retired kind that is not built in and has no plural WHEN constructed THEN it throws naming retiredKinds[0]', () => {
    const construct = () => new WebOperator(new App(), 'web-operator', { retiredKinds: [{ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor' }] });
    expect(construct).toThrow(/retiredKinds\[0\]: kind ServiceMonitor \(monitoring\.coreos\.com\/v1\) is not a built-in kind/);
  });

  test('GIVEN an operator watching one namespace that retires a cluster-scoped kind WHEN synthesized THEN synthesis fails naming the kind', () => {
    const operator = new WebOperator(new App(), 'web-operator', {
      deployment: { watchNamespace: 'team-a' },
      retiredKinds: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }],
    });
    expect(() => operator.toJson()).toThrow(/cannot grant the cluster-scoped child or related kinds ClusterRole/);
  });
});
