/**
 * The workqueue's fair order with the reports' numbers, measured (no timing: waits are counted in gets).
 *
 *   npm run bench:fair-queue -- [--crs N] [--gets G]
 *
 * Prints one JSON object:
 * - `startUp` (tofu-controller#1641): N CRs of the initial list queued, then a user's edit, at every
 *   point of the share cycle; the edit's worst position among the gets. `before`: the initial list at the
 *   edit's priority, as the controller queued it before (the edit is handed out N+1-th).
 * - `starvation` (controller-runtime#3496): for G gets with 1 and with 2 new high keys added per get, a
 *   child event, a due retry, a due requeueAfter (normal) and a resync (low) every 500 gets; each one's
 *   worst wait in gets, the bound ({@link Workqueue.maxWaitGets}), and the share of gets the edits got.
 *   Under strict priority (before) the four are never handed out: a high key is queued at every get.
 */
import { ManualClock } from '../lib/runtime/clock.js';
import { ExponentialRateLimiter } from '../lib/runtime/queue/rate-limiter.js';
import { type QueuePriority, Workqueue } from '../lib/runtime/queue/workqueue.js';
import { benchOptions } from './bench-options.js';

const { number } = benchOptions({ crs: { type: 'string', default: '1000' }, gets: { type: 'string', default: '10000' } });
const crs = number('crs');
const totalGets = number('gets');

function countingQueue() {
  const clock = new ManualClock();
  const addedAtGet = new Map<string, number>();
  let gets = 0;
  const queue = new Workqueue({
    clock,
    rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }),
    metrics: { added: (key) => addedAtGet.set(key, gets) },
  });
  const getOne = async () => {
    gets++;
    const key = (await queue.get())!;
    return { key, waitedGets: gets - addedAtGet.get(key)! };
  };
  return { clock, queue, getOne };
}

async function startUp(initialPriority: QueuePriority): Promise<number> {
  let worst = 0;
  for (let before = 0; before < 7; before++) {
    const { queue, getOne } = countingQueue();
    for (let i = 0; i < crs; i++) queue.add(`ns/cr-${i}`, initialPriority);
    for (let i = 0; i < before; i++) queue.done((await getOne()).key);
    queue.add('ns/edited', 'high');
    let got = await getOne();
    while (got.key !== 'ns/edited') {
      queue.done(got.key);
      got = await getOne();
    }
    worst = Math.max(worst, got.waitedGets);
  }
  return worst;
}

async function starvation(editsPerGet: number) {
  const { clock, queue, getOne } = countingQueue();
  const waits: Record<string, number[]> = { 'ns/child-event': [], 'ns/retry': [], 'ns/requeue-after': [], 'ns/resync': [] };
  let edits = 0;
  let editGets = 0;
  for (let get = 0; get < totalGets; get++) {
    for (let i = 0; i < editsPerGet; i++) queue.add(`ns/edit-${edits++}`, 'high');
    if (get % 500 === 0) {
      queue.add('ns/child-event');
      queue.forget('ns/retry');
      queue.addRateLimited('ns/retry');
      queue.addAfter('ns/requeue-after', 50);
      queue.add('ns/resync', 'low');
    }
    clock.advance(1);
    const { key, waitedGets } = await getOne();
    if (key.startsWith('ns/edit-')) editGets++;
    waits[key]?.push(waitedGets);
    queue.done(key);
  }
  const worst = (key: string) => ({ handedOut: waits[key]!.length, worstWaitGets: Math.max(...waits[key]!) });
  return {
    editsPerGet,
    childEvent: { ...worst('ns/child-event'), boundGets: queue.maxWaitGets('normal') },
    retry: { ...worst('ns/retry'), boundGets: queue.maxWaitGets('normal') },
    requeueAfter: { ...worst('ns/requeue-after'), boundGets: queue.maxWaitGets('normal') },
    resync: { ...worst('ns/resync'), boundGets: queue.maxWaitGets('low') },
    editsShareOfGets: Number((editGets / totalGets).toFixed(4)),
    keysStillQueued: queue.len(),
  };
}

console.log(
  JSON.stringify(
    {
      startUp: { crs, editWorstPosition: await startUp('low'), editWorstPositionBefore: await startUp('high'), boundGets: new Workqueue().maxWaitGets('high') },
      starvation: [await starvation(1), await starvation(2)],
      shares: { high: 4, normal: 2, low: 1 },
    },
    null,
    2,
  ),
);
