/**
 * Detects whether the API server filters lists and watches by a `shardSelector` (KEP-5866, alpha in
 * Kubernetes 1.36 behind the feature gate `ShardedListAndWatch`), so a sharded replica can say at
 * start-up what its server offers, detected and not assumed.
 *
 * How: one LIST of the CR kind, `limit=1`, with the selector of the whole hash space,
 * `shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')` (it filters nothing). A
 * server that applies the selector echoes it in the list's `metadata.shardInfo.selector`
 * (k8s.io/apimachinery v0.36 `ShardInfo`, set by k8s.io/apiserver `SelectionPredicate.SetShardInfoOnList`);
 * one without the feature ignores the unknown query parameter and sends no `shardInfo`.
 *
 * Why the runtime does not filter its CRs with it: KEP-5866 hashes `object.metadata.uid` or
 * `object.metadata.namespace` (64-bit FNV-1a over [0, 2^64), k8s.io/apimachinery/pkg/sharding), while
 * a CR's bucket is a hash of its `namespace/name` (bucket-hash.ts): no range of the server's hash space
 * is one of our buckets, so the server cannot send a replica exactly its buckets' CRs. The
 * `namespace/name` hash is kept because a child's bucket label must be known from its owner's key, and
 * a CR re-created under the same name must land in the bucket whose replica caches its leftover children.
 *
 * @see https://github.com/kubernetes/enhancements/issues/5866
 */
import type { KubeClient } from '../client/kube-client.js';
import { resourcePath, type ResourceRef } from '../client/resource-path.js';

/** The selector of the whole hash space: it matches every object (KEP-5866 ranges are [start, end)). */
export const FULL_SHARD_SELECTOR = "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";

/** What {@link detectShardSelector} found. */
export interface ShardSelectorSupport {
  /** True when the server applied the selector (it echoed it in `metadata.shardInfo`). */
  readonly supported: boolean;
  /** Why: what the answer showed, or the error of the list. */
  readonly detail: string;
}

/**
 * Asks the server, with one LIST of `resource` (limit 1, in `namespace` when given), whether it applies
 * a `shardSelector`. Never throws: a failed list gives `supported: false` and the error in `detail`.
 */
export async function detectShardSelector(client: Pick<KubeClient, 'request'>, resource: ResourceRef, namespace?: string, signal?: AbortSignal): Promise<ShardSelectorSupport> {
  try {
    const list = await client.request<{ metadata?: { shardInfo?: { selector?: string } } }>('GET', resourcePath(resource, resource.namespaced ? namespace : undefined), {
      query: { limit: 1, shardSelector: FULL_SHARD_SELECTOR },
      signal,
    });
    const echoed = list.metadata?.shardInfo?.selector;
    return echoed
      ? { supported: true, detail: `the list echoed metadata.shardInfo.selector ${JSON.stringify(echoed)}` }
      : { supported: false, detail: 'the list carried no metadata.shardInfo: the server ignores shardSelector (KEP-5866 needs Kubernetes 1.36 with the ShardedListAndWatch feature gate)' };
  } catch (err) {
    return { supported: false, detail: `the list with a shardSelector failed: ${(err as Error)?.message ?? String(err)}` };
  }
}
