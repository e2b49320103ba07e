/**
 * The hand-over protocol (lib/runtime/sharding/handover.ts with lease/lease-observer.ts) run by simulated
 * members against a simulated API server (a store of Leases with resourceVersion checks; reads are
 * snapshots; requests and answers take time; 10 % of writes fail, and are retried after 100 ms as a renewal is retried within its deadline) on a ManualClock. Members renew every retry period (with
 * jitter), or at the resting pace while their last step found the ring at rest (membership.ts), reconcile their held buckets (each reconcile takes a while), crash, pause past their lease,
 * and join. At every event the test checks that no two members hold a bucket ("hold": it is in the
 * member's held set or a reconcile of it is in flight, while the member's renew deadline has not
 * passed — past it, the real member's writes are fenced and it exits). After each disturbance it waits
 * for the ring to settle and checks that every bucket is held once, by its owner (plain rendezvous while an
 * older member that does not publish the balanced assignment is running), or, when every member is current
 * and so load-aware (each bucket has a CR count, published by its holder), that no claim is outstanding and
 * the holders are where load-balance.ts's step stops. Once the ring has settled, every running member's
 * step finds it at rest (`atRest`), and none does while a claim is outstanding.
 */
import { ManualClock } from '../../../lib/runtime/clock.js';
import { planBuckets, type PublishedBuckets } from '../../../lib/runtime/sharding/handover.js';
import { restingPeriodMs } from '../../../lib/runtime/sharding/membership.js';
import { LeaseObserver } from '../../../lib/runtime/lease/lease-observer.js';
import { BALANCED_ASSIGNMENT, assignBuckets, assignBucketsBalanced } from '../../../lib/runtime/sharding/rendezvous.js';
import { LOAD_BALANCE, memberLoads, rebalanceStep, type BucketAssignment } from '../../../lib/runtime/sharding/load-balance.js';
import { seededRandom as seeded } from '../../support/seeded-random.js';

const BUCKETS = 16;
const LEASE_MS = 4000;
const RENEW_DEADLINE_MS = 3000;
const RETRY_MS = 1000;
const RESTING_MS = restingPeriodMs({ renewDeadlineMs: RENEW_DEADLINE_MS, retryPeriodMs: RETRY_MS });

interface StoredLease {
  rv: number;
  holder: string;
  renewals: number;
  held: number[];
  claimed: number[];
  assignment?: string;
  balancing?: string;
  loads?: [number, number][];
  plan?: BucketAssignment;
}

class Sim {
  readonly clock = new ManualClock();
  readonly store = new Map<string, StoredLease>();
  readonly members: Member[] = [];
  private rv = 0;
  violations: string[] = [];
  takes = 0;
  /** Each bucket's CR count (0 to 40). */
  readonly loads: number[];

  /** `balanced(name)`: the member publishes the balanced assignment (a replica of the current version); else it is an older one. */
  constructor(readonly random: () => number, readonly balanced: (name: string) => boolean = () => true) {
    this.loads = Array.from({ length: BUCKETS }, () => Math.floor(random() * 41));
  }

  /** Up to 150 ms each way. */
  latency(): number {
    return Math.floor(this.random() * 150);
  }

  list(): Map<string, StoredLease> {
    return new Map([...this.store].map(([k, v]) => [k, { ...v, held: [...v.held], claimed: [...v.claimed] }]));
  }

  write(member: string, baseRv: number | undefined, lease: Omit<StoredLease, 'rv'>): number | undefined {
    if (this.random() < 0.1) return undefined; // a write that fails (a 5xx, a timeout): not applied
    const current = this.store.get(member);
    if ((current?.rv ?? undefined) !== baseRv) return undefined; // 409
    const rv = ++this.rv;
    this.store.set(member, { ...lease, rv });
    return rv;
  }

  join(name: string): Member {
    const member = new Member(this, name);
    this.members.push(member);
    member.schedule(0);
    return member;
  }

  /** Checks the invariant; called after every event. */
  check(): void {
    const now = this.clock.now();
    for (let b = 0; b < BUCKETS; b++) {
      const holders = this.members.filter((m) => m.holds(b, now)).map((m) => m.name);
      if (holders.length > 1) this.violations.push(`t=${now} bucket ${b} held by ${holders.join(', ')}`);
    }
  }

