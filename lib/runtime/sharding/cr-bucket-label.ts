/**
 * The bucket label on a custom resource of a sharded run: `operator.cdk8s.io/shard-bucket: "<n>"`, the
 * same label and the same bucket function as its children (bucket-label.ts, bucket-hash.ts), so that a
 * replica can select its CRs on the server (`operator.cdk8s.io/shard-bucket in (…)`) as it selects its
 * children.
 *
 * The label is a cache of `bucketOf(namespace, name, bucketCount)`, never a source of truth: the bucket of a
 * CR is always recomputed from its key, so a label that is missing (a CR created before sharding, or with
 * no webhook to stamp it) or wrong (edited by hand, or left by a ring with another bucket count) can make
 * a CR invisible to a selected watch but can never give it two owners. Who writes it: the replica that
 * holds the CR's computed bucket (membership.ts), and only it, with its fenced writer; so a CR has one
 * writer of its label at a time, and it is stamped or repaired before that replica's first reconcile of it
 * (controller.ts). A hand-edited label is repaired (Warning Event `ShardBucketLabelRepaired`, warn log),
 * not refused: nothing else in the CR depends on it.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 */
import type { KubeObject } from '../client/kube-client.js';
import { bucketOf } from './bucket-hash.js';
import { SHARD_BUCKET_LABEL } from './bucket-label.js';

/** What a CR's bucket label needs: nothing, a first stamp, or the repair of a wrong value. */
export type CrBucketLabelVerdict =
  | { readonly action: 'none'; readonly bucket: number }
  | { readonly action: 'stamp'; readonly bucket: number }
  | { readonly action: 'repair'; readonly bucket: number; readonly found: string };

/**
 * Checks the bucket label of `cr` against its computed bucket: `bucket` when the caller has it already (a
 * sharded replica's memo, bucket-hash.ts `bucketOfKey`), else hashed here. Pure.
 * @throws ShardingConfigError for an invalid bucket count (bucket-hash.ts)
 */
export function crBucketLabelVerdict(cr: KubeObject, bucketCount: number, bucket: number = bucketOf(cr.metadata?.namespace, cr.metadata?.name ?? '', bucketCount)): CrBucketLabelVerdict {
  const found = cr.metadata?.labels?.[SHARD_BUCKET_LABEL];
  if (found === undefined) return { action: 'stamp', bucket };
  if (found === String(bucket)) return { action: 'none', bucket };
  return { action: 'repair', bucket, found };
}

/**
 * The JSON merge patch (RFC 7386, `application/merge-patch+json`) that sets the bucket label, guarded by
 * the CR's `resourceVersion` (a 409 Conflict when the CR changed since it was read; the next event retries).
 */
export function crBucketLabelPatch(cr: KubeObject, bucket: number): { metadata: { resourceVersion?: string; labels: Record<string, string> } } {
  const resourceVersion = cr.metadata?.resourceVersion;
  return { metadata: { ...(resourceVersion ? { resourceVersion } : {}), labels: { [SHARD_BUCKET_LABEL]: String(bucket) } } };
}

/**
 * The label selector of the CRs of `buckets` (set-based, `operator.cdk8s.io/shard-bucket in (1,4,7)`),
 * with `base` ANDed in front when given. Buckets are listed sorted, without repeats.
 * @throws Error for an empty bucket list (a selector `in ()` is invalid on the server)
 */
export function crBucketsSelector(buckets: Iterable<number>, base?: string): string {
  const sorted = [...new Set(buckets)].sort((a, b) => a - b);
  if (sorted.length === 0) throw new Error('sharding: a bucket selector needs at least one bucket');
  const own = `${SHARD_BUCKET_LABEL} in (${sorted.join(',')})`;
  return base ? `${base},${own}` : own;
}

/** The label selector of CRs that carry no bucket label yet (`!operator.cdk8s.io/shard-bucket`). */
export const UNLABELLED_SELECTOR = `!${SHARD_BUCKET_LABEL}`;

/**
 * The label selector of the CRs no bucket informer selects: no bucket label, or a value that is not a
 * bucket of this ring (`operator.cdk8s.io/shard-bucket notin (0,1,…,bucketCount-1)`; `notin` also
 * matches objects without the label). Every replica watches them, so that the holder of each one's
 * computed bucket sees it and stamps it: no CR is left where no replica looks.
 */
export function strayCrSelector(bucketCount: number): string {
  return `${SHARD_BUCKET_LABEL} notin (${Array.from({ length: bucketCount }, (_, b) => b).join(',')})`;
}
