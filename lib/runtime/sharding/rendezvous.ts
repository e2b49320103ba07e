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
