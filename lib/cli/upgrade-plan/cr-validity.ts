/**
 * `diff --all`'s verdict on a live CR against the NEW release's CRD: which fields of an object already
 * stored would the new schema refuse, with the API server's field path and message.
 *
 * Two checks, the second only when the first passes (as `render` does):
 * 1. the new release's own validation (zod, `Operator.parseCustomResource`) of the CR in the hub version;
 * 2. the API server's own validation of the CR against the new CRD's structural schema and
 *    `x-kubernetes-validations` (CEL, with the server's cost limits, `fieldPath` and
 *    `messageExpression`): lib/validator's `validateCustomResource`, apiextensions-apiserver compiled to
 *    WebAssembly. The CR is judged as a write that sets every field (a create): the API server ratchets
 *    an update that leaves an invalid value unchanged (KEP-4008), so a CR listed here is refused on its
 *    next change of that field, not on every write.
 *
 * Why not the API server itself: a server-side dry-run update of the live CR is judged against the
 * INSTALLED CRD, not the new one; the new CRD is not in the cluster before the upgrade, and a dry-run
 * CRD update does not revalidate stored objects. So the server's verdict runs offline.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-ratcheting
 */
import { CustomResourceValidationError } from '../../operator/errors.js';
import type { Operator } from '../../operator/operator.js';
import { validateCustomResource } from '../../validator/validate-custom-resource.js';

/** One field of a CR the new schema refuses: the API server's field path (e.g. `spec.replicas`) and message. */
export interface CustomResourceViolation {
  /** Field path, dotted with list indexes (`spec.ports[0].port`); '' for the object as a whole. */
  readonly field: string;
  readonly message: string;
}

/** What {@link customResourceViolations} judges. */
export interface CustomResourceValidityInput {
  /** The operator of the NEW release (its CRD, versions and schemas). */
  readonly operator: Operator;
  /** The live CR converted to the new release's hub version (`operator.crd.apiVersion`). */
  readonly object: Record<string, unknown>;
}

/**
 * The fields of `object` the new release's CRD refuses (see the module doc).
 * @returns [] when valid
 * @throws ValidatorLoadError when the validator cannot run; what zod validation throws other than a
 *   CustomResourceValidationError (a bug, not a verdict)
 */
export function customResourceViolations(input: CustomResourceValidityInput): CustomResourceViolation[] {
  try {
    input.operator.parseCustomResource(input.object);
  } catch (error) {
    if (!(error instanceof CustomResourceValidationError)) throw error;
    return error.fields.map((field) => ({ field: field.path, message: field.reason }));
  }
  const crd = crdJsonOf(input.operator);
  return validateCustomResource({ crd, version: input.operator.crd.version, object: input.object }).map((e) => ({ field: e.field, message: e.message }));
}

/** Each operator's CRD as JSON, made once: the validator receives one CRD object once per call (see validateCustomResources). */
const crdJson = new WeakMap<Operator, object>();
function crdJsonOf(operator: Operator): object {
  let json = crdJson.get(operator);
  if (json === undefined) crdJson.set(operator, (json = operator.customResourceDefinition.toJson() as object));
  return json;
}
