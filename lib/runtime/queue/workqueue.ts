/**
 * The controller's workqueue (client-go util/workqueue): each key queued at most once and processed by
 * one worker at a time, two priorities, delayed and rate-limited adds, and the `workqueue_*` metrics.
 */
import { type Clock, type TimerHandle, systemClock } from '../clock.js';
import { type RateLimiter, defaultControllerRateLimiter } from './rate-limiter.js';

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

/**
 * How soon a queued key is handed out: every `high` key before any `normal` one, FIFO within each.
 * The controller adds a CR's key with `high` when the CR itself was created or edited (spec, labels,
 * annotations, finalizers, deletion), and with `normal` for child, related, resync and retry events, so a
 * user's change does not wait behind the follow-up work of earlier changes. Compare controller-runtime's
 * priority queue (pkg/controller/priorityqueue, opt-in since v0.20), which lowers the priority of adds that
 * are not edge-triggered (initial list, resync).
 */
export type QueuePriority = 'high' | 'normal';

export interface WorkqueueOptions {
  /** Name for logs and metrics (controller-runtime uses the controller name). @default 'workqueue' */
  readonly name?: string;
  /** @default defaultControllerRateLimiter(clock): max(5 ms → 1000 s per key, 10 qps / burst 100) */
  readonly rateLimiter?: RateLimiter;
  /** Time source for delays and durations. @default systemClock */
  readonly clock?: Clock;
  readonly metrics?: WorkqueueMetrics;
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
 * - **Priority:** keys added with `high` ({@link QueuePriority}) are handed out before `normal` ones, FIFO
 *   within each priority. Adding a key that is already waiting with a higher priority moves it up (it keeps
 *   one place in the queue); a key added while processing is queued on `done` with the highest priority it
 *   was added with meanwhile.
 */
export class Workqueue {
  readonly name: string;
  private readonly rateLimiter: RateLimiter;
  private readonly clock: Clock;
  private readonly metrics: WorkqueueMetrics;

  /** Entries in hand-out order, per priority; an entry that is not its key's live one (the key moved up) is skipped. */
  private readonly lanes: Record<QueuePriority, { key: string; entry: number }[]> = { high: [], normal: [] };
  /** Queued keys (waiting to be handed out) → their live entry. */
  private readonly queued = new Map<string, number>();
  private entries = 0;
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
  }

  /**
   * Queues `key` unless it is already waiting (then a `high` add moves a `normal` key up); held back while it
   * is processing. Ignored after shutdown.
   * @param priority @default 'normal'
   */
  add(key: string, priority: QueuePriority = 'normal'): void {
    if (this.state !== 'running') return;
    const dirty = this.dirty.get(key);
    if (dirty) {
      if (priority === 'high' && dirty.priority === 'normal') {
        dirty.priority = 'high';
        if (this.queued.has(key)) this.enqueue(key, 'high');
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

  /** True once `shutDown` or `shutDownWithDrain` was called. */
  shuttingDown(): boolean {
    return this.state !== 'running';
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
    this.lanes.high.length = 0;
    this.lanes.normal.length = 0;
    this.queued.clear();
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

  /** Puts `key` at the end of `priority`'s lane (an entry it had before goes stale). */
  private enqueue(key: string, priority: QueuePriority): void {
    const entry = ++this.entries;
    this.queued.set(key, entry);
    this.lanes[priority].push({ key, entry });
    this.metrics.depth?.(this.queued.size);
  }

  /** The next queued key: the first live entry of the high lane, else of the normal lane. Only while `queued` is not empty. */
  private take(): string {
    let key: string | undefined;
    for (const priority of ['high', 'normal'] as const) {
      const lane = this.lanes[priority];
      while (key === undefined && lane.length > 0) {
        const candidate = lane.shift()!;
        if (this.queued.get(candidate.key) === candidate.entry) key = candidate.key;
      }
      if (key !== undefined) break;
    }
    if (key === undefined) throw new Error(`workqueue ${this.name}: ${this.queued.size} keys queued but none in a lane`);
    this.queued.delete(key);
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
