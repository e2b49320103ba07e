/**
 * The holder of one coordination.k8s.io/v1 Lease (kubernetes.io/docs/concepts/architecture/leases/) with
 * client-go's rules (k8s.io/client-go/tools/leaderelection), shared by leader election (one Lease) and
 * sharding membership (one Lease per replica), which keep only their policy. The holder owns:
 * - the timing (lease-timing.ts), validated;
 * - the renew deadline: holding begins, and is renewed, at the local monotonic time a successful write of
 *   the Lease was *sent* ({@link LeaseHolder.renewed}), at or before the record changed on the server.
 *   With no renewal within `renewDeadlineMs` of that, {@link LeaseHolder.isHolding} is false at that
 *   instant and a timer deposes the holder (`onLost`). The others take over only after they observed the
 *   record unchanged for `leaseDurationSeconds` (longer) on their own clocks: deposed before replaced.
 *   Remote clocks are never trusted: renewTime/acquireTime are written for humans;
 * - the write fence ({@link LeaseHolder.assertMayWrite}, a {@link WriteGate}, client/write-gate.ts): a
 *   write leaves only while holding; one asked past the deadline before the timer ran (a process resumed
 *   after SIGSTOP or a long pause) deposes the holder at once and is refused. Its own Lease writes carry
 *   the gate once holding: a renewal on its way when the process froze is not sent when it resumes;
 * - observing another holder ({@link LeaseHolder.observeOwn}): a read of its own Lease naming another
 *   holder, or none left, deposes it at once, not at its deadline: that holder may be writing already;
 * - taking over only an expired Lease ({@link LeaseHolder.observedLive}, lease-observer.ts): one seen
 *   unchanged for its own `leaseDurationSeconds` on the local clock, or with no holder;
 * - the renew loop ({@link LeaseHolder.renewLoop}): a round every `retryPeriodMs` (or at the slower pace
 *   its owner asks for: a sharding ring at rest), none sent past the deadline;
 * - the Lease's requests through ResourceClient (an update carries the resourceVersion last read: a
 *   concurrent change makes it 409), its record ({@link leaseRecord}) and body ({@link LeaseHolder.body}),
 *   and renewTime stamps that always change the record.
 *
 * Errors: the constructor throws LeaderElectionConfigError for bad timings; requests reject with ApiError.
 */
import { LEASES } from '../client/builtin-resources.js';
import { isApiError, type KubeClient, type KubeObject } from '../client/kube-client.js';
import { type DeleteOptions, ResourceClient } from '../client/resource-client.js';
import { WriteFencedError, type WriteGate } from '../client/write-gate.js';
import { sleepOn, systemClock, type Clock, type TimerHandle } from '../clock.js';
import { LeaseObserver } from './lease-observer.js';
import { DEFAULT_LEASE_DURATION_MS, DEFAULT_RENEW_DEADLINE_MS, DEFAULT_RETRY_PERIOD_MS, type LeaseTiming, nextMicroTime, validateLeaderElectionTiming } from './lease-timing.js';

export interface LeaseHolderOptions extends LeaseTiming {
  /** Client with get, create, update (and delete) on leases in `namespace`. */
  readonly client: Pick<KubeClient, 'request'>;
  readonly namespace: string;
  readonly name: string;
  /** This process, as written in `holderIdentity`. */
  readonly identity: string;
  /** What is held and the Lease, as fence messages name them: `leadership`, `the leader-election lease`. */
  readonly title: string;
  readonly leaseTitle: string;
  /** Called once, synchronously, when holding is lost; `why` says how (deadline, another holder). */
  readonly onLost: (why: string) => void;
}

/** The spec of a Lease as read (coordination.k8s.io/v1 LeaseSpec); see {@link leaseRecord}. */
export interface LeaseRecord {
  /** '' when none. */
  readonly holderIdentity: string;
  /** 0 when absent. */
  readonly leaseDurationSeconds: number;
  /** MicroTimes (RFC 3339 with microseconds), for humans: never read back as time. */
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions: number;
}

