/**
 * The workqueue's fair order with the reports' numbers: a restart's initial list below a user's edit
 * (tofu-controller#1641), no starvation of child events, retries and requeueAfter under a flood of edits
 * (controller-runtime#3496), and property tests over random arrivals of the three priorities.
 */
import fc from 'fast-check';
import { ManualClock } from '../../../lib/runtime/clock.js';
import { type PriorityShares, QUEUE_PRIORITIES, type QueuePriority, ShareCycle } from '../../../lib/runtime/queue/priority-shares.js';
import { ExponentialRateLimiter } from '../../../lib/runtime/queue/rate-limiter.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';

/** A queue on a manual clock that counts gets and records, per key, the get count when it was last accepted by an add. */
function countingQueue(shares?: PriorityShares) {
  const clock = new ManualClock();
  const addedAtGet = new Map<string, number>();
  let gets = 0;
  const queue = new Workqueue({
    clock,
    shares,
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }),
    metrics: { added: (key) => addedAtGet.set(key, gets) },
  });
  /** Gets one key (the queue must not be empty) and says how many gets it waited, this one included. */
  const getOne = async (): Promise<{ key: string; waitedGets: number }> => {
    if (queue.len() === 0) throw new Error('queue empty');
    gets++;
    const key = (await queue.get())!;
    return { key, waitedGets: gets - addedAtGet.get(key)! };
  };
  return { clock, queue, getOne, gets: () => gets };
}

describe('fair queue: the start-up report (tofu-controller#1641)', () => {
  test('GIVEN 1000 CRs of the initial list queued (low) WHEN a user creates a CR (high) before any get THEN it is handed out 1st, not 1001st', async () => {
    const { queue, getOne } = countingQueue();
    for (let i = 0; i < 1000; i++) queue.add(`ns/cr-${i}`, 'low');
    queue.add('ns/created-now', 'high');
    expect(await getOne()).toEqual({ key: 'ns/created-now', waitedGets: 1 });
  });

  test('GIVEN 1000 initial-list CRs queued and the workers part-way through them WHEN a user edits a CR THEN from any point of the cycle it is handed out within 2 gets (the bound for high)', async () => {
    const waits: number[] = [];
    // 0 … 13 gets before the edit: every starting slot of the 7-slot cycle, twice.
    for (let before = 0; before < 14; before++) {
      const { queue, getOne } = countingQueue();
      for (let i = 0; i < 1000; i++) queue.add(`ns/cr-${i}`, 'low');
      for (let i = 0; i < before; i++) queue.done((await getOne()).key);
      queue.add('ns/edited', 'high');
      let got = await getOne();
      while (got.key !== 'ns/edited') got = await getOne();
      waits.push(got.waitedGets);
    }
    expect(Math.max(...waits)).toBe(2);
    expect(Math.max(...waits)).toBe(new Workqueue().maxWaitGets('high'));
  });
});

describe('fair queue: the starvation report (controller-runtime#3496)', () => {
  test.each([1, 2])(
    'GIVEN %i new high key(s) added per get, for 10 000 gets, WHEN a child event, a retry and a requeueAfter fall due and a resync key waits THEN each is handed out within its bound (normal 4 gets, low 7)',
    async (editsPerGet) => {
      const { clock, queue, getOne } = countingQueue();
      const bound = { normal: queue.maxWaitGets('normal'), low: queue.maxWaitGets('low') };
      expect(bound).toEqual({ normal: 4, low: 7 });
      const watched = new Map<string, { bound: number; waits: number[] }>([
        ['ns/child-event', { bound: bound.normal, waits: [] }],
        ['ns/retry', { bound: bound.normal, waits: [] }],
        ['ns/requeue-after', { bound: bound.normal, waits: [] }],
        ['ns/resync', { bound: bound.low, waits: [] }],
      ]);
      let edits = 0;
      for (let get = 0; get < 10_000; get++) {
        for (let i = 0; i < editsPerGet; i++) queue.add(`ns/edit-${edits++}`, 'high');
        // Every 500 gets: a child event, a failed reconcile's retry (5 ms), a requeueAfter of 50 ms, a resync.
        if (get % 500 === 0) {
          queue.add('ns/child-event');
          queue.forget('ns/retry'); // its reconcile succeeded since: the retry is due after the first delay, 5 ms
          queue.addRateLimited('ns/retry');
          queue.addAfter('ns/requeue-after', 50);
          queue.add('ns/resync', 'low');
        }
        clock.advance(1); // one get per ms
        const { key, waitedGets } = await getOne();
        watched.get(key)?.waits.push(waitedGets);
        queue.done(key);
      }
      for (const [, { bound: limit, waits }] of watched) {
        expect(waits).toHaveLength(20);
        expect(Math.max(...waits)).toBeLessThanOrEqual(limit);
      }
      // Nothing lost: every key added and not handed out is still queued (with 2 edits per get the edits pile up).
      expect(queue.len()).toBe(edits + 4 * 20 - 10_000);
    },
  );
});

