import { mapConcurrently } from '../../../lib/runtime/reconcile/map-concurrently.js';

/** A call that resolves when the test says so. */
function gated() {
  const pending = new Map<number, () => void>();
  let inFlight = 0;
  let maxInFlight = 0;
  const fn = (item: number) =>
    new Promise<number>((resolve) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      pending.set(item, () => {
        inFlight--;
        resolve(item * 10);
      });
    });
  return { fn, pending, max: () => maxInFlight };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('mapConcurrently', () => {
  test('GIVEN a limit THEN no more calls are in flight, a call starts as soon as one ends, and results come in item order', async () => {
    const { fn, pending, max } = gated();
    const done = mapConcurrently([1, 2, 3, 4, 5], 2, fn);
    await turn();
    expect([...pending.keys()]).toEqual([1, 2]);
    pending.get(2)!(); // the second ends first: the third starts, the first is still in flight
    await turn();
    expect([...pending.keys()]).toEqual([1, 2, 3]);
    pending.get(3)!();
    await turn();
    expect([...pending.keys()]).toEqual([1, 2, 3, 4]);
    for (const item of [1, 4]) pending.get(item)!();
    await turn();
    pending.get(5)!();
    await expect(done).resolves.toEqual([10, 20, 30, 40, 50]);
    expect(max()).toBe(2);
  });

  test('GIVEN a limit below 1 or more items than the limit THEN every item is still called once', async () => {
    const seen: number[] = [];
    await expect(mapConcurrently([1, 2, 3], 0, async (item) => (seen.push(item), item))).resolves.toEqual([1, 2, 3]);
    expect(seen).toEqual([1, 2, 3]);
    await expect(mapConcurrently([], 4, async (item: number) => item)).resolves.toEqual([]);
  });

  test('GIVEN a call rejects THEN the result rejects with it and no new call starts', async () => {
    const started: number[] = [];
    const result = mapConcurrently([1, 2, 3, 4], 1, async (item) => {
      started.push(item);
      if (item === 2) throw new Error('boom 2');
      return item;
    });
    await expect(result).rejects.toThrow('boom 2');
    expect(started).toEqual([1, 2]);
  });
});
