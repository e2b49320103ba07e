/**
 * The reconcile's errors: {@link ReconcileError} with the failure reason that becomes the Stalled
 * condition's and the Warning event's reason, the step it belongs to, 409 conflicts (retried quietly), and
 * the user's {@link TerminalError} (not retried).
 */
import { brandClass } from '../operator/brand.js';
import type { ObjectRef } from '../operator/object-ref.js';
import { isApiError } from './client/kube-client.js';
import { RuntimeError } from './runtime-error.js';

export { TerminalError } from '../operator/errors.js';

/**
 * Why a reconcile failed; becomes the `reason` of the Stalled condition and of the Warning event.
 * `AdoptionRefused`: an object this CR did not make already holds a child's name (reconcile/adoption.ts).
 * `ChangeMattersFailed`: a related declaration's `changeMatters` threw (reconcile/change-check-failures.ts).
 * `CacheTransformFailed`: a related declaration's `scope.transform` threw on an object the CR references (same file).
 * `ChildRefused`: the children failed the offline check of `ManagerOptions.validateChildren`.
 * `StatusFailed`: the operator's `status()` hook threw (step `status`; `InvalidStatus` when its result breaks the status schema).
 */
export type ReconcileFailureReason = 'RenderFailed' | 'ApplyFailed' | 'PruneFailed' | 'FinalizeFailed' | 'StatusWriteFailed' | 'Forbidden' | 'InvalidReference' | 'InvalidStatus' | 'InvalidResult' | 'AdoptionRefused' | 'ChangeMattersFailed' | 'CacheTransformFailed' | 'ChildRefused' | 'StatusFailed';

/** The step of a reconcile that failed, as the controller's `Reconciler error` log line names it. */
export type ReconcileStep = 'render' | 'apply' | 'prune' | 'status' | 'finalize';

/** The step a failure reason belongs to (`Forbidden` is an apply's unless the error says otherwise). */
function stepOf(reason: ReconcileFailureReason): ReconcileStep {
  switch (reason) {
    case 'PruneFailed':
      return 'prune';
    case 'FinalizeFailed':
      return 'finalize';
    case 'StatusWriteFailed':
    case 'StatusFailed':
      return 'status';
    case 'ApplyFailed':
    case 'Forbidden':
    case 'AdoptionRefused':
      return 'apply';
    default:
      return 'render';
  }
}

/**
 * A reconcile step failed for one object. The message names the object (kind namespace/name) and the
 * step; `cause` holds the underlying error (found through the chain: lib/runtime/error-chain.ts);
 * `objectRef` is the CR the reconcile was about (the {@link ObjectRef} of its ReconcileScope) when a step
 * throws it, unset on an error of one write (apply.ts), which names the child in its message and becomes
 * the `cause` of the step's error. One of the runtime's errors (runtime-error.ts); branded.
 */
export class ReconcileError extends RuntimeError {
  static {
    brandClass(this, 'ReconcileError');
  }

  /** The step that failed. @default the step of `reason` (RenderFailed → render, PruneFailed → prune …) */
  override readonly step: ReconcileStep;
  /** The CR this reconcile was about. @default unset: an error of one write, before the step wraps it */
  declare readonly objectRef?: ObjectRef;

  constructor(
    override readonly reason: ReconcileFailureReason,
    message: string,
    options?: { cause?: unknown; step?: ReconcileStep; objectRef?: ObjectRef },
  ) {
    super(message, { cause: options?.cause, objectRef: options?.objectRef });
    this.name = 'ReconcileError';
    this.step = options?.step ?? stepOf(reason);
  }
}

/**
 * A 409 Conflict from the API server (an optimistic-lock precondition or a concurrent write).
 * Retried quietly with backoff: no condition, no event, a debug log only.
 */
export class ConflictError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConflictError';
  }
}

/** True for an error that should be retried quietly (409 Conflict). */
export function isConflict(err: unknown): boolean {
  return err instanceof ConflictError || isApiError(err, 409);
}

/**
 * A message for a 403 from the API server naming the permission the operator's service account lacks,
 * e.g. `forbidden: cannot patch apps/deployments in namespace "demo" (add it to the operator's RBAC)`.
 */
export function forbiddenMessage(verb: string, group: string, resource: string, namespace: string | undefined, serverMessage: string): string {
  const gr = group ? `${group}/${resource}` : resource;
  const where = namespace ? `in namespace "${namespace}"` : 'at cluster scope';
  return `forbidden: cannot ${verb} ${gr} ${where} (grant verb "${verb}" on resource "${resource}" of API group "${group}" to the operator's service account): ${serverMessage}`;
}