  run(ms: number): void {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end) {
      this.clock.advance(5);
      this.check();
    }
  }

  /** Waits (simulated) until every bucket is held once, by its owner among the running members. */
  settle(): void {
    for (let i = 0; i < 60; i++) {
      this.run(1000);
      const running = this.members.filter((m) => m.running()).map((m) => m.name).sort();
      const now = this.clock.now();
      const holders = Array.from({ length: BUCKETS }, (_, b) => this.members.filter((m) => m.holds(b, now)).map((m) => m.name).join());
      if (running.every((name) => this.balanced(name))) {
        const heldOnce = holders.every((h) => running.includes(h));
        const noClaims = this.members.every((m) => !m.running() || m.claimed.size === 0);
        if (heldOnce && noClaims && rebalanceStep(holders, this.loads, running) === holders) return;
        continue;
      }
      const owners = assignBuckets(BUCKETS, running);
      if (owners.every((owner, b) => holders[b] === owner)) return;
    }
    const now = this.clock.now();
    throw new Error(`ring did not settle: ${this.members.map((m) => `${m.name}${m.running() ? '' : '(down)'}: [${[...m.held].filter((b) => m.holds(b, now))}]`).join('; ')}`);
  }
}

class Member {
  readonly observer = new LeaseObserver();
  held = new Set<number>();
  claimed = new Set<number>();
  readonly inflight = new Map<number, number>();
  /** When each bucket held or claimed has its children cache synced (started at the claim, listing takes up to 3 s). */
  readonly cacheReadyAt = new Map<number, number>();
  lastRenewSentAt = Number.NEGATIVE_INFINITY;
  rv: number | undefined;
  /** The load-aware assignment published as the coordinator. */
  plan: BucketAssignment | undefined;
  crashed = false;
  exited = false;
  pausedUntil = 0;
  renewals = 0;
  /** Its last renewal's step found the ring at rest: the next round comes at the resting pace. */
  atRest = false;
  /** What its last step (a read and a plan, its write maybe still on the way) found. */
  lastStepAtRest = false;
  private roundStartedAt = 0;

  constructor(private readonly sim: Sim, readonly name: string) {}

  running(): boolean {
    return !this.crashed && !this.exited;
  }

  /** Holds b: may write for it now (held or reconciling, and the renew deadline not passed). */
  holds(b: number, now: number): boolean {
    return this.running() && now < this.lastRenewSentAt + RENEW_DEADLINE_MS && (this.held.has(b) || (this.inflight.get(b) ?? 0) > 0);
  }

  schedule(delay: number): void {
    this.sim.clock.setTimeout(() => this.step(), delay);
  }

  /** Runs `fn` when not paused (a paused process runs nothing, then resumes where it was). */
  private whenAwake(fn: () => void): void {
    const now = this.sim.clock.now();
    if (now < this.pausedUntil) this.sim.clock.setTimeout(() => this.whenAwake(fn), this.pausedUntil - now);
    else fn();
  }

  private deposed(): boolean {
    // The real member exits when its renew deadline passes (it has started once it renewed).
    if (this.lastRenewSentAt !== Number.NEGATIVE_INFINITY && this.sim.clock.now() >= this.lastRenewSentAt + RENEW_DEADLINE_MS) {
      this.exited = true;
      return true;
    }
    return false;
  }

  step(): void {
    this.whenAwake(() => {
      if (!this.running() || this.deposed()) return;
      this.roundStartedAt = this.sim.clock.now();
      this.atRest = false;
      const snapshot = this.sim.list(); // the server's consistent read
      this.sim.clock.setTimeout(() => this.whenAwake(() => this.onRead(snapshot)), this.sim.latency());
    });
  }

