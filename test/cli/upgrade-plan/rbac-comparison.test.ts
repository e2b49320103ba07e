import { compareRole, rulesAllow } from '../../../lib/cli/upgrade-plan/rbac-comparison.js';

const role = (rules: object[]) => ({ kind: 'ClusterRole', metadata: { name: 'widget-operator' }, rules });

test('GIVEN a new rule for secrets the installed role lacks THEN each missing verb is listed; what the installed role grants is not', () => {
  const next = role([
    { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'patch'] },
  ]);
  const installed = { rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'patch', 'delete'] }] };
  expect(compareRole(next, installed)).toEqual({
    kind: 'ClusterRole', name: 'widget-operator', installed: true,
    missing: [{ apiGroup: '', resource: 'secrets', verb: 'get' }, { apiGroup: '', resource: 'secrets', verb: 'list' }, { apiGroup: '', resource: 'secrets', verb: 'patch' }],
  });
});

test('GIVEN wildcards and resourceNames THEN they match as the RBAC authorizer matches them', () => {
  expect(rulesAllow([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], { apiGroup: 'apps', resource: 'deployments', verb: 'delete' })).toBe(true);
  const named = [{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get'], resourceNames: ['widgets.example.com'] }];
  expect(rulesAllow(named, { apiGroup: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'get', resourceNames: ['widgets.example.com'] })).toBe(true);
  expect(rulesAllow(named, { apiGroup: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'get' })).toBe(false); // every name asked, one granted
  expect(rulesAllow(named, { apiGroup: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'get', resourceNames: ['gadgets.example.com'] })).toBe(false);
});

test('GIVEN no installed role THEN every permission is missing and installed is false', () => {
  const comparison = compareRole({ kind: 'Role', metadata: { name: 'r', namespace: 'ns' }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'] }] }, undefined);
  expect(comparison).toEqual({ kind: 'Role', namespace: 'ns', name: 'r', installed: false, missing: [{ apiGroup: 'coordination.k8s.io', resource: 'leases', verb: 'get' }, { apiGroup: 'coordination.k8s.io', resource: 'leases', verb: 'update' }] });
});
