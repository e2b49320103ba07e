/**
 * Whether an object is a CR's child and whether we applied it: the two tests every prune (cache-based
 * and inventory-based) and adoption make before touching an object.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 */
import { OWNER_UID_LABEL, toLabelValue } from '../../operator/render/labels.js';
import type { KubeObject } from '../client/kube-client.js';

/**
 * True when `obj` was made for the CR with `ownerUid`: an ownerReference to that uid, or our
 * {@link OWNER_UID_LABEL} label with it (the label survives a child whose ownerReferences were edited).
 * False for an empty `ownerUid`.
 */
export function isOwnedBy(obj: KubeObject, ownerUid: string): boolean {
  if (!ownerUid) return false;
  if ((obj.metadata?.ownerReferences ?? []).some((ref) => ref.uid === ownerUid)) return true;
  return obj.metadata?.labels?.[OWNER_UID_LABEL] === toLabelValue(ownerUid);
}

/** True when `fieldManager` has an entry in `obj.metadata.managedFields` (the cache keeps our own manager's entries). */
export function isManagedBy(obj: KubeObject, fieldManager: string): boolean {
  const entries = (obj.metadata?.managedFields ?? []) as { manager?: string }[];
  return entries.some((entry) => entry?.manager === fieldManager);
}
