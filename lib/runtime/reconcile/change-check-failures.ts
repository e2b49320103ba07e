/**
 * Which CRs reference a related object on which the operator's own code failed outside render, and how:
 * - `ChangeMattersFailed`: a related declaration's `changeMatters` threw on the object's update (the
 *   controller then reconciles those CRs, treating the change as one that matters);
 * - `CacheTransformFailed`: the related declaration's `scope.transform` threw on the object (the
 *   informer cached it untransformed).
 *
 * The next reconciles of those CRs tell it: `Stalled=True` with that reason, a Warning Event and the
 * `Reconciler error` line (terminal: retrying runs the same code). An entry goes when the same related
 * object's next check (or transform) succeeds for that CR (which reconciles it again, so the condition
 * clears), when the related object is deleted, when the CR stops referencing it, or when the CR is.
 *
 * Memory: at most one entry per (CR in the cache, related object it references, reason).
 */
import { errorMessage } from './error-message.js';

/** A failure of the operator's own code outside render that a CR's reconcile must tell. */
export interface DeclarationFailure {
  /** The Stalled condition's and the Warning Event's reason (the first recorded, when several). */
  readonly reason: DeclarationFailureReason;
  /** Names each related object whose check or transform threw, with the error. */
  readonly message: string;
}

/** What failed: a related declaration's `changeMatters`, or its cache `transform`. */
export type DeclarationFailureReason = 'ChangeMattersFailed' | 'CacheTransformFailed';

interface Entry {
  readonly reason: DeclarationFailureReason;
  readonly message: string;
}

/** Per CR key, per related object (`ObjectRef` string) and reason, what failed. */
export class ChangeCheckFailures {
  private readonly byCr = new Map<string, Map<string, Entry>>();

  /** How many CRs have a recorded failure (0: nothing to clear on a related event). */
  get size(): number {
    return this.byCr.size;
  }

  /**
   * Records that the operator's code threw `err` for `related`, a related object `crKey` references:
   * its `changeMatters` (default), or its cache transform (`err` is then the message the informer kept).
   */
  failed(crKey: string, related: string, err: unknown, reason: DeclarationFailureReason = 'ChangeMattersFailed'): void {
    const entries = this.byCr.get(crKey) ?? new Map<string, Entry>();
    const message = reason === 'ChangeMattersFailed'
      ? `related ${related}: changeMatters threw: ${errorMessage(err)}; every change of it reconciles this CR until the operator is fixed`
      : `related ${related}: the cache transform threw: ${errorMessage(err)}; it is cached untransformed until the operator is fixed`;
    entries.set(`${reason} ${related}`, { reason, message });
    this.byCr.set(crKey, entries);
  }

  /** The check (default) or the transform of `related` succeeded for `crKey`; true when that cleared a recorded failure. */
  succeeded(crKey: string, related: string, reason: DeclarationFailureReason = 'ChangeMattersFailed'): boolean {
    const entries = this.byCr.get(crKey);
    if (!entries?.delete(`${reason} ${related}`)) return false;
    if (entries.size === 0) this.byCr.delete(crKey);
    return true;
  }

  /** `related` was deleted, or `crKey` stopped referencing it: every failure recorded for it goes (from every CR when no key is given). */
  forgetRelated(related: string, crKey?: string): void {
    for (const key of crKey === undefined ? [...this.byCr.keys()] : [crKey]) {
      this.succeeded(key, related, 'ChangeMattersFailed');
      this.succeeded(key, related, 'CacheTransformFailed');
    }
  }

  /** The CR was deleted. */
  forget(crKey: string): void {
    this.byCr.delete(crKey);
  }

  /** What the next reconcile of `crKey` must tell; undefined when nothing failed. */
  of(crKey: string): DeclarationFailure | undefined {
    const entries = this.byCr.get(crKey);
    if (!entries) return undefined;
    const all = [...entries.values()];
    return { reason: all[0]!.reason, message: all.map((entry) => entry.message).join('; ') };
  }
}
