/**
 * The bucket of a custom resource in a sharded run: a stable hash of its `namespace/name`, modulo a fixed
 * number of buckets. Every replica of a ring computes the same bucket for the same CR, on any platform
 * and in any Node version (SHA-256 from node:crypto, the first 4 bytes read big-endian).
 *
 * Why `namespace/name` and not the uid: the bucket is known before the CR exists on the server (a child's
 * bucket label can be stamped from the CR's key alone), and a CR deleted and re-created under the same
 * name lands in the same bucket, so its leftover children stay in the cache of the replica that will
 * reconcile it.
 *
 * The algorithm is versioned ({@link SHARD_HASH_VERSION}); replicas record it in their membership Lease
 * and refuse to share a ring with a replica hashing differently (membership.ts).
 */
import { createHash } from 'node:crypto';
import { brandClass } from '../../operator/brand.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { RuntimeError } from '../runtime-error.js';

/** The name of this hash algorithm, recorded in every member's Lease. */
export const SHARD_HASH_VERSION = 'sha256-v1';

/** @default 32: enough for rendezvous hashing to spread evenly over up to ~10 replicas, few enough to list in a Lease annotation */
export const DEFAULT_BUCKET_COUNT = 32;

/** The largest bucket count accepted (a member lists its buckets in its Lease's annotations). */
export const MAX_BUCKET_COUNT = 1024;

/** An invalid sharding configuration; the message names the field and the reason. Step `sharding`; branded. */
export class ShardingConfigError extends RuntimeError {
  static {
    brandClass(this, 'ShardingConfigError');
  }

  override readonly reason = 'InvalidShardingConfig';
  override readonly step = 'sharding';
  constructor(message: string) {
    super(`sharding: ${message}`);
    this.name = 'ShardingConfigError';
  }
}

/**
 * Checks a bucket count: a whole number in [1, {@link MAX_BUCKET_COUNT}].
 * @throws ShardingConfigError naming `bucketCount` and the value
 */
export function validateBucketCount(bucketCount: number): void {
  if (!Number.isInteger(bucketCount) || bucketCount < 1 || bucketCount > MAX_BUCKET_COUNT) {
    throw new ShardingConfigError(`bucketCount must be a whole number from 1 to ${MAX_BUCKET_COUNT} (got ${bucketCount})`);
  }
}

/**
 * The bucket of the object `namespace/name` (cluster-scoped: `name` alone), in [0, bucketCount).
 * @throws ShardingConfigError for an invalid bucket count
 */
export function bucketOf(namespace: string | undefined, name: string, bucketCount: number): number {
  validateBucketCount(bucketCount);
  const digest = createHash('sha256').update(namespace ? `${namespace}/${name}` : name).digest();
  return digest.readUInt32BE(0) % bucketCount;
}

/** @default 65 536: keys a {@link bucketOfKey} remembers before it starts over (about 3 MB at most). */
export const BUCKET_MEMO_CAPACITY = 1 << 16;

/**
 * {@link bucketOf} by cache key (`namespace/name`, {@link ObjectRef.cacheKey}), remembered per key: the
 * runtime asks for a CR's bucket four to six times per reconcile (the worker's admission, the CR read
 * from its bucket's cache, its children's caches, the label stamped on its children when it renders), and
 * each answer is otherwise a SHA-256 with a `Hash` object and a digest allocated (2.5 µs on Node 26, 0.7 µs
 * of it garbage collection; docs/reference/benchmark.md). At most `capacity` keys are kept; past that the
 * memory is cleared and filled again (a key is then hashed again: slower, never another answer).
 * @throws ShardingConfigError for an invalid bucket count or capacity below 1
 */
export function bucketOfKey(bucketCount: number, capacity: number = BUCKET_MEMO_CAPACITY): (key: string) => number {
  validateBucketCount(bucketCount);
  if (!Number.isInteger(capacity) || capacity < 1) throw new ShardingConfigError(`the bucket memo's capacity must be a whole number of at least 1 (got ${capacity})`);
  const known = new Map<string, number>();
  return (key) => {
    const remembered = known.get(key);
    if (remembered !== undefined) return remembered;
    const { namespace, name } = ObjectRef.splitCacheKey(key);
    const bucket = bucketOf(namespace, name, bucketCount);
    if (known.size >= capacity) known.clear();
    known.set(key, bucket);
    return bucket;
  };
}
