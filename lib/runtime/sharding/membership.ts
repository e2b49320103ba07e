/**
 * Membership of one replica in a sharding ring: its own coordination.k8s.io/v1 Lease, renewed with
 * client-go's leader-election timing (lib/runtime/ops/leader-election.ts), and the bucket hand-over
 * (handover.ts) run on each renewal from a read of every member's Lease.
 *
 * The Lease of a member (kubernetes.io/docs/concepts/architecture/leases/):
 * - `metadata.name`: the member's name (the pod's name; unique per process);
 * - label `sharding.cdk8s.io/ring: <ring>` (the operator's ring), by which members list each other;
 * - annotations `sharding.cdk8s.io/bucket-count` and `sharding.cdk8s.io/hash` (bucket-hash.ts's
 *   version): members with other values refuse to share the ring;
 * - annotations `sharding.cdk8s.io/held` and `sharding.cdk8s.io/claimed`: bucket numbers, comma-separated;
 * - `spec.holderIdentity` (the process), `leaseDurationSeconds`, `acquireTime`, `renewTime`.
 *
 * Expected flow:
 * 1. `start()` creates the Lease (holding nothing), lists the ring and checks that every live member
 *    agrees on the bucket count and hash version, and renews once: a missing permission or namespace
 *    fails here, at start-up, with a {@link ShardMembershipError} naming it. Then a renewal round runs
 *    every `retryPeriodMs`: LIST the ring (a consistent read), plan (handover.ts), call `onChange`, PUT
 *    the own Lease with the new held/claimed buckets and a new `renewTime`. When the Lease already exists
 *    with this process's identity (a replica restarted under the same pod name after it lost
 *    membership), it is taken back once it stayed unchanged for its lease duration, watched from here;
 *    one renewed meanwhile (a live process with the same name) is refused.
 * 2. When no renewal succeeded within `renewDeadlineMs` (counted from the start of the last successful
 *    round), the member holds nothing from that instant ({@link holds} is false), `onLost` is called and
 *    the process should exit non-zero: the others take its buckets once they observed its Lease
 *    unchanged for the lease duration, which is longer (client-go's "deposed before replaced").
 * 3. `stop()` (after the caller drained its reconciles) deletes the Lease: the others take its buckets at
 *    their next round instead of waiting for it to expire.
 * 4. The Lease of a member that stopped without deleting it (killed, its node lost) is deleted by the
 *    others once it has been expired for another lease duration, with its resourceVersion as a
 *    precondition (a renewal in between makes the delete fail): pod names are unique, so leftovers
 *    would otherwise pile up. Its holds were already ignored since it expired.
 *
 * Errors: the constructor throws {@link LeaderElectionConfigError} for bad timings and
 * {@link ShardingConfigError} for a bad bucket count or empty names; `start()` rejects with
 * {@link ShardMembershipError}. Renewal errors after start are logged and retried until the deadline.
 */
import { brandClass } from '../../operator/brand.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { isApiError } from '../client/kube-client.js';
import { LEASES } from '../client/builtin-resources.js';
import { ResourceClient } from '../client/resource-client.js';
import { resourcePath } from '../client/resource-path.js';
import { WriteFencedError, type WriteGate } from '../client/write-gate.js';
import { systemClock, type Clock, type TimerHandle } from '../clock.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  microTime,
  validateLeaderElectionTiming,
} from '../ops/leader-election.js';
import { RuntimeError } from '../runtime-error.js';
import { DEFAULT_BUCKET_COUNT, SHARD_HASH_VERSION, ShardingConfigError, validateBucketCount } from './bucket-hash.js';
import { planBuckets, type PublishedBuckets } from './handover.js';
import { LeaseObserver } from './lease-observer.js';

/** The label naming a member Lease's ring. */
export const RING_LABEL = 'sharding.cdk8s.io/ring';
export const BUCKET_COUNT_ANNOTATION = 'sharding.cdk8s.io/bucket-count';
export const HASH_ANNOTATION = 'sharding.cdk8s.io/hash';
export const HELD_ANNOTATION = 'sharding.cdk8s.io/held';
export const CLAIMED_ANNOTATION = 'sharding.cdk8s.io/claimed';


