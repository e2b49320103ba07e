import { isApiError } from './client/api-client.js';

export { TerminalError } from '../operator/errors.js';

/**
 * Why a reconcile failed; becomes the `reason` of the Stalled condition and of the Warning event.
 * `AdoptionRefused`: an object this CR did not make already holds a child's name (reconcile/adoption.ts).
 */
export type ReconcileFailureReason = 'RenderFailed' | 'ApplyFailed' | 'PruneFailed' | 'FinalizeFailed' | 'StatusFailed' | 'Forbidden' | 'InvalidReference' | 'InvalidStatus' | 'InvalidResult' | 'AdoptionRefused';

/**
 * A reconcile step failed for one object. The message names the object (kind namespace/name) and the
 * step; `cause` holds the underlying error.
 */
export class ReconcileError extends Error {
  constructor(
    readonly reason: ReconcileFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ReconcileError';
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
