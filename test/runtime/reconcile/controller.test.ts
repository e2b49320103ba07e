/** Controller wiring with fake informers: event → key mapping, the CR update predicate, worker error policy. */
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { Controller, crChangeMatters } from '../../../lib/runtime/reconcile/controller.js';
import { TerminalError } from '../../../lib/runtime/errors.js';
import type { InformerEvent, InformerHandler } from '../../../lib/runtime/cache/informer.js';
import type { InformerFactory } from '../../../lib/runtime/cache/informer-factory.js';
import type { ResourceRef } from '../../../lib/runtime/client/resource-path.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

class FakeInformer {
  readonly handlers: InformerHandler[] = [];
  readonly objects: KubeObject[] = [];
  constructor(readonly ref: ResourceRef, readonly opts: { labelSelector?: string; keepManagedFieldsOf?: readonly string[] }) {}
  on(handler: InformerHandler): () => void {
    this.handlers.push(handler);
    return () => undefined;
  }
  emit(event: InformerEvent): void {
    for (const h of this.handlers) h(event);
  }
  hasSynced(): boolean {
    return true;
  }
  get(): KubeObject | undefined {
    return undefined;
  }
  list(): KubeObject[] {
    return this.objects;
  }
  byOwnerUid(): KubeObject[] {
    return [];
  }
}

const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const deploymentKind = { apiVersion: 'apps/v1', group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true };

function setup() {
  const informers: FakeInformer[] = [];
  const factory = {
    informerFor: (ref: ResourceRef, opts: { labelSelector?: string; keepManagedFieldsOf?: readonly string[] } = {}) => {
      const informer = new FakeInformer(ref, opts);
      informers.push(informer);
      return informer;
    },
  } as unknown as InformerFactory;
  // Immediate retries, counted: the error policy is checked without waiting for real backoff delays.
  const requeues = new Map<string, number>();
  const rateLimiter = {
    when: (key: string) => (requeues.set(key, (requeues.get(key) ?? 0) + 1), 0),
    forget: (key: string) => void requeues.delete(key),
    numRequeues: (key: string) => requeues.get(key) ?? 0,
  };
  const queue = new Workqueue({ name: 'test', rateLimiter });
  const controller = new Controller({
    operator: { operatorName: 'widget-operator', crd, childKinds: () => [deploymentKind] },
    render: () => [],
    client: new FakeKubeClient(),
    informers: factory,
    queue,
  });
  controller.watch();
  const [crs, deployments] = informers;
  return { controller, queue, crs, deployments, requeues };
}

const cr = (meta: Partial<NonNullable<KubeObject['metadata']>> = {}): KubeObject => ({
  apiVersion: 'x.io/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', generation: 1, resourceVersion: '1', ...meta },
});

