/**
 * `validateBuiltInObjects(objects)`: the API server's own verdict on creating each object, offline.
 * Kubernetes' defaulting and create validation of the built-in kinds cdk8s-plus emits (k8s.io/kubernetes
 * at the control plane's version, compiled to WebAssembly: tools/validator/), one call for many objects.
 *
 * Kinds: ConfigMap, PersistentVolumeClaim, Secret, Service, ServiceAccount (v1); DaemonSet, Deployment,
 * StatefulSet (apps); HorizontalPodAutoscaler (autoscaling); CronJob, Job (batch); Ingress,
 * NetworkPolicy (networking.k8s.io); PodDisruptionBudget (policy); ClusterRole, ClusterRoleBinding,
 * Role, RoleBinding (rbac.authorization.k8s.io); every version the server serves. Any other kind is
 * `unchecked`, never `valid`.
 *
 * What runs per object is what kube-apiserver runs on create before storing (its fields' causes, as
 * a `422 Invalid` response carries them): decode (scheme defaults, conversion to the internal version),
 * system metadata, the request namespace (`default` when the object has none), then
 * `rest.BeforeCreate` with the kind's registry strategy (PrepareForCreate, the kind's `Validate…`
 * function, ObjectMeta validation). Not predicted: admission (quota, LimitRanger, webhooks) and the
 * Service allocator (cluster IPs, node ports).
 *
 * @see https://github.com/kubernetes/kubernetes/tree/v1.37.2/pkg/apis/core/validation
 */
import { ChildRefusedError } from './child-refused-error.js';
import { validatorInstance, ValidatorLoadError } from './validator-instance.js';

/** One cause of a refusal, as the API server's Status details carry it. */
export interface BuiltInFieldError {
  /** Field path, e.g. `spec.ports[1].name`; empty for a problem of the whole object. */
  readonly field: string;
  /** The cause's type, e.g. `FieldValueRequired`. */
  readonly type: string;
  /** The server's message without the path, e.g. `Required value`. */
  readonly message: string;
}

/** The verdict on one object, in the order of the input. */
export interface BuiltInVerdict {
  readonly apiVersion: string;
  readonly kind: string;
  /** @default none: cluster-scoped, or namespaced without one (validated in `default`) */
  readonly namespace?: string;
  readonly name: string;
  /** `valid`; `invalid` (see `errors`, or `reason` when there is no field cause); `unchecked`: a kind the validator does not know. */
  readonly verdict: 'valid' | 'invalid' | 'unchecked';
  /** @default []: none */
  readonly errors: readonly BuiltInFieldError[];
  /** Why an `invalid` object without field causes is refused (e.g. a decoding error). @default none */
  readonly reason?: string;
}

/**
 * Validates each object as the API server would on create. Objects are plain JSON (manifests).
 * Cost: the first call in a process loads the validator (see `npm run bench:validator`); later calls
 * take well under a millisecond per object.
 *
 * @throws ValidatorLoadError when the validator is missing, corrupt or fails (never a silent pass)
 */
export function validateBuiltInObjects(objects: readonly object[]): BuiltInVerdict[] {
  if (objects.length === 0) return [];
  const validator = validatorInstance();
  const answer = JSON.parse(validator.call(JSON.stringify(objects))) as unknown;
  if (!Array.isArray(answer) || answer.length !== objects.length) {
    throw new ValidatorLoadError(`the built-in kinds' validator ${validator.file} answered ${JSON.stringify(answer).slice(0, 200)} for ${objects.length} objects`);
  }
  return (answer as (BuiltInVerdict & { errors?: BuiltInFieldError[] })[]).map((verdict) => ({ ...verdict, errors: verdict.errors ?? [] }));
}

/**
 * Throws when the API server would refuse one of `children` on create (see {@link validateBuiltInObjects});
 * kinds the validator does not know pass here, as the server itself then judges them.
 * Used by synth (examples), `renderForSnapshot` and `run --validate-children`.
 * @throws ChildRefusedError naming each refused child, the field path and the server's message
 * @throws ValidatorLoadError when the validator is missing, corrupt or fails
 */
export function assertChildrenAccepted(children: readonly object[]): void {
  const verdicts = validateBuiltInObjects(children);
  if (verdicts.some((verdict) => verdict.verdict === 'invalid')) throw new ChildRefusedError(verdicts);
}

/** The Kubernetes version whose code validates (the control plane's), e.g. `v1.37.2`. @throws ValidatorLoadError */
export function builtInValidatorKubernetesVersion(): string {
  return validatorInstance().kubernetesVersion;
}
