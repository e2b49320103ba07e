/**
 * An in-memory cache for reconciler unit tests: objects by `namespace/name`, owner-uid lookups (the
 * {@link CacheReader} the reconcile steps read), and, for a test that wires a real Controller, the parts
 * of an informer the controller uses: handlers told of every `put` and `delete`, `list`, `hasSynced`.
 */
import type { InformerEvent, InformerHandler } from '../../lib/runtime/cache/informer.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import type { CacheReader } from '../../lib/runtime/reconcile/reconciler.js';

export class MapCache implements CacheReader {
  readonly objects = new Map<string, KubeObject>();
  /** What `hasSynced` answers (false: the first list has not arrived; prune waits). */
  synced = true;
  private readonly handlers: InformerHandler[] = [];

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  byOwnerUid(uid: string): KubeObject[] {
    return [...this.objects.values()].filter((o) => o.metadata?.labels?.['operator.cdk8s.io/owner-uid'] === uid);
  }
  list(): KubeObject[] {
    return [...this.objects.values()];
  }
  hasSynced(): boolean {
    return this.synced;
  }
  /** Stores `obj` (replacing one of the same namespace and name) and tells the handlers: an add or an update. */
  put(obj: KubeObject): void {
    const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;
    const old = this.objects.get(key);
    this.objects.set(key, obj);
    const event: InformerEvent = old ? { type: 'update', object: obj, oldObject: old } : { type: 'add', object: obj };
    for (const handler of this.handlers) handler(event);
  }
  /**
   * Removes the object of `obj`'s namespace and name and tells the handlers, as an informer does on a
   * DELETED event: `obj` is the state the event carries, `oldObject` the cached one (when there was one).
   */
  delete(obj: KubeObject): void {
    const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;
    const old = this.objects.get(key);
    this.objects.delete(key);
    const event: InformerEvent = old ? { type: 'delete', object: obj, oldObject: old } : { type: 'delete', object: obj };
    for (const handler of this.handlers) handler(event);
  }
  on(handler: InformerHandler): () => void {
    this.handlers.push(handler);
    return () => this.handlers.splice(this.handlers.indexOf(handler), 1);
  }
}
