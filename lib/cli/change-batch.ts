/**
 * Debounces file-change events into batches: an editor's save is often several events (write, rename,
 * chmod) and a `git checkout` many; `dev` reloads once per batch (lib/cli/dev-reload.ts). A batch is
 * handed over once no event came for `quietMs`; events that arrive while the handler of a batch runs
 * form the next batch, handed over after it returns, so reloads never overlap.
 *
 * Time comes from the injected timers (real `setTimeout` by default), so tests can drive it.
 */

/** Timers as `setTimeout`/`clearTimeout`. */
export interface BatchTimers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: BatchTimers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Collects changed paths and calls the handler once per quiet batch, never twice at a time. */
export class ChangeBatch {
  private pending = new Set<string>();
  private timer: unknown;
  private running = false;
  private closed = false;

  /**
   * @param handler receives the paths changed in the batch (each once, in first-seen order); a
   *   rejection is the handler's to report: it is caught and ignored here
   * @param quietMs how long no event must come before a batch is handed over, in ms
   *   @default 200: longer than the burst of one save, short enough that a reload starts at once
   */
  constructor(
    private readonly handler: (paths: string[]) => Promise<void> | void,
    private readonly quietMs = 200,
    private readonly timers: BatchTimers = REAL_TIMERS,
  ) {}

  /** Records a change of `path`, (re)starting the quiet period. */
  add(path: string): void {
    if (this.closed) return;
    this.pending.add(path);
    if (this.running) return; // handed over when the running batch ends
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = this.timers.set(() => void this.flush(), this.quietMs);
  }

  /** Whether a batch's handler runs now. */
  get busy(): boolean {
    return this.running;
  }

  /** Drops pending changes; later ones are ignored. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    if (this.closed || this.pending.size === 0) return;
    const paths = [...this.pending];
    this.pending = new Set();
    this.running = true;
    try {
      await this.handler(paths);
    } catch {
      // the handler reports its own failures
    } finally {
      this.running = false;
    }
    if (!this.closed && this.pending.size > 0) this.timer = this.timers.set(() => void this.flush(), this.quietMs);
  }
}
