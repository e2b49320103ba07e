/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's algorithm
 * (k8s.io/client-go/tools/leaderelection; kubernetes.io/docs/concepts/architecture/leases/).
 *
 * Expected flow:
 * 1. `run()` tries to acquire the lease every `retryPeriodMs` (with client-go's jitter, up to +120 %).
 * 2. Once acquired, `onStartedLeading(signal)` is called; the elector renews every `retryPeriodMs`.
 * 3. When no renewal succeeded within `renewDeadlineMs`, leadership is lost: `isLeader()` turns false at
 *    that instant, `signal` aborts, `onStoppedLeading('lost')` is called and `run()` resolves. The process
 *    is expected to exit non-zero (another replica may be writing soon). The same happens at once, before
 *    the deadline, when the leader reads the Lease (after a renewal refused with 409) and finds another
 *    holder in it: that holder may be writing already ({@link LeaderElector.lostWhy} says which).
 * 4. On a clean shutdown the owner drains its work while the elector keeps renewing, then calls
 *    `release()`: the lease is written with no holder and `leaseDurationSeconds: 1` (client-go's
 *    ReleaseOnCancel), so a standby takes over at its next retry instead of waiting a full lease duration.
 *
 * Guarantees (the reason for client-go's rules):
 * - **Remote clocks are never trusted.** `renewTime`/`acquireTime` are written for humans only and compared
 *   as opaque record content. A candidate takes over a held lease only after it has observed the same
 *   record, unchanged, for the record's own `leaseDurationSeconds`, measured on its local monotonic clock.
 * - **Optimistic concurrency:** every update carries the resourceVersion last read, so of two candidates
 *   racing for an expired lease exactly one wins (the other gets 409 Conflict).
 * - **`leaseTransitions`** is incremented on every change of holder.
 * - **Deposed before replaced.** The leader counts its renew deadline from when it *sent* its last
 *   successful renewal (at or before the moment the record changed on the server, hence at or before any
 *   candidate could observe it), and a candidate waits `leaseDurationSeconds` > renew deadline after
 *   observing it. (client-go counts the deadline from the start of each renew round, up to one retry period
 *   later; ours is stricter by that much.) `isLeader()` checks the deadline itself, so a late timer never
 *   extends leadership.
 *
 * - **No write of a deposed leader.** {@link LeaderElector.assertLeading} is the write gate of everything
 *   the leader writes besides the Lease (the Manager's writer consults it synchronously as each write
 *   goes out, lib/runtime/client/write-gate.ts): a write leaves only while the last successful renewal is
 *   younger than the renew deadline by the local monotonic clock, even when the deadline timer has not
 *   run yet (a process resumed after SIGSTOP or a long pause). A leader past its deadline sends no
 *   renewal either (client-go's renew loop stops at the deadline too): its Lease writes carry the same
 *   gate as a per-request `writeGate`, so a renewal already on its way when the process froze is not
 *   sent when it resumes (seen in test/integration/leader-fencing.test.ts as a late PUT → 409).
 *   A leader that has observed another holder of its Lease stops writing then, not at its renew
 *   deadline: the read that shows it closes the gate before any other write can follow.
 *
 * What a standby sends (all on the Lease; its other traffic is reads): a GET every retry period; a POST
 * only when that GET found no Lease (two candidates starting at once both may: one gets 409
 * AlreadyExists); a PUT only when it observed the record unchanged for the record's
 * `leaseDurationSeconds`, or with no holder (a renewal or a faster candidate makes it 409 Conflict). A
 * refused POST or PUT is the protocol working, logged at debug; no write of a standby is ever accepted
 * while another candidate holds a valid lease.
 *
 * Defaults: 15 s lease duration, 10 s renew deadline, 2 s retry period (client-go's and controller-runtime's).
 *
 * Errors: the constructor throws {@link LeaderElectionConfigError} unless
 * leaseDuration > renewDeadline > 1.2 × retryPeriod > 0 and the lease duration is a whole number of seconds.
 * API errors during acquire/renew are logged and retried, never thrown.
 */
import { brandClass } from '../../operator/brand.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { isApiError } from '../client/kube-client.js';
import { systemClock, type Clock, type TimerHandle } from '../clock.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { LEASES } from '../client/builtin-resources.js';
import { ResourceClient } from '../client/resource-client.js';
import { WriteFencedError, type WriteGate } from '../client/write-gate.js';
import { RuntimeError, objectPrefix } from '../runtime-error.js';

/** client-go's JitterFactor: acquire retries wait retryPeriod × (1 + random × 1.2). */
export const JITTER_FACTOR = 1.2;

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;


/** Why leadership ended: the renew deadline passed, `release()` gave the lease up, or `run()`'s signal aborted. */
export type StoppedLeadingReason = 'lost' | 'released' | 'stopped';

/** Sets `leader_election_master_status{name}`; see metrics.ts `OperatorMetrics.leaderElection()`. */
export interface LeaderElectionMetrics {
  leading(name: string, isLeading: boolean): void;
}

/** The subset of a Lease's spec the election reads and writes (coordination.k8s.io/v1 LeaseSpec). */
export interface LeaderElectionRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  /** RFC 3339 with microseconds; informational only. */
  readonly acquireTime?: string;
  /** RFC 3339 with microseconds; informational only. */
  readonly renewTime?: string;
  readonly leaseTransitions: number;
}

export interface LeaderElectorOptions {
  /** Client with get/create/update on leases in `namespace`. */
  readonly client: Pick<KubeClient, 'request'>;
  /** Namespace of the Lease (usually the operator's own). */
  readonly namespace: string;
  /** Name of the Lease (controller-runtime's LeaderElectionID), also the `name` label of the metric. */
  readonly name: string;
  /** Unique per process, e.g. `${hostname}_${randomUUID()}` (controller-runtime's choice). */
  readonly identity: string;
  /** How long a candidate waits after the last observed change before taking over. Whole seconds. @default 15000 ms */
  readonly leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up. @default 10000 ms */
  readonly renewDeadlineMs?: number;
  /** Wait between two tries (acquire, with jitter) or two renewals. @default 2000 ms */
  readonly retryPeriodMs?: number;
  /** Monotonic time and timers. @default systemClock */
  readonly clock?: Clock;
  /** Wall time written into renewTime/acquireTime (never read back as time). @default `() => new Date()` */
  readonly wallClock?: () => Date;
  /** Source of jitter in [0, 1). @default Math.random */
  readonly random?: () => number;
  readonly logger?: Logger;
  readonly metrics?: LeaderElectionMetrics;
  /** Called once when this process becomes leader; `signal` aborts when leadership ends for any reason. */
  readonly onStartedLeading: (signal: AbortSignal) => void;
  /**
   * Called once when leadership ends (only if it started). On `'lost'` the process should exit non-zero;
   * {@link LeaderElector.lostWhy} then says why.
   */
  readonly onStoppedLeading: (reason: StoppedLeadingReason) => void;
  /** Called when the observed holder changes to a non-empty identity (including this one). */
  readonly onNewLeader?: (identity: string) => void;
}

/** An invalid leader-election configuration; the message names the values. Step `leader-election`; branded. */
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

/**
 * This process held the Lease and lost it: no renewal succeeded within the renew deadline, so another
 * replica may be writing now. The Manager fences its writes with it (every request in flight is aborted
 * with this reason) and `runOperators` rejects with it once the workers stopped; the process should exit
 * non-zero at once, as controller-runtime's manager does. Step `leader-election`; branded.
 */
export class LeadershipLostError extends RuntimeError {
  static {
    brandClass(this, 'LeadershipLostError');
  }

  override readonly reason = 'LeadershipLost';
  override readonly step = 'leader-election';
  /** @param options.why why it was lost (the elector's `lostWhy`). @default 'not renewed within the renew deadline' */
  constructor(lease: { readonly namespace: string; readonly name: string }, options?: { cause?: unknown; why?: string }) {
    const object = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: lease.namespace, name: lease.name };
    super(`leader election: ${objectPrefix(object)}leadership lost (${options?.why ?? 'not renewed within the renew deadline'}); workers stopped, writes fenced`, { cause: options?.cause, objectRef: object });
    this.name = 'LeadershipLostError';
  }
}

/**
 * Checks client-go's constraints: leaseDuration > renewDeadline > 1.2 × retryPeriod, all positive, the
 * lease duration in whole seconds (the Lease stores `leaseDurationSeconds`), identity and names non-empty.
 * @throws LeaderElectionConfigError
 */
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

/**
 * One candidate for one Lease. See the module docs for the flow and guarantees.
 *
 * @example
 * const elector = new LeaderElector({ client, namespace: 'memcached-operator-system', name: 'memcached-operator',
 *   identity: `${hostname()}_${randomUUID()}`, onStartedLeading: (signal) => manager.startWorkers(signal),
 *   onStoppedLeading: (reason) => { if (reason === 'lost') process.exit(1); } });
 * void elector.run(shutdownSignal);
 * // on SIGTERM: await manager.drain(); await elector.release();
 */
export class LeaderElector {
  readonly name: string;
  readonly namespace: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;

  private readonly options: LeaderElectorOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;

  /** Last Lease object read or written (its resourceVersion is the base of the next update). */
  private lease: KubeObject | undefined;
  /** Last observed record and when (local clock) it was first seen in this form. */
  private observed: LeaderElectionRecord | undefined;
  private observedAt = 0;
  private reportedLeader = '';

  private leading = false;
  /** Local time at which the last successful acquire/renew request was sent. */
  private lastRenewSentAt = 0;
  private deadlineTimer: TimerHandle | undefined;
  private leadingAbort: AbortController | undefined;

  /** Why leadership was lost, once it was; see {@link lostWhy}. */
  private lostReason: string | undefined;

  private readonly stopAbort = new AbortController();
  private runPromise: Promise<void> | undefined;
  private released = false;

  constructor(options: LeaderElectorOptions) {
    this.options = options;
    this.name = options.name;
    this.namespace = options.namespace;
    this.identity = options.identity;
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (!options.identity) throw new LeaderElectionConfigError('identity must not be empty');
    if (!options.name || !options.namespace) throw new LeaderElectionConfigError('lease name and namespace must not be empty');
    validateLeaderElectionTiming(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    options.metrics?.leading(this.name, false);
  }

  /**
   * Why leadership was lost: `not renewed within the renew deadline (… ms)`, or `the Lease is held by
   * <identity>` (observed before the deadline). Undefined unless it was lost.
   */
  get lostWhy(): string | undefined {
    return this.lostReason;
  }

  /** True while this process holds the lease and its renew deadline has not passed. */
  isLeader(): boolean {
    return this.leading && this.clock.now() < this.lastRenewSentAt + this.renewDeadlineMs;
  }

  /**
   * The write gate of the leader's writes ({@link WriteGate}): returns while {@link isLeader} is true and
   * throws {@link WriteFencedError} otherwise, so a write leaves the process only while the last
   * successful renewal, by the local monotonic clock, is younger than the renew deadline. Synchronous.
   * When it finds the deadline passed before the deadline timer did (a process resumed after a freeze
   * runs I/O callbacks before timers), it deposes this process at once, as the timer would have:
   * `signal` aborts (the Manager's fence then aborts every request in flight) and
   * `onStoppedLeading('lost')` is called, before it throws.
   */
  assertLeading(method: string, path: string): void {
    if (this.isLeader()) return;
    const why = this.leading
      ? `leadership of ${this.leaseRef()} lost: no renewal within the renew deadline (${this.renewDeadlineMs} ms; last renewal sent ${Math.round(this.clock.now() - this.lastRenewSentAt)} ms ago)`
      : this.lostReason
        ? `leadership of ${this.leaseRef()} lost: ${this.lostReason}`
        : `this process does not hold the leader-election lease ${this.leaseRef()}`;
    if (this.leading && !this.released) this.stopLeading('lost');
    throw new WriteFencedError(method, path, why);
  }

  /** A {@link WriteGate} on {@link assertLeading}, for `ApiClientOptions.writeGate`. */
  writeGate(): WriteGate {
    return { assertMayWrite: (method, path) => this.assertLeading(method, path) };
  }

  /** The holder seen in the last observed record ('' when none). */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * Acquires, then renews, until leadership is lost, `release()` is called or `signal` aborts (then the
   * lease is left as is, like a crash: a standby takes over after the lease duration). Resolves then;
   * never rejects. Can be called once.
   */
  run(signal?: AbortSignal): Promise<void> {
    if (this.runPromise) throw new Error(`leader election ${this.namespace}/${this.name}: run() called twice`);
    if (signal) {
      if (signal.aborted) this.stopAbort.abort();
      else signal.addEventListener('abort', () => this.stopAbort.abort(), { once: true });
    }
    this.runPromise = this.loop();
    return this.runPromise;
  }

  /**
   * Stops renewing and, if this process still leads, gives the lease up (no holder,
   * `leaseDurationSeconds: 1`, as client-go's ReleaseOnCancel), then calls `onStoppedLeading('released')`.
   * Call it after the workers have drained. Idempotent; never rejects (a failed write is logged, and the
   * lease then expires on its own).
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.stopAbort.abort();
    await this.runPromise;
    if (!this.isLeader()) {
      if (this.leading) this.stopLeading('lost');
      return;
    }
    const stamp = this.nextStamp();
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: this.observed?.leaseTransitions ?? 0,
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.update(record);
        this.logger.info({ lease: this.leaseRef(), identity: this.identity }, 'released the leader-election lease');
        break;
      } catch (err) {
        if (attempt === 0 && isApiError(err, 409)) {
          // Someone touched the object; release only if we still hold it.
          const current = await this.get().catch(() => undefined);
          if (current && recordOf(current).holderIdentity === this.identity) continue;
        }
        this.logger.warn({ lease: this.leaseRef(), ...errorFields(err) }, 'could not release the leader-election lease; it will expire');
        break;
      }
    }
    this.stopLeading('released');
  }

  private async loop(): Promise<void> {
    const stop = this.stopAbort.signal;
    try {
      // Acquire.
      while (!stop.aborted) {
        if (await this.tryAcquireOrRenew(stop)) break;
        await sleep(this.clock, this.retryPeriodMs * (1 + (this.options.random ?? Math.random)() * JITTER_FACTOR), stop);
      }
      if (stop.aborted) return;
      this.startLeading();
      // Renew.
      while (this.leading && !stop.aborted) {
        await sleep(this.clock, this.retryPeriodMs, this.leadingAbort!.signal, stop);
        if (!this.leading || stop.aborted) break;
        // Past the deadline (e.g. resumed after a freeze, before the deadline timer ran), a renewal is
        // not sent: leadership already ended by the local clock (client-go's renew loop stops then too).
        if (!this.isLeader()) {
          if (!this.released) this.stopLeading('lost');
          break;
        }
        const sentAt = this.clock.now();
        const renewed = await this.tryAcquireOrRenew(this.leadingAbort!.signal);
        if (renewed && this.leading) {
          this.lastRenewSentAt = sentAt;
          this.armDeadline();
        } else if (this.leading && !this.isLeader() && !this.released) {
          this.stopLeading('lost');
        }
      }
    } catch (err) {
      this.logger.error({ lease: this.leaseRef(), ...errorFields(err) }, 'leader election failed');
    } finally {
      if (this.leading && !this.released) this.stopLeading(this.isLeader() ? 'stopped' : 'lost');
    }
  }

  /**
   * One round of client-go's tryAcquireOrRenew. True when this process holds the lease after it.
   * Never throws: API errors are logged and count as a failed round.
   */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const sentAt = this.clock.now();
    const now = this.nextStamp();
    const desired = (old: LeaderElectionRecord | undefined): LeaderElectionRecord => ({
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      acquireTime: this.leading && old ? old.acquireTime : now,
      renewTime: now,
      leaseTransitions: old ? (this.leading ? old.leaseTransitions : old.leaseTransitions + 1) : 0,
    });
    try {
      // Fast path: the leader renews on top of what it last wrote (not once it has seen another holder).
      if (this.leading && this.lease && this.observed?.holderIdentity === this.identity) {
        try {
          await this.update(desired(this.observed), signal);
          return true;
        } catch (err) {
          if (signal.aborted) return false;
          this.logger.info({ lease: this.leaseRef(), ...errorFields(err) }, 'lease renewal failed, rereading the lease');
        }
      }

      let current: KubeObject;
      try {
        current = await this.get(signal);
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
        await this.create(desired(undefined), signal);
        if (!this.leading) this.lastRenewSentAt = sentAt;
        return true;
      }
      const old = recordOf(current);
      this.lease = current;
      if (!this.observed || !sameRecord(old, this.observed)) {
        this.observed = old;
        this.observedAt = this.clock.now();
        this.reportTransition();
      }
      const heldByOther = old.holderIdentity !== '' && old.holderIdentity !== this.identity;
      const valid = this.clock.now() < this.observedAt + old.leaseDurationSeconds * 1000;
      if (!this.leading && old.holderIdentity !== '' && valid) return false;
      if (this.leading && heldByOther) {
        // Another holder may be writing already: stop now, not at this process's renew deadline.
        if (!this.released) this.stopLeading('lost', `the Lease is held by ${old.holderIdentity}`);
        return false;
      }
      await this.update(desired(old), signal);
      if (!this.leading) this.lastRenewSentAt = sentAt;
      return true;
    } catch (err) {
      if (isApiError(err, 409)) this.logger.debug({ lease: this.leaseRef(), identity: this.identity }, 'lost a lease update race');
      else if (!signal.aborted) this.logger.warn({ lease: this.leaseRef(), identity: this.identity, ...errorFields(err) }, 'could not acquire or renew the lease');
      return false;
    }
  }

  private startLeading(): void {
    this.leading = true;
    this.leadingAbort = new AbortController();
    this.armDeadline();
    this.options.metrics?.leading(this.name, true);
    this.logger.info({ lease: this.leaseRef(), identity: this.identity }, 'became leader');
    this.options.onStartedLeading(this.leadingAbort.signal);
  }

  private stopLeading(reason: StoppedLeadingReason, why?: string): void {
    if (!this.leading) return;
    this.leading = false;
    if (reason === 'lost') this.lostReason = why ?? `not renewed within the renew deadline (${this.renewDeadlineMs} ms)`;
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.leadingAbort?.abort();
    this.options.metrics?.leading(this.name, false);
    const log = reason === 'lost' ? this.logger.error.bind(this.logger) : this.logger.info.bind(this.logger);
    log({ lease: this.leaseRef(), identity: this.identity, reason }, reason === 'lost' ? `leadership lost: ${this.lostReason}` : 'stopped leading');
    this.options.onStoppedLeading(reason);
  }

  /** (Re)arms the timer that deposes this process at lastRenewSentAt + renewDeadline. */
  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    const dueIn = this.lastRenewSentAt + this.renewDeadlineMs - this.clock.now();
    this.deadlineTimer = this.clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      if (!this.leading || this.released) return;
      // Timers have millisecond resolution and may fire a fraction early: check again then.
      if (this.isLeader()) this.armDeadline();
      else this.stopLeading('lost');
    }, Math.max(1, dueIn));
  }

  private reportTransition(): void {
    const holder = this.observed?.holderIdentity ?? '';
    if (holder === '' || holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    this.logger.info({ lease: this.leaseRef(), leader: holder }, 'new leader observed');
    this.options.onNewLeader?.(holder);
  }

  private async get(signal?: AbortSignal): Promise<KubeObject> {
    return new ResourceClient(this.options.client).get(LEASES, this.namespace, this.name, { signal });
  }

  private async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: this.namespace }, spec: specOf(record) };
    const created = await new ResourceClient(this.options.client).create(LEASES, lease, { signal, writeGate: this.renewalGate() });
    this.remember(created);
  }

  /**
   * The gate of a Lease write made while leading (a renewal, or the release): {@link writeGate}, checked
   * when the bytes are handed to the socket, so a renewal that was on its way when the process froze is
   * not sent when it resumes past its renew deadline (it would only meet a 409, but it would still be a
   * write of a deposed leader). None while acquiring: a standby does not lead yet.
   */
  private renewalGate(): WriteGate | undefined {
    return this.leading ? this.writeGate() : undefined;
  }

  /** PUT with the resourceVersion last read: a concurrent change makes it fail with 409. */
  private async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const base = this.lease;
    if (!base) throw new Error('no lease read yet');
    const body = { ...base, spec: { ...((base.spec as object | undefined) ?? {}), ...specOf(record) } };
    if (record.holderIdentity === '') delete (body.spec as Record<string, unknown>).holderIdentity;
    const updated = await new ResourceClient(this.options.client).update(LEASES, body, { signal, writeGate: this.renewalGate() });
    this.remember(updated);
  }

  private remember(lease: KubeObject): void {
    this.lease = lease;
    this.observed = recordOf(lease);
    this.observedAt = this.clock.now();
    this.reportTransition();
  }

  /**
   * The wall time for renewTime/acquireTime, made to differ from the last observed renewTime: a renewal
   * must change the record, or standbys (and the API server, which skips no-op updates) see no change.
   */
  private nextStamp(): string {
    const stamp = microTime(this.wallNow());
    const previous = this.observed?.renewTime;
    if (previous === undefined || !MICRO_TIME.test(previous) || stamp > previous) return stamp;
    return addMicrosecond(previous);
  }

  private wallNow(): Date {
    return this.options.wallClock?.() ?? new Date();
  }

  private leaseRef(): string {
    return `${this.namespace}/${this.name}`;
  }
}

