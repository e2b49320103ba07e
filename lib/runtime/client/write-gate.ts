/**
 * The write gate: a synchronous check an {@link ApiClient} makes at the moment it hands a write's bytes
 * to the socket, so that a process that lost the right to write (a leader past its renew deadline) sends
 * nothing, even when its event loop runs a queued write before any timer noticed the loss (a process
 * frozen by SIGSTOP, a long GC pause or a stalled VM, then resumed: the poll phase runs I/O callbacks, and
 * the promise chains they resume, before the timers phase fires the renew-deadline timer).
 *
 * Reads (GET, HEAD, watches) never consult the gate: standbys keep warm caches.
 *
 * What the gate can promise, and what it cannot:
 * - A write whose check fails is never started: no byte of it reaches a socket; the request rejects
 *   with {@link WriteFencedError} (found through `cause` from higher layers).
 * - A write whose check passes is written to the socket in the same synchronous step (no await, no
 *   event-loop turn in between), on a connection that is already established (TCP, and TLS when https):
 *   a write that must open a connection is checked when the connection is ready, not when it was asked.
 * - It cannot recall bytes already handed to the kernel, nor a write between its check and its system
 *   call. A write checked and written just before the freeze, or sitting in the socket's send buffer, is
 *   delivered by the kernel while the process is stopped, and the API server processes it whenever it
 *   reads it. A process frozen between the two (its thread preempted after the check, then stopped: on a
 *   loaded 2-core machine a check was seen 65 ms before the freeze, its PATCH received 7 s later on
 *   SIGCONT, test/integration/leader-fencing.test.ts) writes it when it resumes. Either was checked while
 *   the lease was valid by the local monotonic clock; it may be processed after it expired. Only a
 *   server-side precondition (a resourceVersion, or a fencing token the server checks) could refuse it;
 *   Kubernetes' Lease has none for other objects (kubernetes.io/docs/concepts/architecture/leases/).
 *   The margin against a delay in transit is leaseDuration − renewDeadline (5 s with client-go's
 *   defaults): the leader stops writing at its last renewal's send time + renewDeadline, and a standby
 *   takes over no sooner than leaseDuration after it observed that renewal; a write delayed in transit or
 *   in the server by more than the margin can still land after the takeover. Against a freeze between
 *   check and write there is no margin: a freeze has no bound.
 * - A request in flight when leadership is lost is aborted by its signal (the Manager's fence): its
 *   socket is destroyed; whether the server already acted on it is unknown, as for any cut connection.
 */
import { brandClass } from '../../operator/brand.js';
import type { Logger } from '../logger.js';
import { RuntimeError } from '../runtime-error.js';

/** The HTTP methods that change state on the API server; only these consult a {@link WriteGate}. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True for POST, PUT, PATCH and DELETE (any case). */
export function isWriteMethod(method: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase());
}

/**
 * Decides, synchronously, whether a write may leave the process now.
 * Implemented by the Manager on its leader elector (`LeaderElector.assertLeading`).
 */
export interface WriteGate {
  /**
   * Returns when `method path` may be sent now; throws (a {@link WriteFencedError}) when not. Must not
   * block or await: it is called between "the socket is ready" and "the bytes are written".
   */
  assertMayWrite(method: string, path: string): void;
}

/** A write refused by a {@link WriteGate}: nothing of it was sent. Step `leader-election` (the gate is its fence); branded. */
export class WriteFencedError extends RuntimeError {
  static {
    brandClass(this, 'WriteFencedError');
  }

  override readonly reason = 'WriteFenced';
  override readonly step = 'leader-election';
  constructor(
    readonly method: string,
    readonly path: string,
    /** Why the gate is closed, e.g. "renew deadline passed 1234 ms ago". */
    why: string,
    options?: { cause?: unknown },
  ) {
    super(`${method} ${path}: not sent: ${why}`, options);
    this.name = 'WriteFencedError';
  }
}

/**
 * A {@link WriteGate} that logs each write it lets pass, at debug: `write passed the leader gate` with
 * `method`, `path` and `gateCheckedAt` (the wall time, ISO 8601, read before the check began), so that a
 * write a server receives late can be told apart: checked before a freeze (in transit) or sent late. A
 * check that begins before a freeze longer than the renew deadline and passes read the lease clock before
 * the freeze (after it, the check refuses).
 *
 * The lines are written in a microtask, once the write went to the socket: writing a line is a system
 * call, and a pending SIGSTOP takes effect on the return from one, so a line between the check and the
 * write widened the window in which a write checked before a freeze leaves after the resume.
 * {@link flush} writes the pending lines at once: the owner calls it when the gate deposes it, before the
 * process exits from inside that later check (the microtask would never run; the write it logs may
 * already be on the wire).
 */
export class LoggedWriteGate implements WriteGate {
  private readonly pending: { method: string; path: string; gateCheckedAt: string }[] = [];

  constructor(
    /** The check: returns when the write may leave, throws (a {@link WriteFencedError}) when not. */
    private readonly check: (method: string, path: string) => void,
    private readonly logger: Logger,
  ) {}

  assertMayWrite(method: string, path: string): void {
    const gateCheckedAt = new Date().toISOString();
    this.check(method, path);
    if (this.pending.push({ method, path, gateCheckedAt }) === 1) queueMicrotask(() => this.flush());
  }

  /** Writes the lines of the writes passed since the last flush. */
  flush(): void {
    for (const line of this.pending.splice(0)) this.logger.debug(line, 'write passed the leader gate');
  }
}
