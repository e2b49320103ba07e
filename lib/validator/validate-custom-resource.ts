/**
 * `validateCustomResource({ crd, object, oldObject? })`: the API server's own verdict on a custom
 * resource, offline, CEL included. apiextensions-apiserver's code (k8s.io/apiextensions-apiserver at the
 * validator's Kubernetes version, compiled into the same WebAssembly as the built-in kinds:
 * tools/validator/custom_resource.go) runs what kube-apiserver runs for a CRD it serves:
 *
 * - the CRD as the server accepts it on create (structural schema, CEL rules compiled and their
 *   estimated cost checked against the server's limits); a CRD the server would refuse is an error;
 * - the object as the CR handler decodes it: unknown fields pruned (listed in `unknownFields`), metadata
 *   coerced, the schema's `default`s applied;
 * - on create (no `oldObject`), or update of `oldObject`: type meta, ObjectMeta, the OpenAPI schema
 *   (on update with ratcheting: a field left unchanged keeps passing), embedded resources,
 *   `x-kubernetes-list-type` invariants, then the `x-kubernetes-validations` CEL rules with the
 *   server's per-call cost limit and per-request runtime budget, `fieldPath`, `reason`,
 *   `messageExpression` and transition rules (`oldSelf`). As the server does, the rules are skipped
 *   when a type, required, enum, length or count error came first (one cause then says so).
 *
 * A status subresource drops `status` on create (the server ignores it) and keeps the old one on update.
 * Not predicted: admission (webhooks, ValidatingAdmissionPolicy, quota), conversion between versions,
 * `fieldValidation=Strict` (unknown fields are warnings by default, as on the server), name conflicts.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules
 * @see https://github.com/kubernetes/kubernetes/tree/v1.37.2/staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource
 */
import { validatorInstance, ValidatorLoadError } from './validator-instance.js';

/** One cause of a refusal, as the API server's `422 Invalid` Status details carry it. */
export interface CustomResourceFieldError {
  /** Field path, e.g. `spec.replicas` (a CEL rule's `fieldPath`, or the node it is attached to); empty for the whole object or a refusal without causes. */
  readonly field: string;
  /** The cause's type, e.g. `FieldValueInvalid`, `FieldValueForbidden` (a CEL rule's `reason`); empty for a refusal without causes. */
  readonly type: string;
  /** The server's message without the path, e.g. `Invalid value: "object": min must not exceed max`. */
  readonly message: string;
}

/** What to validate. */
export interface CustomResourceValidationInput {
  /** The CustomResourceDefinition (`apiextensions.k8s.io/v1`) as plain JSON, e.g. a synthesized one. */
  readonly crd: object;
  /** The CRD version the object is written in. @default the version of the object's `apiVersion` */
  readonly version?: string;
  /** The custom resource, plain JSON. A namespaced one without a namespace is validated in `default`. */
  readonly object: object;
  /** The object it replaces: the request is then an update (transition rules, ratcheting). @default none: a create */
  readonly oldObject?: object;
}

/** The full verdict on one custom resource. */
export interface CustomResourceVerdict {
  /** `valid`, or `invalid` (see `errors`). */
  readonly verdict: 'valid' | 'invalid';
  /** The causes; a refusal without causes (an undecodable object, a CRD the server refuses) is one cause with an empty field and type. @default [] */
  readonly errors: readonly CustomResourceFieldError[];
  /** Paths of fields the schema does not declare, which the server prunes (`.spec.extra`). @default [] */
  readonly unknownFields: readonly string[];
  /** The object as the server would store it: pruned, defaulted (absent when it could not be decoded). */
  readonly object?: Record<string, unknown>;
}

/**
 * The causes the API server would give for refusing `input.object` (an empty list: it would accept it).
 * Cost: the first call with a CRD compiles its rules (milliseconds per rule); later calls with the same
 * CRD JSON reuse them.
 *
 * @throws ValidatorLoadError when the validator is missing, corrupt or fails (never a silent pass)
 */
export function validateCustomResource(input: CustomResourceValidationInput): CustomResourceFieldError[] {
  return [...validateCustomResources([input])[0].errors];
}

/**
 * The verdicts on several custom resources in one call, in input order (see {@link validateCustomResource}).
 * Inputs that share one `crd` object send it once (pass the same object, not copies, for thousands of CRs).
 * @throws ValidatorLoadError when the validator is missing, corrupt or fails
 */
export function validateCustomResources(inputs: readonly CustomResourceValidationInput[]): CustomResourceVerdict[] {
  const verdicts: CustomResourceVerdict[] = [];
  for (let start = 0; start < inputs.length; start += CUSTOM_RESOURCES_PER_CALL) {
    verdicts.push(...validateBatch(inputs.slice(start, start + CUSTOM_RESOURCES_PER_CALL)));
  }
  return verdicts;
}

/**
 * CRs per call into the validator. One call of 3000 CR updates crashed Node 20 (SIGSEGV, reproducible
 * under tsx's preflight with `--liftoff-only` set at run time, see validator-instance.ts; 2000 passed);
 * 12000 in calls of 500 passed, at the same cost per CR (measured 2026-12-04).
 */
const CUSTOM_RESOURCES_PER_CALL = 500;

function validateBatch(inputs: readonly CustomResourceValidationInput[]): CustomResourceVerdict[] {
  if (inputs.length === 0) return [];
  const validator = validatorInstance();
  // each CRD object once, named by index: thousands of CRs of one CRD do not repeat it
  const crds = [...new Set(inputs.map((input) => input.crd))];
  const crdIndex = new Map(crds.map((crd, i) => [crd, i]));
  const request = {
    crds,
    customResources: inputs.map((input) => ({
      crd: crdIndex.get(input.crd),
      version: input.version ?? versionOf(input.object),
      object: input.object,
      ...(input.oldObject === undefined ? {} : { oldObject: input.oldObject }),
    })),
  };
  const answer = JSON.parse(validator.call(JSON.stringify(request))) as { customResources?: unknown; error?: string };
  const results = answer.customResources;
  if (!Array.isArray(results) || results.length !== inputs.length) {
    throw new ValidatorLoadError(`the validator ${validator.file} answered ${JSON.stringify(answer).slice(0, 200)} for ${inputs.length} custom resources`
      + ' (a validator built before custom resources were supported? run tools/validator/build.sh)');
  }
  return (results as WireResult[]).map((result) => ({
    verdict: result.verdict,
    errors: result.errors ?? (result.verdict === 'invalid' ? [{ field: '', type: '', message: result.reason ?? 'refused' }] : []),
    unknownFields: result.unknownFields ?? [],
    ...(result.object === undefined ? {} : { object: result.object }),
  }));
}

interface WireResult {
  readonly verdict: 'valid' | 'invalid';
  readonly errors?: CustomResourceFieldError[];
  readonly reason?: string;
  readonly unknownFields?: string[];
  readonly object?: Record<string, unknown>;
}

function versionOf(object: object): string {
  const apiVersion = (object as { apiVersion?: unknown }).apiVersion;
  return typeof apiVersion === 'string' ? apiVersion.slice(apiVersion.indexOf('/') + 1) : '';
}
