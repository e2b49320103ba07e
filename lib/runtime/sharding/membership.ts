/**
 * Membership of one replica in a sharding ring: its own coordination.k8s.io/v1 Lease
 * (kubernetes.io/docs/concepts/architecture/leases/), named after the member (the pod), held by a
 * {@link LeaseHolder} (lease/lease-holder.ts: timing, renew deadline, write fence, deposed before
 * replaced), and the bucket hand-over (handover.ts). Label {@link RING_LABEL} names the ring; annotations
 * record the bucket count and hash version (bucket-hash.ts), the held and claimed buckets, and the
 * assignment the member computes (handover.ts: bounded loads once every live member publishes it), the CR
 * count of each held bucket, and, on the ring's coordinator, the load-aware assignment (load-balance.ts).
 * 1. `start()` creates the Lease (holding nothing; its own Lease left by a previous run is taken back once
 *    expired), refuses a ring whose live members record another bucket count or hash version, and renews
 *    once. Then a round runs every `retryPeriodMs`: LIST the ring, plan, call `onChange`, PUT the Lease;
 *    while the ring is at rest (handover.ts `atRest`: every bucket held by its owner, nothing claimed
 *    or moving) every {@link restingPeriodMs} instead (half the renew deadline: 5 s by default), as long as
 *    its rounds succeed. An idle ring then sends 2 requests per member every 5 s instead of every 2 s; a
 *    join, a leave or an expiry is seen up to 3 s later, and the hand-over it starts runs at the fast pace.
 * 2. Past the renew deadline, or once a round finds the Lease deleted or held by another, the member
 *    holds nothing and `onLost` is called with the reason: the process should exit non-zero.
 * 3. `stop()` (after the caller drained) deletes the Lease: the others take its buckets at once.
 * 4. A member gone without deleting its Lease has it deleted by the others once expired for another lease
 *    duration (its resourceVersion as a precondition: a renewal in between makes it fail).
 *
 * Errors: the constructor throws {@link LeaderElectionConfigError} for bad timings and
 * {@link ShardingConfigError} for a bad bucket count or empty names; `start()` rejects with
 * {@link ShardMembershipError} naming a missing permission or namespace. Renewal errors after start are
 * logged and retried until the deadline.
 */
import { brandClass } from '../../operator/brand.js';
import { LEASES } from '../client/builtin-resources.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { isApiError } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import type { WriteGate } from '../client/write-gate.js';
import { sleepOn } from '../clock.js';
import { LeaseHolder, leaseRecord } from '../lease/lease-holder.js';
import type { LeaderElectionConfigError, LeaseTiming } from '../lease/lease-timing.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { RuntimeError } from '../runtime-error.js';
import { DEFAULT_BUCKET_COUNT, SHARD_HASH_VERSION, ShardingConfigError, validateBucketCount } from './bucket-hash.js';
import { planBuckets, type PublishedBuckets } from './handover.js';
import { LeaseObserver } from '../lease/lease-observer.js';
import { LOAD_BALANCE, type BucketAssignment } from './load-balance.js';
import { BALANCED_ASSIGNMENT } from './rendezvous.js';

/** The label naming a member Lease's ring. */
export const RING_LABEL = 'sharding.cdk8s.io/ring';
export const BUCKET_COUNT_ANNOTATION = 'sharding.cdk8s.io/bucket-count';
export const HASH_ANNOTATION = 'sharding.cdk8s.io/hash';
export const HELD_ANNOTATION = 'sharding.cdk8s.io/held';
export const CLAIMED_ANNOTATION = 'sharding.cdk8s.io/claimed';
/** The bucket assignment this replica computes (rendezvous.ts `BALANCED_ASSIGNMENT`; handover.ts). */
export const ASSIGNMENT_ANNOTATION = 'sharding.cdk8s.io/assignment';
/** That this replica follows the load-aware assignment (load-balance.ts `LOAD_BALANCE`). */
export const BALANCING_ANNOTATION = 'sharding.cdk8s.io/balancing';
/** The CR count of each held bucket: `bucket=count` pairs joined by commas (`3=31,7=29`). */
export const LOADS_ANNOTATION = 'sharding.cdk8s.io/loads';
/** On the coordinator only: the load-aware assignment, JSON `{"members":[…],"owners":[index of the member per bucket]}`; empty on the others. */
export const PLAN_ANNOTATION = 'sharding.cdk8s.io/plan';