/** The election record of a Lease object; missing fields read as empty/zero. */
export function recordOf(lease: KubeObject): LeaderElectionRecord {
  const spec = (lease.spec ?? {}) as Record<string, unknown>;
  return {
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
    leaseDurationSeconds: typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 0,
    acquireTime: typeof spec.acquireTime === 'string' ? spec.acquireTime : undefined,
    renewTime: typeof spec.renewTime === 'string' ? spec.renewTime : undefined,
    leaseTransitions: typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0,
  };
}

function specOf(record: LeaderElectionRecord): Record<string, unknown> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime,
    renewTime: record.renewTime,
    leaseTransitions: record.leaseTransitions,
  };
}

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** `2026-11-29T20:28:16.123999Z` → `2026-11-29T20:28:16.124000Z`. */
function addMicrosecond(stamp: string): string {
  const micros = Number(stamp.slice(-4, -1)) + 1;
  const ms = Date.parse(stamp.slice(0, -4) + 'Z') + Math.floor(micros / 1000);
  return new Date(ms).toISOString().replace(/Z$/, String(micros % 1000).padStart(3, '0') + 'Z');
}

/** Records compared as opaque content: any difference counts as a change, timestamps included. */
function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/** Resolves after `ms` on `clock`, or as soon as any signal aborts. */
function sleep(clock: Clock, ms: number, ...signals: AbortSignal[]): Promise<void> {
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
