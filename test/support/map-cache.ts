/** An in-memory CacheReader for reconciler unit tests: objects by `namespace/name`, owner-uid lookups. */
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import type { CacheReader } from '../../lib/runtime/reconcile/reconciler.js';

export class MapCache implements CacheReader {
  readonly objects = new Map<string, KubeObject>();
  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  byOwnerUid(uid: string): KubeObject[] {
    return [...this.objects.values()].filter((o) => o.metadata?.labels?.['operator.cdk8s.io/owner-uid'] === uid);
  }
  put(obj: KubeObject): void {
    this.objects.set(`${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`, obj);
  }
}