describe('fair queue: raising a key', () => {
  test('GIVEN a low key at the head of its queue WHEN it is raised to high behind 20 high keys THEN it keeps its low place too: handed out within 7 gets (the low bound), not after the 20, and once', async () => {
    const { queue, getOne } = countingQueue();
    queue.add('ns/resync', 'low');
    for (let i = 0; i < 20; i++) queue.add(`ns/edit-${i}`, 'high');
    queue.add('ns/resync', 'high');
    queue.add('ns/resync', 'low'); // a lower add never lowers it
    const order: string[] = [];
    while (queue.len() > 0) {
      const { key } = await getOne();
      order.push(key);
      queue.done(key);
    }
    expect(order.indexOf('ns/resync') + 1).toBeLessThanOrEqual(queue.maxWaitGets('low'));
    expect(order.filter((k) => k === 'ns/resync')).toHaveLength(1);
    expect(order).toHaveLength(21);
  });
});

type Step = {
  /** New keys added as high: the flood of edits (0 … 3 per step, i.e. up to 3 per get). */
  flood: number;
  /** Adds of a few recurring keys at any priority. */
  adds: { key: string; priority: QueuePriority }[];
  /** A delayed add of a recurring key: requeueAfter, or a retry through the rate limiter. */
  delayed: { key: string; delayMs: number; rateLimited: boolean } | null;
  advanceMs: number;
  gets: number;
  dones: number;
};

const recurring = ['a', 'b', 'c', 'd', 'e', 'f'];
const stepArb: fc.Arbitrary<Step> = fc.record({
  flood: fc.integer({ min: 0, max: 3 }),
  adds: fc.array(fc.record({ key: fc.constantFrom(...recurring), priority: fc.constantFrom<QueuePriority>('high', 'normal', 'low') }), { maxLength: 3 }),
  delayed: fc.option(fc.record({ key: fc.constantFrom(...recurring), delayMs: fc.integer({ min: 1, max: 30 }), rateLimited: fc.boolean() }), { nil: null }),
  advanceMs: fc.integer({ min: 0, max: 5 }),
  gets: fc.integer({ min: 0, max: 2 }),
  dones: fc.integer({ min: 0, max: 2 }),
});
const sharesArb: fc.Arbitrary<PriorityShares> = fc.oneof(
  fc.constant({ high: 4, normal: 2, low: 1 }),
  fc.record({ high: fc.integer({ min: 1, max: 6 }), normal: fc.integer({ min: 1, max: 6 }), low: fc.integer({ min: 1, max: 6 }) }),
);

/**
 * An independent model of the queue's order: three FIFO lanes of (key, entry) pairs, live while the key
 * is queued with that entry; the cycle's slot owner if its lane has a live entry, else the highest lane
 * that has; the cycle restarts when the queue runs empty. Each live entry carries the get count by which
 * the documented bound says it must be handed out.
 */
class Model {
  readonly lanes: Record<QueuePriority, { key: string; entry: number; deadline: number }[]> = { high: [], normal: [], low: [] };
  readonly queued = new Map<string, number>();
  readonly dirty = new Map<string, QueuePriority>();
  readonly processing = new Set<string>();
  private entries = 0;
  private cursor = 0;
  gets = 0;

  constructor(readonly cycle: ShareCycle) {}

  add(key: string, priority: QueuePriority): void {
    const was = this.dirty.get(key);
    if (was === undefined) {
      this.dirty.set(key, priority);
      if (!this.processing.has(key)) this.enqueue(key, priority, ++this.entries);
    } else if (QUEUE_PRIORITIES.indexOf(priority) < QUEUE_PRIORITIES.indexOf(was)) {
      this.dirty.set(key, priority);
      const entry = this.queued.get(key);
      if (entry !== undefined) this.enqueue(key, priority, entry);
    }
  }

