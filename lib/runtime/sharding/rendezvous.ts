/**
 * Rendezvous (highest-random-weight) hashing of buckets onto members (Thaler & Ravishankar, 1998): each
 * bucket goes to the member with the highest score `sha256(member, bucket)`. Every replica computes the
 * same assignment from the same member set, with no coordination.
 *
 * Properties the hand-over relies on (test/runtime/sharding/rendezvous.test.ts checks them):
 * - every bucket has exactly one member, for any non-empty member set;
 * - minimal movement: a member joining takes only buckets it now wins (no bucket moves between two other
 *   members); a member leaving hands only its own buckets to the others;
 * - a score depends on the member and the bucket only, never on the rest of the set: two replicas that
 *   disagree on the member set still agree on who of two members wins a bucket (handover.ts's tie-break).
 *
 * {@link assignBucketsBalanced} is the same hashing with bounded loads (Mirrokni, Thorup & Zadimoghaddam,
 * "Consistent Hashing with Bounded Loads", 2018, with the bound tight): every member gets ⌊buckets /
 * members⌋ or ⌈buckets / members⌉, so the busiest replica's share is at most one bucket above even (plain rendezvous gave 13 of 32 buckets to
 * one of 3 replicas in the benchmark), at the cost of a few more buckets moving on a join or a leave.
 */
import { createHash } from 'node:crypto';

/**
 * The score of `member` for `bucket`: the first 6 bytes of SHA-256 of `member` NUL `bucket`, as an
 * integer in [0, 2^48).
 */
export function rendezvousScore(member: string, bucket: number): number {
  return createHash('sha256').update(`${member}\0${bucket}`).digest().readUIntBE(0, 6);
}

/** True when `a` beats `b` for `bucket`: the higher score, equal scores broken by the smaller name. */
export function wins(a: string, b: string, bucket: number): boolean {
  const sa = rendezvousScore(a, bucket);
  const sb = rendezvousScore(b, bucket);
  return sa > sb || (sa === sb && a < b);
}

/**
 * The member of each bucket: element `i` is the member owning bucket `i`. Empty members: every element
 * is undefined. Duplicate names count once.
 */
export function assignBuckets(bucketCount: number, members: readonly string[]): (string | undefined)[] {
  const unique = [...new Set(members)];
  const owners: (string | undefined)[] = [];
  for (let bucket = 0; bucket < bucketCount; bucket++) {
    let best: string | undefined;
    for (const member of unique) if (best === undefined || wins(member, best, bucket)) best = member;
    owners.push(best);
  }
  return owners;
}

/**
 * The name a member publishes to say it computes {@link assignBucketsBalanced} (handover.ts uses it only
 * when every live member publishes it, so a ring of old and new replicas agrees on plain rendezvous).
 */
export const BALANCED_ASSIGNMENT = 'rendezvous-bounded-v1';

/**
 * Like {@link assignBuckets}, with every member owning ⌊bucketCount / members⌋ or ⌈bucketCount / members⌉
 * buckets: the (member, bucket) pairs are taken in descending {@link rendezvousScore} order (ties: the
 * smaller member name, then the smaller bucket), each bucket going to the first member of its pairs that
 * still has room; once `bucketCount mod members` members have the larger count, the rest have room for the
 * smaller only. Every replica computes the same result from the same member set. Empty members: every
 * element is undefined. Duplicate names count once.
 */
export function assignBucketsBalanced(bucketCount: number, members: readonly string[]): readonly (string | undefined)[] {
  const unique = [...new Set(members)].sort();
  // Every round asks again (each retry period) and the member set rarely changes: the last answer is kept
  // (bucketCount × members SHA-256 scores and a sort: 10 of an idle shard's 171 ms of CPU over 38 s).
  const key = `${bucketCount}\0${unique.join('\0')}`;
  if (lastBalanced?.key === key) return lastBalanced.owners;
  const owners: (string | undefined)[] = new Array<string | undefined>(bucketCount).fill(undefined);
  if (unique.length === 0) return owners;
  const small = Math.floor(bucketCount / unique.length);
  const large = Math.ceil(bucketCount / unique.length);
  const largeSlots = bucketCount % unique.length;
  const pairs: { member: string; bucket: number; score: number }[] = [];
  for (const member of unique) for (let bucket = 0; bucket < bucketCount; bucket++) pairs.push({ member, bucket, score: rendezvousScore(member, bucket) });
  pairs.sort((a, b) => b.score - a.score || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0) || a.bucket - b.bucket);
  const load = new Map<string, number>();
  let atLarge = 0;
  for (const { member, bucket } of pairs) {
    const has = load.get(member) ?? 0;
    const room = atLarge < largeSlots ? large : small;
    if (owners[bucket] !== undefined || has >= room) continue;
    owners[bucket] = member;
    load.set(member, has + 1);
    if (has + 1 === large && large > small) atLarge++;
  }
  lastBalanced = { key, owners: Object.freeze(owners) };
  return lastBalanced.owners;
}

let lastBalanced: { readonly key: string; readonly owners: readonly (string | undefined)[] } | undefined;
