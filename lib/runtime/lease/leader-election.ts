/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's algorithm
 * (k8s.io/client-go/tools/leaderelection; kubernetes.io/docs/concepts/architecture/leases/). The renew
 * loop and deadline, the write fence, "deposed before replaced" and "take over only an expired Lease" are
 * the {@link LeaseHolder}'s (lease-holder.ts); this file keeps the election's policy:
 * 1. `run()` tries to acquire every `retryPeriodMs` (client-go's jitter, up to +120 %): a GET, a POST when
 *    there is none, a PUT (with the resourceVersion read: of two racing candidates one wins, the other's
 *    409 is logged at debug) when the Lease is expired. `leaseTransitions` grows on each change of holder.
 * 2. Once acquired, `onStartedLeading(signal)` is called and the holder renews every `retryPeriodMs`.
 * 3. Leadership is lost at the renew deadline or when a read shows another holder: `isLeader()`
 *    turns false, `signal` aborts, `onStoppedLeading('lost')` is called ({@link LeaderElector.lostWhy}
 *    says why), `run()` resolves. The process is expected to exit non-zero.
 * 4. On a clean shutdown the owner drains its work, then calls `release()`: the Lease is written with no
 *    holder and `leaseDurationSeconds: 1` (client-go's ReleaseOnCancel), so a standby takes over at once.
 *
 * Errors: the constructor throws {@link LeaderElectionConfigError} for bad timings (lease-timing.ts) or
 * empty names. API errors during acquire/renew are logged and retried, never thrown.
 */
import { brandClass } from '../../operator/brand.js';
import { isApiError, type KubeClient, type KubeObject } from '../client/kube-client.js';
import type { WriteGate } from '../client/write-gate.js';
import { sleepOn } from '../clock.js';
import { LeaseHolder, leaseRecord, type LeaseRecord } from './lease-holder.js';
import { JITTER_FACTOR, LeaderElectionConfigError, type LeaseTiming } from './lease-timing.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { RuntimeError, objectPrefix } from '../runtime-error.js';

/** Why leadership ended: the renew deadline passed, `release()` gave the lease up, or `run()`'s signal aborted. */
export type StoppedLeadingReason = 'lost' | 'released' | 'stopped';

/** Sets `leader_election_master_status{name}`; see metrics.ts `OperatorMetrics.leaderElection()`. */
export interface LeaderElectionMetrics {
  leading(name: string, isLeading: boolean): void;
}

export interface LeaderElectorOptions extends LeaseTiming {
  /** Client with get/create/update on leases in `namespace`. */
  readonly client: Pick<KubeClient, 'request'>;
  /** Namespace of the Lease (usually the operator's own). */
  readonly namespace: string;
  /** Name of the Lease (controller-runtime's LeaderElectionID), also the `name` label of the metric. */
  readonly name: string;
  /** Unique per process, e.g. `${hostname}_${randomUUID()}` (controller-runtime's choice). */
  readonly identity: string;
  /** Source of jitter in [0, 1). @default Math.random */
  readonly random?: () => number;
  readonly logger?: Logger;
  readonly metrics?: LeaderElectionMetrics;
  /** Called once when this process becomes leader; `signal` aborts when leadership ends for any reason. */
  readonly onStartedLeading: (signal: AbortSignal) => void;
  /** Called once when leadership ends (only if it started). On `'lost'` the process should exit non-zero. */
  readonly onStoppedLeading: (reason: StoppedLeadingReason) => void;
  /** Called when the observed holder changes to a non-empty identity (including this one). */
  readonly onNewLeader?: (identity: string) => void;
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
 * One candidate for one Lease (module docs).
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
  private readonly holder: LeaseHolder;
  private readonly logger: Logger;
  private reportedLeader = '';
  private leadingAbort: AbortController | undefined;
  private readonly stopAbort = new AbortController();
  private runPromise: Promise<void> | undefined;

  constructor(options: LeaderElectorOptions) {
    this.options = options;
    if (!options.identity) throw new LeaderElectionConfigError('identity must not be empty');
    if (!options.name || !options.namespace) throw new LeaderElectionConfigError('lease name and namespace must not be empty');
    this.holder = new LeaseHolder({ ...options, title: 'leadership', leaseTitle: 'the leader-election lease', onLost: () => this.stopped('lost') });
    ({ name: this.name, namespace: this.namespace, identity: this.identity } = options);
    ({ leaseDurationMs: this.leaseDurationMs, renewDeadlineMs: this.renewDeadlineMs, retryPeriodMs: this.retryPeriodMs } = this.holder);
    this.logger = options.logger ?? silentLogger;
    options.metrics?.leading(this.name, false);
  }

  /** Why leadership was lost: `not renewed within the renew deadline (… ms)` or `the Lease is held by <identity>`. */
  get lostWhy(): string | undefined {
    return this.holder.lostWhy;
  }

  /** True while this process holds the lease and its renew deadline has not passed. */
  isLeader(): boolean {
    return this.holder.isHolding();
  }

  /** The leader's write gate, synchronous: see {@link LeaseHolder.assertMayWrite} (past the deadline it deposes first). @throws WriteFencedError */
  assertLeading(method: string, path: string): void {
    this.holder.assertMayWrite(method, path);
  }

  /** The {@link WriteGate} of {@link assertLeading}, for `ApiClientOptions.writeGate`. */
  writeGate(): WriteGate {
    return this.holder;
  }

  /** The holder seen in the last observed record ('' when none). */
  getLeader(): string {
    return leaseRecord(this.holder.lease).holderIdentity;
  }

  /**
   * Acquires, then renews, until leadership is lost, `release()` is called or `signal` aborts (then the
   * lease is left as is, like a crash). Resolves then; never rejects. Can be called once.
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
   * Stops renewing and, if this process still leads, gives the lease up (module docs), then calls
   * `onStoppedLeading('released')`. Call it after the workers drained. Idempotent; never rejects (a
   * failed write is logged, and the lease then expires on its own).
   */
  async release(): Promise<void> {
    if (this.holder.quiet) return;
    this.holder.quiet = true;
    this.stopAbort.abort();
    await this.runPromise;
    if (!this.isLeader()) return this.holder.lose();
    const stamp = this.holder.stamp();
    const record = { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.update(record);
        this.logger.info({ lease: this.holder.ref, identity: this.identity }, 'released the leader-election lease');
        break;
      } catch (err) {
        if (attempt === 0 && isApiError(err, 409)) {
          // Someone touched the object; release only if we still hold it.
          const current = await this.holder.get().catch(() => undefined);
          if (current && leaseRecord(current).holderIdentity === this.identity) continue;
        }
        this.logger.warn({ lease: this.holder.ref, ...errorFields(err) }, 'could not release the leader-election lease; it will expire');
        break;
      }
    }
    this.stopLeading('released');
  }

  private async loop(): Promise<void> {
    const stop = this.stopAbort.signal;
    const holder = this.holder;
    try {
      for (;;) {
        if (stop.aborted) return;
        const sentAt = holder.clock.now();
        if (await this.tryAcquireOrRenew(stop)) {
          if (stop.aborted) return;
          holder.renewed(sentAt);
          break;
        }
        await sleepOn(holder.clock, this.retryPeriodMs * (1 + (this.options.random ?? Math.random)() * JITTER_FACTOR), stop);
      }
      const leading = (this.leadingAbort = new AbortController()).signal;
      this.options.metrics?.leading(this.name, true);
      this.logger.info({ lease: holder.ref, identity: this.identity }, 'became leader');
      this.options.onStartedLeading(leading);
      await holder.renewLoop(() => this.tryAcquireOrRenew(leading), [leading, stop]);
    } catch (err) {
      this.logger.error({ lease: holder.ref, ...errorFields(err) }, 'leader election failed');
    } finally {
      if (holder.holding && !holder.quiet) this.stopLeading(holder.isHolding() ? 'stopped' : 'lost');
    }
  }

  /** One round of client-go's tryAcquireOrRenew: true when this process holds the lease after it. Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const leading = this.holder.holding;
    const renewTime = this.holder.stamp();
    const desired = (old: LeaseRecord | undefined) => ({
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      acquireTime: leading && old ? old.acquireTime : renewTime,
      renewTime,
      leaseTransitions: old ? (leading ? old.leaseTransitions : old.leaseTransitions + 1) : 0,
    });
    try {
      // Fast path: the leader renews on top of what it last wrote (not once it has seen another holder).
      const last = leaseRecord(this.holder.lease);
      if (leading && last.holderIdentity === this.identity) {
        try {
          await this.update(desired(last), signal);
          return true;
        } catch (err) {
          if (signal.aborted) return false;
          this.logger.info({ lease: this.holder.ref, ...errorFields(err) }, 'lease renewal failed, rereading the lease');
        }
      }
      let current;
      try {
        current = await this.holder.get(signal);
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
        this.remember(await this.holder.create(this.holder.body(desired(undefined)), signal));
        return true;
      }
      const old = leaseRecord(current);
      if (this.remember(current) && !this.holder.holding) return false;
      // Another holder may be writing already: the holder stops now, not at its renew deadline.
      if (this.holder.holding && old.holderIdentity !== '' && !this.holder.observeOwn(old.holderIdentity)) return false;
      await this.update(desired(old), signal);
      return true;
    } catch (err) {
      if (isApiError(err, 409)) this.logger.debug({ lease: this.holder.ref, identity: this.identity }, 'lost a lease update race');
      else if (!signal.aborted) this.logger.warn({ lease: this.holder.ref, identity: this.identity, ...errorFields(err) }, 'could not acquire or renew the lease');
      return false;
    }
  }

  /** Leadership ends without a loss ('lost' goes through the holder, which calls {@link stopped}). */
  private stopLeading(reason: StoppedLeadingReason): void {
    if (reason === 'lost') return this.holder.lose();
    if (!this.holder.holding) return;
    this.holder.end();
    this.stopped(reason);
  }

  private stopped(reason: StoppedLeadingReason): void {
    this.leadingAbort?.abort();
    this.options.metrics?.leading(this.name, false);
    const log = reason === 'lost' ? this.logger.error.bind(this.logger) : this.logger.info.bind(this.logger);
    log({ lease: this.holder.ref, identity: this.identity, reason }, reason === 'lost' ? `leadership lost: ${this.lostWhy}` : 'stopped leading');
    this.options.onStoppedLeading(reason);
  }

  /** PUT with the resourceVersion last read: a concurrent change makes it fail with 409. */
  private async update(record: Partial<LeaseRecord>, signal?: AbortSignal): Promise<void> {
    if (!this.holder.lease) throw new Error('no lease read yet');
    this.remember(await this.holder.update(this.holder.body(record), signal));
  }

  /** Records a read or write of the Lease and reports a new holder. @returns true while it may not be taken over ({@link LeaseHolder.observedLive}) */
  private remember(lease: KubeObject): boolean {
    const record = leaseRecord(lease);
    const live = this.holder.observedLive(record.holderIdentity, record.leaseDurationSeconds, JSON.stringify(record));
    const holder = record.holderIdentity;
    if (holder !== '' && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      this.logger.info({ lease: this.holder.ref, leader: holder }, 'new leader observed');
      this.options.onNewLeader?.(holder);
    }
    return live;
  }
}
