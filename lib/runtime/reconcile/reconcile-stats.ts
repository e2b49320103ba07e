/**
 * Counters of what one reconcile did (for the `reconciled` debug line and tests), and the bounded record
 * of the last ones behind the reconciler's `lastStats` test hook.
 */

/** Counters of what one reconcile did, for logs and tests. */
export interface ReconcileStats {
  /** Children applied (created, updated or reverted). */
  applied: number;
  /** Children deleted (cache-based and inventory prune). */
  pruned: number;
  /** Whether a status write was sent. */
  statusWritten: boolean;
}

/** Most entries a {@link ReconcileStatsLog} keeps. */
export const MAX_STATS_ENTRIES = 1024;

/**
 * The stats of the last reconcile of each CR key (`namespace/name`). An entry lives while its CR is in
 * the cache (dropped by {@link forget}); at most {@link MAX_STATS_ENTRIES} are kept, the least recently
 * reconciled going first, so a long-lived process never grows it without bound.
 */
export class ReconcileStatsLog {
  private readonly entries = new Map<string, ReconcileStats>();

  /** Starts the stats of a reconcile of `key` (replacing the last ones; now the most recent). */
  begin(key: string): ReconcileStats {
    const stats: ReconcileStats = { applied: 0, pruned: 0, statusWritten: false };
    this.entries.delete(key);
    this.entries.set(key, stats);
    if (this.entries.size > MAX_STATS_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    return stats;
  }

  /** Drops the stats of `key` (its CR is gone). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  /** Every entry, least recently reconciled first. */
  get view(): ReadonlyMap<string, ReconcileStats> {
    return this.entries;
  }
}
