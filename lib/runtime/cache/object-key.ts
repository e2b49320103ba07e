/**
 * The `namespace/name` key by which the informer cache, the related index and the workqueue name an object.
 */
import type { KubeObject } from '../client/kube-client.js';

/**
 * The cache and queue key of an object: `namespace/name`, or `name` for a cluster-scoped object
 * (client-go's MetaNamespaceKeyFunc).
 */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/** Builds a key from its parts; the inverse of {@link splitKey}. */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key from {@link objectKey} into namespace (undefined when cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The key of one incarnation of an object: its `metadata.uid` (a deleted and recreated object is another
 * incarnation), or its {@link objectKey} when it has no uid (an object not yet created, a stand-in). The
 * status writer and the event recorder keep their per-object state by it.
 */
export function incarnationKey(obj: KubeObject): string {
  return obj.metadata?.uid ?? objectKey(obj);
}