describe('Controller', () => {
  test('asks for a label-selected child informer that keeps our managedFields', () => {
    const { deployments } = setup();
    expect(deployments.ref).toBe(deploymentKind);
    expect(deployments.opts).toEqual({ namespace: undefined, labelSelector: 'app.kubernetes.io/managed-by=widget-operator', keepManagedFieldsOf: ['widget-operator'] });
  });

  test('CR add → its key; status-only update → nothing; spec (generation) update → its key', async () => {
    const { crs, queue } = setup();
    crs.emit({ type: 'add', object: cr() });
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    crs.emit({ type: 'update', object: { ...cr({ resourceVersion: '2' }), status: { x: 1 } }, oldObject: cr() });
    expect(queue.len()).toBe(0);
    crs.emit({ type: 'update', object: cr({ generation: 2 }), oldObject: cr() });
    expect(queue.len()).toBe(1);
  });

  test('child event → owner key via the controller ownerReference, else the owner-uid label', async () => {
    const { crs, deployments, queue } = setup();
    crs.emit({ type: 'add', object: cr() });
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    const labels = { 'app.kubernetes.io/managed-by': 'widget-operator', 'operator.cdk8s.io/owner-uid': 'uid-1' };
    deployments.emit({
      type: 'update',
      object: { kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'widget-operator' }, ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Widget', name: 'w', uid: 'uid-1', controller: true }] } },
    });
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    deployments.emit({ type: 'add', object: { kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels } } });
    expect(await queue.get()).toBe('ns/w');
    queue.done('ns/w');
    // another operator's child in a shared informer: ignored
    deployments.emit({ type: 'add', object: { kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels: { ...labels, 'app.kubernetes.io/managed-by': 'other' } } } });
    expect(queue.len()).toBe(0);
    // labels edited away: the delete from the selected cache still reaches the owner through the old state
    deployments.emit({ type: 'delete', object: { kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels: {} } }, oldObject: { kind: 'Deployment', metadata: { name: 'd', namespace: 'ns', labels } } });
    expect(queue.len()).toBe(1);
  });

  test('GIVEN child events of two CRs queued WHEN a third CR is edited THEN its key is handed out first (priority high), then the child-triggered keys in order', async () => {
    const { crs, deployments, queue } = setup();
    for (const name of ['w1', 'w2', 'w3']) {
      crs.emit({ type: 'add', object: cr({ name, uid: `uid-${name}` }) });
      expect(await queue.get()).toBe(`ns/${name}`);
      queue.done(`ns/${name}`);
    }
    const child = (owner: string) => ({
      kind: 'Deployment',
      metadata: { name: owner, namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'widget-operator' }, ownerReferences: [{ apiVersion: 'x.io/v1', kind: 'Widget', name: owner, uid: `uid-${owner}`, controller: true }] },
    });
    deployments.emit({ type: 'update', object: child('w1') });
    deployments.emit({ type: 'update', object: child('w2') });
    crs.emit({ type: 'update', object: cr({ name: 'w3', uid: 'uid-w3', generation: 2 }), oldObject: cr({ name: 'w3', uid: 'uid-w3' }) });
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['ns/w3', 'ns/w1', 'ns/w2']);
  });

  test('workers: an error is retried with backoff, success forgets it; a TerminalError is not retried', async () => {
    const { controller, queue, requeues } = setup();
    const reconciler = controller.reconciler as unknown as { reconcile: (k: string) => Promise<void> };
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const outcomes: (Error | 'done')[] = [new Error('transient'), new Error('again'), 'done'];
    reconciler.reconcile = async (key) => {
      seen.push(key);
      const next = outcomes.shift();
      if (next instanceof Error) throw next;
      done();
    };
    controller.startWorkers();
    queue.add('ns/a');
    await finished;
    expect(seen).toEqual(['ns/a', 'ns/a', 'ns/a']);
    await new Promise(setImmediate);
    expect(requeues.has('ns/a')).toBe(false); // forgotten after the success

    let terminal!: () => void;
    const terminalSeen = new Promise<void>((r) => (terminal = r));
    reconciler.reconcile = async (key) => {
      seen.push(key);
      terminal();
      throw new TerminalError('no');
    };
    queue.add('ns/b');
    await terminalSeen;
    await controller.stop(); // drains: a retry of ns/b would have been queued before stop
    expect(seen.filter((k) => k === 'ns/b')).toHaveLength(1);
    expect(requeues.has('ns/b')).toBe(false);
  });

  test('GIVEN a reconcile in flight and keys queued WHEN abort() (lost lease) THEN queued keys are dropped and nothing new starts, without waiting for the one in flight', async () => {
    const { controller, queue, crs } = setup();
    const reconciler = controller.reconciler as unknown as { reconcile: (k: string) => Promise<void> };
    const seen: string[] = [];
    let inFlight!: () => void;
    const started = new Promise<void>((r) => (inFlight = r));
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    reconciler.reconcile = async (key) => {
      seen.push(key);
      inFlight();
      await blocked;
    };
    controller.startWorkers();
    queue.add('ns/a');
    await started;
    queue.add('ns/b');
    queue.add('ns/c');
    controller.abort();
    expect(queue.len()).toBe(0);
    crs.emit({ type: 'add', object: cr({ name: 'd' }) }); // an event after abort: not queued
    queue.add('ns/e'); // shut down: ignored
    release();
    await new Promise((r) => setTimeout(r, 10));
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
