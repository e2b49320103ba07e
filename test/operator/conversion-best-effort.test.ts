/**
 * Conversion of stored data is best effort: defaults applied, no validation of the source against
 * today's rules, a value that cannot convert kept in the conversion-data annotation, and only a
 * conversion function that throws fails (opentelemetry-operator#4288, provider-keycloak#669).
 */
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { CONVERSION_DATA_ANNOTATION, ConversionError } from '../../lib/operator/versions/conversion.js';
import { Operator } from '../../lib/operator/operator.js';
import { spokeVersion } from '../../lib/operator/versions/versions.js';

const Hub = z.object({ replicas: z.int().min(1), mode: z.enum(['fast', 'safe']).default('safe'), tags: z.array(z.string()).default([]) });
const Old = z.object({ size: z.int().min(1).max(5), label: z.string().regex(/^[a-z]+$/).optional() });

class Versioned extends Operator<typeof Hub> {
  constructor(scope: Construct, toHub = (o: { spec: z.output<typeof Old> }) => ({ spec: { replicas: o.spec.size, ...(o.spec.label ? { tags: [o.spec.label] } : {}) } })) {
    super(scope, 'v', {
      group: 'demo.example.com', version: 'v1', kind: 'Thing', spec: Hub,
      versions: [spokeVersion({ hubSpec: Hub, name: 'v1alpha1', spec: Old, toHub, fromHub: (h) => ({ spec: { size: h.spec.replicas, ...(h.spec.tags[0] ? { label: h.spec.tags[0] } : {}) } }) })],
    });
  }
  render(): void {}
}

const V1 = 'demo.example.com/v1';
const ALPHA = 'demo.example.com/v1alpha1';
const operator = new Versioned(new App());
const object = (apiVersion: string, spec: unknown) => ({ apiVersion, kind: 'Thing', metadata: { name: 'old', namespace: 'ns' }, spec });

describe('best-effort conversion', () => {
  test('GIVEN an object without spec (one field manager\'s fields, as the API server converts them during server-side apply) WHEN converted either way THEN no conversion function runs and only apiVersion changes', () => {
    const throwing = new Versioned(new App(), () => {
      throw new Error('toHub must not see a partial object');
    });
    const status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' }] };
    const partial = (apiVersion: string) => ({ apiVersion, kind: 'Thing', metadata: { name: 'old', namespace: 'ns' }, status });
    expect(throwing.convert(partial(ALPHA), V1)).toEqual(partial(V1));
    expect(throwing.convert(partial(V1), ALPHA)).toEqual(partial(ALPHA));
    // and a whole object still goes through toHub
    expect(() => throwing.convert(object(ALPHA, { size: 1 }), V1)).toThrow(ConversionError);
  });

  test('GIVEN a stored spoke object that breaks today\'s rules (size 0 after .min(1)) WHEN read as the hub THEN defaults apply, the value is kept, and one warning names the object and the field', () => {
    const warnings: string[] = [];
    const up = operator.convert(object(ALPHA, { size: 0, label: 'NOT-lower' }), V1, { onBestEffort: (m) => warnings.push(m) });
    expect(up.spec).toEqual({ replicas: 0, mode: 'safe', tags: ['NOT-lower'] });
    expect(warnings).toEqual([expect.stringMatching(/^Thing ns\/old: converted to demo\.example\.com\/v1 best effort: demo\.example\.com\/v1alpha1 spec read without validation: spec\.size: Too small.*; spec\.label: /)]);
    expect(operator.convert(up, ALPHA)).toEqual(object(ALPHA, { size: 0, label: 'NOT-lower' }));
  });

  test('GIVEN a stored hub object that breaks today\'s rules WHEN read as the spoke THEN it converts and comes back the same', () => {
    const stored = object(V1, { replicas: 0, mode: 'fast', tags: [] });
    const down = operator.convert(stored, ALPHA);
    expect(down.spec).toEqual({ size: 0 });
    expect(operator.convert(down, V1)).toEqual(stored);
  });

  test('GIVEN null in a non-nullable field with a default WHEN read THEN the default applies, as the API server defaults stored data', () => {
    expect(operator.convert(object(V1, { replicas: 0, mode: null }), ALPHA).spec).toEqual({ size: 0 });
    expect(operator.convert(object(ALPHA, { size: 0, label: null }), V1).spec).toEqual({ replicas: 0, mode: 'safe', tags: [] });
  });

  test('GIVEN a stored value whose type no longer fits its field WHEN converted THEN it travels in the conversion-data annotation and is back when converted to its version', () => {
    const stored = object(ALPHA, { size: 'two', label: 'a' });
    const warnings: string[] = [];
    const up = operator.convert(stored, V1, { onBestEffort: (m) => warnings.push(m) }) as { spec: unknown; metadata: { annotations: Record<string, string> } };
    expect(JSON.parse(up.metadata.annotations[CONVERSION_DATA_ANNOTATION]!)).toEqual({ unconverted: [{ path: ['spec', 'size'], value: 'two', version: 'v1alpha1' }] });
    expect(warnings[0]).toContain(`kept in ${CONVERSION_DATA_ANNOTATION}, not converted: spec.size (v1alpha1)`);
    expect(operator.convert(up, ALPHA)).toEqual(stored);
  });

  test('GIVEN a conversion function that throws WHEN converting THEN a ConversionError names the object and the function', () => {
    const broken = new Versioned(new App(), () => {
      throw new Error('boom');
    });
    expect(() => broken.convert(object(ALPHA, { size: 1 }), V1)).toThrow(ConversionError);
    expect(() => broken.convert(object(ALPHA, { size: 1 }), V1)).toThrow(/Thing ns\/old: toHub of v1alpha1 threw: boom/);
  });

  test('GIVEN a valid object WHEN converted THEN no warning is given', () => {
    const warnings: string[] = [];
    operator.convert(object(ALPHA, { size: 2 }), V1, { onBestEffort: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
  });
});
