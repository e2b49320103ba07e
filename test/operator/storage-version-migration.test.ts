import { App } from 'cdk8s';
import { jest } from '@jest/globals';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import { deriveOperatorRules, mergeGrants } from '../../lib/operator/manifests/rbac.js';
import { SYNTH_WARNING_METADATA, migratesStoredVersions } from '../../lib/operator/versions/storage-version-migration.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { WebOperator } from './fixtures/test-operators.js';

const web = { apiVersion: 'demo.example.com/v1', group: 'demo.example.com', version: 'v1', kind: 'Web', plural: 'webs', namespaced: true };
const warnings = (operator: WebOperator) => operator.node.metadata.filter((m) => m.type === SYNTH_WARNING_METADATA).map((m) => m.data as string);

describe('migratesStoredVersions', () => {
  test('GIVEN one version, several versions, several versions watching one namespace THEN only the second migrates', () => {
    expect(migratesStoredVersions({ versions: [1] })).toBe(false);
    expect(migratesStoredVersions({ versions: [1, 2] })).toBe(true);
    expect(migratesStoredVersions({ versions: [1, 2], watchNamespace: 'ns' })).toBe(false);
  });
});

describe('RBAC of the storage-version migration', () => {
  test('GIVEN the migration WHEN rules are derived THEN exactly get on the CRD and update on its status, by name, are added', () => {
    const without = deriveOperatorRules(web, []);
    const withMigration = deriveOperatorRules(web, [], [], [], { storageVersionMigration: true });
    expect(withMigration.filter((r) => !without.some((w) => JSON.stringify(w) === JSON.stringify(r)))).toEqual([
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['webs.demo.example.com'], verbs: ['get'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions/status'], resourceNames: ['webs.demo.example.com'], verbs: ['update'] },
    ]);
    expect(withMigration.length).toBe(without.length + 2);
  });

  test('GIVEN grants with and without resourceNames on one resource THEN they stay apart (a name never widens or narrows another grant)', () => {
    expect(mergeGrants([
      { group: 'g', resource: 'r', verbs: ['get'] },
      { group: 'g', resource: 'r', resourceNames: ['b', 'a'], verbs: ['update'] },
    ])).toEqual([
      { apiGroups: ['g'], resources: ['r'], verbs: ['get'] },
      { apiGroups: ['g'], resources: ['r'], resourceNames: ['a', 'b'], verbs: ['update'] },
    ]);
  });

  test('GIVEN the memcached example (two versions) THEN its ClusterRole holds the grants; GIVEN a one-version operator THEN none', () => {
    const role = (o: { toJson(): Record<string, any>[] }) => o.toJson().find((x) => x.kind === 'ClusterRole' && !String(x.metadata.name).endsWith('-webhook'))!;
    const memcached = role(new MemcachedOperator(new App())).rules as { resources: string[]; resourceNames?: string[]; verbs: string[] }[];
    expect(memcached.filter((r) => r.resources[0]!.startsWith('customresourcedefinitions'))).toEqual([
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['memcacheds.cache.example.com'], verbs: ['get'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions/status'], resourceNames: ['memcacheds.cache.example.com'], verbs: ['update'] },
    ]);
    expect(JSON.stringify(role(new WebOperator(new App())).rules)).not.toContain('customresourcedefinitions');
  });
});

describe('retiredVersions', () => {
  test('GIVEN a retired version WHEN synthesized THEN synth warns, naming the CRD, the version and the check to make', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const operator = new WebOperator(new App(), 'web-operator', { version: 'v1', retiredVersions: ['v1alpha1'] });
      expect(operator.retiredVersions).toEqual(['v1alpha1']);
      const [warning] = warnings(operator);
      expect(warning).toContain('Web demo.example.com/v1alpha1 is retired: the API server refuses this CustomResourceDefinition while status.storedVersions of webs.demo.example.com still lists v1alpha1');
      expect(warning).toContain("kubectl get crd webs.demo.example.com -o jsonpath='{.status.storedVersions}'");
      expect(warn).toHaveBeenCalledWith(`web-operator: warning: ${warning}`);
    } finally {
      warn.mockRestore();
    }
  });

  test('GIVEN an operator that watches one namespace and retires a version THEN the warning says its runtime does not migrate', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const operator = new WebOperator(new App(), 'web-operator', { version: 'v1', retiredVersions: ['v1alpha1'], deployment: { watchNamespace: 'team-a' } });
      expect(warnings(operator)[0]).toContain('this operator watches one namespace, so its runtime does not migrate');
    } finally {
      warn.mockRestore();
    }
  });

  test('GIVEN no retired version THEN no warning', () => {
    expect(warnings(new WebOperator(new App()))).toEqual([]);
  });

  test.each([
    [['v1alpha1'], 'retiredVersions[0] "v1alpha1" is still declared'],
    [['v1', 'v1'], 'retiredVersions[1] "v1" is listed twice'],
    [['V1'], 'retiredVersions[0] "V1"'],
  ])('GIVEN retiredVersions %j on a v1alpha1 operator THEN OperatorConfigError naming the field', (retiredVersions, message) => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      expect(() => new WebOperator(new App(), 'web-operator', { retiredVersions })).toThrow(OperatorConfigError);
      expect(() => new WebOperator(new App(), 'web-operator', { retiredVersions })).toThrow(message);
    } finally {
      warn.mockRestore();
    }
  });
});
