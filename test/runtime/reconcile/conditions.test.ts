import { capMessage, kstatusConditions, mergeConditions } from '../../../lib/runtime/reconcile/conditions.js';

describe('conditions', () => {
  const t0 = '2026-01-01T00:00:00Z';
  const t1 = '2026-01-01T00:05:00Z';

  test('GIVEN no conditions WHEN merged THEN every transition time is now, in kstatus order', () => {
    const merged = mergeConditions(undefined, kstatusConditions({ kind: 'progressing', reason: 'Progressing', message: 'waiting' }, 3), t0);
    expect(merged.map((c) => [c.type, c.status, c.lastTransitionTime, c.observedGeneration])).toEqual([
      ['Ready', 'False', t0, 3],
      ['Reconciling', 'True', t0, 3],
      ['Stalled', 'False', t0, 3],
    ]);
  });

  test('lastTransitionTime is kept unless the status flips', () => {
    const first = mergeConditions(undefined, kstatusConditions({ kind: 'progressing', reason: 'Progressing', message: 'a' }, 1), t0);
    const second = mergeConditions(first, kstatusConditions({ kind: 'progressing', reason: 'Progressing', message: 'b' }, 2), t1);
    expect(second.every((c) => c.lastTransitionTime === t0)).toBe(true);
    const ready = mergeConditions(second, kstatusConditions({ kind: 'ready', message: 'ok' }, 2), t1);
    expect(ready.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe(t1);
    expect(ready.find((c) => c.type === 'Reconciling')?.lastTransitionTime).toBe(t1);
    expect(ready.find((c) => c.type === 'Stalled')?.lastTransitionTime).toBe(t0);
  });

  test('other condition types are kept and sorted after the standard ones', () => {
    const existing = [{ type: 'Zeta', status: 'True' as const, reason: 'Z', message: '', lastTransitionTime: t0 }, { type: 'Alpha', status: 'True' as const, reason: 'A', message: '', lastTransitionTime: t0 }];
    const merged = mergeConditions(existing, kstatusConditions({ kind: 'stalled', reason: 'RenderFailed', message: 'boom' }, 1), t1);
    expect(merged.map((c) => c.type)).toEqual(['Ready', 'Reconciling', 'Stalled', 'Alpha', 'Zeta']);
    expect(merged.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'RenderFailed', message: 'boom' });
  });

  test('messages are capped', () => {
    expect(capMessage('x'.repeat(5000))).toHaveLength(1024);
    const merged = mergeConditions(undefined, kstatusConditions({ kind: 'stalled', reason: 'RenderFailed', message: 'y'.repeat(3000) }, 1), t0);
    expect(merged[0].message.length).toBe(1024);
  });
});
