/**
 * Controller wiring, through the reconciler harness (a real Controller, Reconciler and Workqueue on the
 * one fake client, with in-memory caches as its informers): event → key mapping, the CR update
 * predicate, worker error policy. The same flows against a real API server are in test/integration/.
 */
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { Controller, type ControllerShard, crChangeMatters } from '../../../lib/runtime/reconcile/controller.js';
import { TerminalError } from '../../../lib/runtime/errors.js';
import type { RenderFunction } from '../../../lib/runtime/reconcile/render-step.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';
import { eventually } from '../../support/eventually.js';
import { MapCache } from '../../support/map-cache.js';
import { type BucketChildCaches, childKindKey } from '../../../lib/runtime/sharding/bucket-child-caches.js';
import { SHARD_BUCKET_LABEL } from '../../../lib/runtime/sharding/bucket-label.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const deploymentKind = { apiVersion: 'apps/v1', group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true };

/** @param render what the reconciles render (they run once the test starts the workers) @default nothing */
function setup(render: RenderFunction = () => [], shard?: ControllerShard) {
  /** The fields of every error line (the controller logs each failed reconcile once, at error). */
  const errors: Record<string, unknown>[] = [];
  const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (fields: object) => void errors.push(fields as Record<string, unknown>) };
  // Retries after 1 ms, counted: the error policy is checked without waiting for real backoff delays (a
  // timer, not 0, so that the test gets its turn between retries).
  const requeues = new Map<string, number>();
  const rateLimiter = {
    when: (key: string) => (requeues.set(key, (requeues.get(key) ?? 0) + 1), 1),
    forget: (key: string) => void requeues.delete(key),
    numRequeues: (key: string) => requeues.get(key) ?? 0,
  };
  const queue = new Workqueue({ name: 'test', rateLimiter });
  const harness = reconcilerHarness({
    operator: { operatorName: 'widget-operator', crd, childKinds: () => [deploymentKind] },
    childKinds: [deploymentKind], // a cache even when a sharded controller reads its children from the buckets' caches
    render,
    events: false,
    logger,
    controller: { queue, shard },
  });
  const controller: Controller = harness.controller!;
  return { controller, queue, client: harness.client, crs: harness.crs, deployments: harness.cache('deployments'), informerRequests: harness.informerRequests, requeues, errors };
}

