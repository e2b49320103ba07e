// validateCustomResource: the API server's verdict on a custom resource against its CRD, offline
// (apiextensions-apiserver's code in the WebAssembly validator jest.config.js builds), CEL rules
// included, and where it is wired in: renderForSnapshot and `render`.
// The verdicts are compared with the real API server in
// test/integration/custom-resource-validator-differential.test.ts.
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { runRender } from '../../lib/cli/render-command.js';
import { CustomResourceValidationError } from '../../lib/operator/errors.js';
import { renderForSnapshot } from '../../lib/testing/render-snapshot.js';
import { customResourceDefinitionOf } from '../../lib/validator/assert-custom-resource-accepted.js';
import { validateCustomResource, validateCustomResources } from '../../lib/validator/validate-custom-resource.js';
import { RangeOperator } from '../cli/fixtures/cel-rule-operator.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const range = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({ apiVersion: 'cel.example.com/v1', kind: 'Range', metadata: { name: 'r', namespace: 'default', ...metadata }, spec });
const crd = () => customResourceDefinitionOf(new RangeOperator(new App()))!;

describe('validateCustomResource', () => {
  test('GIVEN the synthesized CRD of an operator with celRule WHEN a CR breaks a rule THEN the server\'s field path and message come back; a valid CR has none', () => {
    const definition = crd();
    expect(validateCustomResource({ crd: definition, object: range({ min: 1, max: 2 }) })).toEqual([]);
    expect(validateCustomResource({ crd: definition, object: range({ min: 3, max: 2 }) })).toEqual([
      { field: 'spec', type: 'FieldValueInvalid', message: 'Invalid value: min must not exceed max' },
    ]);
    expect(validateCustomResource({ crd: definition, object: range({ min: 1, max: 2, unit: 'h' }) })).toEqual([
      { field: 'spec.unit', type: 'FieldValueInvalid', message: 'Invalid value: "h": unit h is not ms or s' },
    ]);
  });

  test('GIVEN an old object WHEN a transition rule is broken THEN the update is refused; unchanged, it is accepted', () => {
    const definition = crd();
    const old = range({ min: 1, max: 2, name: 'a' }, { resourceVersion: '7', uid: '1b4d0c4e-0000-4000-8000-000000000001' });
    expect(validateCustomResource({ crd: definition, object: range({ min: 1, max: 3, name: 'a' }), oldObject: old })).toEqual([]);
    expect(validateCustomResource({ crd: definition, object: range({ min: 1, max: 3, name: 'b' }), oldObject: old }).map((e) => `${e.field}: ${e.message}`)).toEqual([
      'spec.name: Invalid value: "b": name is immutable',
    ]);
  });

  test('GIVEN a CR with an unknown field, a missing default and a wrong type WHEN validated THEN the pruned path, the defaulted object and the blocking cause are reported as the server would', () => {
    const [pruned, wrongType] = validateCustomResources([
      { crd: crd(), object: range({ min: 1, max: 2, color: 'red' }) },
      { crd: crd(), object: range({ min: 'one', max: 2 }) },
    ]);
    expect(pruned).toMatchObject({ verdict: 'valid', errors: [], unknownFields: ['spec.color'] });
    expect(pruned.object?.spec).toEqual({ min: 1, max: 2, unit: 'ms' });
    expect(wrongType.verdict).toBe('invalid');
    expect(wrongType.errors.map((e) => e.field)).toEqual(['spec.min', '<nil>']);
    expect(wrongType.errors[1].message).toMatch(/some validation rules were not checked because the object was invalid/);
  });

  test('GIVEN a version the CRD does not serve, or no CRD JSON WHEN validated THEN the refusal says why', () => {
    expect(validateCustomResource({ crd: crd(), object: { ...range({ min: 1, max: 2 }), apiVersion: 'cel.example.com/v2' } })).toEqual([
      { field: '', type: '', message: 'the CRD ranges.cel.example.com serves no version "v2" (it serves v1)' },
    ]);
    expect(validateCustomResource({ crd: { kind: 'ConfigMap' }, object: range({ min: 1, max: 2 }) })[0].message).toMatch(/^the CRD cannot be decoded as an apiextensions\.k8s\.io\/v1 CustomResourceDefinition/);
  });
});

describe('renderForSnapshot', () => {
  test('GIVEN a CR that passes zod but breaks a CEL rule WHEN rendered for a snapshot THEN it fails with the server\'s field and message; with validateCustomResource: false it renders', () => {
    const operator = new RangeOperator(new App());
    let error: unknown;
    try {
      renderForSnapshot(operator, range({ min: 3, max: 2 }) as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CustomResourceValidationError);
    expect((error as CustomResourceValidationError).fields).toEqual([{ path: 'spec', reason: 'Invalid value: min must not exceed max' }]);
    expect(renderForSnapshot(operator, range({ min: 3, max: 2 }) as never, { validateCustomResource: false }).map((c) => c.kind)).toEqual(['ConfigMap']);
    expect(renderForSnapshot(operator, range({ min: 1, max: 2 }) as never).map((c) => c.kind)).toEqual(['ConfigMap']);
  });
});

describe('synth', () => {
  test('GIVEN an operator whose example breaks a CEL rule WHEN synthesized THEN it fails naming the example, the field and the server\'s message; valid examples synthesize', () => {
    expect(() => new RangeOperator(new App(), [range({ min: 3, max: 2 }) as never]).toJson()).toThrow('Range default/r is invalid: spec: Invalid value: min must not exceed max');
    expect(new RangeOperator(new App()).toJson().map((o) => (o as { kind: string }).kind)).toContain('CustomResourceDefinition');
  });
});

describe('cdk8s-operator render', () => {
  test('GIVEN a CR that breaks a CEL rule WHEN rendered THEN exit 2, nothing on stdout, and the field and the server\'s message on stderr', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runRender({ module: 'test/cli/fixtures/cel-rule-operator.ts', filename: ['-'] }, {
      cwd: root,
      readStdin: async () => JSON.stringify(range({ min: 3, max: 2 })),
      writeStdout: (text) => { stdout += text; },
      writeStderr: (text) => { stderr += text; },
    });
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: 'error: Range/r: spec: Invalid value: min must not exceed max\n' });
  });
});
