/**
 * The structured fields of a failed reconcile's log line (the controller's `Reconciler error`): which
 * step failed, why, and what the API server answered, found through the error's `cause` chain.
 */
import { ReconcileError, type ReconcileStep } from '../errors.js';
import { apiErrorOf, findCause, serverMessageOf } from '../error-chain.js';

export interface ReconcileErrorFields {
  /** The step that failed; absent for an error that no step wrapped (a bug, a cache read). */
  readonly step?: ReconcileStep;
  /** The failure reason (`RenderFailed`, `ApplyFailed`, `StatusWriteFailed` …), the Stalled condition's. */
  readonly reason?: string;
  /** The API server's HTTP status code, when the cause is its answer. */
  readonly code?: number;
  /** The API server's Status message, when the cause is its answer. */
  readonly serverMessage?: string;
}

/** {@link ReconcileErrorFields} of `err`; fields that do not apply are left out. */
export function reconcileErrorFields(err: unknown): ReconcileErrorFields {
  const failed = findCause(err, (candidate): candidate is ReconcileError => candidate instanceof ReconcileError);
  const api = apiErrorOf(err);
  return {
    ...(failed ? { step: failed.step, reason: failed.reason } : {}),
    ...(api ? { code: api.code, serverMessage: serverMessageOf(api) } : {}),
  };
}
