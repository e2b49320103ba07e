import { App } from 'cdk8s';
import { CustomResourceValidationError } from '../../lib/operator/errors.js';
import { z } from 'zod';
import { formatFieldPath, validateCustomResource } from '../../lib/operator/schema/validate.js';
import { WebOperator, webCr } from './fixtures/test-operators.js';

function validationError(fn: () => unknown): CustomResourceValidationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CustomResourceValidationError);
    return e as CustomResourceValidationError;
  }
  throw new Error('expected a CustomResourceValidationError');
}

describe('Operator.parseCustomResource', () => {
  const operator = new WebOperator(new App());

  test('GIVEN a valid CR without defaults WHEN validated THEN defaults are applied and metadata is kept', () => {
    const cr = operator.parseCustomResource(webCr());
    expect(cr.spec).toEqual({ image: 'nginx:1.27', replicas: 1 });
    expect(cr.metadata).toEqual({ name: 'shop', namespace: 'team-a', uid: '11111111-2222-4333-8444-555555555555' });
  });

  test('GIVEN a namespaced CR without a namespace WHEN validated THEN it gets "default", as kubectl would', () => {
    expect(operator.parseCustomResource({ ...webCr(), metadata: { name: 'shop' } }).metadata.namespace).toBe('default');
  });

  test('GIVEN out-of-range and missing fields WHEN validated THEN every problem is listed with its field path and the CR reference', () => {
    const error = validationError(() => operator.parseCustomResource({ ...webCr(), spec: { replicas: 0 } }));
    expect(error.fields).toEqual([
      { path: 'spec.image', reason: 'Invalid input: expected string, received undefined' },
      { path: 'spec.replicas', reason: 'Too small: expected number to be >=1' },
    ]);
    expect(error.reason).toBe('Invalid');
    expect(error.message).toBe(
      'Web team-a/shop is invalid: spec.image: Invalid input: expected string, received undefined; spec.replicas: Too small: expected number to be >=1',
    );
    expect(error.cause).toBeDefined();
  });

  test('GIVEN a nested list-map with a duplicate key WHEN validated THEN the path points into the list', () => {
    const error = validationError(() =>
      operator.parseCustomResource({ ...webCr(), spec: { image: 'x', env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }] } }),
    );
    expect(error.fields).toEqual([{ path: 'spec.env[1]', reason: 'Duplicate value: {"name":"A"}' }]);
  });

  test('GIVEN the wrong apiVersion and kind and a bad name WHEN validated THEN each is reported', () => {
    const error = validationError(() => operator.parseCustomResource({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { image: 'x' } }));
    expect(error.fields.map((f) => f.path)).toEqual(['apiVersion', 'kind', 'metadata.name']);
    expect(error.fields[0].reason).toBe('must be "demo.example.com/v1alpha1", got "v1"');
    expect(error.fields[2].reason).toContain('lowercase RFC 1123 subdomain');
  });

  test('GIVEN something that is not an object, or has no metadata WHEN validated THEN it is rejected', () => {
    expect(validationError(() => operator.parseCustomResource('nope')).fields).toEqual([{ path: '', reason: 'must be an object' }]);
    expect(validationError(() => operator.parseCustomResource({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Web', spec: { image: 'x' } })).fields).toEqual([
      { path: 'metadata', reason: 'Required' },
    ]);
  });

  test('GIVEN a cluster-scoped kind WHEN a CR carries a namespace THEN it is rejected', () => {
    const cluster = new WebOperator(new App(), 'web-operator', { scope: 'Cluster' });
    const error = validationError(() => cluster.parseCustomResource(webCr()));
    expect(error.fields).toEqual([{ path: 'metadata.namespace', reason: 'must not be set: Web is cluster-scoped' }]);
  });
});

describe('formatFieldPath', () => {
  test('GIVEN zod paths with indices and odd keys WHEN formatted THEN they read like kubectl paths', () => {
    expect(formatFieldPath('spec', ['ports', 0, 'name'])).toBe('spec.ports[0].name');
    expect(formatFieldPath('spec', ['config', 'app.yaml'])).toBe('spec.config["app.yaml"]');
  });
});

describe('null, as the API server treats it', () => {
  const kind = { apiVersion: 'x.example.com/v1', group: 'x.example.com', version: 'v1', kind: 'X', plural: 'xs', namespaced: true };
  const spec = z.object({ opt: z.string().optional(), def: z.string().default('d'), nul: z.string().nullable().optional(), map: z.record(z.string(), z.string()).optional() });
  const cr = (s: unknown) => ({ apiVersion: kind.apiVersion, kind: 'X', metadata: { name: 'a', namespace: 'n' }, spec: s });

  test('GIVEN null for non-nullable fields and map values WHEN validated THEN they are dropped and defaults apply; null stays where nullable', () => {
    expect(validateCustomResource(kind, spec, cr({ opt: null, def: null, nul: null, map: { a: null, b: 'x' } })).spec).toEqual({ def: 'd', nul: null, map: { b: 'x' } });
  });

  test('GIVEN null in a list WHEN validated THEN it is an error, as on the server', () => {
    expect(() => validateCustomResource(kind, z.object({ l: z.array(z.string()) }), cr({ l: [null] }))).toThrow(/spec\.l\[0\]/);
  });
});
