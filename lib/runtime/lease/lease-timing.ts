/**
 * The timing of a coordination.k8s.io/v1 Lease, client-go's (k8s.io/client-go/tools/leaderelection):
 * leaseDuration > renewDeadline > 1.2 × retryPeriod > 0, the lease duration in whole seconds (the Lease
 * stores `leaseDurationSeconds`); defaults 15 s / 10 s / 2 s (client-go's and controller-runtime's); and
 * the MicroTime stamps a Lease records (`renewTime`, `acquireTime`: for humans, never read back as time).
 * Used by the Lease holder (lease-holder.ts) and checked up front by `runOperators`.
 */
import { brandClass } from '../../operator/brand.js';
import type { Clock } from '../clock.js';
import { RuntimeError } from '../runtime-error.js';

/** client-go's JitterFactor: acquire retries wait retryPeriod × (1 + random × 1.2). */
export const JITTER_FACTOR = 1.2;
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

/** An invalid leader-election (or member Lease) configuration; the message names the values. Step `leader-election`; branded. */
export class LeaderElectionConfigError extends RuntimeError {
  static {
    brandClass(this, 'LeaderElectionConfigError');
  }

  override readonly reason = 'InvalidLeaderElectionConfig';
  override readonly step = 'leader-election';
  constructor(message: string) {
    super(`leader election: ${message}`);
    this.name = 'LeaderElectionConfigError';
  }
}

/** Checks the timing (module docs). @throws LeaderElectionConfigError naming the values */
export function validateLeaderElectionTiming(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): void {
  const values = `leaseDuration=${leaseDurationMs}ms, renewDeadline=${renewDeadlineMs}ms, retryPeriod=${retryPeriodMs}ms`;
  for (const [label, value] of [['leaseDuration', leaseDurationMs], ['renewDeadline', renewDeadlineMs], ['retryPeriod', retryPeriodMs]] as const) {
    if (!Number.isFinite(value) || value <= 0) throw new LeaderElectionConfigError(`${label} must be > 0 (${values})`);
  }
  if (!(leaseDurationMs > renewDeadlineMs)) throw new LeaderElectionConfigError(`leaseDuration must be greater than renewDeadline (${values})`);
  if (!(renewDeadlineMs > JITTER_FACTOR * retryPeriodMs)) {
    throw new LeaderElectionConfigError(`renewDeadline must be greater than ${JITTER_FACTOR} × retryPeriod = ${JITTER_FACTOR * retryPeriodMs}ms (${values})`);
  }
  if (leaseDurationMs % 1000 !== 0) throw new LeaderElectionConfigError(`leaseDuration must be a whole number of seconds, the Lease stores leaseDurationSeconds (${values})`);
}

/** Formats a Date as a Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`). */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** `now` as a MicroTime, later than `previous` (…16.123999Z → …16.124000Z): a renewal must change the record. */
export function nextMicroTime(now: Date, previous: string | undefined): string {
  const stamp = microTime(now);
  if (previous === undefined || !MICRO_TIME.test(previous) || stamp > previous) return stamp;
  const micros = Number(previous.slice(-4, -1)) + 1;
  const ms = Date.parse(previous.slice(0, -4) + 'Z') + Math.floor(micros / 1000);
  return new Date(ms).toISOString().replace(/Z$/, String(micros % 1000).padStart(3, '0') + 'Z');
}

/** The timing and clocks of a Lease's holder and of those observing it (client-go's LeaderElectionConfig). */
export interface LeaseTiming {
  /** How long the others wait, after they last saw the Lease change, before taking it over. Whole seconds. @default 15000 ms */
  readonly leaseDurationMs?: number;
  /** How long the holder keeps holding without a successful renewal. @default 10000 ms */
  readonly renewDeadlineMs?: number;
  /** Wait between two tries or two renewals. @default 2000 ms */
  readonly retryPeriodMs?: number;
  /** Monotonic time and timers. @default systemClock */
  readonly clock?: Clock;
  /** Wall time written into renewTime/acquireTime (never read back as time). @default `() => new Date()` */
  readonly wallClock?: () => Date;
}
