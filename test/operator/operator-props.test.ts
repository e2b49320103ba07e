/**
 * resolveOperatorProps (lib/operator/operator-props.ts), pure: each prop's default, and each bad input's
 * OperatorConfigError naming the operator (its construct path) and the prop's path. The same messages
 * reach `cdk8s synth` through the Operator constructor (operator.test.ts, versions.test.ts …).
 */
import { z } from 'zod';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import type { OperatorProps } from '../../lib/operator/operator.js';
import { resolveOperatorProps, type ResolveOperatorPropsOptions } from '../../lib/operator/operator-props.js';

const Spec = z.object({ size: z.number().int().min(1) });
const BASE: OperatorProps<typeof Spec> = { group: 'demo.example.com', version: 'v1alpha1', kind: 'Web', spec: Spec };
const OPTIONS: ResolveOperatorPropsOptions = { path: 'app/web-operator', validateAdmission: false, mutateAdmission: false };

/** The message of the error resolving `props` (over {@link BASE}) throws; fails when it throws none or another error class. */
function problemOf(props: Record<string, unknown>, options: Partial<ResolveOperatorPropsOptions> = {}): string {
  try {
    resolveOperatorProps({ ...BASE, ...props } as OperatorProps<typeof Spec>, { ...OPTIONS, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(OperatorConfigError);
    expect((error as OperatorConfigError).constructPath).toBe('app/web-operator');
    return (error as Error).message;
  }
  throw new Error(`resolveOperatorProps accepted ${JSON.stringify(props)}`);
}

describe('resolveOperatorProps defaults', () => {
  test('GIVEN only group, version, kind and spec THEN names, scope, operator name, namespace and policies are derived', () => {
    const resolved = resolveOperatorProps(BASE, OPTIONS);
    expect(resolved).toMatchObject({
      operatorName: 'web-operator',
      crd: { apiVersion: 'demo.example.com/v1alpha1', group: 'demo.example.com', version: 'v1alpha1', kind: 'Web', plural: 'webs', namespaced: true },
      names: { kind: 'Web', listKind: 'WebList', plural: 'webs', singular: 'web' },
      scope: 'Namespaced',
      examples: [],
      exampleRelated: [],
      owns: [],
      retiredKinds: [],
      crNameRule: { format: 'dns1035-label', maxLength: 63 },
      related: {},
      relatedKinds: {},
      deploymentProps: {},
      operatorNamespace: 'web-operator-system',
      leaderElection: false,
      sharding: false,
      retiredVersions: [],
      adoption: 'refuse',
      renderSkip: true,
    });
    expect(resolved.specSchema).toBe(Spec);
    expect(resolved.versions.map((v) => v.name)).toEqual(['v1alpha1']);
    expect(resolved.watchNamespace).toBeUndefined();
    expect(resolved.webhook).toBeUndefined();
  });

  test('GIVEN replicas 3 THEN leader election; with sharding THEN sharding instead', () => {
    expect(resolveOperatorProps({ ...BASE, deployment: { replicas: 3 } }, OPTIONS)).toMatchObject({ leaderElection: true, sharding: false });
    expect(resolveOperatorProps({ ...BASE, deployment: { replicas: 3, sharding: true } }, OPTIONS)).toMatchObject({ leaderElection: false, sharding: true });
  });

  test('GIVEN examples of the own kind and a related ConfigMap without namespace THEN they are split and the ConfigMap gets default', () => {
    const cr = { apiVersion: 'demo.example.com/v1alpha1', kind: 'Web', metadata: { name: 'a' }, spec: { size: 1 } };
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } };
    const resolved = resolveOperatorProps({ ...BASE, examples: [cr, configMap], related: { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configName' } } }, OPTIONS);
    expect(resolved.examples).toEqual([cr]);
    expect(resolved.exampleRelated).toEqual([{ ...configMap, metadata: { name: 'settings', namespace: 'default' } }]);
    expect(resolved.relatedKinds.config).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true });
  });

  test('GIVEN retiredVersions THEN each warning is told to onWarning, and a validateAdmission hook gets a webhook', () => {
    const warnings: string[] = [];
    const resolved = resolveOperatorProps({ ...BASE, version: 'v1', retiredVersions: ['v1alpha1'] }, { ...OPTIONS, validateAdmission: true, onWarning: (w) => warnings.push(w) });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('v1alpha1');
    expect(resolved.retiredVersions).toEqual(['v1alpha1']);
    expect(resolved.webhook?.validatePath).toBeDefined();
  });

  test('GIVEN a retired-version warning and a later webhook problem THEN the warning is told before the error is thrown', () => {
    const warnings: string[] = [];
    expect(problemOf({ version: 'v1', retiredVersions: ['v1alpha1'], webhook: { timeoutSeconds: 0 } }, { validateAdmission: true, onWarning: (w) => warnings.push(w) }))
      .toBe('operator app/web-operator: webhook.timeoutSeconds must be an integer from 1 to 30, got 0');
    expect(warnings).toHaveLength(1);
  });
});

describe('resolveOperatorProps errors name the operator and the prop', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['a spec that is not a zod schema', { spec: 'size' }, 'spec: expected a zod 4 schema, got string'],
    ['a status that is not a zod schema', { status: 1 }, 'status: expected a zod 4 schema, got number'],
    ['a lowercase kind', { kind: 'web' }, 'kind "web" '],
    ['a group without a dot', { group: 'demo' }, 'group "demo" '],
    ['a bad version', { version: '1' }, 'version "1" '],
    ['a plural that is not a label', { plural: 'Webs' }, 'plural "Webs" must be a lowercase DNS-1123 label'],
    ['a bad short name', { shortNames: ['W'] }, 'shortNames "W" must be a lowercase DNS-1123 label'],
    ['a bad category', { categories: ['a b'] }, 'categories "a b" must be a lowercase DNS-1123 label'],
    ['plural equal to singular', { plural: 'web' }, 'plural and singular are both "web"; set plural explicitly'],
    ['a bad operator name', { name: 'Web_Operator' }, 'operator name "Web_Operator" must be a DNS-1123 label (≤ 63)'],
    ['an owned kind outside the table', { owns: [{ apiVersion: 'x.example.com/v1', kind: 'Thing' }] }, 'owns: '],
    ['renderSkip that is not a boolean', { renderSkip: 'yes' }, 'renderSkip "yes" must be true or false'],
    ['an unknown adoption policy', { adoption: 'always' }, `adoption "always" must be 'refuse' or 'adopt'`],
    ['a retired kind outside the table', { retiredKinds: [{ apiVersion: 'x.example.com/v1', kind: 'Thing' }] }, 'retiredKinds[0]: '],
    ['a kind both owned and retired', { owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }], retiredKinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }] }, 'retiredKinds[0]: ConfigMap (v1) is also in owns; a kind is either owned or retired'],
    ['related without references', { related: { config: { apiVersion: 'v1', kind: 'ConfigMap' } } }, `related.config.references must be a field path (e.g. 'spec.configMapRef.name') or a function from the CR to references`],
    ['related references that are not a path', { related: { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec..name' } } }, 'related.config.references "spec..name" must be a dotted field path, e.g. spec.configMapRef.name'],
    ['a related kind outside the table', { related: { thing: { apiVersion: 'x.example.com/v1', kind: 'Thing', references: 'spec.thing' } } }, 'related.thing: '],
    ['an example object of an undeclared kind', { examples: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }] }, 'examples[0]: Secret (v1) is neither a Web (demo.example.com) nor of a related kind (none is declared); only objects render reads may stand beside the examples'],
    ['a related example without a name', { related: { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configName' } }, examples: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }] }, 'examples[0]: ConfigMap needs metadata.name'],
    ['a bad operator namespace', { deployment: { namespace: 'Ops' } }, 'deployment.namespace "Ops" must be a DNS-1123 label'],
    ['a bad watched namespace', { deployment: { watchNamespace: 'Team' } }, 'deployment.watchNamespace "Team" must be a DNS-1123 label'],
    ['a watched namespace for a cluster-scoped kind', { scope: 'Cluster', deployment: { watchNamespace: 'a' } }, 'deployment.watchNamespace requires a Namespaced kind'],
    ['zero replicas', { deployment: { replicas: 0 } }, 'deployment.replicas must be an integer >= 1, got 0'],
    ['a retired version still declared', { retiredVersions: ['v1alpha1'] }, 'retiredVersions[0] "v1alpha1" is still declared'],
    ['webhook props without a webhook', { webhook: { failurePolicy: 'Ignore' } }, 'webhook is set, but the operator has neither several versions nor validateAdmission / mutateAdmission'],
  ])('GIVEN %s THEN OperatorConfigError "operator app/web-operator: …" naming the prop', (_, props, detail) => {
    const expected = `operator app/web-operator: ${detail}`;
    expect(problemOf(props).slice(0, expected.length)).toBe(expected);
  });

  test('GIVEN two bad props THEN the first in the documented order is reported (kind before deployment)', () => {
    expect(problemOf({ kind: 'web', deployment: { replicas: 0 } })).toMatch(/^operator app\/web-operator: kind "web" /);
  });
});