/** The record of a Lease object (none: an empty one); missing or mistyped fields read as ''/0/undefined. */
export function leaseRecord(lease: KubeObject | undefined): LeaseRecord {
  const spec = (lease?.spec ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const count = (v: unknown) => (typeof v === 'number' ? v : 0);
  return {
    holderIdentity: text(spec.holderIdentity) ?? '',
    leaseDurationSeconds: count(spec.leaseDurationSeconds),
    acquireTime: text(spec.acquireTime),
    renewTime: text(spec.renewTime),
    leaseTransitions: count(spec.leaseTransitions),
  };
}

/** One process's hold on one Lease. See the module docs. */
export class LeaseHolder implements WriteGate {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly clock: Clock;
  /** The own Lease as last read or written: its resourceVersion guards the next update. */
  lease: KubeObject | undefined;
  /** True from the first successful write until released or lost (even past the deadline until deposed). */
  holding = false;
  /** Set while the owner stops (releases, drains): the deadline timer and the fence depose no more. */
  quiet = false;
  /** Why holding was lost, once it was. */
  lostWhy: string | undefined;

  private readonly resources: ResourceClient;
  private readonly observer = new LeaseObserver();
  private lastRenewSentAt = Number.NEGATIVE_INFINITY;
  private timer: TimerHandle | undefined;

  constructor(private readonly options: LeaseHolderOptions) {
    this.namespace = options.namespace;
    this.name = options.name;
    this.identity = options.identity;
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    validateLeaderElectionTiming(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.clock = options.clock ?? systemClock;
    this.resources = new ResourceClient(options.client);
  }

  get ref(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** True while holding and the last successful renewal, sent at, is younger than the renew deadline. */
  isHolding(): boolean {
    return this.holding && this.clock.now() < this.lastRenewSentAt + this.renewDeadlineMs;
  }

  /** A write of the Lease sent at local time `sentAt` succeeded: holding (begins and) runs to `sentAt` + renewDeadline. */
  renewed(sentAt: number): void {
    this.holding = true;
    this.lastRenewSentAt = sentAt;
    this.arm();
  }

  /** Holding ends without a loss (released, stopped); idempotent. */
  end(): void {
    this.holding = false;
    this.stopTimer();
  }

  /** Clears the deadline timer; `quiet`: see {@link quiet}. */
  stopTimer(quiet = this.quiet): void {
    this.quiet = quiet;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Holding is lost (once): {@link lostWhy} is set, then `onLost` called. No-op unless holding. */
  lose(why = `not renewed within the renew deadline (${this.renewDeadlineMs} ms)`): void {
    if (!this.holding) return;
    this.lostWhy = why;
    this.end();
    this.options.onLost(why);
  }

  /**
   * The write gate: returns while {@link isHolding}, else throws {@link WriteFencedError}; past the
   * deadline before the timer ran, it deposes the holder first (unless {@link quiet}). Synchronous.
   */
  assertMayWrite(method: string, path: string): void {
    if (this.isHolding()) return;
    const { title, leaseTitle } = this.options;
    const why = this.holding
      ? `${title} of ${this.ref} lost: no renewal within the renew deadline (${this.renewDeadlineMs} ms; last renewal sent ${Math.round(this.clock.now() - this.lastRenewSentAt)} ms ago)`
      : this.lostWhy
        ? `${title} of ${this.ref} lost: ${this.lostWhy}`
        : `this process does not hold ${leaseTitle} ${this.ref}`;
    if (this.holding && !this.quiet) this.lose();
    throw new WriteFencedError(method, path, why);
  }

  /**
   * Deposed before replaced: a read of the own Lease naming another holder (`undefined`: the Lease is
   * gone) ends holding at once (unless {@link quiet}). An empty holder is left to the owner's policy.
   * @returns true when the Lease names this identity
   */
  observeOwn(holderIdentity: string | undefined): boolean {
    if (holderIdentity === this.identity) return true;
    if (holderIdentity !== '' && !this.quiet) this.lose(holderIdentity === undefined ? `the Lease ${this.ref} was deleted` : `the Lease is held by ${holderIdentity}`);
    return false;
  }

  /**
   * Records a read or write of the own Lease now, `content` (anything a renewal changes) compared as a
   * whole. @returns true while it names a holder and changed less than `leaseDurationSeconds` ago: not to be taken over
   */
  observedLive(holderIdentity: string, leaseDurationSeconds: number, content: string): boolean {
    const now = this.clock.now();
    this.observer.observe([{ member: this.name, holderIdentity, leaseDurationSeconds, content }], now);
    return this.observer.isLive(this.name, now);
  }

  /**
   * Renews until holding ends or one of `signals` aborts: it runs `round`, sent then, `retryPeriodMs`
   * after the last round ended; one that resolves true renewed the Lease ({@link renewed} at the time it
   * was sent). `periodMs` (read after each round; default `retryPeriodMs`) may ask for a slower pace:
   * the next round is then sent `periodMs()` after the last was sent, and never sooner than
   * `retryPeriodMs` after it ended, so a slow round leaves as many tries before the deadline as at the
   * fast pace. Waking past the deadline (a process resumed after a freeze) it sends nothing and holding
   * is lost; a round that fails past it too. `round` rejecting: `failed` is told and the next round tries
   * again; without `failed`, the loop rejects with that error.
   */
  async renewLoop(round: () => Promise<boolean>, signals: readonly AbortSignal[], failed?: (err: unknown) => void, periodMs?: () => number): Promise<void> {
    const stopped = () => !this.holding || signals.some((s) => s.aborted);
    let lastSentAt: number | undefined;
    while (!stopped()) {
      const sinceSent = lastSentAt === undefined ? 0 : this.clock.now() - lastSentAt;
      await sleepOn(this.clock, Math.max(this.retryPeriodMs, (periodMs?.() ?? this.retryPeriodMs) - sinceSent), ...signals);
      if (stopped()) return;
      if (!this.isHolding()) return this.quiet ? undefined : this.lose();
      const sentAt = (lastSentAt = this.clock.now());
      const ok = await round().catch((err: unknown) => {
        if (!failed) throw err;
        failed(err);
        return false;
      });
      if (ok && this.holding) this.renewed(sentAt);
      else if (this.holding && !this.isHolding() && !this.quiet) this.lose();
    }
  }

  /**
   * The own Lease to write: the last read (resourceVersion, labels, annotations kept) or a new one, with
   * `spec` and `metadata`'s labels and annotations merged in; an empty holderIdentity is left out.
   */
  body(spec: Partial<LeaseRecord>, metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): KubeObject {
    const base = (this.lease?.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
    const merged: Record<string, unknown> = { ...(this.lease?.spec as object | undefined), ...spec };
    if (merged.holderIdentity === '') delete merged.holderIdentity;
    const labels = metadata.labels && { labels: { ...base.labels, ...metadata.labels } };
    const annotations = metadata.annotations && { annotations: { ...base.annotations, ...metadata.annotations } };
    return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...base, name: this.name, namespace: this.namespace, ...labels, ...annotations }, spec: merged };
  }

  /** A renewTime: the wall time, later than `previous` (@default the own Lease's renewTime; {@link nextMicroTime}). */
  stamp(previous = leaseRecord(this.lease).renewTime): string {
    return nextMicroTime(this.options.wallClock?.() ?? new Date(), previous);
  }

  /** GETs the own Lease (remembered; forgotten on 404). @throws ApiError (404 when absent) */
  async get(signal?: AbortSignal): Promise<KubeObject> {
    try {
      return (this.lease = await this.resources.get<KubeObject>(LEASES, this.namespace, this.name, { signal }));
    } catch (err) {
      if (isApiError(err, 404)) this.lease = undefined;
      throw err;
    }
  }

  /** POSTs the own Lease (remembered); gated once it held. @throws ApiError (409 when it exists) */
  async create(lease: KubeObject, signal?: AbortSignal): Promise<KubeObject> {
    return (this.lease = await this.resources.create<KubeObject>(LEASES, lease, { signal, writeGate: this.gate() }));
  }

  /** PUTs the own Lease (remembered); gated once it held. @throws ApiError (409 when its resourceVersion is stale) */
  async update(lease: KubeObject, signal?: AbortSignal): Promise<KubeObject> {
    return (this.lease = await this.resources.update<KubeObject>(LEASES, lease, { signal, writeGate: this.gate() }));
  }

  /** DELETEs the own Lease. @throws ApiError (404 when absent) */
  async delete(options?: DeleteOptions): Promise<void> {
    await this.resources.delete(LEASES, this.namespace, this.name, options);
  }

  /** The gate of the Lease's own writes: none while acquiring (before it first held). */
  private gate(): WriteGate | undefined {
    return this.holding || this.lostWhy !== undefined ? this : undefined;
  }

  /** (Re)arms the timer that deposes the holder at lastRenewSentAt + renewDeadline. */
  private arm(): void {
    this.stopTimer();
    const dueIn = this.lastRenewSentAt + this.renewDeadlineMs - this.clock.now();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      if (!this.holding || this.quiet) return;
      // Timers have millisecond resolution and may fire a fraction early: check again then.
      if (this.isHolding()) this.arm();
      else this.lose();
    }, Math.max(1, dueIn));
  }
}