  private onRead(snapshot: Map<string, StoredLease>): void {
    if (!this.running() || this.deposed()) return;
    const now = this.sim.clock.now();
    this.observer.observe(
      [...snapshot].map(([member, l]) => ({ member, holderIdentity: l.holder, leaseDurationSeconds: LEASE_MS / 1000, content: JSON.stringify(l) })),
      now,
    );
    const own = snapshot.get(this.name);
    this.rv = own?.rv;
    const live: PublishedBuckets[] = [...snapshot]
      .filter(([member]) => member === this.name || this.observer.isLive(member, now))
      // An older member knows plain rendezvous only: it reads no assignment.
      .map(([member, l]) => ({
        member,
        held: l.held,
        claimed: l.claimed,
        ...(l.assignment === undefined || !this.sim.balanced(this.name) ? {} : { assignment: l.assignment, balancing: l.balancing, loads: new Map(l.loads), plan: l.plan }),
      }));
    const busy = new Set([...this.inflight].filter(([, n]) => n > 0).map(([b]) => b));
    const ready = (b: number) => (this.cacheReadyAt.get(b) ?? Number.POSITIVE_INFINITY) <= now;
    const plan = planBuckets({ self: this.name, bucketCount: BUCKETS, live, held: this.held, claimed: this.claimed, busy, ready, plan: this.plan });
    this.plan = plan.plan;
    this.held = new Set(plan.held);
    this.claimed = new Set(plan.claimed);
    this.lastStepAtRest = plan.atRest;
    if (plan.atRest && this.claimed.size > 0) this.sim.violations.push(`${this.name} at rest with claims at ${now}`);
    // The children caches follow held ∪ claimed: a new claim starts listing its bucket's children.
    for (const b of [...this.cacheReadyAt.keys()]) if (!this.held.has(b) && !this.claimed.has(b)) this.cacheReadyAt.delete(b);
    for (const b of this.claimed) if (!this.cacheReadyAt.has(b)) this.cacheReadyAt.set(b, now + Math.floor(this.sim.random() * 3000));
    this.sim.takes += plan.taken.length;
    // Reconcile some held buckets that are not draining (only while the lease is ours by the local clock).
    const draining = new Set(plan.draining);
    for (const b of this.held) {
      if (draining.has(b) || this.sim.random() < 0.5 || now >= this.lastRenewSentAt + RENEW_DEADLINE_MS) continue;
      if (!ready(b)) this.sim.violations.push(`${this.name} reconciled bucket ${b} at ${now} before its children cache synced`);
      this.inflight.set(b, (this.inflight.get(b) ?? 0) + 1);
      this.sim.clock.setTimeout(() => this.inflight.set(b, (this.inflight.get(b) ?? 1) - 1), Math.floor(this.sim.random() * 2500));
    }
    const record = {
      holder: this.name,
      renewals: ++this.renewals,
      held: [...this.held].sort((a, b) => a - b),
      claimed: [...this.claimed].sort((a, b) => a - b),
      ...(this.sim.balanced(this.name)
        ? { assignment: BALANCED_ASSIGNMENT, balancing: LOAD_BALANCE, loads: [...this.held].map((b): [number, number] => [b, this.sim.loads[b]!]), ...(this.plan ? { plan: this.plan } : {}) }
        : {}),
    };
    const base = this.rv;
    this.sim.clock.setTimeout(() => this.whenAwake(() => this.send(base, record, plan.atRest)), this.sim.latency());
  }

  private send(base: number | undefined, record: Omit<StoredLease, 'rv'>, atRest: boolean): void {
    if (!this.running() || this.deposed()) return; // the write gate: nothing leaves past the deadline
    const sentAt = this.sim.clock.now();
    this.sim.clock.setTimeout(() => {
      const rv = this.sim.write(this.name, base, record);
      this.sim.clock.setTimeout(() => this.whenAwake(() => {
        if (!this.running()) return;
        if (rv === undefined) return this.schedule(100);
        this.rv = rv;
        this.lastRenewSentAt = sentAt;
        this.atRest = atRest;
        // As LeaseHolder.renewLoop: at rest, the next round starts RESTING_MS after this one started, and never sooner than RETRY_MS from now.
        const now = this.sim.clock.now();
        this.schedule(atRest ? Math.max(RETRY_MS, RESTING_MS - (now - this.roundStartedAt)) : RETRY_MS + Math.floor(this.sim.random() * RETRY_MS * 0.2));
      }), this.sim.latency());
    }, this.sim.latency());
  }
}

