/**
 * The controller's enqueue priorities, through the reconciler harness (a real Controller, Reconciler and
 * Workqueue on in-memory caches that keep the real informer's contract: adds before `hasSynced()` are the
 * initial list; `on()` replays the objects already held): initial list, replays and resync low, a user's
 * edit high, child and related events normal. The same start-up case against the real API server is in
 * test/integration/controller-priority.test.ts.
 */
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { RecordingWorkqueue } from '../../support/recording-workqueue.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

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

/**
 * A controller whose caches have not synced and which has not subscribed yet (the test calls `watch()`);
 * its reconciles render nothing.
 */
function setup(options: { resyncPeriodMs?: number } = {}) {
  const queue = new RecordingWorkqueue({ name: 'test' });
  const harness = reconcilerHarness({
    operator: { operatorName: 'widget-operator', crd, childKinds: () => [deploymentKind], relatedKinds: { config: configMapKind } },
    render: () => [],
    synced: false,
    events: false,
    controller: {
      queue,
      // Every CR references the ConfigMap named like it.
      references: (o) => [{ kind: configMapKind, namespace: 'ns', name: o.metadata!.name! } as never],
      resyncPeriodMs: options.resyncPeriodMs,
      watch: false,
    },
  });
  return { controller: harness.controller!, queue, crs: harness.crs, deployments: harness.cache('deployments'), configMaps: harness.cache('configmaps') };
}

describe('Controller priorities', () => {
  test('GIVEN a restart: 1000 CRs arrive in the initial list (before sync) WHEN a user then creates a CR THEN the 1000 are queued low, the new one high, and it is handed out by the first get', async () => {
    const { controller, queue, crs } = setup();
    controller.watch();
    for (let i = 0; i < 1000; i++) crs.put(cr(`cr-${i}`));
    crs.synced = true;
    crs.put(cr('created-now'));
    expect(new Set(queue.adds.slice(0, 1000).map(([, p]) => p))).toEqual(new Set(['low']));
    expect(queue.adds[1000]).toEqual(['ns/created-now', 'high']);
    expect(await queue.get()).toBe('ns/created-now');
  });

  test('GIVEN a synced CR informer WHEN the CR is created, edited, deleted and re-created THEN each is high', () => {
    const { controller, queue, crs } = setup();
    crs.synced = true;
    controller.watch();
    crs.put(cr('w'));
    crs.put(cr('w', { generation: 2, resourceVersion: '2' }));
    crs.put(cr('w', { generation: 3, resourceVersion: '3' }));
    crs.delete(cr('w', { resourceVersion: '3' }));
    crs.put(cr('w', { uid: 'uid-new', resourceVersion: '3' })); // re-created under the same name
    expect(queue.adds).toEqual([
      ['ns/w', 'high'],
      ['ns/w', 'high'],
      ['ns/w', 'high'],
      ['ns/w', 'high'],
    ]);
  });

  test('GIVEN informers that already hold objects (shared, synced) WHEN a controller subscribes THEN the replayed adds are low, and later events high (CR) or normal (child, related)', () => {
    const { controller, queue, crs, deployments, configMaps } = setup();
    for (const informer of [crs, deployments, configMaps]) informer.synced = true;
    crs.put(cr('w'));
    deployments.put(child('w'));
    configMaps.put(configMap('w'));
    controller.watch();
    // The CR's, the child's and the related object's replays.
    expect(queue.adds).toEqual([
      ['ns/w', 'low'],
      ['ns/w', 'low'],
      ['ns/w', 'low'],
    ]);
    deployments.put(child('w'));
    configMaps.put(configMap('w', '2'));
    crs.put(cr('w', { labels: { a: 'b' }, resourceVersion: '2' }));
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
    crs.put(cr('w'));
    expect(queue.adds).toEqual([['ns/w', 'high']]);
    queue.adds.length = 0;
    deployments.put(child('w'));
    configMaps.put(configMap('w'));
    deployments.synced = true;
    configMaps.synced = true;
    deployments.put(child('w'));
    configMaps.put(configMap('w', '2'));
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
    for (const name of ['a', 'b']) crs.put(cr(name));
    controller.watch();
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
