/**
 * The lib/operator guarantees, checked on the project's own example operators (operators/index.ts):
 * structural CRD schemas, RBAC covering every rendered kind, deterministic synthesis.
 */
import { App } from 'cdk8s';
import { resolveKind } from '../../lib/operator/kinds.js';
import { checkStructuralSchema } from '../../lib/operator/schema/structural-schema.js';
import { renderExamplesForSnapshot } from '../../lib/testing/render-snapshot.js';
import { addOperators } from '../../operators/index.js';

type Json = Record<string, any>;

const operators = addOperators(new App());

describe.each(operators.map((o) => [o.operatorName, o] as const))('example operator %s', (_name, operator) => {
  const manifests = operator.toJson() as Json[];

  test('GIVEN its CRD WHEN every schema node is walked THEN it satisfies the structural-schema rules', () => {
    const crd = manifests.find((m) => m.kind === 'CustomResourceDefinition')!;
    for (const version of crd.spec.versions) expect(checkStructuralSchema(version.schema.openAPIV3Schema)).toEqual([]);
    expect(crd.spec.versions[0].subresources).toEqual({ status: {} });
  });

  test('GIVEN its examples WHEN rendered THEN every child kind is granted get, list, watch, create, patch, delete and no rule has a wildcard', () => {
    const rules = manifests.find((m) => m.kind === 'ClusterRole')!.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const rendered = Object.values(renderExamplesForSnapshot(operator)).flat();
    expect(rendered.length).toBeGreaterThan(0);
    for (const child of rendered) {
      const kind = resolveKind({ apiVersion: child.apiVersion, kind: child.kind }, operator.owns);
      const verbs = rules.filter((r) => r.apiGroups.includes(kind.group) && r.resources.includes(kind.plural)).flatMap((r) => r.verbs);
      expect({ kind: child.kind, verbs: [...verbs].sort() }).toEqual({ kind: child.kind, verbs: ['create', 'delete', 'get', 'list', 'patch', 'watch'] });
    }
    expect(JSON.stringify(rules)).not.toContain('*');
  });

  test('GIVEN a second App WHEN the same operator is synthesized THEN the output is byte-identical', () => {
    const again = addOperators(new App()).find((o) => o.operatorName === operator.operatorName)!;
    expect(JSON.stringify(again.toJson())).toBe(JSON.stringify(manifests));
  });
});
