/**
 * The hand-over of buckets between the members of a ring: one pure decision, {@link planBuckets}, that a
 * member takes after each read of every member's Lease, before it writes its own. It keeps a single
 * writer per bucket across joins, leaves and crashes.
 *
 * What a member publishes in its Lease (membership.ts): the buckets it `held`s (it may reconcile their
 * CRs) and the buckets it `claimed` (it wants them, and reconciles none of them yet).
 *
 * The protocol, for a member M and a bucket b:
 * 1. **Claim.** When b's rendezvous owner among the live members is M (rendezvous.ts), M publishes a claim
 *    on b (a write of its own Lease).
 * 2. **Take.** M holds b only after a read of every Lease that (a) shows its own claim on b, so the read
 *    happened after the claim's write, and (b) shows no other live member holding or claiming b, and
 *    only once M's caches of b are ready ({@link PlanInput.ready}: the children of b, which M starts
 *    watching when it claims b, have been listed), so that its first reconcile of b sees every child.
 * 3. **Release.** When b's owner is no longer M, M stops admitting work for b; once its reconciles in
 *    flight for b finished ({@link PlanInput.busy}), it drops b from `held` and publishes that.
 * 4. **Conflict.** Of two live members claiming b, the one that loses b's rendezvous score
 *    ({@link wins}, which does not depend on anyone's view of the member set) withdraws; the winner
 *    waits. A claim is withdrawn also when b's owner is no longer M.
 *
 * Why no two members hold b at once: the API server orders the writes and a LIST is a consistent read.
 * If M and N both take b, each took it on a read made after its own claim's write that showed no claim
 * of the other. Say M's read came first: then N's claim was written after M's read, so after M's claim,
 * and N's read, after N's claim, shows M's claim (or M's hold): N cannot take b. A member's holds and
 * claims count only while it is live: a member whose Lease was seen unchanged for its lease duration
 * (lease/lease-observer.ts) is ignored, and a member stops all work when its own renew deadline passes, which
 * is shorter (client-go's "deposed before replaced": membership.ts).
 *
 * The owners: rendezvous hashing with bounded loads ({@link assignBucketsBalanced}) when every other live
 * member publishes that it computes it ({@link PublishedBuckets.assignment}), else plain rendezvous
 * ({@link assignBuckets}): a ring of replicas from before and after that change (a rolling upgrade)
 * agrees on plain rendezvous, and moves to the balanced one, like a join, once the last old replica
 * left. Safety does not depend on members agreeing on the owners (the rule above); only settling does.
 *
 * Load-aware, once every other live member publishes {@link PublishedBuckets.balancing} (load-balance.ts):
 * the first live member by name (the coordinator) publishes an assignment ({@link BucketPlan.plan}), and
 * the others follow it when it was made for the member set their read shows; until then (a join, a leave)
 * they hold what they hold and claim nothing. For a new member set the coordinator starts from the
 * bounded assignment, balanced at once when every bucket's CR count is published
 * ({@link PublishedBuckets.loads}); later it balances its own plan each time the ring is settled on it
 * (every bucket held by its owner, no claim): moves and swaps from the busiest member to the least busy
 * while one lowers the busiest by 5 % of the mean load and at least 10 CRs ({@link balance}).
 *
 * Pure: no I/O, no clock. test/runtime/sharding/handover.test.ts runs it against a simulated API server
 * on a fake clock with joins, crashes and pauses, and checks at every step that no two members hold a
 * bucket.
 */
import { LOAD_BALANCE, balance, type BucketAssignment } from './load-balance.js';
import { BALANCED_ASSIGNMENT, assignBuckets, assignBucketsBalanced, wins } from './rendezvous.js';

