/**
 * The controller's workqueue (client-go util/workqueue): each key queued at most once and processed by
 * one worker at a time, three priorities with a fair share each, delayed and rate-limited adds, and the
 * `workqueue_*` metrics.
 */
import { type Clock, type TimerHandle, systemClock } from '../clock.js';
import { type PriorityShares, type QueuePriority, QUEUE_PRIORITIES, ShareCycle } from './priority-shares.js';
import { type RateLimiter, defaultControllerRateLimiter } from './rate-limiter.js';

export type { PriorityShares, QueuePriority } from './priority-shares.js';

/**
 * Hooks for workqueue metrics; each maps to one of client-go's `workqueue_*` series, so a Prometheus
 * adapter is a few lines. All optional. `name` of the queue is passed in {@link WorkqueueOptions.name}.
 */
export interface WorkqueueMetrics {
  /** `workqueue_depth`: the number of keys waiting (not delayed, not processing). */
  depth?(depth: number): void;
  /** `workqueue_adds_total`: one call per accepted `add` (duplicates of a queued key are not counted). */
  added?(key: string): void;
  /** `workqueue_queue_duration_seconds`: how long a key waited between its add and a `get`. */
  queueDuration?(seconds: number): void;
  /** `workqueue_work_duration_seconds`: how long a key was processed, `get` to `done`. */
  workDuration?(seconds: number): void;
  /** `workqueue_retries_total`: one call per `addRateLimited`. */
  retried?(key: string): void;
}

export interface WorkqueueOptions {
  /** Name for logs and metrics (controller-runtime uses the controller name). @default 'workqueue' */
  readonly name?: string;
  /** @default defaultControllerRateLimiter(clock): max(5 ms → 1000 s per key, 10 qps / burst 100) */
  readonly rateLimiter?: RateLimiter;
  /** Time source for delays and durations. @default systemClock */
  readonly clock?: Clock;
  readonly metrics?: WorkqueueMetrics;
  /**
   * Hand-out slots per cycle for each priority; see {@link PriorityShares} for the wait bound they give.
   * @default DEFAULT_PRIORITY_SHARES, { high: 4, normal: 2, low: 1 }
   * @throws Error naming `shares.<priority>` when a share is not a whole number from 1 to 1000
   */
  readonly shares?: PriorityShares;
}

/**
 * A queue of keys with client-go's workqueue semantics (k8s.io/client-go/util/workqueue):
 *
 * Guarantees:
 * - **Dedupe:** a key waiting in the queue is held once, however many times it is added.
 * - **One worker per key:** a key handed out by `get` is "processing" until `done(key)`; it is never
 *   handed to a second worker meanwhile. A key added while processing is held back and queued again
 *   on `done` (so a change seen mid-reconcile is never lost).
 * - **Delays:** `addAfter(key, ms)` queues the key when the delay ends; if the key is already waiting
 *   with a delay, the earlier due time wins. A delayed key is independent of plain adds: an `add` meanwhile
 *   processes the key now, and the timed requeue still fires later (a requeueAfter survives events).
 * - **Rate limiting:** `addRateLimited` = `addAfter(key, rateLimiter.when(key))`; `forget` resets the key's
 *   failures, `numRequeues` reads them.
 * - **Shutdown:** `shutDown()` stops at once: adds are ignored, delayed keys dropped, waiting and later `get`
 *   calls resolve `undefined`. `shutDownWithDrain()` also ignores adds and drops delayed keys, but keeps
 *   handing out the keys already queued (and those re-queued on `done`) until the queue is empty and
 *   nothing is processing, then resolves.
 *
 * - **Priority, with a fair share:** three priorities, `high`, `normal`, `low` ({@link QueuePriority}),
 *   FIFO within each. Each `get` takes the next slot of a fixed cycle in which each priority owns a share
 *   ({@link PriorityShares}, default 4 : 2 : 1): the slot's priority is served if it has keys, else the
 *   highest that has. So higher priorities go first, and still every queued key is handed out within a
 *   bounded number of gets while higher adds keep arriving (first `high` key within 2 gets, first `normal`
 *   within 4, first `low` within 7, by default; {@link Workqueue.maxWaitGets}). A due `addAfter` or
 *   `addRateLimited` is queued as `normal`, so requeueAfter and retries never starve.
 * - **Raising:** adding a key that is already waiting with a higher priority raises it: it also joins the
 *   end of the higher priority's queue and is handed out at whichever of its places comes first (once);
 *   a lower add never lowers it. A key added while processing is queued on `done` with the highest
 *   priority it was added with meanwhile.
 */
export class Workqueue {
  readonly name: string;
  private readonly rateLimiter: RateLimiter;
  private readonly clock: Clock;
  private readonly metrics: WorkqueueMetrics;