const cr = (meta: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject => ({
  apiVersion: 'x.io/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '1', ...meta },
});

describe('Controller, sharded', () => {
  // Bucket = the CR name's first letter: a → 0, b → 1, c → 2.
  const bucketOf = (key: string) => key.split('/')[1]!.charCodeAt(0) - 'a'.charCodeAt(0);

  test('GIVEN buckets 0 and 2 admitted THEN only their CRs are reconciled; WHEN bucket 1 is admitted and enqueued THEN its CR is', async () => {
    const admitted = new Set([0, 2]);
    const seen: string[] = [];
    const { controller, crs, queue } = setup((object) => (seen.push(String(object.metadata!.name)), []), { bucketOf, admits: (b) => admitted.has(b) });
    controller.startWorkers();
    for (const name of ['a', 'b', 'c']) crs.put(cr({ name, uid: `uid-${name}` }));
    await eventually('a and c reconciled, b dropped', async () => seen.includes('a') && seen.includes('c') && queue.len() === 0, { intervalMs: 1, timeoutMs: 5_000 });
    expect(seen).not.toContain('b');
    admitted.add(1);
    controller.enqueueBuckets([1]);
    await eventually('b reconciled once its bucket is admitted', async () => seen.includes('b'), { intervalMs: 1, timeoutMs: 5_000 });
    await controller.stop();
  });

  test('GIVEN a reconcile in flight THEN its bucket is busy until it finished', async () => {
    const { controller, client, crs } = setup(() => [], { bucketOf, admits: () => true });
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    client.hold = async (call) => {
      if (!call.path.endsWith('/widgets/c/status')) return;
      inFlight();
      await blocked;
    };
    controller.startWorkers();
    crs.put(cr({ name: 'c', uid: 'uid-c' }));
    await started;
    expect([...controller.busyBuckets()]).toEqual([2]);
    release();
    await eventually('bucket 2 no longer busy', async () => controller.busyBuckets().size === 0, { intervalMs: 1, timeoutMs: 5_000 });
    await controller.stop();
  });
});

describe('Controller, sharded with CRs cached per bucket', () => {
  // One bucket held (0) of 4; every CR hashes to it. The controller's own CR informer (the harness's `crs`)
  // is the strays'; bucket 0's CR informer is `home`, as BucketChildCaches would give it.
  function setupSplit() {
    const home = new MapCache();
    const deployments = new MapCache();
    const byKey = new Map<string, MapCache>([[childKindKey(crd), home], [childKindKey(deploymentKind), deployments]]);
    const children = {
      on: (listener: { added(bucket: number, informers: ReadonlyMap<string, MapCache>): void }) => (listener.added(0, byKey), () => undefined),
      reader: () => ({ inBucket: () => deployments, get: (ns: string | undefined, n: string) => deployments.get(ns, n), byOwnerUid: (uid: string) => deployments.byOwnerUid(uid) }),
      informersOf: (kind: unknown) => (kind === crd || kind === childKindKey(crd) ? [home] : []),
      informerIn: (kind: unknown, bucket: number) => (bucket === 0 && (kind === crd || kind === childKindKey(crd)) ? home : undefined),
    } as unknown as BucketChildCaches;
    const reconciled: string[] = [];
    const harness = setup((object) => (reconciled.push(String(object.metadata!.resourceVersion)), []), { bucketOf: () => 0, admits: () => true, children, bucketCount: 4 });
    const added: string[] = [];
    const add = harness.queue.add.bind(harness.queue);
    harness.queue.add = (key, priority) => (added.push(key), add(key, priority));
    return { ...harness, home, reconciled, added };
  }
  const labelled = (resourceVersion: string) => cr({ resourceVersion, labels: { [SHARD_BUCKET_LABEL]: '0' } });

  test('GIVEN a labelled CR WHEN its label is removed by hand (the strays\' add first, then its bucket\'s delete) THEN it is looked at again and stamped', async () => {
    const { controller, client, crs, home, reconciled, added, queue } = setupSplit();
    home.put(labelled('1'));
    controller.startWorkers();
    await eventually('reconciled from the bucket cache', async () => reconciled.length === 1 && queue.len() === 0, { intervalMs: 1, timeoutMs: 5_000 });
    crs.put(cr({ resourceVersion: '2' }));
    const before = added.length;
    // A worker may have read the bucket cache's copy (rv 1) since the strays' add: the delete enqueues again.
    home.delete(cr({ resourceVersion: '2' }));
    expect(added.slice(before)).toEqual(['ns/w']);
    await eventually('the label stamped back', async () => client.calls.some((c) => c.method === 'PATCH' && c.path.endsWith('/widgets/w')), { intervalMs: 1, timeoutMs: 5_000 });
    await controller.stop();
  });
});

describe('Controller', () => {
  test('asks for the CR informer and a label-selected child informer that keeps our managedFields', () => {
    const { informerRequests } = setup();
    expect(informerRequests).toEqual([
      { kind: crd, options: { namespace: undefined } },
      { kind: deploymentKind, options: { namespace: undefined, labelSelector: 'app.kubernetes.io/managed-by=widget-operator', keepManagedFieldsOf: ['widget-operator'] } },
    ]);
    expect(informerRequests[1].kind).toBe(deploymentKind);
  });

  test('CR add → its key; status-only update → nothing; spec (generation) update → its key', async () => {
    const { crs, queue } = setup();
    crs.put(cr());
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    crs.put({ ...cr({ resourceVersion: '2' }), status: { x: 1 } });
    expect(queue.len()).toBe(0);
    crs.put(cr({ generation: 2 }));
    expect(queue.len()).toBe(1);
  });

  test('child event → owner key via the controller ownerReference, else the owner-uid label', async () => {
    const { crs, deployments, queue } = setup();
    crs.put(cr());
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    const labels = { 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': 'uid-1' };
    deployments.put({ kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'widget-operator' }, ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Widget', name: 'w', uid: 'uid-1', controller: true }] } });
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    // another child, with the label only (a child of its own, so no earlier state carries an ownerReference)
    deployments.put({ kind: 'Deployment', metadata: { name: 'e', namespace: 'ns', labels } });
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    // another operator's child in a shared informer: ignored
    deployments.put({ kind: 'Deployment', metadata: { name: 'theirs', namespace: 'ns', labels: { ...labels, 'app.kubernetes.io/managed-by': 'other' } } });
    expect(queue.len()).toBe(0);
    // labels edited away: the delete from the selected cache still reaches the owner through the old state
    deployments.delete({ kind: 'Deployment', metadata: { name: 'e', namespace: 'ns', labels: {} } });
    expect(queue.len()).toBe(1);
  });

  test('GIVEN child events of two CRs queued WHEN a third CR is edited THEN its key is handed out first (priority high), then the child-triggered keys in order', async () => {
    const { crs, deployments, queue } = setup();
    for (const name of ['w1', 'w2', 'w3']) {
      crs.put(cr({ name, uid: `uid-${name}` }));
      expect(await queue.get()).toBe(`ns/${name}`);
      queue.done(`ns/${name}`);
    }
    const child = (owner: string) => ({
      kind: 'Deployment',
      metadata: { name: owner, namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'widget-operator' }, ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Widget', name: owner, uid: `uid-${owner}`, controller: true }] },
    });
    deployments.put(child('w1'));
    deployments.put(child('w2'));
    crs.put(cr({ name: 'w3', uid: 'uid-w3', generation: 2 }));
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['ns/w3', 'ns/w1', 'ns/w2']);
  });

  test('workers: an error (render failed) is retried with backoff, success forgets it; a TerminalError from render is not retried', async () => {
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    let terminal!: () => void;
    const terminalSeen = new Promise<void>((r) => (terminal = r));
    const outcomes: (Error | 'done')[] = [new Error('transient'), new Error('again'), 'done'];
    const { controller, crs, requeues, errors } = setup((object) => {
      const key = `ns/${object.metadata!.name}`;
      seen.push(key);
      if (key === 'ns/b') {
        terminal();
        throw new TerminalError('no');
      }
      const next = outcomes.shift();
      if (next instanceof Error) throw next;
      done();
      return [];
    });
    controller.startWorkers();
    crs.put(cr({ name: 'a', uid: 'uid-a' }));
    await finished;
    expect(seen).toEqual(['ns/a', 'ns/a', 'ns/a']);
    await new Promise(setImmediate); // the successful reconcile writes its status (answered at once), then the key is forgotten
    expect(requeues.has('ns/a')).toBe(false); // forgotten after the success

    crs.put(cr({ name: 'b', uid: 'uid-b' }));
    await terminalSeen;
    await eventually('the failed reconcile of ns/b handled', async () => errors.some((e) => e.key === 'ns/b'), { intervalMs: 1, timeoutMs: 5_000 });
    await controller.stop(); // drains: a retry of ns/b would have been queued before stop
    expect(seen.filter((k) => k === 'ns/b')).toHaveLength(1);
    expect(requeues.has('ns/b')).toBe(false);
    expect(errors.find((e) => e.key === 'ns/b')).toMatchObject({ terminal: true });
  });

  test('GIVEN a reconcile in flight and keys queued WHEN abort() (lost lease) THEN queued keys are dropped and nothing new starts, without waiting for the one in flight', async () => {
    const seen: string[] = [];
    const { controller, queue, client, crs } = setup((object) => (seen.push(`ns/${object.metadata!.name}`), []));
    // The reconcile of `a` stays in flight until released: its status write is not answered.
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    client.hold = async (call) => {
      if (!call.path.endsWith('/widgets/a/status')) return;
      inFlight();
      await blocked;
    };
    controller.startWorkers();
    crs.put(cr({ name: 'a', uid: 'uid-a' }));
    await started;
    crs.put(cr({ name: 'b', uid: 'uid-b' }));
    crs.put(cr({ name: 'c', uid: 'uid-c' }));
    expect(queue.len()).toBe(2);
    controller.abort();
    expect(queue.len()).toBe(0);
    crs.put(cr({ name: 'd', uid: 'uid-d' })); // an event after abort: not queued
    crs.objects.set('ns/e', cr({ name: 'e', uid: 'uid-e' }));
    queue.add('ns/e'); // shut down: ignored
    expect(queue.len()).toBe(0);
    release();
    await controller.stop(); // the workers exit once the reconcile in flight has finished
    expect(seen).toEqual(['ns/a']);
    expect(queue.len()).toBe(0);
  });

  test('GIVEN workers never started (a standby) WHEN stop() with keys queued THEN it resolves at once, before any deadline', async () => {
    const { controller, queue } = setup();
    queue.add('ns/a');
    const never = new AbortController(); // a deadline that never comes
    await controller.stop(never.signal);
    expect(queue.len()).toBe(0);
    expect(never.signal.aborted).toBe(false);
  });
});

describe('crChangeMatters', () => {
  test.each([
    ['generation', { generation: 2 }, true],
    ['labels', { labels: { a: 'b' } }, true],
    ['annotations', { annotations: { a: 'b' } }, true],
    ['finalizers', { finalizers: ['x/y'] }, true],
    ['deletionTimestamp', { deletionTimestamp: '2026-01-01T00:00:00Z' }, true],
    ['resourceVersion only (status write)', { resourceVersion: '9' }, false],
  ])('%s', (_what, change, expected) => {
    expect(crChangeMatters(cr(), cr(change))).toBe(expected);
  });
});
