/**
 * The reconciler tests' one harness: a real {@link Reconciler} on the one fake client
 * (fake-kube-client.ts) and in-memory caches (map-cache.ts), with a real EventRecorder, wired directly or
 * through a real {@link Controller} and Workqueue. The same flows against a real API server are in
 * test/integration/; this is for the branches that are hard to provoke there (cache lag, 409, 403,
 * prune before sync, a failing status write).
 *
 * The fake server stores nothing and the caches change only when the test says: `sync()` makes them
 * show what the fake server was sent since the last `sync()` (as the informers would), or the test
 * `put`s objects itself.
 */
import type { ResolvedKind } from '../../lib/operator/kinds.js';
import type { InformerFactory, InformerForOptions } from '../../lib/runtime/cache/informer-factory.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { EventRecorder } from '../../lib/runtime/events/events.js';
import { type ControlledOperator, Controller, type ControllerOptions } from '../../lib/runtime/reconcile/controller.js';
import { type ReconciledOperator, Reconciler, type ReconcilerOptions } from '../../lib/runtime/reconcile/reconciler.js';
import { FakeKubeClient } from './fake-kube-client.js';
import { MapCache } from './map-cache.js';

/** The Reconciler's options the harness passes through as they are. */
type PassedOptions = Pick<ReconcilerOptions, 'render' | 'status' | 'related' | 'relatedReads' | 'statusFields' | 'signal' | 'logger' | 'fieldTypes' | 'applyConcurrency' | 'metrics' | 'bucketOf'>;

export interface ReconcilerHarnessOptions extends PassedOptions {
  /**
   * The operator; through a Controller (see `controller`) it needs `childKinds()` too, and its
   * `relatedKinds` (with their `related` declarations) are watched, each kind on a cache of its own.
   */
  readonly operator: ReconciledOperator & Partial<Pick<ControlledOperator, 'childKinds' | 'relatedKinds' | 'related'>>;
  /** The child kinds the operator owns, one cache each (through a Controller: the operator's `childKinds()`). @default none */
  readonly childKinds?: readonly ResolvedKind[];
  /** The CRs in the cache at the start. @default none */
  readonly crs?: readonly KubeObject[];
  /** Whether every cache has synced (prune waits for it); each cache's `synced` can change later. @default true */
  readonly synced?: boolean;
  /** Record Events, reported as `cdk8s.io/<operatorName>`. @default true */
  readonly events?: boolean;
  /** The status a child the fake server stored shows in its cache after `sync()`. @default none */
  readonly childStatus?: (child: KubeObject) => unknown;
  /** @default 2026-01-01T00:00:00Z, always */
  readonly now?: () => Date;
  /**
   * Wire the reconciler through a real Controller, whose CR, child and related informers are the
   * harness's caches (a `put` is an informer event); the test starts its workers. The operator must then
   * have `childKinds()`. `related`, `relatedReads`, `applyConcurrency` and `metrics` are not passed: the
   * Controller takes none of them (it looks related objects up in the caches of the operator's
   * `relatedKinds`, keeps its own RelatedReads, and takes `controller.metrics`).
   * @default the Reconciler alone
   */
  readonly controller?: HarnessControllerOptions;
}

/** The Controller's options a test may set, passed through as they are; and when it subscribes. */
export interface HarnessControllerOptions extends Pick<ControllerOptions, 'queue' | 'metrics' | 'references' | 'resyncPeriodMs' | 'namespace' | 'shard'> {
  /**
   * Subscribe the Controller to the caches at once (`controller.watch()`); false leaves it to the test,
   * e.g. to fill the caches first, as shared informers that already hold objects.
   * @default true
   */
  readonly watch?: boolean;
}

export interface ReconcilerHarness {
  readonly client: FakeKubeClient;
  readonly crs: MapCache;
  readonly reconciler: Reconciler;
  /** The Controller, when the harness was asked for one. */
  readonly controller: Controller | undefined;
  /** The informers the Controller asked for, in order: each kind with its options (namespace, label selector, kept managers). */
  readonly informerRequests: readonly { readonly kind: ResolvedKind; readonly options: InformerForOptions }[];
  readonly events: EventRecorder | undefined;
  /** The cache of a child (or, through a Controller, related) kind, by plural. @throws when the operator has no such kind */
  cache(plural: string): MapCache;
  /** Reconciles `key` and waits for the Events it recorded (written in the background), so they are among the calls. */
  reconcile(key: string): ReturnType<Reconciler['reconcile']>;
  /** Makes the caches show what the fake server was sent since the last sync; `childStatus` as the option. */
  sync(childStatus?: (child: KubeObject) => unknown): void;
  /** The object paths written as children: server-side applies and creates (POST, whose path is the collection), from call `from` on. */
  applies(from?: number): string[];
  /** The `status` of each status write, from call `from` on. */
  statusWrites(from?: number): any[];
  /** The `status` of the last status write. */
  lastStatus(): any;
}

