import { OWNER_UID_LABEL } from '../../operator/labels.js';
import type { KubeObject } from '../client/api-client.js';

/** Identity of a child across versions of its API: `group/Kind/namespace/name`. */
export function childIdentity(obj: KubeObject): string {
  const apiVersion = obj.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return `${group}/${obj.kind ?? ''}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** True when `obj` belongs to the CR with `ownerUid`: the owner-uid label or an ownerReference to it. */
export function isOwnedBy(obj: KubeObject, ownerUid: string): boolean {
  if (obj.metadata?.labels?.[OWNER_UID_LABEL] === ownerUid) return true;
  return (obj.metadata?.ownerReferences ?? []).some((ref) => ref.uid === ownerUid);
}

/** True when `fieldManager` has an entry in `obj.metadata.managedFields` (the cache keeps our own manager's entries). */
export function isManagedBy(obj: KubeObject, fieldManager: string): boolean {
  const entries = (obj.metadata?.managedFields ?? []) as { manager?: string }[];
  return entries.some((entry) => entry?.manager === fieldManager);
}

/**
 * The children to delete: those owned by the CR (owner-uid label or ownerReference) AND carrying
 * `fieldManager`'s managedFields entry (so we applied them) AND not in `desired`.
 * Objects other controllers made (ReplicaSets, Pods under a child Deployment) fail the first two tests.
 * Objects already being deleted are skipped.
 *
 * The caller must only prune once every child informer has synced; before that, a missing cache entry
 * says nothing.
 */
export function selectPrunable(candidates: readonly KubeObject[], desired: readonly KubeObject[], ownerUid: string, fieldManager: string): KubeObject[] {
  const wanted = new Set(desired.map(childIdentity));
  return candidates
    .filter((obj) => isOwnedBy(obj, ownerUid) && isManagedBy(obj, fieldManager) && !wanted.has(childIdentity(obj)) && !obj.metadata?.deletionTimestamp)
    .sort((a, b) => (childIdentity(a) < childIdentity(b) ? -1 : 1));
}