  /** The key the next get hands out, with its deadline (the earliest of its live entries'), or undefined when empty. */
  get(): { key: string; deadline: number } | undefined {
    const live = (p: QueuePriority) => {
      const lane = this.lanes[p];
      while (lane.length > 0 && this.queued.get(lane[0].key) !== lane[0].entry) lane.shift();
      return lane.length > 0;
    };
    const owner = this.cycle.slots[this.cursor];
    const served = live(owner) ? owner : QUEUE_PRIORITIES.find(live);
    if (served === undefined) return undefined;
    this.cursor = (this.cursor + 1) % this.cycle.length;
    this.gets++;
    const { key, entry, deadline: own } = this.lanes[served].shift()!;
    // A raised key has live entries in other lanes too; the earliest deadline of them all binds.
    let deadline = own;
    for (const p of QUEUE_PRIORITIES) for (const e of this.lanes[p]) if (e.key === key && e.entry === entry) deadline = Math.min(deadline, e.deadline);
    this.queued.delete(key);
    this.dirty.delete(key);
    this.processing.add(key);
    if (this.queued.size === 0) this.cursor = 0;
    return { key, deadline };
  }

  done(key: string): void {
    this.processing.delete(key);
    const priority = this.dirty.get(key);
    if (priority !== undefined) this.enqueue(key, priority, ++this.entries);
  }

  private enqueue(key: string, priority: QueuePriority, entry: number): void {
    const lane = this.lanes[priority];
    const ahead = lane.filter((e) => this.queued.get(e.key) === e.entry).length;
    this.queued.set(key, entry);
    const deadline = this.gets + this.cycle.maxWaitGets(priority, ahead + 1);
    // The documented formula holds too: ceil(position / share) × cycle length.
    expect(deadline - this.gets).toBeLessThanOrEqual(Math.ceil((ahead + 1) / this.cycle.shares[priority]) * this.cycle.length);
    lane.push({ key, entry, deadline });
  }
}

describe('fair queue: properties over random arrivals', () => {
  test('GIVEN random arrivals of the three priorities (up to 3 new high keys per get), delays and retries, 1-3 workers THEN keys come out as the model says, no key is lost or handed out twice, one worker per key, and every key waits no more than its bound', async () => {
    await fc.assert(
      fc.asyncProperty(sharesArb, fc.integer({ min: 1, max: 3 }), fc.array(stepArb, { maxLength: 120 }), async (shares, workers, steps) => {
        const clock = new ManualClock();
        const queue = new Workqueue({ clock, shares, rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 2, maxDelayMs: 20 }) });
        const model = new Model(new ShareCycle(shares));
        /** Per key: an add happened since it was last handed out (what must come out eventually). */
        const owed = new Set<string>();
        const delayedDue = new Map<string, number>();
        let flooded = 0;
        const handOut = async () => {
          const busy = new Set(model.processing);
          expect(queue.len()).toBe(model.queued.size);
          const expected = model.get();
          if (expected === undefined) return;
          const key = await queue.get();
          expect(key).toBe(expected.key);
          expect(busy.has(expected.key)).toBe(false); // one worker per key
          expect(model.gets).toBeLessThanOrEqual(expected.deadline);
          expect(owed.delete(expected.key)).toBe(true);
        };
        const add = (key: string, priority: QueuePriority) => {
          queue.add(key, priority);
          model.add(key, priority);
          owed.add(key);
        };
        const advance = (ms: number) => {
          clock.advance(ms);
          const now = clock.now();
          const due = [...delayedDue].filter(([, at]) => at <= now).sort((x, y) => x[1] - y[1]);
          for (const [key] of due) {
            delayedDue.delete(key);
            model.add(key, 'normal');
            owed.add(key);
          }
        };
        for (const step of steps) {
          for (let i = 0; i < step.flood; i++) add(`edit-${flooded++}`, 'high');
          for (const { key, priority } of step.adds) add(key, priority);
          if (step.delayed) {
            const { key, delayMs, rateLimited } = step.delayed;
            const before = clock.now();
            if (rateLimited) {
              const delay = Math.min(20, 2 * 2 ** queue.numRequeues(key));
              queue.addRateLimited(key);
              const due = before + delay;
              if (!(delayedDue.get(key)! <= due)) delayedDue.set(key, due);
            } else {
              queue.addAfter(key, delayMs);
              if (!(delayedDue.get(key)! <= before + delayMs)) delayedDue.set(key, before + delayMs);
            }
          }
          advance(step.advanceMs);
          for (let i = 0; i < step.gets && model.processing.size < workers; i++) await handOut();
          for (let i = 0; i < step.dones; i++) {
            const key = [...model.processing][0];
            if (key === undefined) break;
            queue.done(key);
            model.done(key);
          }
          expect(model.processing.size).toBeLessThanOrEqual(workers);
        }
        // Drain: every delayed key falls due, every key owed comes out, exactly once.
        advance(1000);
        for (;;) {
          for (const key of [...model.processing]) {
            queue.done(key);
            model.done(key);
          }
          if (model.queued.size === 0) break;
          while (model.processing.size < workers && model.queued.size > 0) await handOut();
        }
        expect(owed.size).toBe(0);
        expect(queue.len()).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
