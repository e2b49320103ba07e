import { type Clock, type TimerHandle, systemClock } from './clock.js';
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
 * FIFO order among queued keys.
 */
export class Workqueue {
  readonly name: string;
  private readonly rateLimiter: RateLimiter;
  private readonly clock: Clock;
  private readonly metrics: WorkqueueMetrics;

  private readonly queue: string[] = [];
  /** Keys that need processing: queued, or added again while processing. Value: when first added (clock ms). */
  private readonly dirty = new Map<string, number>();
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

  /** Queues `key` unless it is already waiting; held back while it is processing. Ignored after shutdown. */
  add(key: string): void {
    if (this.state !== 'running') return;
    if (this.dirty.has(key)) return;
    this.dirty.set(key, this.clock.now());
    this.metrics.added?.(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.metrics.depth?.(this.queue.length);
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
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.state !== 'running') return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    const started = this.processing.get(key);
    if (started === undefined) return;
    this.processing.delete(key);
    this.metrics.workDuration?.((this.clock.now() - started) / 1000);
    if (this.dirty.has(key) && this.state !== 'stopped') {
      this.queue.push(key);
      this.metrics.depth?.(this.queue.length);
      this.handOut();
    }
    this.checkDrained();
  }

  /** Keys waiting to be handed out (not counting delayed or processing keys). */
  len(): number {
    return this.queue.length;
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
    this.queue.length = 0;
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

  private take(): string {
    const key = this.queue.shift()!;
    const now = this.clock.now();
    const added = this.dirty.get(key) ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics.depth?.(this.queue.length);
    this.metrics.queueDuration?.((now - added) / 1000);
    return key;
  }

  private handOut(): void {
    while (this.getters.length > 0 && this.queue.length > 0) this.getters.shift()!(this.take());
  }

  private checkDrained(): void {
    if (this.drained.length === 0) return;
    if (this.state === 'draining' && (this.queue.length > 0 || this.processing.size > 0)) return;
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
