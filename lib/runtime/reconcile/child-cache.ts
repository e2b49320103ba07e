/**
 * What the reconcile steps read of the caches: a CR or child by name, and a CR's children by owner uid.
 * An `Informer` satisfies {@link CacheReader}; unit tests use an in-memory map.
 */
import type { ResolvedKind } from '../../operator/kinds.js';
import type { KubeObject } from '../client/kube-client.js';

/** The read side of a cache the reconciler needs (an {@link Informer} satisfies it). */
export interface CacheReader {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  byOwnerUid(uid: string): KubeObject[];
}

/** A child kind's cache and REST resource. */
export interface ChildCache {
  readonly kind: ResolvedKind;
  readonly cache: CacheReader;
}
