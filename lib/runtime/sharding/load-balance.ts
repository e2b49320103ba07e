/**
 * Load-aware bucket assignment: buckets moved from the busiest member to the least busy one, step by
 * step, until no step lowers the busiest by enough. A bucket's load is the number of CRs in it (each member
 * publishes its held buckets' counts in its Lease: membership.ts); hashing spreads CRs over buckets
 * evenly only on average (in the benchmark one of 3 replicas held 359 of 1000 CRs with 11 of 32 buckets,
 * 1.08× a third), and a member holds whole buckets.
 *
 * handover.ts decides when: one member of the ring (the first live member by name, the coordinator)
 * {@link balance}s the assignment it published last, once the ring is settled (every bucket held by its
 * owner, no claim outstanding, every bucket's load published), or the bounded rendezvous assignment of a
 * new member set when every bucket's load is known; the others follow what it publishes. A bucket's load
 * does not depend on who holds it, so the steps are taken at once and each bucket moves once, to its
 * final member.
 *
 * Why it stops: a step moves load `x` from the busiest member A to the least busy Z with `0 < x < L(A) − L(Z)`,
 * so the sum of the squares of the members' loads falls; with loads that do not change, steps end. A
 * step is taken only when it lowers the busier of the two by {@link minimumGain} or more, so loads that
 * drift by a few CRs do not move buckets back and forth.
 *
 * Pure: no I/O. test/runtime/sharding/load-balance.test.ts.
 */

/** The name a member publishes to say it follows the load-aware assignment (handover.ts uses it only when every live member publishes it). */
export const LOAD_BALANCE = 'cr-count-v1';

/** An assignment of every bucket: `owners[b]` is the member owning bucket `b`; `members` the member set it was made for (sorted). */
export interface BucketAssignment {
  readonly members: readonly string[];
  readonly owners: readonly (string | undefined)[];
}

/**
 * The least a step must lower the busier member's load by: 5 % of the mean member load, at least
 * {@link MINIMUM_GAIN_CRS}. (A move costs a hand-over: the bucket's reconciles pause for a few retry
 * periods, and its new member lists its children; with few CRs, a hand-edited label or a handful of new
 * CRs would otherwise move buckets back and forth.)
 */
export function minimumGain(totalLoad: number, members: number): number {
  return Math.max(MINIMUM_GAIN_CRS, Math.ceil((0.05 * totalLoad) / Math.max(1, members)));
}

/** No bucket moves by load for fewer CRs than this: a ring of a few dozen CRs keeps the bounded assignment. */
export const MINIMUM_GAIN_CRS = 10;

/**
 * {@link rebalanceStep} until it changes nothing. Returns `owners` itself when no step is worth it. The
 * steps end (module docs); a cap of 10 000 steps guards against a bug.
 */
export function balance(owners: readonly (string | undefined)[], loads: readonly number[], members: readonly string[]): readonly (string | undefined)[] {
  for (let step = 0; step < 10_000; step++) {
    const next = rebalanceStep(owners, loads, members);
    if (next === owners) return owners;
    owners = next;
  }
  return owners;
}

/** Each member's load under `owners` (members owning no bucket: 0). */
export function memberLoads(owners: readonly (string | undefined)[], loads: readonly number[], members: readonly string[]): Map<string, number> {
  const out = new Map(members.map((m) => [m, 0]));
  owners.forEach((owner, bucket) => {
    if (owner !== undefined) out.set(owner, (out.get(owner) ?? 0) + (loads[bucket] ?? 0));
  });
  return out;
}

/**
 * One step: between the busiest member A and the least busy Z (ties: the smaller name is A, the larger
 * Z), the move of one of A's buckets to Z, or the swap of one of A's with a lighter one of Z's, that
 * leaves the busier of the two the least loaded (ties: a move before a swap, then the smaller buckets);
 * taken only when that lowers A's load by at least {@link minimumGain}. Returns `owners` itself when no
 * step is worth it, else a new array. `loads[b]`: bucket b's CR count; `members`: sorted.
 */
export function rebalanceStep(owners: readonly (string | undefined)[], loads: readonly number[], members: readonly string[]): readonly (string | undefined)[] {
  if (members.length < 2) return owners;
  const perMember = memberLoads(owners, loads, members);
  let busiest = members[0]!;
  let idlest = members[0]!;
  for (const m of members) {
    if (perMember.get(m)! > perMember.get(busiest)!) busiest = m;
    if (perMember.get(m)! <= perMember.get(idlest)!) idlest = m;
  }
  const high = perMember.get(busiest)!;
  const low = perMember.get(idlest)!;
  const total = [...perMember.values()].reduce((a, b) => a + b, 0);
  const bucketsOf = (m: string) => owners.flatMap((owner, b) => (owner === m ? [b] : []));
  let best: { from: number; to: number | undefined; peak: number } | undefined;
  for (const from of bucketsOf(busiest)) {
    for (const to of [undefined, ...bucketsOf(idlest)]) {
      const moved = (loads[from] ?? 0) - (to === undefined ? 0 : (loads[to] ?? 0));
      if (moved <= 0 || moved >= high - low) continue;
      const peak = Math.max(high - moved, low + moved);
      // Buckets come in ascending order, moves before swaps: replace only for a lower peak, or a move for a swap.
      if (best === undefined || peak < best.peak || (peak === best.peak && to === undefined && best.to !== undefined)) best = { from, to, peak };
    }
  }
  if (best === undefined || high - best.peak < minimumGain(total, members.length)) return owners;
  const next = [...owners];
  next[best.from] = idlest;
  if (best.to !== undefined) next[best.to] = busiest;
  return next;
}
