/**
 * What the reconcile steps read of the caches: a CR or child by name, and a CR's children by owner uid.
 * An `Informer` satisfies {@link CacheReader}; unit tests use an in-memory map.
 *
 * A sharded replica caches children per bucket (lib/runtime/sharding/bucket-child-caches.ts), and every
 * child carries its CR's bucket label, so one reconcile looks only in its CR's bucket
 * ({@link ReconcileScope.bucket}, {@link readerIn}, {@link relatedIn}): one cache per lookup, not one per
 * bucket held. A child whose bucket label was changed by hand is then not found by its CR's reconcile,
 * which creates it: the create meets AlreadyExists, the GET that follows finds the child ours (its
 * ownerReference) and the apply sets the label back (adoption.ts, step 3).
 */
import type { ResolvedKind } from '../../operator/kinds.js';
import type { RelatedLookup } from '../../operator/render/render-children.js';
import type { KubeObject } from '../client/kube-client.js';

/** The read side of a cache the reconciler needs (an {@link Informer} satisfies it). */
export interface CacheReader {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  byOwnerUid(uid: string): KubeObject[];
  /**
   * Sharded: the cache of one bucket only (its children), or undefined when that bucket is not cached
   * here (then the whole reader answers). @default absent: one cache, no buckets
   */
  inBucket?(bucket: number): CacheReader | undefined;
}

/** `reader` narrowed to `bucket` where it keeps buckets apart and caches that one; else `reader`. */
export function readerIn(reader: CacheReader, bucket: number | undefined): CacheReader {
  return bucket === undefined ? reader : (reader.inBucket?.(bucket) ?? reader);
}

/** `lookup` narrowed to `bucket` where it keeps buckets apart ({@link RelatedLookup.inBucket}); else `lookup`. */
export function relatedIn(lookup: RelatedLookup | undefined, bucket: number | undefined): RelatedLookup | undefined {
  return bucket === undefined || !lookup?.inBucket ? lookup : lookup.inBucket(bucket);
}

/** A child kind's cache and REST resource. */
export interface ChildCache {
  readonly kind: ResolvedKind;
  readonly cache: CacheReader;
}
