import { ObjectRef } from '../../operator/object-ref.js';
import type { KubeObject } from '../client/api-client.js';
import { isManagedBy, isOwnedBy } from './ownership.js';

/**
 * The children to delete: those owned by the CR (owner-uid label or ownerReference) AND carrying
 * `fieldManager`'s managedFields entry (so we applied them) AND not in `desired` (compared by
 * {@link ObjectRef.key}, so a desired child in another version of its group counts as desired).
 * Objects other controllers made (ReplicaSets, Pods under a child Deployment) fail the first two tests.
 * Objects already being deleted are skipped.
 *
 * The caller must only prune once every child informer has synced; before that, a missing cache entry
 * says nothing.
 */
export function selectPrunable(candidates: readonly KubeObject[], desired: readonly KubeObject[], ownerUid: string, fieldManager: string): KubeObject[] {
  const wanted = new Set(desired.map((obj) => ObjectRef.of(obj).key()));
  return candidates
    .map((obj) => ({ obj, key: ObjectRef.of(obj).key() }))
    .filter(({ obj, key }) => isOwnedBy(obj, ownerUid) && isManagedBy(obj, fieldManager) && !wanted.has(key) && !obj.metadata?.deletionTimestamp)
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map(({ obj }) => obj);
}
