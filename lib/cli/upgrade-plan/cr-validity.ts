/**
 * The seam of `diff --all`'s verdict on a live CR against the NEW release's CRD: which fields of an
 * object already stored would the new schema refuse, with the API server's field path and message.
 *
 * Today: the new release's offline validation (zod, `Operator.parseCustomResource`) of the CR in the
 * hub version: structural rules zod expresses (types, required, ranges, patterns, enums, the CR's name).
 * It does NOT evaluate the CRD's `x-kubernetes-validations` (CEL, `celRule`), and it does not ratchet:
 * the API server lets an update keep an invalid value that did not change (CRD validation ratcheting,
 * KEP-4008), so a CR listed here is refused on its next change of that field, not on every write.
 *
 * Why not the API server itself: a server-side dry-run update of the live CR is judged against the
 * INSTALLED CRD, not the new one; the new CRD is not in the cluster before the upgrade, and a dry-run
 * CRD update does not revalidate stored objects. So the server's verdict must run offline.
 *
 * MERGE: replace the body of {@link customResourceViolations} with lib/validator's
 * `validateCustomResource({ crd, version, object, oldObject })` (the API server's apiextensions code in
 * WebAssembly, CEL included), passing the new CRD manifest, the hub version, the hub object and
 * `oldObject: object` (ratcheting as the server applies it on update). Callers need no change.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-ratcheting
 */
import { CustomResourceValidationError } from '../../operator/errors.js';
import type { Operator } from '../../operator/operator.js';

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
 * The fields of `object` the new release's CRD refuses (see the module doc for what is checked today).
 * @returns [] when valid
 * @throws what validation throws other than a CustomResourceValidationError (a bug, not a verdict)
 */
export function customResourceViolations(input: CustomResourceValidityInput): CustomResourceViolation[] {
  try {
    input.operator.parseCustomResource(input.object);
    return [];
  } catch (error) {
    if (!(error instanceof CustomResourceValidationError)) throw error;
    return error.fields.map((field) => ({ field: field.path, message: field.reason }));
  }
}
