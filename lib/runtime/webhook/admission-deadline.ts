/**
 * The time an admission hook has: the API server waits `timeoutSeconds` (the webhook configuration's,
 * 1–30, default 10) for the answer and then fails the request (`context deadline exceeded`, or admits it
 * under `failurePolicy: Ignore`). The AdmissionReview does not carry that timeout; the operator knows it
 * from its own synthesized configuration (`webhook: { timeoutSeconds }`). So the runtime bounds the whole
 * hook (every `context.get` and the user's function) by {@link admissionBudgetMs} and answers itself,
 * naming what it was waiting for, before the API server gives up (rollout-operator#441).
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#timeouts
 */
import { systemClock, type Clock, type TimerHandle } from '../clock.js';

/**
 * Milliseconds a hook may take for a webhook with `timeoutSeconds`: the timeout minus a margin for the
 * answer's way back (network, TLS, the API server's queueing) of 1 s, but at most a fifth of the timeout.
 * 10 s → 9000 ms, 2 s → 1600 ms, 1 s → 800 ms.
 */
export function admissionBudgetMs(timeoutSeconds: number): number {
  const timeoutMs = timeoutSeconds * 1000;
  return Math.max(timeoutMs - 1000, timeoutMs * 0.8);
}

/** The hook did not finish within its budget; `waitingFor` names the read in flight, or the hook itself. */
export class AdmissionDeadlineError extends Error {
  readonly reason = 'Timeout';
  constructor(
    /** e.g. `reading ConfigMap team-a/memcached-policy` or `validateAdmission`. */
    readonly waitingFor: string,
    readonly budgetMs: number,
    readonly timeoutSeconds: number,
  ) {
    super(`${waitingFor} did not finish within ${budgetMs} ms (the webhook's timeoutSeconds ${timeoutSeconds} minus a margin, so the answer reaches the API server in time)`);
    this.name = 'AdmissionDeadlineError';
  }
}

/**
 * One review's deadline, started when the review arrives. `run` races the hook against it; reads go
 * through `read`, which passes `signal` (aborted at the deadline) and remembers what is in flight.
 */
export class AdmissionDeadline {
  private readonly controller = new AbortController();
  private readonly inFlight = new Set<string>();
  private readonly timer: TimerHandle;
  private expire!: (err: AdmissionDeadlineError) => void;
  private readonly expired: Promise<never>;
  private current = 'the hook';

  constructor(
    readonly timeoutSeconds: number,
    private readonly clock: Clock = systemClock,
  ) {
    this.expired = new Promise<never>((_, reject) => (this.expire = reject));
    this.expired.catch(() => {}); // observed through run(); never an unhandled rejection
    const budgetMs = admissionBudgetMs(timeoutSeconds);
    this.timer = clock.setTimeout(() => {
      const waitingFor = this.inFlight.size > 0 ? [...this.inFlight].join(', ') : this.current;
      this.expire(new AdmissionDeadlineError(waitingFor, budgetMs, timeoutSeconds)); // first, so it wins every race
      this.controller.abort();
    }, budgetMs);
  }

  /** Aborted at the deadline: pass it to every request the hook makes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Runs `fn` (named `what` in the error, e.g. `validateAdmission`) until it settles or the deadline passes.
   * @throws AdmissionDeadlineError at the deadline; whatever `fn` throws before it
   */
  async run<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
    if (this.controller.signal.aborted) await this.expired;
    this.current = what;
    return Promise.race([Promise.resolve().then(fn), this.expired]);
  }

  /**
   * Performs one read named `what` (e.g. `reading ConfigMap a/b`) under the deadline.
   * @throws AdmissionDeadlineError when the deadline passed before or while it ran
   */
  async read<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.controller.signal.aborted) await this.expired;
    this.inFlight.add(what);
    try {
      return await Promise.race([fn(this.controller.signal), this.expired]);
    } finally {
      this.inFlight.delete(what);
    }
  }

  /** Stops the timer (the review is answered). */
  done(): void {
    this.clock.clearTimeout(this.timer);
  }
}