  /**
   * Entries in hand-out order, per priority. An entry whose number is not its key's live one (the key was
   * handed out through another entry, or queued anew since) is stale and skipped.
   */
  private readonly lanes: Record<QueuePriority, Lane> = { high: new Lane(), normal: new Lane(), low: new Lane() };
  /** Queued keys (waiting to be handed out) → the number of their live entries (one per priority they were queued or raised to). */
  private readonly queued = new Map<string, number>();
  private entries = 0;
  private readonly cycle: ShareCycle;
  /** Keys that need processing: queued, or added again while processing. When first added (clock ms), and the highest priority added with. */
  private readonly dirty = new Map<string, { addedAt: number; priority: QueuePriority }>();
  /** Keys handed out and not yet done. Value: when handed out (clock ms). */
  private readonly processing = new Map<string, number>();
  /** Delayed keys → due time (clock ms). */
  private readonly waiting = new Map<string, number>();
  private waitingTimer: { handle: TimerHandle; due: number } | undefined;
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private state: 'running' | 'draining' | 'stopped' = 'running';
  private drained: (() => void)[] = [];

  constructor(options: WorkqueueOptions = {}) {
    this.name = options.name ?? 'workqueue';
    this.clock = options.clock ?? systemClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.metrics = options.metrics ?? {};
    this.cycle = new ShareCycle(options.shares);
  }

  /**
   * The most gets, counting the one that hands it out, until a key queued with `priority` behind
   * `position - 1` others of that priority is handed out, whatever else arrives meanwhile
   * ({@link ShareCycle.maxWaitGets}). With the default shares: `high` 2, `normal` 4, `low` 7 for the
   * first key; at most `ceil(position / share) × 7`.
   */
  maxWaitGets(priority: QueuePriority, position = 1): number {
    return this.cycle.maxWaitGets(priority, position);
  }

  /**
   * Queues `key` unless it is already waiting (then an add with a higher priority raises it, see
   * {@link Workqueue}); held back while it is processing. Ignored after shutdown.
   * @param priority @default 'normal'
   */
  add(key: string, priority: QueuePriority = 'normal'): void {
    if (this.state !== 'running') return;
    const dirty = this.dirty.get(key);
    if (dirty) {
      if (rank(priority) < rank(dirty.priority)) {
        dirty.priority = priority;
        const entry = this.queued.get(key);
        if (entry !== undefined) this.lanes[priority].push({ key, entry });
      }
      return;
    }
    this.dirty.set(key, { addedAt: this.clock.now(), priority });
    this.metrics.added?.(key);
    if (this.processing.has(key)) return;
    this.enqueue(key, priority);
    this.handOut();
  }

  /**
   * Queues `key` after `delayMs` (≤ 0: at once). If the key is already delayed, the earlier due time wins.
   * Ignored after shutdown.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.state !== 'running') return;
    if (!(delayMs > 0)) return this.add(key);
    const due = this.clock.now() + delayMs;
    const current = this.waiting.get(key);
    if (current !== undefined && current <= due) return;
    this.waiting.set(key, due);
    this.armTimer();
  }

  /** Queues `key` after the rate limiter's delay for it; counts one requeue. */
  addRateLimited(key: string): void {
    if (this.state !== 'running') return;
    this.metrics.retried?.(key);
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Forgets the key's failure history in the rate limiter (after a success). Does not dequeue it. */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  /** Requeues counted by the rate limiter for `key` since its last `forget`. */
  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, marked processing until `done(key)`; waits while the queue is empty.
   * Resolves `undefined` once the queue is shut down (after draining, for `shutDownWithDrain`).
   */
  get(): Promise<string | undefined> {
    if (this.queued.size > 0) return Promise.resolve(this.take());
    if (this.state !== 'running') return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics.workDuration?.((this.clock.now() - started) / 1000);
    const dirty = this.dirty.get(key);
    if (dirty && this.state !== 'stopped') {
      this.enqueue(key, dirty.priority);
      this.handOut();
    }
    this.checkDrained();
  }

  /** Keys waiting to be handed out (not counting delayed or processing keys). */
  len(): number {
    return this.queued.size;
  }

  /**
   * For the `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds` gauges:
   * the summed and the longest time of the keys being processed now.
   */
  unfinishedWork(): { unfinishedSeconds: number; longestRunningSeconds: number } {
    const now = this.clock.now();
    let sum = 0;
    let longest = 0;
    for (const started of this.processing.values()) {
      const s = (now - started) / 1000;
      sum += s;
      longest = Math.max(longest, s);
    }
    return { unfinishedSeconds: sum, longestRunningSeconds: longest };
  }

  /** Stops at once: ignores adds, drops queued and delayed keys; every pending and later `get` resolves `undefined`. */
  shutDown(): void {
    this.state = 'stopped';
    this.stopWaiting();
    for (const priority of QUEUE_PRIORITIES) this.lanes[priority].clear();
    this.queued.clear();
    this.cycle.reset();
    this.metrics.depth?.(0);
    for (const getter of this.getters.splice(0)) getter(undefined);
    this.checkDrained();
  }

  /**
   * Ignores new adds and drops delayed keys, but keeps handing out queued keys; resolves once the queue is
   * empty and nothing is processing (workers must keep calling `get`/`done`), or when `signal` aborts
   * (e.g. a graceful-shutdown deadline). After it resolves the queue is fully shut down.
   */
  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    if (this.state === 'running') this.state = 'draining';
    this.stopWaiting();
    return new Promise((resolve) => {
      const finish = () => {
        signal?.removeEventListener('abort', finish);
        this.shutDown();
        resolve();
      };
      if (signal?.aborted) return finish();
      signal?.addEventListener('abort', finish, { once: true });
      this.drained.push(finish);
      this.checkDrained();
    });
  }

