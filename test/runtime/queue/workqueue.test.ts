import { ManualClock } from '../../../lib/runtime/clock.js';
import { ExponentialRateLimiter } from '../../../lib/runtime/queue/rate-limiter.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';

/** Resolves with what the promise settled to, or 'pending' if it has not settled after the microtask queue ran. */
async function peek<T>(promise: Promise<T>): Promise<T | 'pending'> {
  let result: T | 'pending' = 'pending';
  void promise.then((v) => (result = v));
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return result;
}

function newQueue(clock = new ManualClock()) {
  return { clock, queue: new Workqueue({ clock, rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }) }) };
}

describe('Workqueue', () => {
  test('GIVEN a key added three times WHEN getting THEN it comes out once', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(await peek(queue.get())).toBe('pending');
  });

  test('GIVEN a key being processed WHEN it is added again THEN no second worker gets it until done, then it is re-queued', async () => {
    const { queue } = newQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    const second = queue.get();
    expect(await peek(second)).toBe('pending');
    queue.done('a');
    expect(await peek(second)).toBe('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  test('GIVEN a key processed and done with no add meanwhile THEN it is not re-queued', async () => {
    const { queue } = newQueue();
    queue.add('a');
    await queue.get();
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  test('GIVEN a waiting worker WHEN a key is added THEN the worker gets it', async () => {
    const { queue } = newQueue();
    const waiting = queue.get();
    expect(await peek(waiting)).toBe('pending');
    queue.add('x');
    expect(await waiting).toBe('x');
  });

  test('GIVEN addAfter WHEN the delay passes THEN the key is queued, not before', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 100);
    clock.advance(99);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe('a');
  });

  test('GIVEN two addAfter for one key THEN the earlier due time wins, either order', () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 100);
    queue.addAfter('a', 500);
    queue.addAfter('b', 500);
    queue.addAfter('b', 100);
    clock.advance(100);
    expect(queue.len()).toBe(2);
    clock.advance(1000);
    expect(queue.len()).toBe(2);
  });

  test('GIVEN a timed requeue WHEN an event adds the key meanwhile THEN it is processed now and the timed requeue still fires', async () => {
    const { clock, queue } = newQueue();
    queue.addAfter('a', 1000);
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
    clock.advance(1000);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe('a');
  });

  test('GIVEN a delayed key that falls due while it is processing THEN it is handed out after done', async () => {
    const { clock, queue } = newQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.addAfter('a', 10);
    clock.advance(10);
    expect(queue.len()).toBe(0);
    queue.done('a');
    expect(await queue.get()).toBe('a');
  });

  test('GIVEN failures WHEN addRateLimited THEN delays grow per key up to the cap, and forget resets them', async () => {
    const { clock, queue } = newQueue();
    const dueAfter = async (key: string): Promise<number> => {
      queue.addRateLimited(key);
      let waited = 0;
      while (queue.len() === 0 && waited < 10_000) {
        clock.advance(1);
        waited++;
      }
      queue.done((await queue.get())!);
      return waited;
    };
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) delays.push(await dueAfter('a'));
    expect(delays).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    expect(queue.numRequeues('a')).toBe(10);
    expect(queue.numRequeues('b')).toBe(0);
    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
    expect(await dueAfter('a')).toBe(5);
  });

  test('GIVEN shutDown THEN waiting and later gets resolve undefined and adds are ignored', async () => {
    const { clock, queue } = newQueue();
    const waiting = queue.get();
    queue.addAfter('late', 10);
    queue.shutDown();
    expect(await waiting).toBeUndefined();
    queue.add('a');
    clock.advance(100);
    expect(queue.len()).toBe(0);
    expect(await queue.get()).toBeUndefined();
    expect(clock.pending()).toBe(0);
  });

  test('GIVEN queued and processing keys WHEN shutDownWithDrain THEN queued keys are still handed out and it resolves once all are done', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    expect(await queue.get()).toBe('a');
    queue.add('a'); // changed while processing: must still be processed during the drain
    const drained = queue.shutDownWithDrain();
    queue.add('c'); // ignored
    expect(await peek(drained)).toBe('pending');
    expect(await queue.get()).toBe('b');
    queue.done('b');
    queue.done('a');
    expect(await queue.get()).toBe('a');
    expect(await peek(drained)).toBe('pending');
    const idle = queue.get();
    queue.done('a');
    expect(await peek(drained)).toBeUndefined();
    expect(await idle).toBeUndefined();
    expect(await queue.get()).toBeUndefined();
  });

  test('GIVEN a drain that never finishes WHEN its signal aborts THEN it resolves and the queue is shut down', async () => {
    const { queue } = newQueue();
    queue.add('a');
    await queue.get();
    const abort = new AbortController();
    const drained = queue.shutDownWithDrain(abort.signal);
    expect(await peek(drained)).toBe('pending');
    abort.abort();
    await drained;
    expect(await queue.get()).toBeUndefined();
  });

  test('GIVEN metrics hooks THEN adds, depth, queue and work durations and retries are reported', async () => {
    const clock = new ManualClock();
    const seen: string[] = [];
    const queue = new Workqueue({
      clock,
      rateLimiter: new ExponentialRateLimiter(),
      metrics: {
        added: (k) => seen.push(`add ${k}`),
        depth: (d) => seen.push(`depth ${d}`),
        queueDuration: (s) => seen.push(`queued ${s}`),
        workDuration: (s) => seen.push(`work ${s}`),
        retried: (k) => seen.push(`retry ${k}`),
      },
    });
    queue.add('a');
    queue.add('a');
    clock.advance(2000);
    await queue.get();
    clock.advance(500);
    expect(queue.unfinishedWork()).toEqual({ unfinishedSeconds: 0.5, longestRunningSeconds: 0.5 });
    queue.done('a');
    queue.addRateLimited('a');
    expect(seen).toEqual(['add a', 'depth 1', 'depth 0', 'queued 2', 'work 0.5', 'retry a']);
  });

  test('GIVEN normal keys waiting WHEN keys are added with high priority THEN a high key is handed out first, then high and normal share the slots (high normal high low…; an empty priority\'s slot goes to the highest with keys), FIFO within each', async () => {
    const { queue } = newQueue();
    queue.add('n1');
    queue.add('n2');
    queue.add('h1', 'high');
    queue.add('n3');
    queue.add('h2', 'high');
    expect([await queue.get(), await queue.get(), await queue.get(), await queue.get(), await queue.get()]).toEqual(['h1', 'n1', 'h2', 'n2', 'n3']);
  });

  test('GIVEN a normal key waiting WHEN it is added again with high priority THEN it moves up and is handed out once', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('b', 'high');
    queue.add('b');
    expect(queue.len()).toBe(2);
    expect([await queue.get(), await queue.get()]).toEqual(['b', 'a']);
    expect(await peek(queue.get())).toBe('pending');
  });

  test('GIVEN a key being processed WHEN it is added with high priority THEN on done it is queued ahead of normal keys', async () => {
    const { queue } = newQueue();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('b');
    queue.add('a');
    queue.add('a', 'high');
    queue.done('a');
    expect([await queue.get(), await queue.get()]).toEqual(['a', 'b']);
  });

  test('GIVEN a key moved up and handed out WHEN it is queued again as normal THEN it goes behind the keys already waiting (its old place is not reused)', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a', 'high');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.done('a');
    expect([await queue.get(), await queue.get()]).toEqual(['b', 'a']);
  });
});