/**
 * A replica that cannot be a member of its ring: its Lease cannot be created, read or renewed (a missing
 * permission or namespace: the message names it) — reason `LeaseNotWritable`; a live member records
 * another bucket count or hash version — reason `RingMismatch`; its Lease was not renewed within the renew
 * deadline while running (the Manager fences its writes with it) — reason `MembershipLost`. Step `sharding`; branded.
 */
export class ShardMembershipError extends RuntimeError {
  static {
    brandClass(this, 'ShardMembershipError');
  }

  override readonly step = 'sharding';
  constructor(
    override readonly reason: 'LeaseNotWritable' | 'RingMismatch' | 'MembershipLost',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`sharding: ${message}`, options);
    this.name = 'ShardMembershipError';
  }
}

/** `buckets_owned` and `members` gauges of a ring (metrics.ts). */
export interface ShardMetrics {
  bucketsOwned(ring: string, count: number): void;
  members(ring: string, count: number): void;
}

/** What changed in one round; see {@link ShardMemberOptions.onChange}. */
export interface ShardChange {
  /** Newly held: their CRs may be reconciled now (enqueue them). */
  readonly taken: readonly number[];
  /** No longer held (no reconcile of them was in flight): drop them. */
  readonly released: readonly number[];
  /** Held but moving away, with reconciles in flight: admit no new work for them. */
  readonly draining: readonly number[];
  /** Every bucket held after the round. */
  readonly held: ReadonlySet<number>;
  /** Every bucket claimed after the round (to be taken once ready: start caching its children). */
  readonly claimed: ReadonlySet<number>;
}

export interface ShardMemberOptions {
  /** Client with get, list, create, update and delete on leases in `namespace`. */
  readonly client: Pick<KubeClient, 'request'>;
  /** Namespace of the ring's Leases (the operator's own). */
  readonly namespace: string;
  /** The ring: every replica of one operator Deployment names the same (a label value). */
  readonly ring: string;
  /** This member's name and its Lease's name, unique in the ring (the pod's name). */
  readonly member: string;
  /** This process, written as `holderIdentity`. @default `member` */
  readonly identity?: string;
  /** @default 32 ({@link DEFAULT_BUCKET_COUNT}) */
  readonly bucketCount?: number;
  /** How long the others wait, after they last saw this Lease change, before taking its buckets. Whole seconds. @default 15000 ms */
  readonly leaseDurationMs?: number;
  /** How long this member keeps working without a successful renewal. @default 10000 ms */
  readonly renewDeadlineMs?: number;
  /** Time between two rounds. @default 2000 ms */
  readonly retryPeriodMs?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Written into renewTime/acquireTime, never read back. @default `() => new Date()` */
  readonly wallClock?: () => Date;
  readonly logger?: Logger;
  readonly metrics?: ShardMetrics;
  /** The held buckets with reconciles in flight (not released until they finish). @default none */
  readonly busy?: () => ReadonlySet<number>;
  /**
   * True when this replica's caches of a claimed bucket are synced; a claimed bucket is taken only then
   * ({@link PlanInput.ready}). @default every bucket is ready
   */
  readonly ready?: (bucket: number) => boolean;
  /** Called after each round's plan, before its write. */
  readonly onChange?: (change: ShardChange) => void;
  /** Called once when the renew deadline passed: the process should exit non-zero. */
  readonly onLost?: () => void;
}

/** One member's record as published in its Lease. */
interface MemberLease extends PublishedBuckets {
  readonly lease: KubeObject;
  readonly bucketCount: string | undefined;
  readonly hash: string | undefined;
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
}