/** What one member published in its Lease, as last read. */
export interface PublishedBuckets {
  /** The member's name (its Lease's name). */
  readonly member: string;
  readonly held: readonly number[];
  readonly claimed: readonly number[];
  /** The assignment the member computes, {@link BALANCED_ASSIGNMENT}; absent: plain rendezvous only (older replicas). */
  readonly assignment?: string;
  /** {@link LOAD_BALANCE} when the member follows the load-aware assignment; absent: it does not (older replicas). */
  readonly balancing?: string;
  /** The CR count of each bucket it holds (bucket → count). @default none published */
  readonly loads?: ReadonlyMap<number, number>;
  /** The assignment it published as the coordinator; read from the coordinator only. */
  readonly plan?: BucketAssignment;
}

export interface PlanInput {
  /** This member's name. */
  readonly self: string;
  readonly bucketCount: number;
  /**
   * Every live member's published buckets from one read of the ring's Leases, this member's own record
   * included (as read from the server: it proves which of its claims were written before the read).
   * Members whose Lease expired are left out.
   */
  readonly live: readonly PublishedBuckets[];
  /** The buckets this member holds now (its own truth, which it may not have published yet). */
  readonly held: ReadonlySet<number>;
  /** The buckets this member claims now. */
  readonly claimed: ReadonlySet<number>;
  /** Held buckets with reconciles in flight: not released until they finish. @default none */
  readonly busy?: ReadonlySet<number>;
  /**
   * True when this member's caches of a claimed bucket are synced (its children listed); a claim is
   * taken only then, and stands until then. @default every bucket is ready
   */
  readonly ready?: (bucket: number) => boolean;
  /** The assignment this member published as the coordinator in its last step ({@link BucketPlan.plan}). @default none */
  readonly plan?: BucketAssignment;
}

export interface BucketPlan {
  /** The buckets held after this step: work for them may run. Publish them. */
  readonly held: ReadonlySet<number>;
  /** The buckets claimed after this step. Publish them. */
  readonly claimed: ReadonlySet<number>;
  /** Newly held: enqueue every CR of these buckets. */
  readonly taken: readonly number[];
  /** No longer held (work for them stopped before this step): publish, then drop their caches. */
  readonly released: readonly number[];
  /** Held, no longer this member's, with work in flight: admit no new work for them. */
  readonly draining: readonly number[];
  /**
   * The owner of each bucket among the live members: rendezvous (bounded), or the coordinator's load-aware
   * plan; while a load-aware member waits for the coordinator's plan for a new member set, the current
   * holders (undefined: a bucket nobody holds).
   */
  readonly owners: readonly (string | undefined)[];
  /** Load-aware and this member is the coordinator: the assignment to publish (and to pass back as {@link PlanInput.plan}). */
  readonly plan?: BucketAssignment;
  /**
   * The ring at rest as this read shows it: every bucket held by its owner in {@link owners} alone, no
   * claim outstanding, no member waiting for the coordinator's plan, and this step takes, releases and
   * drains nothing. While it stays true nothing moves until a member joins, leaves or expires, or the
   * coordinator publishes another plan; membership.ts then renews at a slower pace.
   */
  readonly atRest: boolean;
}

