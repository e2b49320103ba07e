import { App } from 'cdk8s';
import { z } from 'zod';
import { AGE_COLUMN, buildCrdManifest, READY_COLUMN } from '../../lib/operator/schema/crd.js';
import { StructuralSchemaError } from '../../lib/operator/errors.js';
import { checkStructuralSchema, type JSONSchemaProps } from '../../lib/operator/schema/structural-schema.js';
import { WebOperator, WebSpec } from './fixtures/test-operators.js';

const names = { kind: 'Web', plural: 'webs', singular: 'web', listKind: 'WebList' };

function version(crd: Record<string, unknown>): Record<string, any> {
  return (crd.spec as { versions: Record<string, any>[] }).versions[0];
}

describe('buildCrdManifest', () => {
  test('GIVEN a spec schema WHEN the CRD is built THEN it is an apiextensions v1 CRD named plural.group with status subresource on', () => {
    const crd = buildCrdManifest({ group: 'demo.example.com', version: 'v1alpha1', names, scope: 'Namespaced', spec: WebSpec });

    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata).toEqual({ name: 'webs.demo.example.com' });
    expect(crd.spec).toMatchObject({ group: 'demo.example.com', scope: 'Namespaced', names });
    expect(version(crd)).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  });

  test('GIVEN no status schema WHEN the CRD is built THEN status declares observedGeneration, a conditions list-map keyed by type, and children', () => {
    const crd = buildCrdManifest({ group: 'demo.example.com', version: 'v1', names, scope: 'Namespaced', spec: WebSpec });
    const status = version(crd).schema.openAPIV3Schema.properties.status as JSONSchemaProps;

    expect(status.properties!.observedGeneration).toMatchObject({ type: 'integer', format: 'int64' });
    const conditions = status.properties!.conditions;
    expect(conditions).toMatchObject({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
    expect(conditions.items!.required).toEqual(['type', 'status', 'lastTransitionTime', 'reason', 'message']);
    expect(conditions.items!.properties!.status.enum).toEqual(['True', 'False', 'Unknown']);
    expect(conditions.items!.properties!.lastTransitionTime).toMatchObject({ type: 'string', format: 'date-time' });
    expect(conditions.items!.properties!.observedGeneration).toMatchObject({ type: 'integer', format: 'int64' });
    for (const field of ['type', 'reason', 'message']) expect(conditions.items!.properties![field].type).toBe('string');
    expect(status.properties!.children.items!.required).toEqual(['apiVersion', 'kind', 'name']);
  });

  test('GIVEN a user status schema WHEN the CRD is built THEN its fields join the runtime fields, and redeclaring conditions fails', () => {
    const crd = buildCrdManifest({
      group: 'demo.example.com',
      version: 'v1',
      names,
      scope: 'Namespaced',
      spec: WebSpec,
      status: z.object({ url: z.string().optional(), readyReplicas: z.int() }),
    });
    const status = version(crd).schema.openAPIV3Schema.properties.status as JSONSchemaProps;
    expect(Object.keys(status.properties!).sort()).toEqual(['children', 'conditions', 'observedGeneration', 'readyReplicas', 'url']);
    expect(status.required).toBeUndefined();

    expect(() =>
      buildCrdManifest({ group: 'demo.example.com', version: 'v1', names, scope: 'Namespaced', spec: WebSpec, status: z.object({ conditions: z.array(z.string()) }) }),
    ).toThrow(new StructuralSchemaError('status.conditions', 'is reserved: the runtime writes it'));
  });

  test('GIVEN no printer columns WHEN the CRD is built THEN Ready and Age are shown; GIVEN user columns THEN they come first', () => {
    const plain = buildCrdManifest({ group: 'demo.example.com', version: 'v1', names, scope: 'Namespaced', spec: WebSpec });
    expect(version(plain).additionalPrinterColumns).toEqual([READY_COLUMN, AGE_COLUMN]);
    expect(READY_COLUMN.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].status');

    const custom = buildCrdManifest({
      group: 'demo.example.com',
      version: 'v1',
      names,
      scope: 'Namespaced',
      spec: WebSpec,
      printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }],
    });
    expect(version(custom).additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual(['Replicas', 'Ready', 'Age']);
  });

  test('GIVEN a spec with a required field WHEN the CRD is built THEN spec is required at the top; GIVEN an all-optional spec THEN it is not', () => {
    const strict = buildCrdManifest({ group: 'demo.example.com', version: 'v1', names, scope: 'Namespaced', spec: WebSpec });
    expect(version(strict).schema.openAPIV3Schema.required).toEqual(['spec']);
    const lax = buildCrdManifest({ group: 'demo.example.com', version: 'v1', names, scope: 'Namespaced', spec: z.object({ a: z.string() }).optional() });
    expect(version(lax).schema.openAPIV3Schema.required).toBeUndefined();
  });
});

describe('synthesized CRD', () => {
  test('GIVEN an operator WHEN synthesized THEN the whole openAPIV3Schema passes the structural-schema rules and keeps x-kubernetes keys', () => {
    const operator = new WebOperator(new App());
    const crd = operator.toJson().find((o: { kind: string }) => o.kind === 'CustomResourceDefinition');
    const schema = crd.spec.versions[0].schema.openAPIV3Schema;

    expect(checkStructuralSchema(schema)).toEqual([]);
    expect(schema.properties.spec.properties.port).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(schema.properties.spec.properties.env['x-kubernetes-list-map-keys']).toEqual(['name']);
    expect(crd.spec.names).toEqual({ kind: 'Web', listKind: 'WebList', plural: 'webs', singular: 'web', shortNames: ['wb'] });
    expect(crd.metadata.namespace).toBeUndefined();
  });
});
