/**
 * Per-key retry delays of the workqueue: exponential per key, a token bucket over all keys, and their
 * maximum, with client-go's defaults (util/workqueue DefaultControllerRateLimiter).
 */
import { type Clock, systemClock } from '../clock.js';

/**
 * Decides how long a key waits before it is retried (client-go util/workqueue `TypedRateLimiter`).
 * `when` counts one more failure for the key and returns the delay in ms.
 */
export interface RateLimiter {
  /** Delay in ms before `key` may be processed again; counts one requeue. */
  when(key: string): number;
  /** Clears the key's failure history (call after a successful reconcile). */
  forget(key: string): void;
  /** Requeues counted for `key` since its last `forget`. */
  numRequeues(key: string): number;
}

export interface ExponentialRateLimiterOptions {
  /** Delay after the first failure. @default 5 ms, client-go's DefaultControllerRateLimiter */
  readonly baseDelayMs?: number;
  /** Cap on the delay. @default 1000 s, client-go's DefaultControllerRateLimiter */
  readonly maxDelayMs?: number;
}

/** Per-key exponential backoff: baseDelayMs × 2^failures, capped at maxDelayMs (client-go ItemExponentialFailureRateLimiter). */
export class ExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ExponentialRateLimiterOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
  }

  when(key: string): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    // 2^exp overflows to Infinity long after the cap; min() handles it.
    return Math.min(this.maxDelayMs, this.baseDelayMs * Math.pow(2, exp));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface BucketRateLimiterOptions {
  /** Sustained rate. @default 10 per second, client-go's DefaultControllerRateLimiter */
  readonly qps?: number;
  /** Bucket size: how many requeues may go through at once. @default 100 */
  readonly burst?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

/**
 * An overall token bucket shared by all keys (client-go BucketRateLimiter over golang.org/x/time/rate):
 * each `when` takes a token; when the bucket is empty the caller is given the time until its token
 * refills (tokens are reserved, so successive callers queue up behind each other). Keeps no per-key state.
 */
export class BucketRateLimiter implements RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(options: BucketRateLimiterOptions = {}) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.clock = options.clock ?? systemClock;
    this.tokens = this.burst;
    this.last = this.clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters; requeue counts come from the one that counts most (client-go MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new Error('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }
}

/**
 * controller-runtime's classic default: max(per-key exponential 5 ms → 1000 s, token bucket 10 qps / burst 100).
 * @param clock @default systemClock
 */
export function defaultControllerRateLimiter(clock: Clock = systemClock): RateLimiter {
  return new MaxOfRateLimiter(new ExponentialRateLimiter(), new BucketRateLimiter({ clock }));
}
