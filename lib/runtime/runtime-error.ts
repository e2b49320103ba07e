/**
 * The base of the runtime's errors: each says which step failed (`step`), why in one CamelCase word
 * (`reason`), what it was about (`objectRef`, written `Kind namespace/name` in the message, where there is
 * one) and what caused it (`cause`), as kube-runtime gives each module an error enum whose variants name
 * the failed step.
 *
 * The family (each class lives beside the code that throws it):
 *
 * | class | step | thrown by |
 * |---|---|---|
 * | `KubeConfigError` | `kubeconfig` | the API client (no current cluster), `run`'s kubeconfig loader |
 * | `CredentialsError` | `credentials` | the API client's first read of a token, certificate or key file |
 * | `ServerStartError` | `metrics-server`, `probes-server`, `webhook-server` | a bad bind address, a port in use |
 * | `WebhookCertificateError` | `webhook-certificate` | the webhook Secret or a caBundle that can't be written |
 * | `RbacSelfCheckError`, `AccessReviewError` | `rbac-self-check` | missing permissions, a review that failed |
 * | `CacheSyncError` | `cache-sync` | caches not synced within the cache-sync timeout |
 * | `LeaderElectionConfigError`, `LeadershipLostError`, `WriteFencedError` | `leader-election` | bad timings, a lost Lease, a fenced write |
 * | `ShardingConfigError`, `ShardMembershipError` | `sharding` | a bad bucket count, a Lease that can't be created or renewed, a ring of mixed versions |
 * | `StorageVersionMigrationError` | `storage-version-migration` | a CRD's stored versions that can't be migrated |
 * | `TracingConfigError` | `tracing` | an `OTEL_*` variable asking for an exporter or protocol the SDK lacks |
 * | `ReconcileError` | `render`, `apply`, `prune`, `status`, `finalize` | one reconcile of one CR |
 *
 * Branded (lib/operator/brand.ts): `err instanceof RuntimeError` (and each branded subclass) holds for an
 * error made by any copy of the SDK in the process. Found through a cause chain with `runtimeErrorOf`
 * (lib/runtime/error-chain.ts).
 */
import { brandClass } from '../operator/brand.js';
import { type ObjectReference, formatObjectReference } from '../operator/errors.js';

export type { ObjectReference } from '../operator/errors.js';

/**
 * The step of the runtime that failed. Start-up, in order: `kubeconfig`, `credentials` (the first
 * request), `metrics-server` and `probes-server`, `webhook-server` and `webhook-certificate`,
 * `rbac-self-check`, `cache-sync`, `leader-election` or `sharding` (`tracing` first of all, when `OTEL_*` is bad); then, while running: `storage-version-migration`
 * and one reconcile's `render`, `apply`, `prune`, `status`, `finalize`.
 */
export type RuntimeStep =
  | 'kubeconfig'
  | 'credentials'
  | 'metrics-server'
  | 'probes-server'
  | 'webhook-server'
  | 'webhook-certificate'
  | 'rbac-self-check'
  | 'cache-sync'
  | 'leader-election'
  | 'sharding'
  | 'storage-version-migration'
  | 'tracing'
  | 'render'
  | 'apply'
  | 'prune'
  | 'status'
  | 'finalize';

/** Options of every {@link RuntimeError}. */
export interface RuntimeErrorOptions {
  /** What caused it (an ApiError, a Node error …); found through the chain by lib/runtime/error-chain.ts. @default none */
  readonly cause?: unknown;
  /** The object the step failed on. @default none: the step is not about one object */
  readonly objectRef?: ObjectReference;
}

/** Base class of the runtime's errors; see the module doc. */
export abstract class RuntimeError extends Error {
  static {
    brandClass(this, 'RuntimeError');
  }

  /** Why, CamelCase (e.g. `CacheSyncTimeout`, `MissingPermissions`), fit for a log field or an Event reason. */
  abstract readonly reason: string;
  /** The step that failed. */
  abstract readonly step: RuntimeStep;
  /** The object the step failed on, when there is one; the message names it as `Kind namespace/name`. */
  readonly objectRef?: ObjectReference;

  /** `message` must already name the step and `objectRef` (see {@link objectPrefix}). */
  constructor(message: string, options: RuntimeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (options.objectRef) this.objectRef = options.objectRef;
  }
}

/** `Kind namespace/name: ` for an object, `''` without one: how a message names its object. */
export function objectPrefix(object: ObjectReference | undefined): string {
  return object ? `${formatObjectReference(object)}: ` : '';
}
