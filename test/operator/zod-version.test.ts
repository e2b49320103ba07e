import { App } from 'cdk8s';
import { z } from 'zod';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import { Operator } from '../../lib/operator/operator.js';
import { zodVersionProblem } from '../../lib/operator/schema/zod-version.js';

class Probe extends Operator {
  render(): void {}
}

describe('zod peer dependency', () => {
  test('GIVEN a zod 4 schema and zod 4.6 WHEN checked THEN there is no problem', () => {
    expect(zodVersionProblem('spec', z.object({}))).toBeUndefined();
  });

  test('GIVEN zod 3 or zod 4.0 installed WHEN checked THEN the problem names the required version', () => {
    expect(zodVersionProblem('spec', z.object({}), null)).toBe('cdk8s-operator-sdk needs zod@^4.1.0, found zod 3 or older: npm install zod@^4.1.0');
    expect(zodVersionProblem('spec', z.object({}), { major: 4, minor: 0 })).toMatch(/needs zod@\^4\.1\.0, found zod 4\.0/);
  });

  test('GIVEN a zod 3 schema (it has _def, no _zod) WHEN an Operator is built THEN OperatorConfigError names the field and version', () => {
    const zod3Schema = { _def: { typeName: 'ZodObject' }, parse: () => ({}) };
    expect(() => new Probe(new App(), 'probe', { group: 'x.example.com', version: 'v1', kind: 'Probe', spec: zod3Schema as never }))
      .toThrow(OperatorConfigError);
    expect(() => new Probe(new App(), 'probe', { group: 'x.example.com', version: 'v1', kind: 'Probe', spec: zod3Schema as never }))
      .toThrow(/spec: expected a zod 4 schema \(this one is a zod 3 schema\): cdk8s-operator-sdk needs zod@\^4\.1\.0/);
  });

  test('GIVEN a status that is not a schema WHEN an Operator is built THEN the error names status', () => {
    expect(() => new Probe(new App(), 'probe', { group: 'x.example.com', version: 'v1', kind: 'Probe', spec: z.object({}), status: 'nope' as never }))
      .toThrow(/status: expected a zod 4 schema, got string/);
  });
});
