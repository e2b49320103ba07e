/**
 * An in-memory cache for reconciler unit tests: objects by `namespace/name`, owner-uid lookups (the
 * {@link CacheReader} the reconcile steps read), and, for a test that wires a real Controller, the parts
 * of an informer the controller uses, with the real informer's contract (lib/runtime/cache/informer.ts):
 * handlers told of every change after the cache shows it, `on()` first replaying an `add` for each object
 * already held, `list`, `select` by labels, `hasSynced`.
 */
import type { InformerEvent, InformerHandler } from '../../lib/runtime/cache/informer.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { selectorMatches } from '../../lib/operator/render/related.js';
import type { CacheReader } from '../../lib/runtime/reconcile/reconciler.js';

const keyOf = (obj: KubeObject) => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;

export class MapCache implements CacheReader {
  readonly objects = new Map<string, KubeObject>();
  /** What `hasSynced` answers (false: the first list has not arrived; prune waits, the controller queues low). */
  synced = true;
  private readonly handlers: InformerHandler[] = [];
  /** A test of sharded reconciles sets it: one bucket's cache (CacheReader.inBucket). @default absent: no buckets */
  inBucket?: (bucket: number) => CacheReader | undefined;

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  byOwnerUid(uid: string): KubeObject[] {
    return [...this.objects.values()].filter((o) => o.metadata?.labels?.['operator.cdk8s.io/owner-uid'] === uid);
  }
  list(): KubeObject[] {
    return [...this.objects.values()];
  }
  /** The objects, in `namespace` or all, whose labels have every pair of `selector` (as the informer's `select`). */
  select(namespace: string | undefined, selector: Readonly<Record<string, string>>): KubeObject[] {
    return this.list().filter((o) => (namespace === undefined || o.metadata?.namespace === namespace) && selectorMatches(selector, o.metadata?.labels));
  }
  /** A map has no transform: nothing ever failed to transform. */
  transformFailure(_object: KubeObject): string | undefined {
    return undefined;
  }

  hasSynced(): boolean {
    return this.synced;
  }
  /** Stores `obj` (replacing one of the same namespace and name) and tells the handlers: an add or an update. */
  put(obj: KubeObject): void {
    const old = this.objects.get(keyOf(obj));
    this.emit(old ? { type: 'update', object: obj, oldObject: old } : { type: 'add', object: obj });
  }
  /**
   * Removes the object of `obj`'s namespace and name and tells the handlers, as an informer does on a
   * DELETED event: `obj` is the state the event carries, `oldObject` the cached one (when there was one).
   */
  delete(obj: KubeObject): void {
    const old = this.objects.get(keyOf(obj));
    this.emit(old ? { type: 'delete', object: obj, oldObject: old } : { type: 'delete', object: obj });
  }
  /**
   * Stores `event.object` (removes it on a `delete`), then tells the handlers of `event` as it is: for an
   * event `put` and `delete` do not make, such as an `add` of an object already held.
   */
  emit(event: InformerEvent): void {
    if (event.type === 'delete') this.objects.delete(keyOf(event.object));
    else this.objects.set(keyOf(event.object), event.object);
    for (const handler of this.handlers) handler(event);
  }
  /** Subscribes `handler`, first calling it (before `on` returns) with an `add` of each object held, as the informer's `on()` does. */
  on(handler: InformerHandler): () => void {
    this.handlers.push(handler);
    for (const object of this.objects.values()) handler({ type: 'add', object });
    return () => this.handlers.splice(this.handlers.indexOf(handler), 1);
  }
}
