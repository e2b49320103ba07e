import { ChangeBatch, type BatchTimers } from '../../lib/cli/change-batch.js';

/** Timers driven by the test: `fire()` runs the pending callback, as if its quiet period passed. */
class ManualTimers implements BatchTimers {
  pending: (() => void) | undefined;
  sets = 0;
  set(callback: () => void): unknown {
    this.sets++;
    this.pending = callback;
    return callback;
  }
  clear(handle: unknown): void {
    if (this.pending === handle) this.pending = undefined;
  }
  fire(): void {
    const callback = this.pending;
    this.pending = undefined;
    callback?.();
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('GIVEN a burst of events WHEN the quiet period passes THEN one batch with each path once, in first-seen order', async () => {
  const timers = new ManualTimers();
  const batches: string[][] = [];
  const batch = new ChangeBatch((paths) => void batches.push(paths), 200, timers);
  batch.add('/p/a.ts');
  batch.add('/p/b.ts');
  batch.add('/p/a.ts');
  expect(batches).toEqual([]);
  timers.fire();
  await flush();
  expect(batches).toEqual([['/p/a.ts', '/p/b.ts']]);
  expect(timers.sets).toBe(3); // each event restarted the quiet period
});

test('GIVEN a batch whose handler runs WHEN more events come THEN they form the next batch, handed over after it returns', async () => {
  const timers = new ManualTimers();
  const batches: string[][] = [];
  let release!: () => void;
  const batch = new ChangeBatch((paths) => {
    batches.push(paths);
    return batches.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined;
  }, 200, timers);
  batch.add('/p/a.ts');
  timers.fire();
  await flush();
  expect(batch.busy).toBe(true);
  batch.add('/p/b.ts');
  batch.add('/p/c.ts');
  expect(timers.pending).toBeUndefined(); // nothing scheduled while the handler runs
  release();
  await flush();
  expect(batch.busy).toBe(false);
  timers.fire();
  await flush();
  expect(batches).toEqual([['/p/a.ts'], ['/p/b.ts', '/p/c.ts']]);
});

test('GIVEN a handler that rejects THEN the next batch still comes', async () => {
  const timers = new ManualTimers();
  const batches: string[][] = [];
  const batch = new ChangeBatch(async (paths) => {
    batches.push(paths);
    throw new Error('reload failed');
  }, 200, timers);
  batch.add('/p/a.ts');
  timers.fire();
  await flush();
  batch.add('/p/b.ts');
  timers.fire();
  await flush();
  expect(batches).toEqual([['/p/a.ts'], ['/p/b.ts']]);
});

test('GIVEN close() THEN pending and later events are dropped', async () => {
  const timers = new ManualTimers();
  const batches: string[][] = [];
  const batch = new ChangeBatch((paths) => void batches.push(paths), 200, timers);
  batch.add('/p/a.ts');
  batch.close();
  timers.fire();
  batch.add('/p/b.ts');
  timers.fire();
  await flush();
  expect(batches).toEqual([]);
});
