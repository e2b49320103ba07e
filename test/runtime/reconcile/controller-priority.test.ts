/**
 * The controller's enqueue priorities, with in-memory informers that keep the real informer's contract
 * (adds before `hasSynced()` are the initial list; `on()` replays the objects already held): initial
 * list, replays and resync low, a user's edit high, child and related events normal. The same start-up
 * case against the real API server is in test/integration/controller-priority.test.ts.
 */
import type { ApiClient } from '../../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { Controller } from '../../../lib/runtime/reconcile/controller.js';
import type { InformerEvent, InformerHandler } from '../../../lib/runtime/cache/informer.js';
import type { InformerFactory } from '../../../lib/runtime/cache/informer-factory.js';
import type { ResourceRef } from '../../../lib/runtime/client/resource-path.js';
import { type QueuePriority, Workqueue } from '../../../lib/runtime/queue/workqueue.js';

/** An informer that holds objects and replays them on `on()`, synced only when told. */
class MemoryInformer {
  readonly handlers = new Set<InformerHandler>();
  readonly objects = new Map<string, KubeObject>();
  synced = false;
  constructor(readonly ref: ResourceRef) {}
  on(handler: InformerHandler): () => void {
    this.handlers.add(handler);
    for (const object of this.objects.values()) handler({ type: 'add', object });
    return () => void this.handlers.delete(handler);
  }
  emit(event: InformerEvent): void {
    const key = `${event.object.metadata?.namespace}/${event.object.metadata?.name}`;
    if (event.type === 'delete') this.objects.delete(key);
    else this.objects.set(key, event.object);
    for (const h of this.handlers) h(event);
  }
  hasSynced(): boolean {
    return this.synced;
  }
  get(): KubeObject | undefined {
    return undefined;
  }
  list(): KubeObject[] {
    return [...this.objects.values()];
  }
  select(): KubeObject[] {
    return [];
  }
  byOwnerUid(): KubeObject[] {
    return [];
  }
}

/** A workqueue that records each add with its priority. */
class RecordingQueue extends Workqueue {
  readonly adds: [string, QueuePriority][] = [];
  override add(key: string, priority: QueuePriority = 'normal'): void {
    this.adds.push([key, priority]);
    super.add(key, priority);
  }
}

const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const deploymentKind = { apiVersion: 'apps/v1', group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true };
const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

const cr = (name: string, meta: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject => ({
  apiVersion: 'x.io/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 1, resourceVersion: '1', ...meta },
});
const child = (owner: string): KubeObject => ({
  kind: 'Deployment',
  metadata: { name: owner, namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'widget-operator' }, ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Widget', name: owner, uid: `uid-${owner}`, controller: true }] },
});
// Its data changes with its resourceVersion: an update that changes only the resourceVersion reconciles nothing.
const configMap = (name: string, resourceVersion = '1'): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion }, data: { version: resourceVersion } });

function setup(options: { resyncPeriodMs?: number } = {}) {
  const informers = new Map<string, MemoryInformer>();
  const factory = {
    informerFor: (ref: ResourceRef) => {
      const id = `${ref.group}/${ref.plural}`;
      if (!informers.has(id)) informers.set(id, new MemoryInformer(ref));
      return informers.get(id)!;
    },
  } as unknown as InformerFactory;
  const queue = new RecordingQueue({ name: 'test' });
  const operator = { operatorName: 'widget-operator', crd, childKinds: () => [deploymentKind], relatedKinds: { config: configMapKind } };
  const newController = () =>
    new Controller({
      operator,
      render: () => [],
      // Every CR references the ConfigMap named like it.
      references: (o) => [{ kind: configMapKind, namespace: 'ns', name: o.metadata!.name! } as never],
      client: {} as ApiClient,
      informers: factory,
      queue,
      resyncPeriodMs: options.resyncPeriodMs,
    });
  const controller = newController();
  const crs = informers.get('x.io/widgets')!;
  const deployments = informers.get('apps/deployments')!;
  const configMaps = informers.get('/configmaps')!;
  return { controller, newController, queue, crs, deployments, configMaps };
}