/**
 * One replica's membership in a ring. See the module docs for the flow.
 *
 * @example
 * const member = new ShardMember({ client, namespace: 'app-system', ring: 'app', member: process.env.POD_NAME!,
 *   busy: () => inFlightBuckets(), onChange: (c) => controller.setBuckets(c), onLost: () => process.exit(1) });
 * await member.start(); // throws ShardMembershipError naming a missing permission or namespace
 * // on SIGTERM: drain, then await member.stop();
 */
export class ShardMember {
  readonly namespace: string;
  readonly ring: string;
  readonly member: string;
  readonly identity: string;
  readonly bucketCount: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;

  private readonly options: ShardMemberOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly observer = new LeaseObserver();
  private held = new Set<number>();
  private claimed = new Set<number>();
  private liveMembers: string[] = [];
  private ownLease: KubeObject | undefined;
  private lastRenewSentAt = Number.NEGATIVE_INFINITY;
  private lost = false;
  private rounds = 0;
  private deadlineTimer: TimerHandle | undefined;
  private readonly stopAbort = new AbortController();
  private loopPromise: Promise<void> | undefined;
  private readonly reportedMismatch = new Set<string>();
  /** Start-up ring check: the first content seen of each mismatching member's Lease. */
  private readonly firstSeen = new Map<string, string>();
  private acquireTime = '';
  private stamps = 0;