/**
 * A replica that cannot be a member of its ring: its Lease cannot be created, read or renewed (the message
 * names the permission or namespace): `LeaseNotWritable`; a live member records another bucket count or
 * hash version: `RingMismatch`; its membership was lost while running (the Manager fences its writes
 * with it): `MembershipLost`. Step `sharding`; branded.
 */
export class ShardMembershipError extends RuntimeError {
  static {
    brandClass(this, 'ShardMembershipError');
  }

  override readonly step = 'sharding';
  constructor(override readonly reason: 'LeaseNotWritable' | 'RingMismatch' | 'MembershipLost', message: string, options?: { cause?: unknown }) {
    super(`sharding: ${message}`, options);
    this.name = 'ShardMembershipError';
  }

  /** `MembershipLost`: the member Lease `lease` (namespace/name) was lost, `why` as the holder says it (deadline, deleted, another holder). */
  static lost(lease: string, why: string): ShardMembershipError {
    return new ShardMembershipError('MembershipLost', `the member Lease ${lease} was lost (${why}); workers stopped, writes fenced`);
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

export interface ShardMemberOptions extends LeaseTiming {
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
  readonly logger?: Logger;
  readonly metrics?: ShardMetrics;
  /** The held buckets with reconciles in flight (not released until they finish). @default none */
  readonly busy?: () => ReadonlySet<number>;
  /** True when this replica's caches of a claimed bucket are synced: taken only then. @default every bucket is ready */
  readonly ready?: (bucket: number) => boolean;
  /**
   * The number of CRs this replica caches in a held bucket, published each round for the load-aware
   * assignment (load-balance.ts). @default none published: the ring keeps the bounded assignment
   */
  readonly load?: (bucket: number) => number;
  /** Called after each round's plan, before its write. */
  readonly onChange?: (change: ShardChange) => void;
  /** Called once when membership is lost (renew deadline passed, Lease deleted or taken; `error` says which): the process should exit non-zero. */
  readonly onLost?: (error: ShardMembershipError) => void;
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
 * The pace of a member's rounds while the ring is at rest: half the renew deadline, and never faster than
 * `retryPeriodMs`. A failed round is retried `retryPeriodMs` after it ended, as at the fast pace: with the
 * default timing a renewal 5 s after the last and its retry about 7 s after it, both within the 10 s
 * renew deadline.
 */
export function restingPeriodMs(timing: { renewDeadlineMs: number; retryPeriodMs: number }): number {
  return Math.max(timing.retryPeriodMs, timing.renewDeadlineMs / 2);
}

/**
 * One replica's membership in a ring (module docs).
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
  private readonly holder: LeaseHolder;
  private readonly logger: Logger;
  private readonly observer = new LeaseObserver();
  private held = new Set<number>();
  private claimed = new Set<number>();
  /** The load-aware assignment this member published as the ring's coordinator (handover.ts); undefined on the others. */
  private plan: BucketAssignment | undefined;
  private liveMembers: string[] = [];
  /** True once the own Lease was created or taken back (then `stop()` deletes it). */
  private joined = false;
  private rounds = 0;
  /** The last round succeeded and found the ring at rest (handover.ts `atRest`): the next comes at the resting pace. */
  private atRest = false;
  private readonly stopAbort = new AbortController();
  private loopPromise: Promise<void> | undefined;
  private readonly reportedMismatch = new Set<string>();
  private acquireTime = '';

  constructor(options: ShardMemberOptions) {
    this.options = options;
    ({ namespace: this.namespace, ring: this.ring, member: this.member } = options);
    this.identity = options.identity ?? options.member;
    this.bucketCount = options.bucketCount ?? DEFAULT_BUCKET_COUNT;
    if (!options.namespace || !options.ring || !options.member) throw new ShardingConfigError('namespace, ring and member must not be empty');
    validateBucketCount(this.bucketCount);
    const onLost = () => this.loseMembership();
    this.holder = new LeaseHolder({ ...options, name: this.member, identity: this.identity, title: 'membership', leaseTitle: 'the member Lease', onLost });
    ({ leaseDurationMs: this.leaseDurationMs, renewDeadlineMs: this.renewDeadlineMs, retryPeriodMs: this.retryPeriodMs } = this.holder);
    this.logger = options.logger ?? silentLogger;
    this.stopAbort.signal.addEventListener('abort', () => (this.holder.quiet = true), { once: true });
  }

  /** True while this member holds `bucket` and its renew deadline has not passed. */
  holds(bucket: number): boolean {
    return this.holder.isHolding() && this.held.has(bucket);
  }

  /** The buckets held now (empty past the renew deadline), sorted. */
  heldBuckets(): number[] {
    return this.holder.isHolding() ? [...this.held].sort((a, b) => a - b) : [];
  }

  /** The live, compatible members seen in the last round (this one included), sorted. */
  members(): readonly string[] {
    return this.liveMembers;
  }

  /** True once a round has run since start (the member knows its buckets). */
  hasRun(): boolean {
    return this.rounds > 0;
  }

  /** The write gate ({@link LeaseHolder.assertMayWrite}): a write leaves only while this member's Lease is renewed within its deadline. */
  writeGate(): WriteGate {
    return this.holder;
  }

  /** Creates the Lease, checks the ring, renews once, then renews until {@link stop} (or `signal`). @throws ShardMembershipError */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.loopPromise) throw new Error(`sharding: member ${this.member} started twice`);
    if (signal) signal.addEventListener('abort', () => this.stopAbort.abort(), { once: true });
    await this.createLease();
    try {
      await this.checkRing();
      const sentAt = this.holder.clock.now();
      if (await this.round(true)) this.holder.renewed(sentAt);
    } catch (err) {
      await this.deleteLease();
      throw err;
    }
    this.loopPromise = this.loop();
  }

