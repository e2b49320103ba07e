/**
 * `assertCustomResourceAccepted(operator, cr)`: refuses a custom resource the API server would refuse
 * on create, judged against the operator's own synthesized CRD by the server's code, CEL rules
 * (`celRule`) included (see {@link validateCustomResource}). Used by `render` and `renderForSnapshot`,
 * after the operator's zod validation, which the CRD's schema mirrors except for CEL.
 */
import { CustomResourceValidationError } from '../operator/errors.js';
import { validateCustomResource } from './validate-custom-resource.js';

/** An operator construct's CRD, as `Operator.customResourceDefinition` holds it. */
interface WithCustomResourceDefinition {
  readonly customResourceDefinition?: { toJson(): unknown };
}

const crds = new WeakMap<object, object | undefined>();

/**
 * The operator's CRD as plain JSON (synthesized once per operator object), or undefined when it has
 * none (a `RenderableOperator` that is not an `Operator` construct).
 */
export function customResourceDefinitionOf(operator: object): object | undefined {
  if (!crds.has(operator)) {
    const definition = (operator as WithCustomResourceDefinition).customResourceDefinition;
    crds.set(operator, typeof definition?.toJson === 'function' ? JSON.parse(JSON.stringify(definition.toJson())) as object : undefined);
  }
  return crds.get(operator);
}

/**
 * Throws when the API server would refuse `cr` (plain JSON, in any version the CRD serves) on create.
 * An operator without a CRD passes.
 *
 * @throws CustomResourceValidationError naming the CR and, per cause, the server's field path and
 *   message, e.g. `Widget default/w is invalid: spec.min: Forbidden: min must not exceed max`
 * @throws ValidatorLoadError when the validator is missing, corrupt or fails
 */
export function assertCustomResourceAccepted(operator: object, cr: { readonly kind: string; readonly metadata: { readonly name?: string; readonly namespace?: string } }): void {
  const crd = customResourceDefinitionOf(operator);
  if (crd === undefined) return;
  const errors = validateCustomResource({ crd, object: cr });
  if (errors.length === 0) return;
  throw new CustomResourceValidationError(
    { kind: cr.kind, namespace: cr.metadata.namespace, name: cr.metadata.name ?? '<unnamed>' },
    errors.map((error) => ({ path: error.field, reason: error.message })),
  );
}