  constructor(options: ShardMemberOptions) {
    this.options = options;
    this.namespace = options.namespace;
    this.ring = options.ring;
    this.member = options.member;
    this.identity = options.identity ?? options.member;
    this.bucketCount = options.bucketCount ?? DEFAULT_BUCKET_COUNT;
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    if (!options.namespace || !options.ring || !options.member) throw new ShardingConfigError('namespace, ring and member must not be empty');
    validateBucketCount(this.bucketCount);
    validateLeaderElectionTiming(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
  }

  /** True while this member holds `bucket` and its renew deadline has not passed. */
  holds(bucket: number): boolean {
    return this.isRenewed() && this.held.has(bucket);
  }

  /** The buckets held now (empty past the renew deadline), sorted. */
  heldBuckets(): number[] {
    return this.isRenewed() ? [...this.held].sort((a, b) => a - b) : [];
  }

  /** The live, compatible members seen in the last round (this one included), sorted. */
  members(): readonly string[] {
    return this.liveMembers;
  }

  /** True once a round has run since start (the member knows its buckets). */
  hasRun(): boolean {
    return this.rounds > 0;
  }

  /**
   * A {@link WriteGate}: a write leaves only while this member's last successful renewal is younger than
   * the renew deadline by the local monotonic clock; otherwise {@link WriteFencedError} (and the member
   * is deposed at once, as when its deadline timer fires).
   */
  writeGate(): WriteGate {
    return {
      assertMayWrite: (method, path) => {
        if (this.isRenewed()) return;
        if (this.rounds > 0 && !this.lost) this.loseMembership();
        throw new WriteFencedError(method, path, `sharding: the Lease ${this.leaseRef()} was not renewed within the renew deadline (${this.renewDeadlineMs} ms)`);
      },
    };
  }

  /**
   * Creates this member's Lease, checks the ring, renews once, then keeps renewing in the background
   * until {@link stop} (or `signal`).
   * @throws ShardMembershipError naming the missing permission or namespace, or the mismatching member
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.loopPromise) throw new Error(`sharding: member ${this.member} started twice`);
    if (signal) signal.addEventListener('abort', () => this.stopAbort.abort(), { once: true });
    await this.createLease();
    try {
      await this.checkRing();
      const sentAt = this.clock.now();
      await this.round(sentAt, true);
    } catch (err) {
      await this.deleteLease();
      throw err;
    }
    this.loopPromise = this.loop();
  }

  /**
   * Stops renewing and deletes this member's Lease, so that the others take its buckets at once. Call it
   * after this replica's reconciles finished. Never rejects (a failed delete is logged; the Lease then
   * expires on its own).
   */
  async stop(): Promise<void> {
    this.stopAbort.abort();
    await this.loopPromise;
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    this.held = new Set();
    this.claimed = new Set();
    this.options.metrics?.bucketsOwned(this.ring, 0);
    if (!this.lost) await this.deleteLease();
  }

  private isRenewed(): boolean {
    return !this.lost && this.clock.now() < this.lastRenewSentAt + this.renewDeadlineMs;
  }

  private async loop(): Promise<void> {
    const stop = this.stopAbort.signal;
    while (!stop.aborted && !this.lost) {
      await sleep(this.clock, this.retryPeriodMs, stop);
      if (stop.aborted || this.lost) break;
      if (!this.isRenewed()) {
        this.loseMembership();
        break;
      }
      const sentAt = this.clock.now();
      try {
        await this.round(sentAt, false);
      } catch (err) {
        if (!stop.aborted) this.logger.warn({ lease: this.leaseRef(), ...errorFields(err) }, 'sharding: could not renew the member Lease; retrying');
      }
    }
  }

  /** One round: LIST, plan, tell, PUT. `strict`: errors are start-up errors (named). */
  private async round(sentAt: number, strict: boolean): Promise<void> {
    const leases = await this.listRing(strict);
    const now = this.clock.now();
    const records = leases.map((lease) => memberLease(lease));
    this.observer.observe(
      records.map((r) => ({ member: r.member, holderIdentity: r.holderIdentity, leaseDurationSeconds: r.leaseDurationSeconds, content: JSON.stringify([r.lease.metadata?.resourceVersion, r.lease.spec]) })),
      now,
    );
    const own = records.find((r) => r.member === this.member);
    if (!own || own.holderIdentity !== this.identity) {
      // Deleted or taken by another process: our holds are no longer published, the others may take them.
      if (!strict) this.loseMembership();
      throw new ShardMembershipError('LeaseNotWritable', `the member Lease ${this.leaseRef()} ${own ? `is held by ${own.holderIdentity}` : 'was deleted'}`);
    }
    this.ownLease = own.lease;
    const live = records.filter((r) => r.member === this.member || (this.observer.isLive(r.member, now) && this.compatible(r)));
    const busy = this.options.busy?.() ?? new Set<number>();
    const plan = planBuckets({ self: this.member, bucketCount: this.bucketCount, live, held: this.held, claimed: this.claimed, busy, ready: this.options.ready });
    this.held = new Set(plan.held);
    this.claimed = new Set(plan.claimed);
    this.liveMembers = live.map((r) => r.member).sort();
    if (plan.taken.length || plan.released.length) {
      this.logger.info({ ring: this.ring, member: this.member, taken: plan.taken, released: plan.released, held: [...plan.held].length, members: this.liveMembers.length }, 'sharding: buckets changed hands');
    }
    this.options.metrics?.bucketsOwned(this.ring, this.held.size);
    this.options.metrics?.members(this.ring, this.liveMembers.length);
    this.options.onChange?.({ taken: plan.taken, released: plan.released, draining: plan.draining, held: this.held, claimed: this.claimed });
    await this.putLease(strict);
    for (const record of records) {
      if (record.member !== this.member && this.observer.expiredForMs(record.member, now) >= record.leaseDurationSeconds * 1000) void this.deleteExpired(record.lease);
    }
    if (this.lost) return;
    this.lastRenewSentAt = sentAt;
    this.rounds++;
    this.armDeadline();
  }

  private compatible(record: MemberLease): boolean {
    if (record.bucketCount === String(this.bucketCount) && record.hash === SHARD_HASH_VERSION) return true;
    const key = `${record.member}/${record.bucketCount}/${record.hash}`;
    if (!this.reportedMismatch.has(key)) {
      this.reportedMismatch.add(key);
      this.logger.error({ ring: this.ring, member: record.member }, this.mismatchMessage(record) + '; it is not counted as a member');
    }
    return false;
  }

  private mismatchMessage(record: MemberLease): string {
    return (
      `ring ${this.ring} in namespace ${this.namespace}: member ${record.member} records ${record.bucketCount ?? 'no'} buckets and hash ${record.hash ?? 'none'}, ` +
      `this replica ${this.bucketCount} buckets and hash ${SHARD_HASH_VERSION}; replicas with different bucket counts or hash versions refuse to share a ring`
    );
  }

  /**
   * Start-up: every other member's Lease that records another bucket count or hash, and is live (its
   * content changes within its lease duration, watched from here), makes this replica refuse the ring.
   * One that stays unchanged for its lease duration is a leftover of a stopped replica: ignored.
   */
  private async checkRing(): Promise<void> {
    const observer = new LeaseObserver();
    for (;;) {
      const leases = (await this.listRing(true)).map((l) => memberLease(l)).filter((r) => r.member !== this.member && r.holderIdentity !== '');
      const now = this.clock.now();
      observer.observe(leases.map((r) => ({ member: r.member, holderIdentity: r.holderIdentity, leaseDurationSeconds: r.leaseDurationSeconds, content: JSON.stringify(r.lease.spec) })), now);
      const foreign = leases.filter((r) => r.bucketCount !== String(this.bucketCount) || r.hash !== SHARD_HASH_VERSION);
      const suspect = foreign.filter((r) => observer.isLive(r.member, now));
      if (suspect.length === 0) return;
      // A change seen since the first read proves it live.
      const renewed = suspect.find((r) => this.firstSeen.has(r.member) && this.firstSeen.get(r.member) !== JSON.stringify(r.lease.spec));
      if (renewed) throw new ShardMembershipError('RingMismatch', this.mismatchMessage(renewed));
      for (const r of suspect) if (!this.firstSeen.has(r.member)) this.firstSeen.set(r.member, JSON.stringify(r.lease.spec));
      await sleep(this.clock, this.retryPeriodMs, this.stopAbort.signal);
      if (this.stopAbort.signal.aborted) throw new ShardMembershipError('RingMismatch', this.mismatchMessage(suspect[0]!));
    }
  }

  private async listRing(strict: boolean): Promise<KubeObject[]> {
    try {
      const list = await this.options.client.request<{ items?: KubeObject[] }>('GET', resourcePath(LEASES, this.namespace), {
        query: { labelSelector: `${RING_LABEL}=${this.ring}` },
        signal: this.stopAbort.signal,
      });
      return list.items ?? [];
    } catch (err) {
      throw strict ? this.accessError('list', err) : err;
    }
  }

  private async createLease(): Promise<void> {
    const stamp = this.nextStamp();
    this.acquireTime = stamp;
    const body = this.leaseBody(undefined, stamp);
    try {
      this.ownLease = await new ResourceClient(this.options.client).create(LEASES, body, { signal: this.stopAbort.signal });
    } catch (err) {
      if (isApiError(err, 409)) return this.takeBackOwnLease(err);
      throw this.accessError('create', err);
    }
  }

  /**
   * The member Lease already exists (409 on create). When its holder is this identity and it stays
   * unchanged for its own lease duration, watched from here ({@link LeaseObserver}, the rule by which
   * members judge each other), it is the Lease a previous run of this replica left (restarted under the
   * same pod name after losing membership): it is taken back with an update guarded by its
   * resourceVersion. A Lease held by another identity, or renewed meanwhile (another process uses the
   * name), or updated by someone else between the read and the update, is refused.
   * @throws ShardMembershipError (`LeaseNotWritable`) naming the member and why
   */
  private async takeBackOwnLease(conflict: unknown): Promise<void> {
    const path = resourcePath(LEASES, this.namespace, this.member);
    const refuse = (why: string, cause: unknown = conflict) =>
      new ShardMembershipError('LeaseNotWritable', `a Lease ${this.leaseRef()} already exists: another replica uses the member name ${this.member} (${why}; each replica needs its own: the pod's name)`, { cause });
    const observer = new LeaseObserver();
    let lease: KubeObject;
    let previous: string | undefined;
    for (let reads = 0; ; reads++) {
      try {
        lease = await this.options.client.request<KubeObject>('GET', path, { signal: this.stopAbort.signal });
      } catch (err) {
        throw this.accessError('get', err);
      }
      const record = memberLease(lease);
      if (record.holderIdentity !== this.identity) throw refuse(`it is held by ${record.holderIdentity || 'no one'}, this process is ${this.identity}`);
      const content = JSON.stringify([lease.metadata?.resourceVersion, lease.spec]);
      if (previous !== undefined && content !== previous) throw refuse('it was renewed while this replica watched it: a live process holds it');
      previous = content;
      const now = this.clock.now();
      observer.observe([{ member: this.member, holderIdentity: record.holderIdentity, leaseDurationSeconds: record.leaseDurationSeconds, content }], now);
      if (!observer.isLive(this.member, now)) break;
      if (reads === 0) {
        this.logger.info(
          { lease: this.leaseRef(), leaseDurationSeconds: record.leaseDurationSeconds },
          'sharding: the member Lease exists with this identity (left by a previous run?); taking it back if it stays unrenewed for its lease duration',
        );
      }
      await sleep(this.clock, this.retryPeriodMs, this.stopAbort.signal);
      if (this.stopAbort.signal.aborted) throw refuse('stopped while waiting for it to expire');
    }
    try {
      this.ownLease = await this.options.client.request('PUT', path, { body: this.leaseBody(lease, this.acquireTime), signal: this.stopAbort.signal });
    } catch (err) {
      if (isApiError(err, 409)) throw refuse('it was renewed while this replica took it back: a live process holds it', err);
      throw this.accessError('update', err);
    }
    this.logger.info({ lease: this.leaseRef() }, 'sharding: took back this replica\'s own expired member Lease (left by a previous run under the same name)');
  }

  private async putLease(strict: boolean): Promise<void> {
    const base = this.ownLease!;
    const body = this.leaseBody(base, this.nextStamp());
    try {
      this.ownLease = await new ResourceClient(this.options.client).update(LEASES, body, { signal: this.stopAbort.signal, writeGate: this.rounds > 0 ? this.writeGate() : undefined });
    } catch (err) {
      throw strict ? this.accessError('update', err) : err;
    }
  }

  private leaseBody(base: KubeObject | undefined, stamp: string): KubeObject {
    const metadata = (base?.metadata ?? {}) as Record<string, unknown>;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...metadata,
        name: this.member,
        namespace: this.namespace,
        labels: { ...((metadata.labels as Record<string, string> | undefined) ?? {}), [RING_LABEL]: this.ring },
        annotations: {
          ...((metadata.annotations as Record<string, string> | undefined) ?? {}),
          [BUCKET_COUNT_ANNOTATION]: String(this.bucketCount),
          [HASH_ANNOTATION]: SHARD_HASH_VERSION,
          [HELD_ANNOTATION]: [...this.held].sort((a, b) => a - b).join(','),
          [CLAIMED_ANNOTATION]: [...this.claimed].sort((a, b) => a - b).join(','),
        },
      },
      spec: { holderIdentity: this.identity, leaseDurationSeconds: this.leaseDurationMs / 1000, acquireTime: this.acquireTime, renewTime: stamp },
    };
  }

  private async deleteLease(): Promise<void> {
    if (!this.ownLease) return; // never created (e.g. its create was refused): nothing to delete
    try {
      await new ResourceClient(this.options.client).delete(LEASES, this.namespace, this.member);
      this.logger.info({ lease: this.leaseRef() }, 'sharding: left the ring (member Lease deleted)');
    } catch (err) {
      if (!isApiError(err, 404)) this.logger.warn({ lease: this.leaseRef(), ...errorFields(err) }, 'sharding: could not delete the member Lease; it will expire');
    }
  }

  /** Deletes a long-expired member's Lease, if unchanged since it was read (resourceVersion precondition). */
  private async deleteExpired(lease: KubeObject): Promise<void> {
    const name = String(lease.metadata?.name);
    try {
      await new ResourceClient(this.options.client).delete(LEASES, this.namespace, name, { resourceVersion: lease.metadata?.resourceVersion, signal: this.stopAbort.signal });
      this.logger.info({ ring: this.ring, lease: `${this.namespace}/${name}` }, 'sharding: deleted the Lease of a member gone for two lease durations');
    } catch (err) {
      if (!isApiError(err, 404, 409)) this.logger.debug({ lease: `${this.namespace}/${name}`, ...errorFields(err) }, 'sharding: could not delete an expired member Lease');
    }
  }

  /** A start-up error naming the verb and namespace (403) or the missing namespace (404). */
  private accessError(verb: string, err: unknown): ShardMembershipError {
    if (isApiError(err, 403)) {
      return new ShardMembershipError(
        'LeaseNotWritable',
        `cannot ${verb} Lease ${this.leaseRef()}: RBAC denies "${verb}" on leases.coordination.k8s.io in namespace ${this.namespace} (a sharded replica needs get, list, watch, create, update and delete there): ${err.message}`,
        { cause: err },
      );
    }
    if (isApiError(err, 404)) {
      return new ShardMembershipError('LeaseNotWritable', `cannot ${verb} Lease ${this.leaseRef()}: namespace ${this.namespace} does not exist (the ring's Leases live there): ${err.message}`, { cause: err });
    }
    return new ShardMembershipError('LeaseNotWritable', `cannot ${verb} Lease ${this.leaseRef()}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }

  private loseMembership(): void {
    if (this.lost) return;
    this.lost = true;
    this.held = new Set();
    this.claimed = new Set();
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    this.options.metrics?.bucketsOwned(this.ring, 0);
    this.logger.error({ lease: this.leaseRef(), renewDeadlineMs: this.renewDeadlineMs }, 'sharding: member Lease not renewed within the renew deadline; holding no bucket, writes fenced');
    this.stopAbort.abort();
    this.options.onLost?.();
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) this.clock.clearTimeout(this.deadlineTimer);
    const dueIn = this.lastRenewSentAt + this.renewDeadlineMs - this.clock.now();
    this.deadlineTimer = this.clock.setTimeout(() => {
      this.deadlineTimer = undefined;
      if (this.lost || this.stopAbort.signal.aborted) return;
      if (this.isRenewed()) this.armDeadline();
      else this.loseMembership();
    }, Math.max(1, dueIn));
  }

  /** A renewTime that differs from the last one written (a renewal must change the record). */
  private nextStamp(): string {
    const wall = this.options.wallClock?.() ?? new Date();
    return microTime(new Date(wall.getTime())).replace(/\d{3}Z$/, `${String(++this.stamps % 1000).padStart(3, '0')}Z`);
  }

  private leaseRef(): string {
    return `${this.namespace}/${this.member}`;
  }
}

/** The member record of a Lease: buckets from its annotations (unparsable → none). */
function memberLease(lease: KubeObject): MemberLease {
  const annotations = ((lease.metadata?.annotations ?? {}) as Record<string, string>);
  const spec = (lease.spec ?? {}) as Record<string, unknown>;
  return {
    lease,
    member: String(lease.metadata?.name ?? ''),
    held: parseBuckets(annotations[HELD_ANNOTATION]),
    claimed: parseBuckets(annotations[CLAIMED_ANNOTATION]),
    bucketCount: annotations[BUCKET_COUNT_ANNOTATION],
    hash: annotations[HASH_ANNOTATION],
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
    leaseDurationSeconds: typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 0,
  };
}

function parseBuckets(value: string | undefined): number[] {
  if (!value) return [];
  return value.split(',').map(Number).filter((n) => Number.isInteger(n) && n >= 0);
}

/** Resolves after `ms` on `clock`, or as soon as `signal` aborts. */
function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clock.clearTimeout(handle);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const handle = clock.setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