  /** Stops renewing and deletes the Lease (call it after the reconciles finished). Never rejects: a failed delete is logged. */
  async stop(): Promise<void> {
    this.stopAbort.abort();
    await this.loopPromise;
    this.holder.stopTimer(true);
    this.dropBuckets();
    if (this.holder.lostWhy === undefined) await this.deleteLease();
  }

  private loop(): Promise<void> {
    const stop = this.stopAbort.signal;
    const resting = restingPeriodMs(this);
    return this.holder.renewLoop(
      () => this.round(false),
      [stop],
      (err) => {
        if (!stop.aborted) this.logger.warn({ lease: this.holder.ref, ...errorFields(err) }, 'sharding: could not renew the member Lease; retrying');
      },
      () => (this.atRest ? resting : this.retryPeriodMs),
    );
  }

  /** One round: LIST, plan, tell, PUT. `strict`: errors are start-up errors (named). @returns true when the PUT renewed the Lease */
  private async round(strict: boolean): Promise<boolean> {
    this.atRest = false;
    const leases = await this.listRing(strict);
    const now = this.holder.clock.now();
    const records = leases.map((lease) => memberLease(lease));
    this.observer.observe(records.map((r) => ({ ...r, content: JSON.stringify([r.lease.metadata?.resourceVersion, r.lease.spec]) })), now);
    const own = records.find((r) => r.member === this.member);
    if (!this.holder.observeOwn(own?.holderIdentity)) {
      // Deleted or taken by another process: our holds are no longer published, the others may take them.
      const why = `the member Lease ${this.holder.ref} ${own ? `is held by ${own.holderIdentity || 'no one'}` : 'was deleted'}`;
      this.holder.lose(why); // at start-up (not holding yet) nothing to lose: the error says it
      throw new ShardMembershipError('LeaseNotWritable', why);
    }
    this.holder.lease = own!.lease;
    const live = records.filter((r) => r.member === this.member || (this.observer.isLive(r.member, now) && this.compatible(r)));
    const busy = this.options.busy?.() ?? new Set<number>();
    const plan = planBuckets({ self: this.member, bucketCount: this.bucketCount, live, held: this.held, claimed: this.claimed, busy, ready: this.options.ready, plan: this.plan });
    this.held = new Set(plan.held);
    this.claimed = new Set(plan.claimed);
    if (plan.plan && plan.plan !== this.plan && this.plan && plan.plan.members.join() === this.plan.members.join()) {
      const moved = plan.plan.owners.flatMap((owner, b) => (owner === this.plan!.owners[b] ? [] : [`${b}→${owner}`]));
      this.logger.info({ ring: this.ring, member: this.member, moved }, 'sharding: buckets reassigned by load (CRs per bucket)');
    }
    this.plan = plan.plan;
    this.liveMembers = live.map((r) => r.member).sort();
    if (plan.taken.length || plan.released.length) {
      this.logger.info({ ring: this.ring, member: this.member, taken: plan.taken, released: plan.released, held: [...plan.held].length, members: this.liveMembers.length }, 'sharding: buckets changed hands');
    }
    this.options.metrics?.bucketsOwned(this.ring, this.held.size);
    this.options.metrics?.members(this.ring, this.liveMembers.length);
    this.options.onChange?.({ taken: plan.taken, released: plan.released, draining: plan.draining, held: this.held, claimed: this.claimed });
    try {
      await this.holder.update(this.leaseBody(this.holder.stamp()), this.stopAbort.signal);
    } catch (err) {
      throw strict ? this.accessError('update', err) : err;
    }
    for (const record of records) {
      if (record.member !== this.member && this.observer.expiredForMs(record.member, now) >= record.leaseDurationSeconds * 1000) void this.deleteExpired(record.lease);
    }
    if (this.holder.lostWhy !== undefined) return false;
    this.rounds++;
    this.atRest = plan.atRest;
    return true;
  }

