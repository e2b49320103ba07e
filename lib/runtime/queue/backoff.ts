/**
 * Exponential backoff with jitter for the runtime's retry loops (watches, serving certificate, CA-bundle
 * injection, storage version migration), and an abortable sleep.
 */
export interface BackoffOptions {
  /** First delay. @default 200 ms */
  readonly initialMs?: number;
  /** Cap on the delay before jitter. @default 30000 ms, like client-go's reflector */
  readonly maxMs?: number;
  /** Growth per failure. @default 2 */
  readonly factor?: number;
  /** Extra random fraction added to each delay: delay × (1 + jitter × random()). @default 0.5 */
  readonly jitter?: number;
  /** Source of randomness in [0, 1); injected for tests. @default Math.random */
  readonly random?: () => number;
}

/**
 * Exponential backoff with jitter for reconnect loops: `next()` returns initialMs, then ×factor each call,
 * capped at maxMs, each with up to `jitter` × the delay added at random so that many clients
 * reconnecting after one outage spread out. `reset()` after a success.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 200;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 0.5;
    this.random = options.random ?? Math.random;
  }

  /** Failures since the last reset. */
  get failures(): number {
    return this.attempt;
  }

  /** The delay before the next attempt, in ms; each call counts one more failure. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * Math.pow(this.factor, this.attempt));
    this.attempt++;
    return Math.round(base * (1 + this.jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
