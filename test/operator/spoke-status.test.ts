/**
 * Every served version can hold what the runtime and conversion write: a spoke's CRD schema declares the
 * runtime's status fields and the hub's, and conversion keeps the hub's status fields as they are.
 */
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import { Operator } from '../../lib/operator/operator.js';
import { celRule } from '../../lib/operator/schema/structural-schema.js';
import { spokeVersion, type SpokeVersion } from '../../lib/operator/versions/versions.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';

const Hub = z.object({ replicas: z.int() });
const HubStatus = z.object({ url: z.string().describe('Where it is served.'), description: z.string() });
const Old = z.object({ size: z.int() });

type CrdVersion = { name: string; schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown>; 'x-kubernetes-validations'?: unknown[] } } } } };
const statusOf = (operator: Operator, version: string) =>
  (operator.customResourceDefinition.toJson() as { spec: { versions: CrdVersion[] } }).spec.versions.find((v) => v.name === version)!.schema.openAPIV3Schema.properties.status;

function spoke(status?: z.ZodObject, extra: Partial<SpokeVersion> = {}): SpokeVersion {
  return {
    ...spokeVersion({
      hubSpec: Hub, hubStatus: HubStatus, name: 'v1alpha1', spec: Old, status,
      toHub: (o) => ({ spec: { replicas: o.spec.size } }),
      fromHub: (h) => ({ spec: { size: h.spec.replicas }, ...(h.status?.url !== undefined ? { status: { link: h.status.url } } : {}) }),
    }),
    ...extra,
  };
}

class Versioned extends Operator<typeof Hub, typeof HubStatus> {
  constructor(scope: Construct, versions: SpokeVersion[], status: z.ZodObject = HubStatus) {
    super(scope, 'v', { group: 'demo.example.com', version: 'v1', kind: 'Thing', spec: Hub, status: status as typeof HubStatus, versions });
  }
  render(): void {}
}

describe('spoke status schema', () => {
  test('GIVEN the memcached example WHEN synthesized THEN v1alpha1 declares the runtime\'s status fields and the hub\'s status.nodes, exactly as v1beta1 does', () => {
    const operator = new MemcachedOperator(new App());
    const alpha = statusOf(operator, 'v1alpha1');
    const beta = statusOf(operator, 'v1beta1');
    expect(Object.keys(alpha.properties).sort()).toEqual(['children', 'conditions', 'nodes', 'observedGeneration']);
    expect(alpha).toEqual(beta);
  });

  test('GIVEN a spoke with a status field of its own WHEN synthesized THEN its status holds the runtime\'s, the hub\'s and its own fields', () => {
    const operator = new Versioned(new App(), [spoke(z.object({ link: z.string() }))]);
    expect(Object.keys(statusOf(operator, 'v1alpha1').properties).sort()).toEqual(['children', 'conditions', 'description', 'link', 'observedGeneration', 'url']);
    expect(Object.keys(statusOf(operator, 'v1').properties).sort()).toEqual(['children', 'conditions', 'description', 'observedGeneration', 'url']);
  });

  test('GIVEN a spoke that declares a hub status field alike (another description) WHEN synthesized THEN it is accepted', () => {
    expect(() => new Versioned(new App(), [spoke(z.object({ url: z.string().describe('The URL.') }))])).not.toThrow();
  });

  test('GIVEN a spoke that declares a hub status field with another type WHEN synthesized THEN an OperatorConfigError names the version and the field path', () => {
    const build = () => new Versioned(new App(), [spoke(z.object({ url: z.int() }))]);
    expect(build).toThrow(OperatorConfigError);
    expect(build).toThrow(/versions\[0\]\.status\.url \(v1alpha1\): cannot hold the hub's status\.url: declared as \{"type":"integer"\}, the hub's is \{"type":"string"\}/);
  });

  test('GIVEN a spoke that declares a hub status field with other rules WHEN synthesized THEN it is refused too (the spoke could not hold every hub value)', () => {
    expect(() => new Versioned(new App(), [spoke(z.object({ url: z.string().max(10) }))])).toThrow(/versions\[0\]\.status\.url \(v1alpha1\): cannot hold/);
  });

  test('GIVEN a hub status with CEL rules WHEN synthesized THEN the spoke\'s status keeps them', () => {
    const withRule = celRule(HubStatus, { rule: 'self.url != ""', message: 'url must not be empty' });
    const operator = new Versioned(new App(), [spoke()], withRule);
    expect(statusOf(operator, 'v1alpha1')['x-kubernetes-validations']).toEqual(statusOf(operator, 'v1')['x-kubernetes-validations']);
  });
});

describe('spoke status in conversion', () => {
  const operator = new Versioned(new App(), [spoke(z.object({ link: z.string() }))]);
  const runtime = { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] };
  const hubObject = { apiVersion: 'demo.example.com/v1', kind: 'Thing', metadata: { name: 'a', namespace: 'default' }, spec: { replicas: 3 }, status: { ...runtime, url: 'http://a', description: 'd' } };

  test('GIVEN a hub object with status WHEN read as the spoke THEN the spoke holds the hub\'s status fields as they are, the runtime\'s, and fromHub\'s own', () => {
    const down = operator.convert(hubObject, 'demo.example.com/v1alpha1');
    expect(down.status).toEqual({ ...runtime, url: 'http://a', description: 'd', link: 'http://a' });
    expect(down.metadata).toEqual(hubObject.metadata); // nothing lost: no conversion-data annotation
    expect(operator.convert(down, 'demo.example.com/v1')).toEqual(hubObject);
  });

  test('GIVEN a spoke object whose status has a field the hub does not declare WHEN converted to the hub THEN the hub gets only fields its schema holds', () => {
    const obj = { apiVersion: 'demo.example.com/v1alpha1', kind: 'Thing', metadata: { name: 'a' }, spec: { size: 1 }, status: { link: 'x', url: 'u', stray: 1 } };
    expect(operator.convert(obj, 'demo.example.com/v1').status).toEqual({ url: 'u' });
  });
});
