/** An opaque timer handle returned by {@link Clock.setTimeout}. */
export type TimerHandle = unknown;

/**
 * Time as the queue and rate limiters see it. Injected so tests can drive time by hand
 * ({@link ManualClock}) instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since an arbitrary origin; only differences matter. */
  now(): number;
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock (`performance.now()` and the global timers). Timers are unref'd: they never keep the process alive. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, delayMs) => {
    const t = setTimeout(fn, Math.max(0, delayMs));
    t.unref?.();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A clock that only moves when told to. `advance(ms)` fires due timers in due-time order,
 * each seeing `now()` equal to its own due time.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, delayMs: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { due: this.current + Math.max(0, delayMs), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Number of pending timers. */
  pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let nextId: number | undefined;
      let next: { due: number; fn: () => void } | undefined;
      for (const [id, timer] of this.timers) {
        if (timer.due <= target && (!next || timer.due < next.due)) {
          nextId = id;
          next = timer;
        }
      }
      if (!next || nextId === undefined) break;
      this.timers.delete(nextId);
      this.current = Math.max(this.current, next.due);
      next.fn();
    }
    this.current = target;
  }
}

/** Resolves after `ms` on `clock`, or as soon as any of `signals` aborts (at once when one already has). Never rejects. */
export function sleepOn(clock: Clock, ms: number, ...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((s) => s.aborted)) return resolve();
    const done = () => {
      clock.clearTimeout(handle);
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    const handle = clock.setTimeout(done, ms);
    for (const s of signals) s.addEventListener('abort', done, { once: true });
  });
}