const isApply = (call: { method: string; contentType?: string }) => call.method === 'PATCH' && call.contentType === 'application/apply-patch+yaml';
/** A child's create (adoption.ts): a POST to its collection (an Event's POST is not one). */
const isCreate = (call: { method: string; path: string }) => call.method === 'POST' && !call.path.startsWith('/apis/events.k8s.io/');
/** The object's own path of an apply or a create (a create is sent to the collection). */
const objectPath = (call: { method: string; path: string; body?: any }) => (call.method === 'POST' ? `${call.path}/${call.body.metadata.name}` : call.path);

export function reconcilerHarness(options: ReconcilerHarnessOptions): ReconcilerHarness {
  const { operator } = options;
  const client = new FakeKubeClient();
  const crs = new MapCache();
  const caches = new Map<string, MapCache>();
  const cacheOf = (kind: ResolvedKind) => caches.get(kind.plural) ?? caches.set(kind.plural, new MapCache()).get(kind.plural)!;
  for (const kind of options.childKinds ?? []) cacheOf(kind);
  const synced = options.synced ?? true;
  for (const cache of [crs, ...caches.values()]) cache.synced = synced;
  for (const cr of options.crs ?? []) crs.put(cr);
  const events = options.events === false ? undefined : new EventRecorder({ client, reportingController: `cdk8s.io/${operator.operatorName}` });
  const now = options.now ?? (() => new Date('2026-01-01T00:00:00Z'));

  const { render, status, related, relatedReads, statusFields, signal, logger, fieldTypes, applyConcurrency, bucketOf } = options;
  let controller: Controller | undefined;
  const informerRequests: { kind: ResolvedKind; options: InformerForOptions }[] = [];
  let reconciler: Reconciler;
  if (options.controller) {
    if (typeof operator.childKinds !== 'function') throw new Error(`reconcilerHarness: controller needs an operator with childKinds(); ${operator.operatorName} has none`);
    if (related || relatedReads || applyConcurrency !== undefined || options.metrics || bucketOf) {
      throw new Error('reconcilerHarness: related, relatedReads, applyConcurrency, metrics (use controller.metrics) and bucketOf (use controller.shard) are not passed through a Controller');
    }
    // The informers the controller asks for are the harness's caches (the parts of an informer it uses).
    const informers = {
      informerFor: (kind: ResolvedKind, informerOptions: InformerForOptions = {}) => {
        informerRequests.push({ kind, options: informerOptions });
        const cache = kind === operator.crd ? crs : cacheOf(kind);
        cache.synced = synced;
        return cache;
      },
    } as unknown as InformerFactory;
    const { queue, metrics, references, resyncPeriodMs, namespace, shard, watch = true } = options.controller;
    controller = new Controller({ operator: operator as ControlledOperator, render, status, references, resyncPeriodMs, namespace, statusFields, signal, logger, fieldTypes, client, informers, events, now, queue, metrics, shard });
    if (watch) controller.watch();
    reconciler = controller.reconciler;
  } else {
    reconciler = new Reconciler({
      operator,
      render,
      status,
      related,
      relatedReads,
      statusFields,
      signal,
      logger,
      fieldTypes,
      applyConcurrency,
      bucketOf,
      client,
      crs,
      children: (options.childKinds ?? []).map((kind) => ({ kind, cache: cacheOf(kind) })),
      cachesSynced: () => [crs, ...caches.values()].every((cache) => cache.hasSynced()),
      events,
      now,
      metrics: options.metrics,
    });
  }

  let syncedCalls = 0;
  const statusCalls = (from: number) => client.calls.slice(from).filter((c) => c.path.endsWith('/status'));
  return {
    client,
    crs,
    reconciler,
    controller,
    informerRequests,
    events,
    cache(plural) {
      const cache = caches.get(plural);
      if (!cache) throw new Error(`no cache of ${plural}: the operator owns ${[...caches.keys()].join(', ') || 'no kind'}`);
      return cache;
    },
    async reconcile(key) {
      try {
        return await reconciler.reconcile(key);
      } finally {
        await events?.flush();
      }
    },
    sync(childStatus = options.childStatus ?? (() => undefined)) {
      for (const [index, call] of client.calls.entries()) {
        if (index < syncedCalls || !(isApply(call) || isCreate(call))) continue;
        const resourceVersion = `rv-${index}`;
        const segments = objectPath(call).split('/');
        if (call.path.endsWith('/status')) {
          const namespace = segments[segments.indexOf('namespaces') + 1];
          const cr = crs.get(namespace, segments.at(-2)!)!;
          crs.put({ ...cr, status: call.body.status, metadata: { ...cr.metadata, resourceVersion } });
          continue;
        }
        const cache = caches.get(segments.at(-2)!);
        const stored: KubeObject = {
          ...call.body,
          metadata: { ...call.body.metadata, uid: `uid-${call.body.metadata.name}`, resourceVersion, managedFields: [{ manager: operator.operatorName }] },
        };
        const status = childStatus(stored);
        cache?.put(status === undefined ? stored : { ...stored, status });
      }
      syncedCalls = client.calls.length;
    },
    applies: (from = 0) => client.calls.slice(from).filter((c) => (isApply(c) && !c.path.endsWith('/status')) || isCreate(c)).map(objectPath),
    statusWrites: (from = 0) => statusCalls(from).map((c) => c.body.status),
    lastStatus: () => statusCalls(0).at(-1)?.body.status,
  };
}