/** One step of the protocol for `self` (see the module docs). Pure. */
export function planBuckets(input: PlanInput): BucketPlan {
  const { self, bucketCount } = input;
  const members = new Set(input.live.map((m) => m.member));
  members.add(self);
  const sorted = [...members].sort();
  const balanced = input.live.every((m) => m.member === self || m.assignment === BALANCED_ASSIGNMENT);
  let owners = (balanced ? assignBucketsBalanced : assignBuckets)(bucketCount, sorted);
  let loadPlan: BucketAssignment | undefined;
  let waiting = false;
  if (balanced && input.live.every((m) => m.member === self || m.balancing === LOAD_BALANCE)) {
    const coordinator = sorted[0]!;
    // The coordinator's: its last step's, else what its Lease shows (a restarted process).
    const published = (coordinator === self ? input.plan : undefined) ?? input.live.find((m) => m.member === coordinator)?.plan;
    const current = published && sameMembers(published.members, sorted) && published.owners.length === bucketCount ? published.owners : undefined;
    if (coordinator === self) {
      if (current) {
        const loads = settledLoads(input.live, current, bucketCount);
        owners = loads ? balance(current, loads, sorted) : current;
      } else {
        // A new member set: from the bounded assignment, balanced at once if every bucket's count is known.
        const loads = knownLoads(input.live, bucketCount);
        if (loads) owners = balance(owners, loads, sorted);
      }
      loadPlan = published?.owners === owners ? published : { members: sorted, owners };
    } else if (current) owners = current;
    else {
      // The coordinator has not published for this member set yet: hold what is held, claim nothing.
      waiting = true;
      const holders = new Map(input.live.filter((m) => m.member !== self).flatMap((m) => m.held.map((b) => [b, m.member] as const)));
      owners = Array.from({ length: bucketCount }, (_, b) => (input.held.has(b) ? self : holders.get(b)));
    }
  }
  const own = input.live.find((m) => m.member === self);
  const publishedClaims = new Set(own?.claimed ?? []);
  const others = input.live.filter((m) => m.member !== self);
  const heldByOther = new Set<number>();
  const claimsOf = new Map<number, string[]>();
  for (const other of others) {
    for (const b of other.held) heldByOther.add(b);
    for (const b of other.claimed) claimsOf.set(b, [...(claimsOf.get(b) ?? []), other.member]);
  }
  const busy = input.busy ?? new Set<number>();

  const held = new Set<number>();
  const claimed = new Set<number>();
  const taken: number[] = [];
  const released: number[] = [];
  const draining: number[] = [];
  for (let b = 0; b < bucketCount; b++) {
    const mine = owners[b] === self;
    if (input.held.has(b)) {
      if (mine) held.add(b);
      else if (busy.has(b)) {
        held.add(b);
        draining.push(b);
      } else released.push(b);
      continue;
    }
    if (!mine) continue; // a claim on a bucket that is no longer ours is withdrawn
    const rivals = claimsOf.get(b) ?? [];
    if (rivals.some((rival) => wins(rival, self, b))) continue; // the stronger claim stands: withdraw
    claimed.add(b);
    // Take only on a read that shows our claim (so it was made after the claim's write), and nobody else's.
    // And only once this member's caches of b are synced: its first reconcile of b must see every child.
    if (input.claimed.has(b) && publishedClaims.has(b) && !heldByOther.has(b) && rivals.length === 0 && (input.ready?.(b) ?? true)) {
      claimed.delete(b);
      held.add(b);
      taken.push(b);
    }
  }
  const atRest =
    !waiting && taken.length === 0 && released.length === 0 && draining.length === 0 && claimed.size === 0 &&
    heldByOwners(input.live, owners) && input.live.reduce((sum, m) => sum + m.held.length, 0) === bucketCount;
  return { held, claimed, taken, released, draining, owners, ...(loadPlan ? { plan: loadPlan } : {}), atRest };
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((m, i) => m === b[i]);
}

/** The CR count of every bucket, as its live holder published it; undefined when a bucket has none. */
function knownLoads(live: readonly PublishedBuckets[], bucketCount: number): number[] | undefined {
  const loads = new Array<number>(bucketCount).fill(-1);
  for (const member of live) for (const b of member.held) loads[b] = member.loads?.get(b) ?? -1;
  return loads.includes(-1) ? undefined : loads;
}

/**
 * The CR count of every bucket when the read shows the ring settled on `owners`: each bucket held by its
 * owner alone, with its count published, and no claim outstanding. Else undefined (a hand-over is under way).
 */
function settledLoads(live: readonly PublishedBuckets[], owners: readonly (string | undefined)[], bucketCount: number): number[] | undefined {
  return heldByOwners(live, owners) ? knownLoads(live, bucketCount) : undefined;
}

/** True when each bucket a live member holds is held by its owner alone (one name per bucket, so never by two), and nothing is claimed. */
function heldByOwners(live: readonly PublishedBuckets[], owners: readonly (string | undefined)[]): boolean {
  return live.every((m) => m.claimed.length === 0 && m.held.every((b) => owners[b] === m.member));
}
