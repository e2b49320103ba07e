/**
 * Samples carry their world: the related objects beside the CRs in `examples` are what synth renders the
 * examples against (child kinds, so RBAC), what snapshot helpers default to, and a render that fails on
 * a stand-in for a missing one names the stand-in.
 */
import { ApiObject, App } from 'cdk8s';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import type { RelatedDeclaration } from '../../lib/operator/render/related.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';
import { renderExamplesForSnapshot } from '../../lib/testing/render-snapshot.js';
import { ContextOperator, configMap, refCr, type RefSpec } from './fixtures/context-operators.js';

const related: Record<string, RelatedDeclaration<CustomResource<RefSpec>>> = {
  settings: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' },
};

/** Renders a Secret whose data is the referenced ConfigMap's `greeting`, upper-cased: it reads `data`. */
function greeter(examples: unknown[]): ContextOperator {
  return new ContextOperator(new App(), { related, examples: examples as never }, (_cr, scope, context) => {
    const [settings] = context.related.settings;
    new ApiObject(scope, 'greeting', { apiVersion: 'v1', kind: 'Secret', stringData: { greeting: (settings.data as Record<string, string>).greeting.toUpperCase() } });
  });
}

const cr = refCr({ configMapRef: { name: 'settings' } });

test('GIVEN an example whose required ConfigMap stands beside it WHEN synth derives the child kinds THEN render read its data', () => {
  const operator = greeter([configMap('settings', 'team-a', { greeting: 'hello' }), cr]);
  expect(operator.examples).toEqual([cr]);
  expect(operator.childKinds().map((k) => k.kind)).toEqual(['Secret']);
  expect(renderExamplesForSnapshot(operator)['team-a/shop'][0]).toMatchObject({ kind: 'Secret', stringData: { greeting: 'HELLO' } });
});

test('GIVEN no such object beside the example WHEN synth derives the child kinds THEN the error names the stand-in render was given and how to replace it', () => {
  const operator = greeter([cr]);
  let error: unknown;
  try {
    operator.childKinds();
  } catch (err) {
    error = err;
  }
  expect(error).toBeInstanceOf(OperatorConfigError);
  expect((error as Error).message).toMatch(/example Ref team-a\/shop failed to render with a stand-in for ConfigMap team-a\/settings \(apiVersion, kind and metadata only\): put the object itself beside the CR in examples \(sample\.yaml\); .*greeting/);
});

test('GIVEN a related object without a namespace beside the examples THEN it gets `default`, as a CR does', () => {
  const { metadata, ...rest } = configMap('settings', 'default', { greeting: 'hi' });
  const operator = greeter([{ ...rest, metadata: { name: metadata.name } }, refCr({ configMapRef: { name: 'settings' } }, { namespace: 'default' })]);
  expect(operator.exampleRelated.map((o) => o.metadata.namespace)).toEqual(['default']);
  expect(operator.childKinds().map((k) => k.kind)).toEqual(['Secret']);
});

test.each([
  [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }, /examples\[0\]: Secret \(v1\) is neither a Ref \(demo\.example\.com\) nor of a related kind \(ConfigMap \(v1\)\)/],
  [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }, /examples\[0\]: ConfigMap needs metadata\.name/],
])('GIVEN examples holding %j THEN the construct refuses it, naming the field path', (object, message) => {
  expect(() => greeter([object, cr])).toThrow(message);
});
