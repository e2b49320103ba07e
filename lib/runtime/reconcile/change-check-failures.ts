/**
 * Which CRs saw a related declaration's `changeMatters` throw, and for which related object: the
 * controller records it when the check fails (and reconciles those CRs, treating the change as one that
 * matters), and the next reconciles of those CRs tell it: `Stalled=True` with reason
 * `ChangeMattersFailed`, a Warning Event and the `Reconciler error` line (terminal: retrying runs the
 * same code). An entry goes when the same related object's next check succeeds for that CR (which
 * reconciles it again, so the condition clears), when the related object is deleted, or when the CR is.
 *
 * Memory: at most one entry per (CR in the cache, related object it references).
 */
import { errorMessage } from './error-message.js';

/** A failure of the operator's own code outside render that a CR's reconcile must tell. */
export interface DeclarationFailure {
  /** The Stalled condition's and the Warning Event's reason. */
  readonly reason: 'ChangeMattersFailed';
  /** Names each related object whose check threw, with the error. */
  readonly message: string;
}

/** Per CR key, per related object (`ObjectRef` string), the message of the `changeMatters` that threw. */
export class ChangeCheckFailures {
  private readonly byCr = new Map<string, Map<string, string>>();

  /** How many CRs have a recorded failure (0: nothing to clear on a related event). */
  get size(): number {
    return this.byCr.size;
  }

  /** Records that `changeMatters` threw `err` for `related`, a related object `crKey` references. */
  failed(crKey: string, related: string, err: unknown): void {
    const entries = this.byCr.get(crKey) ?? new Map<string, string>();
    entries.set(related, `related ${related}: changeMatters threw: ${errorMessage(err)}; every change of it reconciles this CR until the operator is fixed`);
    this.byCr.set(crKey, entries);
  }

  /** The check for `related` succeeded for `crKey`; true when that cleared a recorded failure. */
  succeeded(crKey: string, related: string): boolean {
    const entries = this.byCr.get(crKey);
    if (!entries?.delete(related)) return false;
    if (entries.size === 0) this.byCr.delete(crKey);
    return true;
  }

  /** `related` was deleted: its failures go (its delete reconciles every CR that referenced it). */
  forgetRelated(related: string): void {
    for (const key of [...this.byCr.keys()]) this.succeeded(key, related);
  }

  /** The CR was deleted. */
  forget(crKey: string): void {
    this.byCr.delete(crKey);
  }

  /** What the next reconcile of `crKey` must tell; undefined when nothing failed. */
  of(crKey: string): DeclarationFailure | undefined {
    const entries = this.byCr.get(crKey);
    if (!entries) return undefined;
    return { reason: 'ChangeMattersFailed', message: [...entries.values()].join('; ') };
  }
}