describe('bucket hand-over', () => {
  // plain: every member older (plain rendezvous); balanced: every member current; mixed: op-a older (a
  // rolling upgrade) until it pauses past its lease and exits, then the ring moves to the balanced assignment.
  const modes: Record<string, (name: string) => boolean> = { plain: () => false, balanced: () => true, mixed: (name) => name !== 'op-a' };
  test.each([1, 2, 3, 4, 5, 6].flatMap((seed) => Object.keys(modes).map((mode) => [seed, mode] as const)))('GIVEN seed %i, %s assignment: 3 members, a crash, a join, a pause past the lease, a join THEN never two holders of a bucket, and the ring settles each time', (seed, mode) => {
    const sim = new Sim(seeded(seed), modes[mode]);
    for (const name of ['op-a', 'op-b', 'op-c']) sim.join(name);
    sim.settle();
    const afterStart = sim.takes;
    // Every bucket taken once; load-aware, then moved until the step stops.
    if (mode === 'balanced') {
      expect(afterStart).toBeGreaterThanOrEqual(BUCKETS);
      // The busiest member holds no more CRs than under the bounded assignment (settle() checked the step stopped).
      const names = ['op-a', 'op-b', 'op-c'];
      const busiest = (owners: readonly (string | undefined)[]) => Math.max(...memberLoads(owners, sim.loads, names).values());
      const holders = Array.from({ length: BUCKETS }, (_, b) => sim.members.find((m) => m.held.has(b))?.name);
      expect(busiest(holders)).toBeLessThanOrEqual(busiest(assignBucketsBalanced(BUCKETS, names)));
    }
    else expect(afterStart).toBe(BUCKETS);

    sim.members[1]!.crashed = true; // kill -9: its Lease stays until it expires
    sim.settle();
    expect(sim.takes).toBeGreaterThan(afterStart);

    sim.join('op-d');
    sim.settle();
    expect(sim.members[3]!.held.size).toBeGreaterThan(0);

    // A pause longer than the lease: the others take its buckets; on resume it finds its deadline passed and exits.
    const paused = sim.members[0]!;
    paused.pausedUntil = sim.clock.now() + LEASE_MS + 2000;
    sim.settle();
    sim.run(LEASE_MS + 3000);
    expect(paused.exited).toBe(true);

    sim.join('op-e');
    sim.settle();
    // Settled: each running member's next step finds the ring at rest.
    sim.run(2 * RESTING_MS);
    expect(sim.members.filter((m) => m.running()).map((m) => [m.name, m.lastStepAtRest])).toEqual(sim.members.filter((m) => m.running()).map((m) => [m.name, true]));
    expect(sim.violations).toEqual([]);
  });

  test('GIVEN five members joining at once THEN no bucket is ever held twice and all settle', () => {
    for (let seed = 10; seed < 20; seed++) {
      const sim = new Sim(seeded(seed));
      for (const name of ['m1', 'm2', 'm3', 'm4', 'm5']) sim.join(name);
      sim.settle();
      expect(sim.violations).toEqual([]);
    }
  });
});

