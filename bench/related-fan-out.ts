/**
 * The fan-out of a related object's change, measured in memory (provider-helm#177: a label added to a
 * ConfigMap that 2000 CRs reference queued 2000 reconciles).
 *
 *   npm run bench:related-fan-out -- [--crs N]
 *
 * A controller with in-memory informers; N CRs reference one ConfigMap by name, and render has read only
 * its `data` (as a render that mounts or copies it does). Prints one JSON object with the keys queued
 * for: a label added (`before`: with `changeMatters: () => true`, the fan-out before; `after`: the
 * default), a resourceVersion-only update, and a change of the data (both: N).
 */
import type { RelatedDeclaration } from '../lib/operator/render/related.js';
import type { KubeResource } from '../lib/operator/render/render-context.js';
import type { InformerEvent, InformerHandler } from '../lib/runtime/cache/informer.js';
import type { InformerFactory } from '../lib/runtime/cache/informer-factory.js';
import type { ApiClient } from '../lib/runtime/client/api-client.js';
import type { KubeObject } from '../lib/runtime/client/kube-client.js';
import type { ResourceRef } from '../lib/runtime/client/resource-path.js';
import { Controller } from '../lib/runtime/reconcile/controller.js';
import { Workqueue } from '../lib/runtime/queue/workqueue.js';
import { benchOptions } from './bench-options.js';

const crs = benchOptions({ crs: { type: 'string', default: '2000' } }).number('crs');

const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

class EmittingInformer {
  private readonly handlers = new Set<InformerHandler>();
  on(handler: InformerHandler): () => void {
    this.handlers.add(handler);
    return () => void this.handlers.delete(handler);
  }
  emit(event: InformerEvent): void {
    for (const handler of this.handlers) handler(event);
  }
  hasSynced = () => true;
  get = () => undefined;
  list = () => [];
  select = () => [];
  byOwnerUid = () => [];
  /** No transform: no object failed one (Informer.transformFailure, which the controller asks of each event). */
  transformFailure = () => undefined;
}

/** Counts every add, also of a key already queued (the queue would hold it once): the reconciles asked for. */
class CountingQueue extends Workqueue {
  adds = 0;
  override add(key: string, priority?: Parameters<Workqueue['add']>[1]): void {
    this.adds++;
    super.add(key, priority);
  }
}

const configMap = (resourceVersion: string, labels: Record<string, string> = {}, data: Record<string, string> = { color: 'blue' }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'ns', uid: 'cm', resourceVersion, labels },
  data,
});

/** Keys queued for each update, with N CRs referencing the ConfigMap and render having read its data. */
function measure(changeMatters?: RelatedDeclaration<never>['changeMatters']): Record<string, number> {
  const informers = new Map<string, EmittingInformer>();
  const factory = {
    informerFor: (ref: ResourceRef) => {
      const id = `${ref.group}/${ref.plural}`;
      if (!informers.has(id)) informers.set(id, new EmittingInformer());
      return informers.get(id)!;
    },
  } as unknown as InformerFactory;
  const queue = new CountingQueue({ name: 'bench' });
  const declaration = { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name', ...(changeMatters ? { changeMatters } : {}) };
  const controller = new Controller({
    operator: { operatorName: 'bench', crd, childKinds: () => [], relatedKinds: { config: configMapKind }, related: { config: declaration } as never },
    render: () => [],
    references: () => [{ related: 'config', kind: configMapKind, namespace: 'ns', name: 'settings', optional: false, source: 'spec.configMapRef.name' }],
    client: {} as ApiClient,
    informers: factory,
    queue,
  });
  controller.watch();
  for (let i = 0; i < crs; i++) informers.get('x.io/widgets')!.emit({ type: 'add', object: { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: `cr-${i}`, namespace: 'ns', uid: `uid-${i}`, resourceVersion: '1' } } });
  // What a render that reads only the data does.
  void controller.relatedReads.track('config', configMap('1') as KubeResource).data;
  const configMaps = informers.get('/configmaps')!;
  const queuedBy = (event: InformerEvent) => {
    queue.adds = 0;
    configMaps.emit(event);
    return queue.adds;
  };
  return {
    labelAdded: queuedBy({ type: 'update', oldObject: configMap('1'), object: configMap('2', { team: 'a' }) }),
    resourceVersionOnly: queuedBy({ type: 'update', oldObject: configMap('2', { team: 'a' }), object: configMap('3', { team: 'a' }) }),
    dataChanged: queuedBy({ type: 'update', oldObject: configMap('3', { team: 'a' }), object: configMap('4', { team: 'a' }, { color: 'green' }) }),
  };
}

const before = measure(() => true);
const after = measure();
console.log(
  JSON.stringify(
    {
      crs,
      labelAdded: { before: before.labelAdded, after: after.labelAdded },
      resourceVersionOnly: { before: before.resourceVersionOnly, after: after.resourceVersionOnly },
      dataChanged: { before: before.dataChanged, after: after.dataChanged },
    },
    null,
    2,
  ),
);