  private sameRing(record: MemberLease): boolean {
    return record.bucketCount === String(this.bucketCount) && record.hash === SHARD_HASH_VERSION;
  }

  private compatible(record: MemberLease): boolean {
    if (this.sameRing(record)) return true;
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

  /** Start-up: a live member (seen changing) with another bucket count or hash makes this replica refuse the ring; a leftover Lease (unchanged for its lease duration) is ignored. */
  private async checkRing(): Promise<void> {
    const observer = new LeaseObserver();
    for (;;) {
      const foreign = (await this.listRing(true)).map((l) => memberLease(l)).filter((r) => r.member !== this.member && r.holderIdentity !== '' && !this.sameRing(r));
      const now = this.holder.clock.now();
      const renewed = observer.observe(foreign.map((r) => ({ ...r, content: JSON.stringify(r.lease.spec) })), now);
      if (renewed.length > 0) throw new ShardMembershipError('RingMismatch', this.mismatchMessage(foreign.find((r) => r.member === renewed[0])!));
      const live = foreign.find((r) => observer.isLive(r.member, now));
      if (!live) return;
      await sleepOn(this.holder.clock, this.retryPeriodMs, this.stopAbort.signal);
      if (this.stopAbort.signal.aborted) throw new ShardMembershipError('RingMismatch', this.mismatchMessage(live));
    }
  }

  private async listRing(strict: boolean): Promise<KubeObject[]> {
    try {
      return (await new ResourceClient(this.options.client).list(LEASES, this.namespace, { labelSelector: `${RING_LABEL}=${this.ring}`, signal: this.stopAbort.signal })).items;
    } catch (err) {
      throw strict ? this.accessError('list', err) : err;
    }
  }

  private async createLease(): Promise<void> {
    this.acquireTime = this.holder.stamp();
    try {
      await this.holder.create(this.leaseBody(this.acquireTime), this.stopAbort.signal);
    } catch (err) {
      if (isApiError(err, 409)) return this.takeBackOwnLease(err);
      throw this.accessError('create', err);
    }
    this.joined = true;
  }

  /**
   * The member Lease already exists (409 on create): held by this identity and unchanged for its lease
   * duration, watched from here ({@link LeaseHolder.observedLive}), it is a previous run's and is taken back by an
   * update guarded by its resourceVersion; held by another, or renewed meanwhile, it is refused.
   * @throws ShardMembershipError (`LeaseNotWritable`) naming the member and why
   */
  private async takeBackOwnLease(conflict: unknown): Promise<void> {
    const refuse = (why: string, cause: unknown = conflict) =>
      new ShardMembershipError('LeaseNotWritable', `a Lease ${this.holder.ref} already exists: another replica uses the member name ${this.member} (${why}; each replica needs its own: the pod's name)`, { cause });
    let lease: KubeObject;
    let previous: string | undefined;
    for (let reads = 0; ; reads++) {
      try {
        lease = await this.holder.get(this.stopAbort.signal);
      } catch (err) {
        throw this.accessError('get', err);
      }
      const record = memberLease(lease);
      if (record.holderIdentity !== this.identity) throw refuse(`it is held by ${record.holderIdentity || 'no one'}, this process is ${this.identity}`);
      const content = JSON.stringify([lease.metadata?.resourceVersion, lease.spec]);
      if (previous !== undefined && content !== previous) throw refuse('it was renewed while this replica watched it: a live process holds it');
      previous = content;
      if (!this.holder.observedLive(record.holderIdentity, record.leaseDurationSeconds, content)) break;
      if (reads === 0) {
        const message = 'sharding: the member Lease exists with this identity (left by a previous run?); taking it back if it stays unrenewed for its lease duration';
        this.logger.info({ lease: this.holder.ref, leaseDurationSeconds: record.leaseDurationSeconds }, message);
      }
      await sleepOn(this.holder.clock, this.retryPeriodMs, this.stopAbort.signal);
      if (this.stopAbort.signal.aborted) throw refuse('stopped while waiting for it to expire');
    }
    try {
      await this.holder.update(this.leaseBody(this.acquireTime), this.stopAbort.signal);
    } catch (err) {
      if (isApiError(err, 409)) throw refuse('it was renewed while this replica took it back: a live process holds it', err);
      throw this.accessError('update', err);
    }
    this.joined = true;
    this.logger.info({ lease: this.holder.ref }, 'sharding: took back this replica\'s own expired member Lease (left by a previous run under the same name)');
  }

  /** The own Lease (as last read, or new) with this member's record: ring label, bucket annotations, holder, `renewTime`. */
  private leaseBody(renewTime: string): KubeObject {
    const buckets = (set: Set<number>) => [...set].sort((a, b) => a - b).join(',');
    const load = this.options.load;
    const loads = load ? [...this.held].sort((a, b) => a - b).map((b) => `${b}=${load(b)}`).join(',') : '';
    const plan = this.plan ? JSON.stringify({ members: this.plan.members, owners: this.plan.owners.map((o) => (o === undefined ? -1 : this.plan!.members.indexOf(o))) }) : '';
    const annotations = {
      [BUCKET_COUNT_ANNOTATION]: String(this.bucketCount),
      [HASH_ANNOTATION]: SHARD_HASH_VERSION,
      [HELD_ANNOTATION]: buckets(this.held),
      [CLAIMED_ANNOTATION]: buckets(this.claimed),
      [ASSIGNMENT_ANNOTATION]: BALANCED_ASSIGNMENT,
      [BALANCING_ANNOTATION]: LOAD_BALANCE,
      [LOADS_ANNOTATION]: loads,
      [PLAN_ANNOTATION]: plan,
    };
    const spec = { holderIdentity: this.identity, leaseDurationSeconds: this.leaseDurationMs / 1000, acquireTime: this.acquireTime, renewTime };
    return this.holder.body(spec, { labels: { [RING_LABEL]: this.ring }, annotations });
  }

  private async deleteLease(): Promise<void> {
    if (!this.joined) return; // never created (e.g. its create was refused): nothing to delete
    try {
      await this.holder.delete();
      this.logger.info({ lease: this.holder.ref }, 'sharding: left the ring (member Lease deleted)');
    } catch (err) {
      if (!isApiError(err, 404)) this.logger.warn({ lease: this.holder.ref, ...errorFields(err) }, 'sharding: could not delete the member Lease; it will expire');
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
    const prefix = `cannot ${verb} Lease ${this.holder.ref}: `;
    const why = isApiError(err, 403)
      ? `RBAC denies "${verb}" on leases.coordination.k8s.io in namespace ${this.namespace} (a sharded replica needs get, list, watch, create, update and delete there): ${err.message}`
      : isApiError(err, 404)
        ? `namespace ${this.namespace} does not exist (the ring's Leases live there): ${err.message}`
        : ((err as Error)?.message ?? String(err));
    return new ShardMembershipError('LeaseNotWritable', prefix + why, { cause: err });
  }

  private dropBuckets(): void {
    this.held = new Set();
    this.claimed = new Set();
    this.options.metrics?.bucketsOwned(this.ring, 0);
  }

  /** The holder's `onLost`: holds nothing from now, stops the rounds, tells the owner. */
  private loseMembership(): void {
    this.dropBuckets();
    this.logger.error({ lease: this.holder.ref, renewDeadlineMs: this.renewDeadlineMs, why: this.holder.lostWhy }, 'sharding: member Lease lost; holding no bucket, writes fenced');
    this.stopAbort.abort();
    this.options.onLost?.(ShardMembershipError.lost(this.holder.ref, this.holder.lostWhy!));
  }
}

/** The member record of a Lease: buckets from its annotations (unparsable → none). */
function memberLease(lease: KubeObject): MemberLease {
  const annotations = (lease.metadata?.annotations ?? {}) as Record<string, string>;
  const { holderIdentity, leaseDurationSeconds } = leaseRecord(lease);
  return {
    lease,
    member: String(lease.metadata?.name ?? ''),
    held: parseBuckets(annotations[HELD_ANNOTATION]),
    claimed: parseBuckets(annotations[CLAIMED_ANNOTATION]),
    assignment: annotations[ASSIGNMENT_ANNOTATION],
    balancing: annotations[BALANCING_ANNOTATION],
    loads: parseLoads(annotations[LOADS_ANNOTATION]),
    plan: parsePlan(annotations[PLAN_ANNOTATION]),
    bucketCount: annotations[BUCKET_COUNT_ANNOTATION],
    hash: annotations[HASH_ANNOTATION],
    holderIdentity,
    leaseDurationSeconds,
  };
}

/** `3=31,7=29` → {3 → 31, 7 → 29}; unparsable pairs are left out. */
function parseLoads(value: string | undefined): Map<number, number> {
  const out = new Map<number, number>();
  for (const pair of (value ?? '').split(',')) {
    const [bucket, count] = pair.split('=').map(Number);
    if (Number.isInteger(bucket) && bucket! >= 0 && Number.isInteger(count) && count! >= 0) out.set(bucket!, count!);
  }
  return out;
}

/** The coordinator's assignment (PLAN_ANNOTATION); undefined when absent or malformed (then it is not followed). */
function parsePlan(value: string | undefined): BucketAssignment | undefined {
  if (!value) return undefined;
  try {
    const { members, owners } = JSON.parse(value) as { members?: unknown; owners?: unknown };
    if (!Array.isArray(members) || !members.every((m) => typeof m === 'string') || !Array.isArray(owners)) return undefined;
    if (!owners.every((i) => Number.isInteger(i) && i >= -1 && i < members.length)) return undefined;
    return { members: members as string[], owners: (owners as number[]).map((i) => (i < 0 ? undefined : (members as string[])[i])) };
  } catch {
    return undefined;
  }
}

function parseBuckets(value: string | undefined): number[] {
  if (!value) return [];
  return value.split(',').map(Number).filter((n) => Number.isInteger(n) && n >= 0);
}
