/**
 * The heartbeat of one watch over HTTP/1.1: when a silent stream counts as dead (re-watch) and when as
 * blind (the liveness probe names it). The {@link Watcher} owns one {@link WatchHeartbeat}.
 */
import { type Clock, type TimerHandle, systemClock } from '../clock.js';

/**
 * How long past its `timeoutSeconds` a silent watch stream is given before it counts as dead: the
 * equivalent of client-go's HTTP/2 `PingTimeout` (15 s, k8s.io/client-go/transport: a ping not answered
 * within 15 s closes the connection).
 */
export const WATCH_DEAD_AFTER_MS = 15_000;

/**
 * How long past its `timeoutSeconds` a silent watch stream counts as blind ({@link WatchHeartbeat.blind}):
 * the server ends every watch at `timeoutSeconds` (measured on kube-apiserver 1.35: at +0.0–0.1 s), so a
 * stream that said nothing for longer has lost its way to the server. 5 s of slack for a busy server.
 */
export const WATCH_BLIND_AFTER_MS = 5_000;

/**
 * The application-level heartbeat of one watcher: what client-go's HTTP/2 health check does for a
 * connection (`ReadIdleTimeout` 30 s: ping a connection that read nothing that long; `PingTimeout` 15 s:
 * close it when the ping is not answered), done for a watch over HTTP/1.1, which has no ping.
 *
 * The "ping" is the server's own promise: a watch asked with `timeoutSeconds` = T is ended by the server
 * after T s (with a bookmark about 2 s before when it has one), so a healthy stream is never silent for
 * more than T s, whatever the traffic. (Periodic bookmarks cannot be the heartbeat: kube-apiserver sends
 * them "roughly every minute" only while its watch cache has a resourceVersion to report; measured on
 * 1.35 on idle resources: the first one 88–121 s after the watch opened, then one every 60 s; none at all
 * within a 45 s watch.)
 *
 * - {@link heard} stamps every sign of life from the server: response headers, events, bookmarks, the
 *   stream's end, any HTTP answer (an error answer is a server talking, not a dead connection), a
 *   refused connection (the host says nothing listens: a server restarting, not a silent path).
 * - {@link arm}: a stream opened with timeout T that hears nothing for T + {@link WATCH_DEAD_AFTER_MS} is
 *   dead: `onDead` runs once (the watcher destroys the stream's socket and re-watches).
 * - {@link blind}: nothing heard for more than T + {@link WATCH_BLIND_AFTER_MS}, where T is the timeout
 *   of the last stream armed; true from then until the next sign of life, also across re-watches and
 *   backoffs (a watch whose re-open gets no answer stays blind).
 *
 * Time comes from `clock` (a {@link Clock}; tests drive a ManualClock).
 */
export class WatchHeartbeat {
  private readonly clock: Clock;
  private lastHeardMs: number;
  private expectedSilenceMs: number;
  private timer: TimerHandle | undefined;
  private armed: { deadAfterMs: number; onDead: () => void } | undefined;

  /**
   * @param expectedSilenceMs how long the server may be silent before the first stream is armed (the
   * first list); after that, each {@link arm} sets it to its stream's timeout
   */
  constructor(expectedSilenceMs: number, clock: Clock = systemClock) {
    this.clock = clock;
    this.lastHeardMs = clock.now();
    this.expectedSilenceMs = expectedSilenceMs;
  }

  /** A sign of life from the server. Cheap: one clock read (the timer re-arms lazily). */
  heard(): void {
    this.lastHeardMs = this.clock.now();
  }

  /** Milliseconds since the server last said anything. */
  silentForMs(nowMs: number = this.clock.now()): number {
    return Math.max(0, nowMs - this.lastHeardMs);
  }

  /**
   * The longest silence of a healthy stream plus the blind slack: past it, {@link blind} is true. In ms.
   */
  blindAfterMs(): number {
    return this.expectedSilenceMs + WATCH_BLIND_AFTER_MS;
  }

  /** True when the server has said nothing for longer than {@link blindAfterMs}. */
  blind(nowMs: number = this.clock.now()): boolean {
    return this.silentForMs(nowMs) > this.blindAfterMs();
  }

  /**
   * Watches one stream opened with `timeoutSeconds`: when the server says nothing for
   * `deadAfterMs` (default timeoutSeconds × 1000 + {@link WATCH_DEAD_AFTER_MS}), counted from the later of
   * now and the last sign of life, `onDead` runs once. Replaces a stream armed before. The opening counts
   * as a sign of life only once its headers arrive ({@link heard}).
   */
  arm(timeoutSeconds: number, onDead: () => void, deadAfterMs = timeoutSeconds * 1000 + WATCH_DEAD_AFTER_MS): void {
    this.disarm();
    this.expectedSilenceMs = timeoutSeconds * 1000;
    this.armed = { deadAfterMs, onDead };
    const openedMs = this.clock.now();
    this.schedule(deadAfterMs, openedMs);
  }

  /** Stops watching the current stream (it ended). */
  disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.armed = undefined;
  }

  private schedule(delayMs: number, openedMs: number): void {
    this.timer = this.clock.setTimeout(() => {
      const armed = this.armed;
      if (!armed) return;
      const quietMs = this.clock.now() - Math.max(this.lastHeardMs, openedMs);
      if (quietMs < armed.deadAfterMs) return this.schedule(armed.deadAfterMs - quietMs, openedMs);
      this.timer = undefined;
      this.armed = undefined;
      armed.onDead();
    }, delayMs);
  }
}