describe('planBuckets', () => {
  const base = { self: 'a', bucketCount: 4 };

  test('GIVEN a bucket of ours claimed but the read does not show the claim THEN it is not taken', () => {
    const plan = planBuckets({ ...base, live: [{ member: 'a', held: [], claimed: [] }], held: new Set(), claimed: new Set([0, 1, 2, 3]) });
    expect(plan.taken).toEqual([]);
    expect([...plan.claimed].sort()).toEqual([0, 1, 2, 3]);
  });

  test('GIVEN our published claim and another member still holding the bucket THEN it waits; once released THEN taken', () => {
    const owners = planBuckets({ ...base, live: [{ member: 'a', held: [], claimed: [] }, { member: 'b', held: [], claimed: [] }], held: new Set(), claimed: new Set() }).owners;
    const ours = owners.flatMap((o, b) => (o === 'a' ? [b] : []));
    expect(ours.length).toBeGreaterThan(0);
    const b0 = ours[0]!;
    const waiting = planBuckets({ ...base, live: [{ member: 'a', held: [], claimed: [b0] }, { member: 'b', held: [b0], claimed: [] }], held: new Set(), claimed: new Set([b0]) });
    expect(waiting.taken).not.toContain(b0);
    expect(waiting.claimed.has(b0)).toBe(true);
    const taking = planBuckets({ ...base, live: [{ member: 'a', held: [], claimed: [b0] }, { member: 'b', held: [], claimed: [] }], held: new Set(), claimed: new Set([b0]) });
    expect(taking.taken).toContain(b0);
    expect(taking.held.has(b0)).toBe(true);
  });

  test('GIVEN our published claim, nobody else on the bucket, but its children cache not synced (ready false) THEN the claim stands; once ready THEN taken', () => {
    const live = [{ member: 'a', held: [], claimed: [0, 1, 2, 3] }];
    const notReady = planBuckets({ ...base, live, held: new Set(), claimed: new Set([0, 1, 2, 3]), ready: (b) => b !== 2 });
    expect(notReady.taken).toEqual([0, 1, 3]);
    expect([...notReady.claimed]).toEqual([2]);
    expect(notReady.held.has(2)).toBe(false);
    const ready = planBuckets({ ...base, live: [{ member: 'a', held: [0, 1, 3], claimed: [2] }], held: notReady.held, claimed: notReady.claimed, ready: () => true });
    expect(ready.taken).toEqual([2]);
    expect([...ready.held].sort()).toEqual([0, 1, 2, 3]);
  });

  test('GIVEN a held bucket that is no longer ours with a reconcile in flight THEN it drains, and is released once idle', () => {
    // With 'b' alone live besides us, some bucket we hold belongs to 'b'.
    const owners = planBuckets({ ...base, live: [{ member: 'b', held: [], claimed: [] }], held: new Set(), claimed: new Set() }).owners;
    const theirs = owners.findIndex((o) => o === 'b');
    expect(theirs).toBeGreaterThanOrEqual(0);
    const live = [{ member: 'a', held: [theirs], claimed: [] }, { member: 'b', held: [], claimed: [theirs] }];
    const draining = planBuckets({ ...base, live, held: new Set([theirs]), claimed: new Set(), busy: new Set([theirs]) });
    expect(draining.draining).toEqual([theirs]);
    expect(draining.held.has(theirs)).toBe(true);
    const released = planBuckets({ ...base, live, held: new Set([theirs]), claimed: new Set(), busy: new Set() });
    expect(released.released).toEqual([theirs]);
    expect(released.held.has(theirs)).toBe(false);
  });

  describe('load-aware', () => {
    const names = ['a', 'b', 'c'];
    const bounded = assignBucketsBalanced(6, names);
    const current = { assignment: BALANCED_ASSIGNMENT, balancing: LOAD_BALANCE };
    /** Every member holding its bounded buckets, publishing `load(b)` for each. */
    const settledRing = (load: (b: number) => number, extra: Partial<Record<string, object>> = {}) =>
      names.map((member) => {
        const held = bounded.flatMap((o, b) => (o === member ? [b] : []));
        return { member, held, claimed: [], ...current, loads: new Map(held.map((b) => [b, load(b)])), ...extra[member] };
      });
    const heavyOnB = (b: number) => (bounded[b] === 'b' ? 40 : 1);

    test('GIVEN a settled ring with one member carrying the heavy buckets THEN the coordinator (first by name) moves buckets off it and publishes the plan; a member reading that plan follows it', () => {
      const live = settledRing(heavyOnB);
      const heldBy = (m: string) => new Set(bounded.flatMap((o, b) => (o === m ? [b] : [])));
      const step = planBuckets({ self: 'a', bucketCount: 6, live, held: heldBy('a'), claimed: new Set() });
      expect(step.plan?.members).toEqual(names);
      expect(step.plan!.owners).toEqual(step.owners);
      const moved = step.owners.flatMap((o, b) => (o === bounded[b] ? [] : [b]));
      expect(moved.length).toBeGreaterThan(0);
      expect(moved.some((b) => bounded[b] === 'b')).toBe(true);
      // b reads a's plan: it releases the moved bucket (nothing in flight).
      const withPlan = live.map((m) => (m.member === 'a' ? { ...m, plan: step.plan } : m));
      const atB = planBuckets({ self: 'b', bucketCount: 6, live: withPlan, held: heldBy('b'), claimed: new Set() });
      expect(atB.owners).toEqual(step.owners);
      expect(atB.released).toEqual(moved.filter((x) => bounded[x] === 'b'));
      expect(atB.plan).toBeUndefined();
    });

    test('GIVEN a claim outstanding THEN the coordinator keeps its plan (no step until the hand-over is done)', () => {
      const live = settledRing(heavyOnB, { c: { claimed: [] as number[] } }).map((m) => (m.member === 'c' ? { ...m, claimed: [bounded.indexOf('b')] } : m));
      const plan = { members: names, owners: bounded };
      const step = planBuckets({ self: 'a', bucketCount: 6, live, held: new Set(bounded.flatMap((o, b) => (o === 'a' ? [b] : []))), claimed: new Set(), plan });
      expect(step.owners).toEqual(bounded);
      expect(step.plan).toBe(plan);
      // Once the claim is gone (the ring settled on the plan): balanced.
      const settled = planBuckets({ self: 'a', bucketCount: 6, live: settledRing(heavyOnB), held: new Set(bounded.flatMap((o, b) => (o === 'a' ? [b] : []))), claimed: new Set(), plan });
      expect(settled.owners).not.toEqual(bounded);
    });

    test('GIVEN a settled ring THEN every member finds it at rest; a claim outstanding, a bucket nobody holds, or a member waiting for the plan of a new member set THEN none does', () => {
      const even = () => 10;
      const plan = { members: names, owners: bounded };
      const heldBy = (m: string) => new Set(bounded.flatMap((o, b) => (o === m ? [b] : [])));
      const withPlan = (live: ReturnType<typeof settledRing>) => live.map((m) => (m.member === 'a' ? { ...m, plan } : m));
      const stepOf = (self: string, live: readonly PublishedBuckets[]) => planBuckets({ self, bucketCount: 6, live, held: heldBy(self), claimed: new Set(), ...(self === 'a' ? { plan } : {}) });
      const settled = withPlan(settledRing(even));
      expect(names.map((m) => stepOf(m, settled).atRest)).toEqual([true, true, true]);
      expect(stepOf('a', settled).plan).toBe(plan); // even loads: the coordinator keeps its plan

      const ofB = bounded.indexOf('b');
      const claimed = settled.map((m) => (m.member === 'c' ? { ...m, claimed: [ofB] } : m));
      expect(names.map((m) => stepOf(m, claimed).atRest)).toEqual([false, false, false]);

      const unheld = settled.map((m) => (m.member === 'b' ? { ...m, held: m.held.filter((b) => b !== ofB) } : m));
      expect(stepOf('a', unheld).atRest).toBe(false);

      // d joined: the coordinator's published plan is for {a, b, c}; b holds what it holds and waits for a's next plan.
      const joined = [...settled, { member: 'd', held: [], claimed: [], ...current, loads: new Map<number, number>() }];
      const atB = planBuckets({ self: 'b', bucketCount: 6, live: joined, held: heldBy('b'), claimed: new Set() });
      expect(atB.owners).toEqual(bounded);
      expect(atB.atRest).toBe(false);
      expect(stepOf('a', joined).atRest).toBe(false); // its new plan gives d buckets d does not hold yet
    });

    test('GIVEN a member that does not publish load-aware balancing (an older replica) THEN no plan, and the bounded owners', () => {
      const live = settledRing(heavyOnB).map((m) => (m.member === 'c' ? { ...m, balancing: undefined } : m));
      const step = planBuckets({ self: 'a', bucketCount: 6, live, held: new Set(), claimed: new Set() });
      expect(step.plan).toBeUndefined();
      expect(step.owners).toEqual(bounded);
    });

    test('GIVEN c left and the coordinator has not yet published for the new member set THEN b holds what it holds and claims nothing; once published THEN b follows', () => {
      const stale = { members: names, owners: bounded };
      const live = settledRing(heavyOnB)
        .filter((m) => m.member !== 'c')
        .map((m) => (m.member === 'a' ? { ...m, plan: stale } : m));
      const ofB = new Set(bounded.flatMap((o, b) => (o === 'b' ? [b] : [])));
      const waiting = planBuckets({ self: 'b', bucketCount: 6, live, held: ofB, claimed: new Set() });
      expect([...waiting.held].sort()).toEqual([...ofB].sort());
      expect([...waiting.claimed]).toEqual([]);
      expect(waiting.released).toEqual([]);
      // The coordinator's step for {a, b}: every bucket owned; b claims its share of c's.
      const atA = planBuckets({ self: 'a', bucketCount: 6, live, held: new Set(bounded.flatMap((o, b) => (o === 'a' ? [b] : []))), claimed: new Set(), plan: stale });
      expect(atA.plan!.members).toEqual(['a', 'b']);
      expect(atA.owners.every((o) => o === 'a' || o === 'b')).toBe(true);
      const following = planBuckets({ self: 'b', bucketCount: 6, live: live.map((m) => (m.member === 'a' ? { ...m, plan: atA.plan } : m)), held: ofB, claimed: new Set() });
      expect(following.owners).toEqual(atA.owners);
      expect([...following.claimed].sort()).toEqual(atA.owners.flatMap((o, b) => (o === 'b' && !ofB.has(b) ? [b] : [])));
    });
  });
});