  /** Puts `key` (not queued) at the end of `priority`'s lane with a new entry number (entries it had before go stale). */
  private enqueue(key: string, priority: QueuePriority): void {
    const entry = ++this.entries;
    this.queued.set(key, entry);
    this.lanes[priority].push({ key, entry });
    this.metrics.depth?.(this.queued.size);
  }

  /** True when `priority`'s lane holds a live entry (stale entries at its head are dropped). */
  private laneHasKeys(priority: QueuePriority): boolean {
    const lane = this.lanes[priority];
    for (let head = lane.peek(); head !== undefined; head = lane.peek()) {
      if (this.queued.get(head.key) === head.entry) return true;
      lane.shift();
    }
    return false;
  }

  /** The next queued key, from the lane the share cycle picks (its head is live). Only while `queued` is not empty. */
  private take(): string {
    const priority = this.cycle.take((p) => this.laneHasKeys(p));
    if (priority === undefined) throw new Error(`workqueue ${this.name}: ${this.queued.size} keys queued but none in a lane`);
    const key = this.lanes[priority].shift()!.key;
    this.queued.delete(key);
    // Idle: a burst that comes later starts the cycle at its first (high) slot. No key waits across a reset.
    if (this.queued.size === 0) this.cycle.reset();
    const now = this.clock.now();
    const added = this.dirty.get(key)?.addedAt ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics.depth?.(this.queued.size);
    this.metrics.queueDuration?.((now - added) / 1000);
    return key;
  }

  private handOut(): void {
    while (this.getters.length > 0 && this.queued.size > 0) this.getters.shift()!(this.take());
  }

  private checkDrained(): void {
    if (this.drained.length === 0) return;
    if (this.state === 'draining' && (this.queued.size > 0 || this.processing.size > 0)) return;
    if (this.state === 'draining') {
      // Idle workers blocked in get() must learn that the queue is done.
      for (const getter of this.getters.splice(0)) getter(undefined);
    }
    for (const finish of this.drained.splice(0)) finish();
  }

  private stopWaiting(): void {
    this.waiting.clear();
    if (this.waitingTimer) this.clock.clearTimeout(this.waitingTimer.handle);
    this.waitingTimer = undefined;
  }

  /** Keeps one timer armed for the earliest delayed key. */
  private armTimer(): void {
    let earliest = Infinity;
    for (const due of this.waiting.values()) earliest = Math.min(earliest, due);
    if (this.waitingTimer && this.waitingTimer.due === earliest) return;
    if (this.waitingTimer) this.clock.clearTimeout(this.waitingTimer.handle);
    this.waitingTimer = undefined;
    if (earliest === Infinity) return;
    const handle = this.clock.setTimeout(() => this.fireDue(), earliest - this.clock.now());
    this.waitingTimer = { handle, due: earliest };
  }

  private fireDue(): void {
    this.waitingTimer = undefined;
    const now = this.clock.now();
    const due = [...this.waiting].filter(([, at]) => at <= now).sort((a, b) => a[1] - b[1]);
    for (const [key] of due) {
      this.waiting.delete(key);
      this.add(key);
    }
    this.armTimer();
  }
}

/** Position of a priority in {@link QUEUE_PRIORITIES}: lower is higher. */
function rank(priority: QueuePriority): number {
  return QUEUE_PRIORITIES.indexOf(priority);
}

/** A FIFO of queue entries with O(1) push and shift (an array and a head index, compacted as it drains). */
class Lane {
  private items: { key: string; entry: number }[] = [];
  private head = 0;

  push(item: { key: string; entry: number }): void {
    this.items.push(item);
  }

  peek(): { key: string; entry: number } | undefined {
    return this.items[this.head];
  }

  shift(): { key: string; entry: number } | undefined {
    const item = this.items[this.head];
    if (item === undefined) return undefined;
    this.head++;
    if (this.head === this.items.length) this.clear();
    else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
