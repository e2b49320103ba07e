/** The share cycle of the workqueue's priorities: slot layout, the exact wait bound, bad shares. */
import fc from 'fast-check';
import { DEFAULT_PRIORITY_SHARES, QUEUE_PRIORITIES, type QueuePriority, ShareCycle } from '../../../lib/runtime/queue/priority-shares.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';

/** Slots, from `start`, up to and including the `position`-th slot of `priority`, when that priority always has keys. */
function slotsUntil(cycle: ShareCycle, start: number, priority: QueuePriority, position: number): number {
  let seen = 0;
  let count = 0;
  while (seen < position) {
    if (cycle.slots[(start + count) % cycle.length] === priority) seen++;
    count++;
  }
  return count;
}

describe('ShareCycle', () => {
  test('GIVEN the default shares (4:2:1) THEN the cycle is high normal high low high normal high, and the first key of each priority waits at most 2, 4, 7 gets', () => {
    const cycle = new ShareCycle();
    expect(cycle.slots).toEqual(['high', 'normal', 'high', 'low', 'high', 'normal', 'high']);
    expect(DEFAULT_PRIORITY_SHARES).toEqual({ high: 4, normal: 2, low: 1 });
    expect([cycle.maxWaitGets('high', 1), cycle.maxWaitGets('normal', 1), cycle.maxWaitGets('low', 1)]).toEqual([2, 4, 7]);
    expect([cycle.maxWaitGets('normal', 2), cycle.maxWaitGets('normal', 3), cycle.maxWaitGets('low', 3)]).toEqual([7, 11, 21]);
  });

  test('GIVEN any shares THEN each priority has exactly its share of slots, and maxWaitGets is the worst case over every starting slot and at most ceil(position / share) × cycle length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 30 }), (high, normal, low, position) => {
        const shares = { high, normal, low };
        const cycle = new ShareCycle(shares);
        expect(cycle.length).toBe(high + normal + low);
        for (const priority of QUEUE_PRIORITIES) {
          expect(cycle.slots.filter((s) => s === priority)).toHaveLength(shares[priority]);
          let worst = 0;
          for (let start = 0; start < cycle.length; start++) worst = Math.max(worst, slotsUntil(cycle, start, priority, position));
          expect(cycle.maxWaitGets(priority, position)).toBe(worst);
          expect(worst).toBeLessThanOrEqual(Math.ceil(position / shares[priority]) * cycle.length);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('GIVEN a slot whose priority has no keys THEN the highest priority that has keys is served; with none, no slot is taken', () => {
    const cycle = new ShareCycle();
    expect(cycle.take((p) => p === 'low')).toBe('low'); // slot 0 (high) → low
    expect(cycle.take((p) => p !== 'normal')).toBe('high'); // slot 1 (normal) → high
    expect(cycle.take(() => false)).toBeUndefined();
    expect(cycle.take(() => true)).toBe('high'); // still slot 2
    expect(cycle.take(() => true)).toBe('low'); // slot 3
    cycle.reset();
    expect(cycle.take(() => true)).toBe('high');
  });

  test.each([
    [{ high: 4, normal: 0, low: 1 }, 'shares.normal: must be a whole number from 1 to 1000 (slots per cycle of hand-outs), got 0'],
    [{ high: 1.5, normal: 2, low: 1 }, 'shares.high: must be a whole number from 1 to 1000 (slots per cycle of hand-outs), got 1.5'],
    [{ high: 4, normal: 2, low: 1001 }, 'shares.low: must be a whole number from 1 to 1000 (slots per cycle of hand-outs), got 1001'],
    [{ high: 4, normal: 2 } as unknown as { high: number; normal: number; low: number }, 'shares.low: must be a whole number from 1 to 1000 (slots per cycle of hand-outs), got undefined'],
  ])('GIVEN bad shares %j THEN the queue refuses them naming the field', (shares, message) => {
    expect(() => new Workqueue({ shares })).toThrow(message);
  });
});
