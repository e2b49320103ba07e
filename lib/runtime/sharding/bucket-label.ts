/**
 * The bucket label of a sharded run: every child a sharded replica applies carries its owner's bucket
 * as the label `operator.cdk8s.io/shard-bucket: "<n>"`, so that each replica lists and watches only the
 * children of the buckets it holds or is taking (label selector `…,operator.cdk8s.io/shard-bucket=<n>`,
 * one informer set per bucket: bucket-child-caches.ts).
 *
 * The runtime stamps the label on render's output before the desired-hash annotation is computed
 * (child-diff.ts), never render itself. Server-side apply makes the operator's field manager the owner of
 * the label, so turning sharding on or off is one apply of each child by that manager: sharding on, the
 * hash changes and the apply adds the label; sharding off, the hash changes back and the apply, which no
 * longer sets the label, removes it (a field its manager owned alone and stopped applying).
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 */
import type { KubeObject } from '../client/kube-client.js';

/** Value: the owning CR's bucket (bucket-hash.ts), in decimal. Only on children of a sharded run. */
export const SHARD_BUCKET_LABEL = 'operator.cdk8s.io/shard-bucket';

/** A copy of `child` carrying `bucket` in {@link SHARD_BUCKET_LABEL} (whatever render set there). */
export function withBucketLabel<T extends KubeObject>(child: T, bucket: number): T {
  return { ...child, metadata: { ...child.metadata, labels: { ...(child.metadata?.labels ?? {}), [SHARD_BUCKET_LABEL]: String(bucket) } } };
}

/**
 * The label selector of one bucket's children: `base` (e.g. `app.kubernetes.io/managed-by=app`) and
 * `operator.cdk8s.io/shard-bucket=<bucket>`.
 */
export function bucketSelector(base: string | undefined, bucket: number): string {
  const own = `${SHARD_BUCKET_LABEL}=${bucket}`;
  return base ? `${base},${own}` : own;
}

/** The bucket a child's label names, or undefined (no label, or not a bucket number). */
export function bucketLabelOf(child: KubeObject): number | undefined {
  const value = child.metadata?.labels?.[SHARD_BUCKET_LABEL];
  if (value === undefined || !/^(0|[1-9]\d*)$/.test(value)) return undefined;
  return Number(value);
}
