import { dns1123LabelProblem, dns1123SubdomainProblem, nameProblem, nameRuleFor } from '../../lib/operator/schema/names.js';

describe('nameRuleFor', () => {
  test.each([
    ['', 'Service', { format: 'dns1035-label', maxLength: 63 }],
    ['', 'Namespace', { format: 'dns1123-label', maxLength: 63 }],
    ['apps', 'StatefulSet', { format: 'dns1123-label', maxLength: 52 }],
    ['batch', 'Job', { format: 'dns1123-label', maxLength: 63 }],
    ['batch', 'CronJob', { format: 'dns1123-subdomain', maxLength: 52 }],
    ['rbac.authorization.k8s.io', 'ClusterRole', { format: 'path-segment', maxLength: 253 }],
    ['apps', 'Deployment', { format: 'dns1123-subdomain', maxLength: 253 }],
    ['', 'ConfigMap', { format: 'dns1123-subdomain', maxLength: 253 }],
  ])('GIVEN group %p kind %s WHEN looked up THEN the rule is %o', (group, kind, rule) => {
    expect(nameRuleFor({ group, kind })).toEqual(rule);
  });
});

describe('nameProblem', () => {
  test.each([
    ['web', 'Service', undefined],
    ['1web', 'Service', 'a DNS-1035 label must'],
    ['db.primary', 'StatefulSet', 'a lowercase RFC 1123 label'],
    ['d'.repeat(52), 'StatefulSet', undefined],
    ['d'.repeat(53), 'StatefulSet', 'must be no more than 52 characters (got 53)'],
    ['system:aggregate-to-edit', 'ClusterRole', undefined],
    ['a/b', 'ClusterRole', 'may not contain "/" or "%"'],
    ['shop.eu-config', 'ConfigMap', undefined],
  ])('GIVEN the name %p for a %s WHEN checked THEN the problem is %p', (name, kind, problem) => {
    const group = { StatefulSet: 'apps', ClusterRole: 'rbac.authorization.k8s.io' }[kind] ?? '';
    const found = nameProblem(name, nameRuleFor({ group, kind }));
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  test('GIVEN empty and over-long names WHEN checked as DNS-1123 THEN the limits are 63 for a label and 253 for a subdomain', () => {
    expect(dns1123LabelProblem('')).toBe('must not be empty');
    expect(dns1123LabelProblem('a'.repeat(64))).toBe('must be no more than 63 characters (got 64)');
    expect(dns1123SubdomainProblem('a'.repeat(253))).toBeUndefined();
    expect(dns1123SubdomainProblem('a'.repeat(254))).toBe('must be no more than 253 characters (got 254)');
  });
});