describe('Controller priorities', () => {
  test('GIVEN a restart: 1000 CRs arrive in the initial list (before sync) WHEN a user then creates a CR THEN the 1000 are queued low, the new one high, and it is handed out by the first get', async () => {
    const { controller, queue, crs } = setup();
    controller.watch();
    for (let i = 0; i < 1000; i++) crs.emit({ type: 'add', object: cr(`cr-${i}`) });
    crs.synced = true;
    crs.emit({ type: 'add', object: cr('created-now') });
    expect(new Set(queue.adds.slice(0, 1000).map(([, p]) => p))).toEqual(new Set(['low']));
    expect(queue.adds[1000]).toEqual(['ns/created-now', 'high']);
    expect(await queue.get()).toBe('ns/created-now');
  });

  test('GIVEN a synced CR informer WHEN the CR is edited THEN high; WHEN a relist replays an add of it at the same resourceVersion THEN low; at a new resourceVersion (changed meanwhile) THEN high', () => {
    const { controller, queue, crs } = setup();
    crs.synced = true;
    controller.watch();
    crs.emit({ type: 'add', object: cr('w') });
    crs.emit({ type: 'update', object: cr('w', { generation: 2, resourceVersion: '2' }), oldObject: cr('w') });
    crs.emit({ type: 'add', object: cr('w', { generation: 2, resourceVersion: '2' }) }); // relist, unchanged
    crs.emit({ type: 'add', object: cr('w', { generation: 3, resourceVersion: '3' }) }); // relist, changed meanwhile
    crs.emit({ type: 'delete', object: cr('w', { resourceVersion: '3' }) });
    crs.emit({ type: 'add', object: cr('w', { uid: 'uid-new', resourceVersion: '3' }) }); // re-created under the same name
    expect(queue.adds).toEqual([
      ['ns/w', 'high'],
      ['ns/w', 'high'],
      ['ns/w', 'low'],
      ['ns/w', 'high'],
      ['ns/w', 'high'],
    ]);
  });

  test('GIVEN informers that already hold objects (shared, synced) WHEN a controller subscribes THEN the replayed adds are low, and later events high (CR) or normal (child, related)', () => {
    const { newController, queue, crs, deployments, configMaps } = setup();
    for (const informer of [crs, deployments, configMaps]) informer.synced = true;
    crs.emit({ type: 'add', object: cr('w') });
    deployments.emit({ type: 'add', object: child('w') });
    configMaps.emit({ type: 'add', object: configMap('w') });
    const controller = newController();
    controller.watch();
    // The CR's, the child's and the related object's replays.
    expect(queue.adds).toEqual([
      ['ns/w', 'low'],
      ['ns/w', 'low'],
      ['ns/w', 'low'],
    ]);
    deployments.emit({ type: 'update', object: child('w'), oldObject: child('w') });
    configMaps.emit({ type: 'update', object: configMap('w', '2'), oldObject: configMap('w') });
    crs.emit({ type: 'update', object: cr('w', { labels: { a: 'b' }, resourceVersion: '2' }), oldObject: cr('w') });
    expect(queue.adds.slice(-3)).toEqual([
      ['ns/w', 'normal'],
      ['ns/w', 'normal'],
      ['ns/w', 'high'],
    ]);
  });

  test('GIVEN child and related informers that have not synced WHEN their initial lists arrive THEN the owners are queued low; after sync, normal', () => {
    const { controller, queue, crs, deployments, configMaps } = setup();
    crs.synced = true;
    controller.watch();
    crs.emit({ type: 'add', object: cr('w') });
    expect(queue.adds).toEqual([['ns/w', 'high']]);
    queue.adds.length = 0;
    deployments.emit({ type: 'add', object: child('w') });
    configMaps.emit({ type: 'add', object: configMap('w') });
    deployments.synced = true;
    configMaps.synced = true;
    deployments.emit({ type: 'update', object: child('w'), oldObject: child('w') });
    configMaps.emit({ type: 'update', object: configMap('w', '2'), oldObject: configMap('w') });
    expect(queue.adds).toEqual([
      ['ns/w', 'low'],
      ['ns/w', 'low'],
      ['ns/w', 'normal'],
      ['ns/w', 'normal'],
    ]);
  });

  test('GIVEN a resync period WHEN it elapses THEN every CR is queued low', async () => {
    const { controller, queue, crs } = setup({ resyncPeriodMs: 5 });
    crs.synced = true;
    for (const name of ['a', 'b']) crs.emit({ type: 'add', object: cr(name) });
    controller.watch();
    (controller.reconciler as unknown as { reconcile: () => Promise<void> }).reconcile = async () => undefined;
    queue.adds.length = 0;
    controller.startWorkers();
    while (queue.adds.length < 2) await new Promise((resolve) => setImmediate(resolve));
    await controller.stop();
    expect(queue.adds.slice(0, 2).sort()).toEqual([
      ['ns/a', 'low'],
      ['ns/b', 'low'],
    ]);
  });
});
