/**
 * ReconcileStatsLog: the bounded record behind Reconciler.lastStats.
 */
import { MAX_STATS_ENTRIES, ReconcileStatsLog } from '../../../lib/runtime/reconcile/reconcile-stats.js';

describe('ReconcileStatsLog', () => {
  test('GIVEN a reconcile begins THEN fresh zero stats are recorded under its key, replacing the last ones; forget drops them', () => {
    const log = new ReconcileStatsLog();
    const first = log.begin('ns/a');
    first.applied = 2;
    expect(log.view.get('ns/a')).toEqual({ applied: 2, pruned: 0, statusWritten: false });
    const second = log.begin('ns/a');
    expect(second).not.toBe(first);
    expect(log.view.get('ns/a')).toEqual({ applied: 0, pruned: 0, statusWritten: false });
    log.forget('ns/a');
    expect(log.view.size).toBe(0);
  });

  test('GIVEN more keys than the bound THEN the least recently reconciled goes first (a key reconciled again counts as recent)', () => {
    const log = new ReconcileStatsLog();
    for (let i = 0; i < MAX_STATS_ENTRIES; i++) log.begin(`ns/cr-${i}`);
    log.begin('ns/cr-0');
    log.begin('ns/new');
    expect(log.view.size).toBe(MAX_STATS_ENTRIES);
    expect(log.view.has('ns/cr-0')).toBe(true);
    expect(log.view.has('ns/cr-1')).toBe(false);
    expect([...log.view.keys()].at(-1)).toBe('ns/new');
  });
});
