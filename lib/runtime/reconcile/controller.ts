/**
 * The controller of one operator: subscribes to the informers of its CRs, children and related kinds,
 * turns their events into CR keys on the {@link Workqueue}, and runs the workers that call the
 * {@link Reconciler} and requeue on failure or `requeueAfter` (controller-runtime's controller).
 */
import { randomUUID } from 'node:crypto';
import type { Tracer } from '@opentelemetry/api';
import { MANAGED_BY_LABEL, OWNER_UID_LABEL, toLabelValue } from '../../operator/render/labels.js';
import { kindKey, type ResolvedKind } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { RelatedDeclaration, ResolvedReference } from '../../operator/render/related.js';
import { RelatedReads } from '../../operator/render/related-reads.js';
import type { RelatedLookup, RenderInputs, RenderOutput } from '../../operator/render/render-children.js';
import type { KubeResource } from '../../operator/render/render-context.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { ConflictError } from '../errors.js';
import { reconcileErrorFields } from './reconcile-error-fields.js';
import { isTerminalError } from '../error-chain.js';
import type { EventRecorder } from '../events/events.js';
import type { Informer, InformerEvent } from '../cache/informer.js';
import type { InformerFactory } from '../cache/informer-factory.js';
import { type Logger, errorFields, silentLogger, withFields } from '../logger.js';
import type { FieldTypeSource } from './openapi-field-types.js';
import { type ReconciledOperator, Reconciler } from './reconciler.js';
import { RelatedIndex } from '../cache/related-index.js';
import { ChangeCheckFailures } from './change-check-failures.js';
import { relatedChangeMatters, type RelatedChangeRule } from './related-change.js';
import type { ControllerMetrics, OperatorMetrics } from '../metrics/metrics.js';
import { type QueuePriority, Workqueue } from '../queue/workqueue.js';
import { globalTracer, startReconcileSpan } from '../tracing/reconcile-trace.js';
import type { BucketChildCaches, BucketInformers } from '../sharding/bucket-child-caches.js';
import { childKindKey, relatedBucketKey } from '../sharding/bucket-child-caches.js';
import { bucketLabelOf, withBucketLabel } from '../sharding/bucket-label.js';
import { crBucketLabelPatch, crBucketLabelVerdict, strayCrSelector } from '../sharding/cr-bucket-label.js';
import { ResourceClient } from '../client/resource-client.js';

/** The caches of one related declaration (sharded and `createdFromChildren`: one per cached bucket, so read them when needed). */
interface RelatedCache {
  readonly kind: ResolvedKind;
  /** The informers to look in; sharded and cached per bucket, those of `bucket` when given and cached here. */
  readonly informers: (bucket: number | undefined) => readonly Informer[];
}

/** An operator as the controller wires it (lib/operator's `Operator` satisfies it). */
export interface ControlledOperator extends ReconciledOperator {
  /** The child kinds to watch (Owns), in a deterministic order. */
  childKinds(): ResolvedKind[];
  /** The related kinds to watch (Watches), by key. @default none */
  readonly relatedKinds?: Readonly<Record<string, ResolvedKind>>;
  /**
   * The related declarations, by the same keys: their `changeMatters` and `scope` (which objects the
   * related informers list and watch). @default none (the default rule for every key, everything cached)
   */
  readonly related?: Readonly<Record<string, RelatedDeclaration<never>>>;
}

export interface ControllerOptions {
  readonly operator: ControlledOperator;
  /** Renders a CR; see {@link ReconcilerOptions.render}. */
  readonly render: (cr: KubeObject, inputs: RenderInputs) => KubeObject[] | RenderOutput;
  /** The operator's `status()` hook, given `relatedReads` like render; see {@link ReconcilerOptions.status}. @default none */
  readonly status?: (cr: KubeObject, inputs: RenderInputs) => Record<string, unknown> | undefined;
  /**
   * The references a CR makes to related objects (for the related index); throws or returns [] for a CR
   * that cannot be parsed. @default none
   */
  readonly references?: (cr: KubeObject) => readonly ResolvedReference[];
  /** The operator's own status fields; see {@link ReconcilerOptions.statusFields}. @default none */
  readonly statusFields?: readonly string[];
  readonly client: KubeClient;
  /** Shared informers; the controller asks for its CR and child informers here, the manager starts them. */
  readonly informers: InformerFactory;
  /** Watch one namespace only. @default all namespaces */
  readonly namespace?: string;
  /**
   * Label selector of each child informer, so that operators sharing a kind share one informer
   * (`app.kubernetes.io/managed-by in (a,b)`). @default `app.kubernetes.io/managed-by=<operatorName>`
   */
  readonly childLabelSelector?: (kind: ResolvedKind) => string;
  /** Field managers whose managedFields entries the child caches keep. @default [operatorName] */
  readonly keepManagedFieldsOf?: readonly string[];
  /** Reconciles running at once, each on a different key. @default 1, like controller-runtime */
  readonly maxConcurrentReconciles?: number;
  /** Every CR is reconciled again this often, even without a change. @default 36000000 ms (10 h), controller-runtime's SyncPeriod */
  readonly resyncPeriodMs?: number;
  /** @default no events */
  readonly events?: EventRecorder;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Wall clock for condition times. @default () => new Date() */
  readonly now?: () => Date;
  /** The queue (tests inject one with a manual clock). @default a new Workqueue named after the operator */
  readonly queue?: Workqueue;
  /** Prometheus metrics (controller_runtime_*, workqueue_*). @default none */
  readonly metrics?: OperatorMetrics;
  /** Aborted when writes must stop at once; see {@link ReconcilerOptions.signal}. @default never aborted */
  readonly signal?: AbortSignal;
  /** Field types of the child kinds for the diff; see {@link ReconcilerOptions.fieldTypes}. @default none */
  readonly fieldTypes?: FieldTypeSource;
  /**
   * Where each reconcile's span goes, with a child span per step (lib/runtime/tracing/reconcile-trace.ts).
   * @default `@opentelemetry/api`'s global tracer: a no-op unless the application registered a tracer provider
   */
  readonly tracer?: Tracer;
  /**
   * Sharding (lib/runtime/sharding/): a key is reconciled only while its bucket is admitted; a worker
   * drops a key whose bucket is not. @default none: every key is this controller's
   */
  readonly shard?: ControllerShard;
}

/** What a sharded controller asks of its ring membership. */
export interface ControllerShard {
  /** The bucket of a CR key (`namespace/name`). */
  bucketOf(key: string): number;
  /** True while new reconciles of `bucket` may start here (held, and not moving away). Synchronous. */
  admits(bucket: number): boolean;
  /**
   * The replica's child caches, one informer set per bucket held or being taken
   * (lib/runtime/sharding/bucket-child-caches.ts); the controller makes no child informer of its own.
   * Every child applied carries its CR's bucket label (bucket-label.ts), and inventory entries the caches
   * lack are pruned by get + delete (children made before sharding). @default none: the controller's own
   * label-selected child informers, every child cached
   */
  readonly children?: BucketChildCaches;
  /**
   * The ring's bucket count: when given, a worker stamps the CR's bucket label
   * (`operator.cdk8s.io/shard-bucket`, sharding/cr-bucket-label.ts) on a CR of an admitted bucket that
   * lacks it, or repairs a wrong one (Warning Event `ShardBucketLabelRepaired`), by a merge patch guarded
   * by the CR's resourceVersion, instead of reconciling it this time: the patch's own update event brings
   * the key back. With {@link children} too, the CRs are cached per bucket: {@link children}' kinds must
   * include the CR kind (selected on the bucket label alone), and the controller's own CR informer selects
   * only the strays (sharding/cr-bucket-label.ts `strayCrSelector`), which the holder of each one's
   * computed bucket labels; a CR labelled with another held bucket is repaired by that bucket's holder,
   * the only replica that sees it. @default none: CR labels are left alone, every CR is cached
   */
  readonly bucketCount?: number;
}

/**
 * Wires one operator: **For** its CR kind (one informer, events → the CR's key) and **Owns** each of
 * its child kinds (label-selected informers, events → the owner's key), a workqueue of keys, N workers
 * calling {@link Reconciler.reconcile}, and the error policy.
 *
 * Predicates: a CR update that changes none of generation, labels, annotations, finalizers or
 * deletionTimestamp (e.g. our own status write) is dropped. A child event maps to its owner through the
 * controller ownerReference to the CR kind, else the owner-uid label.
 *
 * Priorities ({@link QueuePriority}; the queue gives each a share, so none starves):
 * - `low`: events that are not edge-triggered (controller-runtime's `handler.LowPriorityWhenUnchanged`):
 *   every event an informer delivers before it has synced (its initial list), the adds replayed to a
 *   handler when it subscribes to an informer that already holds objects, and the periodic resync. (A
 *   relist emits nothing for an object it already held unchanged, so it needs no rule of its own.)
 * - `high`: a CR created or edited, seen after the CR informer synced: a user's change is reconciled
 *   ahead of a restart's initial list and of follow-up work.
 * - `normal`: child and related events after their informer synced; `requeueAfter` and retries once due.
 *
 * Related objects: a creation or deletion reconciles every CR that references the object; an update
 * reconciles the CRs it makes or stops referencing it (a label change for a selector), and the CRs that
 * reference it before and after only when the change matters ({@link relatedChangeMatters}: the
 * declaration's `changeMatters`, by default a change of a top-level field render has read, recorded
 * in {@link relatedReads}).
 *
 * Error policy: success → forget the key's backoff (and requeue after `requeueAfterMs` if asked);
 * a `TerminalError` anywhere in the error's `cause` chain ({@link isTerminalError}) → not retried until the
 * CR (or a child, or a related object) changes; {@link ConflictError} → retried with backoff, debug log
 * only; any other error → retried with the rate limiter's backoff (5 ms → 1000 s per key).
 *
 * Every failed reconcile but a 409 is logged at error, once, as controller-runtime does: `Reconciler
 * error`, with the CR (`cr`, `namespace`, `name`), the `step` (render, apply, prune, status, finalize),
 * the failure `reason`, the API server's `code` and `serverMessage` when the cause is its answer,
 * `terminal`, `retries` and the error.
 *
 * Tracing: every reconcile is a span of `tracer` carrying the same fields and its result (`success`,
 * `requeue_after`, `error`, as `controller_runtime_reconcile_total`), with a child span per step
 * (lib/runtime/tracing/reconcile-trace.ts).
 */
export class Controller {
  readonly name: string;
  readonly reconciler: Reconciler;
  readonly queue: Workqueue;
  private readonly options: ControllerOptions;
  private readonly logger: Logger;
  /** Every CR; sharded with a bucket count, only the strays (no or no valid bucket label): {@link crInformers} has the rest. */
  private readonly crInformer: Informer;
  /** Sharded with a bucket count: CRs are cached per bucket (see {@link ControllerShard.bucketCount}). */
  private readonly splitCrs: boolean;
  private readonly childInformers: Informer[] = [];
  /**
   * The related kinds' informers, each once: per declaration, one per namespace of its `scope` (default:
   * the watched namespace, or all), with its label and field selectors.
   */
  private readonly relatedInformers: { kind: ResolvedKind; informer: Informer }[] = [];
  /**
   * Sharded: the related declarations cached per bucket (`scope.createdFromChildren`), by their key in
   * the bucket caches (bucket-child-caches.ts `relatedBucketKey`) and in the operator (`related`); not in {@link relatedInformers}.
   */
  private readonly bucketRelated: { key: string; related: string; kind: ResolvedKind }[] = [];
  /** Related object → the CRs that reference it. */
  readonly relatedIndex = new RelatedIndex();
  /** What render has read of the related objects, per declaration (render is handed stand-ins that record it). */
  readonly relatedReads = new RelatedReads();
  /** Related kind (kindKey) → the declarations of that kind, for the update predicate. */
  private readonly changeRules = new Map<string, RelatedChangeRule[]>();
  /** CRs whose related declaration's `changeMatters` threw; their reconciles tell it. */
  private readonly changeCheckFailures = new ChangeCheckFailures();
  private readonly keyByUid = new Map<string, string>();
  /** The message of each key's last failure, told in full once; gone when the key's reconcile succeeds. */
  private readonly lastFailure = new Map<string, string>();
  /** The informer whose existing objects `on()` is replaying to our handler now (their adds are low). */
  private replaying: Informer | undefined;
  private readonly unsubscribe: (() => void)[] = [];
  private resyncTimer: ReturnType<typeof setInterval> | undefined;
  private workers: Promise<void>[] = [];
  private activeWorkers = 0;
  private readonly metrics: ControllerMetrics | undefined;
  private readonly tracer: Tracer;
  /** Sharded: reconciles in flight per bucket (a bucket is released only once its count is 0). */
  private readonly inFlight = new Map<number, number>();
  /** Sharded: the unsubscribe functions of each cached bucket's child informers. */
  private readonly bucketSubscriptions = new Map<number, (() => void)[]>();

  constructor(options: ControllerOptions) {
    this.options = options;
    const operator = options.operator;
    this.name = operator.operatorName;
    this.logger = (options.logger ?? silentLogger);
    this.tracer = options.tracer ?? globalTracer();
    this.metrics = options.metrics?.controller(operator.operatorName);
    if (options.queue) this.queue = options.queue;
    else {
      const queueMetrics = options.metrics?.workqueue(operator.operatorName);
      this.queue = new Workqueue({ name: operator.operatorName, metrics: queueMetrics });
      queueMetrics?.observe(this.queue);
    }
    const shardOptions = options.shard;
    this.splitCrs = shardOptions?.children !== undefined && shardOptions.bucketCount !== undefined;
    this.crInformer = options.informers.informerFor(operator.crd, {
      namespace: options.namespace,
      ...(this.splitCrs ? { labelSelector: strayCrSelector(shardOptions!.bucketCount!) } : {}),
    });
    const keep = options.keepManagedFieldsOf ?? [operator.operatorName];
    const shardCaches = options.shard?.children;
    const children = operator.childKinds().map((kind) => {
      if (shardCaches) return { kind, cache: shardCaches.reader(kind) };
      const selector = options.childLabelSelector?.(kind) ?? `${MANAGED_BY_LABEL}=${toLabelValue(operator.operatorName)}`;
      const informer = options.informers.informerFor(kind, { namespace: options.namespace, labelSelector: selector, keepManagedFieldsOf: keep });
      this.childInformers.push(informer);
      return { kind, cache: informer };
    });
    // One informer per (declaration's scope, namespace), shared through the factory by declarations of
    // one kind with the same scope (and with other operators of the process).
    const relatedByKey = new Map<string, RelatedCache>();
    for (const [key, kind] of Object.entries(operator.relatedKinds ?? {})) {
      const id = kindKey(kind);
      const declaration = operator.related?.[key];
      this.changeRules.set(id, [...(this.changeRules.get(id) ?? []), { related: key, changeMatters: declaration?.changeMatters }]);
      const scope = declaration?.scope;
      if (shardCaches && scope?.createdFromChildren === true) {
        // Made from the children (their Pods): cached per bucket beside them (manager.ts adds the kind).
        const bucketKey = relatedBucketKey(operator.operatorName, key);
        this.bucketRelated.push({ key: bucketKey, related: key, kind });
        relatedByKey.set(key, {
          kind,
          informers: (bucket) => {
            const own = bucket === undefined ? undefined : shardCaches.informerIn(bucketKey, bucket);
            return own ? [own] : shardCaches.informersOf(bucketKey);
          },
        });
        continue;
      }
      const namespaces: readonly (string | undefined)[] = kind.namespaced && scope?.namespaces ? scope.namespaces : [options.namespace];
      const informers = namespaces.map((namespace) =>
        options.informers.informerFor(kind, {
          namespace,
          labelSelector: scope?.labelSelector,
          fieldSelector: scope?.fieldSelector,
          metadataOnly: scope?.metadataOnly,
          transform: scope?.transform as ((object: KubeObject) => KubeObject) | undefined,
        }),
      );
      relatedByKey.set(key, { kind, informers: () => informers });
      for (const informer of informers) {
        if (!this.relatedInformers.some((r) => r.informer === informer)) this.relatedInformers.push({ kind, informer });
      }
    }
    /**
     * The informers to look in: the declaration's, else (no key given) every one of the kind; those cached
     * per bucket, of `bucket` alone when given (one CR's reconcile: lib/runtime/reconcile/child-cache.ts).
     */
    const cachesOf = (kind: ResolvedKind, related: string | undefined, bucket: number | undefined): readonly Informer[] => {
      const declared = related === undefined ? undefined : relatedByKey.get(related);
      if (declared) return declared.informers(bucket);
      const id = kindKey(kind);
      const bucketed = this.bucketRelated.filter((r) => kindKey(r.kind) === id).flatMap((r) => relatedByKey.get(r.related)!.informers(bucket));
      return [...this.relatedInformers.filter((r) => kindKey(r.kind) === id).map((r) => r.informer), ...bucketed];
    };
    /** Can `informer` hold objects of `namespace` (undefined: all)? */
    const holds = (informer: Informer, namespace: string | undefined) => namespace === undefined || informer.namespace === undefined || informer.namespace === namespace;
    /** The related lookup over every cache, or (given `bucket`) one CR's reconcile's. */
    const lookupIn = (bucket: number | undefined): RelatedLookup => ({
      cached: true, // shaped by the informers (metadata only, transform)
      get: (kind, namespace, name, key) => {
        for (const informer of cachesOf(kind, key, bucket)) {
          if (!holds(informer, namespace)) continue;
          const found = informer.get(namespace, name);
          if (found) return found as KubeResource;
        }
        return undefined;
      },
      select: (kind, namespace, selector, key) => {
        const informers = cachesOf(kind, key, bucket);
        if (informers.length === 1) return holds(informers[0]!, namespace) ? (informers[0]!.select(namespace, selector) as KubeResource[]) : [];
        const found = new Map<string, KubeObject>();
        for (const informer of informers) {
          if (!holds(informer, namespace)) continue;
          for (const object of informer.select(namespace, selector)) found.set(ObjectRef.cacheKeyOf(object), object);
        }
        return [...found.values()] as KubeResource[];
      },
    });
    const inBucket = new Map<number, RelatedLookup>();
    const related: RelatedLookup = {
      ...lookupIn(undefined),
      // Sharded with related objects cached per bucket: one lookup per bucket, made once.
      ...(this.bucketRelated.length > 0
        ? { inBucket: (bucket: number) => inBucket.get(bucket) ?? inBucket.set(bucket, lookupIn(bucket)).get(bucket)! }
        : {}),
    };
    this.reconciler = new Reconciler({
      operator,
      render: (cr, inputs) => {
        const output = options.render(cr, { ...inputs, relatedReads: this.relatedReads });
        const shard = options.shard;
        if (!shard) return output;
        // Sharded: the runtime stamps the CR's bucket on every child (before the desired hash is taken).
        const bucket = shard.bucketOf(ObjectRef.cacheKeyOf(cr));
        return Array.isArray(output) ? output.map((c) => withBucketLabel(c, bucket)) : { ...output, children: output.children.map((c) => withBucketLabel(c, bucket)) };
      },
      status: options.status && ((cr, inputs) => options.status!(cr, { ...inputs, relatedReads: this.relatedReads })),
      pruneUncachedEntries: shardCaches !== undefined,
      // Children cached per bucket: each reconcile reads its CR's bucket's caches only (child-cache.ts).
      bucketOf: shardCaches ? (key) => options.shard!.bucketOf(key) : undefined,
      related,
      relatedReads: this.relatedReads,
      statusFields: options.statusFields,
      client: options.client,
      crs: { get: (namespace, name) => this.crGet(namespace, name), byOwnerUid: (uid) => this.crInformers().flatMap((i) => i.byOwnerUid(uid)) },
      children,
      cachesSynced: () => this.crInformer.hasSynced() && this.childInformers.every((i) => i.hasSynced()) && this.relatedInformers.every((r) => r.informer.hasSynced()),
      events: options.events,
      signal: options.signal,
      logger: this.logger,
      now: options.now,
      metrics: this.metrics,
      fieldTypes: options.fieldTypes,
    });
  }

  /** Number of workers busy in a reconcile now (`controller_runtime_active_workers`). */
  get active(): number {
    return this.activeWorkers;
  }

  /** Sharded with a bucket count: the CRs with no valid bucket label cached now (0 otherwise). */
  cachedStrays(): number {
    return this.splitCrs ? this.crInformer.size() : 0;
  }

  /** Sharded: the buckets with reconciles in flight now. */
  busyBuckets(): Set<number> {
    return new Set([...this.inFlight].filter(([, n]) => n > 0).map(([b]) => b));
  }

  /** Sharded: enqueues every cached CR of `buckets` (buckets just taken). */
  enqueueBuckets(buckets: readonly number[]): void {
    const shard = this.options.shard;
    if (!shard || buckets.length === 0) return;
    const wanted = new Set(buckets);
    for (const cr of this.crList()) {
      const key = ObjectRef.cacheKeyOf(cr);
      // A CR labelled with a taken bucket that is not its own is seen only here: its repair waited for the take.
      const labelled = this.splitCrs ? bucketLabelOf(cr) : undefined;
      if (wanted.has(shard.bucketOf(key)) || (labelled !== undefined && wanted.has(labelled))) this.queue.add(key, 'normal');
    }
  }

  /** Subscribes to the informers (existing cache contents are enqueued at once). Call before the informers start or after; idempotent enough to call once. */
  watch(): void {
    this.subscribe(this.crInformer, (event) => this.onCr(this.crInformer, event));
    const seen = new Set<Informer>();
    for (const informer of this.childInformers) {
      if (seen.has(informer)) continue;
      seen.add(informer);
      this.subscribe(informer, (event) => this.onChild(informer, event));
    }
    const shardCaches = this.options.shard?.children;
    if (shardCaches) {
      this.unsubscribe.push(
        shardCaches.on({ added: (bucket, informers) => this.addBucket(bucket, informers), removed: (bucket, informers) => this.removeBucket(bucket, informers) }),
        () => {
          for (const offs of this.bucketSubscriptions.values()) for (const off of offs) off();
          this.bucketSubscriptions.clear();
        },
      );
    }
    for (const { kind, informer } of this.relatedInformers) this.subscribe(informer, (event) => this.onRelated(kind, informer, event));
  }

  /** Sharded: a bucket's child informers were created; subscribe to those of this operator's kinds. */
  private addBucket(bucket: number, informers: BucketInformers): void {
    const offs: (() => void)[] = [];
    for (const key of new Set(this.options.operator.childKinds().map(childKindKey))) {
      const informer = informers.get(key);
      if (!informer) continue;
      this.replaying = informer;
      try {
        offs.push(informer.on((event) => this.onChild(informer, event)));
      } finally {
        this.replaying = undefined;
      }
    }
    for (const { key, kind } of this.bucketRelated) {
      const informer = informers.get(key);
      if (!informer) continue;
      this.replaying = informer;
      try {
        offs.push(informer.on((event) => this.onRelated(kind, informer, event)));
      } finally {
        this.replaying = undefined;
      }
    }
    const crs = this.splitCrs ? informers.get(childKindKey(this.options.operator.crd)) : undefined;
    if (crs) {
      this.replaying = crs;
      try {
        offs.push(crs.on((event) => this.onCr(crs, event)));
      } finally {
        this.replaying = undefined;
      }
    }
    this.bucketSubscriptions.set(bucket, offs);
  }

  /** The CR informers: the controller's own, and sharded with a bucket count each cached bucket's. */
  private crInformers(): Informer[] {
    return this.splitCrs ? [...this.options.shard!.children!.informersOf(this.options.operator.crd), this.crInformer] : [this.crInformer];
  }

  /** A cached CR, from any CR informer but `except`: first its own bucket's, where a labelled CR is. */
  private crGet(namespace: string | undefined, name: string, except?: Informer): KubeObject | undefined {
    if (this.splitCrs) {
      const home = this.options.shard!.children!.informerIn(this.options.operator.crd, this.options.shard!.bucketOf(ObjectRef.cacheKey(namespace, name)));
      const found = home === except ? undefined : home?.get(namespace, name);
      if (found) return found;
    }
    for (const informer of this.crInformers()) {
      if (informer === except) continue;
      const found = informer.get(namespace, name);
      if (found) return found;
    }
    return undefined;
  }

  /** Every cached CR, once each. */
  private crList(): KubeObject[] {
    if (!this.splitCrs) return this.crInformer.list();
    const byKey = new Map<string, KubeObject>();
    for (const informer of this.crInformers()) for (const cr of informer.list()) byKey.set(ObjectRef.cacheKeyOf(cr), cr);
    return [...byKey.values()];
  }

  /**
   * Sharded: a bucket's child informers are dropped (the bucket went to another replica). No delete
   * reaches the queue: the children still exist, another replica reconciles them now. What the
   * reconciler remembers of them is forgotten.
   */
  private removeBucket(bucket: number, informers: BucketInformers): void {
    for (const off of this.bucketSubscriptions.get(bucket) ?? []) off();
    this.bucketSubscriptions.delete(bucket);
    const crs = this.splitCrs ? informers.get(childKindKey(this.options.operator.crd)) : undefined;
    // Its CRs leave the cache without a delete: forget what was indexed and remembered of them.
    for (const cr of crs?.list() ?? []) {
      const { namespace, name } = ObjectRef.splitCacheKey(ObjectRef.cacheKeyOf(cr));
      if (!this.crGet(namespace, name, crs)) this.forgetCr(cr);
    }
    const mine = toLabelValue(this.name);
    for (const informer of informers.values()) {
      if (informer === crs) continue;
      for (const child of informer.list()) if (child.metadata?.labels?.[MANAGED_BY_LABEL] === mine) this.reconciler.forgetChild(child);
    }
  }

  /** Subscribes `handler`; the adds `on()` replays for objects the informer already holds are marked as such (low priority). */
  private subscribe(informer: Informer, handler: (event: InformerEvent) => void): void {
    this.replaying = informer;
    try {
      this.unsubscribe.push(informer.on(handler));
    } finally {
      this.replaying = undefined;
    }
  }

  /**
   * True for an event that is part of `informer`'s initial list rather than a change seen as it happened:
   * delivered before the informer synced, or replayed by `on()` when we subscribed.
   */
  private initialList(informer: Informer): boolean {
    return this.replaying === informer || !informer.hasSynced();
  }

  /** Starts the workers and the periodic resync. Call once the caches have synced. */
  startWorkers(): void {
    const n = Math.max(1, this.options.maxConcurrentReconciles ?? 1);
    this.metrics?.setMaxConcurrentReconciles(n);
    for (let i = 0; i < n; i++) this.workers.push(this.work());
    const period = this.options.resyncPeriodMs ?? 36_000_000;
    if (period > 0) {
      this.resyncTimer = setInterval(() => {
        for (const cr of this.crList()) this.queue.add(ObjectRef.cacheKeyOf(cr), 'low');
      }, period);
      this.resyncTimer.unref?.();
    }
  }

  /**
   * Stops taking new work and lets reconciles in flight (and keys already queued) finish; resolves when the
   * workers have exited, or when `signal` aborts (a graceful-shutdown deadline). Without started workers
   * (a standby) it drops the queue and resolves at once.
   */
  async stop(signal?: AbortSignal): Promise<void> {
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const off of this.unsubscribe.splice(0)) off();
    if (this.workers.length === 0) {
      // A standby never started its workers: the queued keys are not its to drain.
      this.queue.shutDown();
      return;
    }
    await this.queue.shutDownWithDrain(signal);
    if (!signal?.aborted) await Promise.all(this.workers);
  }

  /**
   * Stops at once, without draining (leadership lost): the queue drops every key and workers exit after
   * their current reconcile, whose writes the manager fences off. Resolves without waiting for them.
   */
  abort(): void {
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const off of this.unsubscribe.splice(0)) off();
    this.queue.shutDown();
  }

  private onCr(informer: Informer, event: InformerEvent): void {
    const key = ObjectRef.cacheKeyOf(event.object);
    const uid = event.object.metadata?.uid;
    if (event.type === 'delete') {
      // Sharded: a CR whose label changed leaves one bucket's informer and enters another's (or the
      // strays'); while another of ours still holds it, this is no delete. The two watches are not ordered:
      // a worker may have read the copy this informer just dropped, so the key is looked at again.
      if (this.splitCrs && this.crGet(event.object.metadata?.namespace, event.object.metadata?.name ?? '', informer)) {
        this.queue.add(key, 'normal');
        return;
      }
      this.forgetCr(event.object);
      return;
    }
    if (uid) this.keyByUid.set(uid, key);
    // Status-only updates (our own status writes among them) change no reference: neither re-index nor enqueue.
    if (event.type === 'update' && event.oldObject && !crChangeMatters(event.oldObject, event.object)) return;
    if (this.relatedInformers.length > 0 || this.bucketRelated.length > 0) this.indexReferences(key, event.object);
    // The CR itself was created or edited: ahead of follow-up work. Its initial list and replays: below fresh events.
    this.queue.add(key, this.initialList(informer) ? 'low' : 'high');
  }

  /** Forgets what is indexed and remembered of a CR that left the cache. */
  private forgetCr(cr: KubeObject): void {
    const key = ObjectRef.cacheKeyOf(cr);
    const uid = cr.metadata?.uid;
    if (uid) this.keyByUid.delete(uid);
    this.relatedIndex.remove(key);
    this.changeCheckFailures.forget(key);
    this.reconciler.forget(cr);
  }

  private onChild(informer: Informer, event: InformerEvent): void {
    // The old state counts too: a child whose labels were edited away leaves the label-selected cache
    // as a `delete` carrying its new labels, and must still reach its owner to be repaired.
    const states = [event.object, event.oldObject].filter((o): o is KubeObject => o !== undefined);
    const ours = states.filter((o) => o.metadata?.labels?.[MANAGED_BY_LABEL] === toLabelValue(this.name));
    if (ours.length === 0) return;
    if (event.type === 'delete') this.reconciler.forgetChild(event.object);
    const keys = new Set(states.map((o) => this.ownerKey(o)).filter((k): k is string => k !== undefined));
    const priority = this.initialList(informer) ? 'low' : 'normal';
    for (const key of keys) this.queue.add(key, priority);
  }

  /**
   * A related object changed: reconcile the CRs that reference it (before or after the change); after an
   * update, those referencing it both before and after only when the change matters to render.
   */
  private onRelated(kind: ResolvedKind, informer: Informer, event: InformerEvent): void {
    const priority = this.initialList(informer) ? 'low' : 'normal';
    const after = this.relatedIndex.referencing(kind, event.object);
    const before = new Set(event.oldObject ? this.relatedIndex.referencing(kind, event.oldObject) : []);
    const keys = new Set([...before, ...after]);
    // After an update, the CRs that gained or lost the object always; the others only when the change matters.
    const stayed = after.filter((key) => before.has(key));
    // What a throwing changeMatters told goes with the object, or with the CRs that stopped referencing it.
    // Nothing to clear in the common case (no check ever threw): no per-event work.
    const told = this.changeCheckFailures.size > 0;
    let ref: string | undefined;
    const related = () => (ref ??= ObjectRef.of(event.object).toString());
    if (told && event.type === 'delete') this.changeCheckFailures.forgetRelated(related());
    if (told) {
      const referencing = new Set(after);
      for (const key of before) if (!referencing.has(key)) this.changeCheckFailures.forgetRelated(related(), key);
    }
    // A transform that threw on this version (the informer cached it untransformed) is told by the
    // referencing CRs, which are all reconciled; one that now succeeds clears it (another reconcile).
    const transformFailed = event.type === 'delete' ? undefined : informer.transformFailure(event.object);
    const transformCleared = new Set<string>();
    if (transformFailed !== undefined) {
      for (const key of after) this.changeCheckFailures.failed(key, related(), transformFailed, 'CacheTransformFailed');
    } else if (told) {
      for (const key of after) if (this.changeCheckFailures.succeeded(key, related(), 'CacheTransformFailed')) transformCleared.add(key);
    }
    if (event.type === 'update' && event.oldObject && stayed.length > 0) {
      try {
        const matters = relatedChangeMatters(this.changeRules.get(kindKey(kind)) ?? [], this.relatedReads, event.oldObject, event.object);
        // A CR whose last check of this object threw is reconciled once more, to clear what it told.
        for (const key of stayed) {
          const cleared = told && this.changeCheckFailures.succeeded(key, related());
          if (!matters && !cleared && !transformCleared.has(key) && transformFailed === undefined) keys.delete(key);
        }
      } catch (err) {
        // The operator's own code failed: the change counts as one that matters, and each CR's reconcile tells it.
        this.logger.error({ controller: this.name, kind: kind.kind, related: related(), ...errorFields(err) }, 'a related declaration\'s changeMatters threw; treating the change as one that matters');
        for (const key of stayed) this.changeCheckFailures.failed(key, related(), err);
      }
    }
    for (const key of keys) this.queue.add(key, priority);
  }

  /** Re-indexes the references of one CR (none when it cannot be parsed: its reconcile reports why). */
  private indexReferences(key: string, cr: KubeObject): void {
    let references: readonly ResolvedReference[] = [];
    try {
      references = this.options.references?.(cr) ?? [];
    } catch {
      references = [];
    }
    this.relatedIndex.set(key, references);
  }

  /** The owning CR's key: the controller ownerReference to our CR kind, else the owner-uid label. */
  private ownerKey(obj: KubeObject): string | undefined {
    const crd = this.options.operator.crd;
    const ref = (obj.metadata?.ownerReferences ?? []).find((r) => r.controller && r.kind === crd.kind && r.apiVersion.split('/')[0] === crd.group);
    if (ref) return ObjectRef.cacheKey(crd.namespaced ? obj.metadata?.namespace : undefined, ref.name);
    const uid = obj.metadata?.labels?.[OWNER_UID_LABEL];
    return uid ? this.keyByUid.get(uid) : undefined;
  }

  /**
   * Sharded, with a bucket count: stamps or repairs the bucket label of the cached CR `key`
   * (sharding/cr-bucket-label.ts). Only the holder of the CR's computed bucket gets here (the worker
   * checked {@link ControllerShard.admits}), so one replica writes the label. True when it patched: the
   * update event re-enqueues the key, and this pass reconciles nothing.
   * @throws the patch's ApiError (a 409 when the CR changed meanwhile): retried with backoff as a reconcile failure
   */
  private async stampBucketLabel(key: string, logger: Logger): Promise<boolean> {
    const bucketCount = this.options.shard?.bucketCount;
    if (bucketCount === undefined) return false;
    const { namespace, name } = ObjectRef.splitCacheKey(key);
    const cr = this.crGet(namespace, name);
    if (!cr || cr.metadata?.deletionTimestamp) return false;
    const verdict = crBucketLabelVerdict(cr, bucketCount, this.options.shard!.bucketOf(key));
    if (verdict.action === 'none') return false;
    await new ResourceClient(this.options.client).patch(this.options.operator.crd, namespace, name, { type: 'merge', body: crBucketLabelPatch(cr, verdict.bucket) }, { signal: this.options.signal });
    if (verdict.action === 'repair') {
      const note = `metadata.labels["operator.cdk8s.io/shard-bucket"] was "${verdict.found}", set back to "${verdict.bucket}": the bucket is computed from namespace/name and may not be edited`;
      logger.warn({ bucket: verdict.bucket, found: verdict.found }, `sharding: repaired the bucket label of ${this.options.operator.crd.kind} ${key}: ${note}`);
      void this.options.events?.warning(cr, 'ShardBucketLabelRepaired', 'Repair', note);
    } else {
      logger.debug({ bucket: verdict.bucket }, 'sharding: stamped the bucket label of a CR');
    }
    return true;
  }

  /** Sharded with a bucket count: the bucket a cached CR's label names, if it is one of the ring's. */
  private labelledBucketOf(key: string): number | undefined {
    if (!this.splitCrs) return undefined;
    const { namespace, name } = ObjectRef.splitCacheKey(key);
    const cr = this.crGet(namespace, name);
    const labelled = cr ? bucketLabelOf(cr) : undefined;
    return labelled !== undefined && labelled < this.options.shard!.bucketCount! ? labelled : undefined;
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      // Sharded: another replica's key (or one moving away) is dropped; its holder reconciles it. The
      // check and the in-flight count are in one synchronous step, so a bucket's release (which waits for
      // its count to reach 0) never misses a reconcile starting.
      const shard = this.options.shard;
      let bucket = shard?.bucketOf(key);
      // Sharded: a CR labelled with a bucket held here that is not its own is seen only here: repair it.
      let repairOnly = false;
      if (bucket !== undefined && !shard!.admits(bucket)) {
        const labelled = this.labelledBucketOf(key);
        if (labelled !== undefined && labelled !== bucket && shard!.admits(labelled)) {
          bucket = labelled;
          repairOnly = true;
        } else {
          this.queue.forget(key);
          this.lastFailure.delete(key);
          this.queue.done(key);
          continue;
        }
      }
      if (bucket !== undefined) this.inFlight.set(bucket, (this.inFlight.get(bucket) ?? 0) + 1);
      this.activeWorkers++;
      this.metrics?.activeWorkers(1);
      const started = performance.now();
      const { namespace, name } = ObjectRef.splitCacheKey(key);
      const fields = {
        controller: this.name,
        controllerKind: this.options.operator.crd.kind,
        ...(namespace ? { namespace } : {}),
        name,
        reconcileID: randomUUID(),
      };
      const logger = withFields(this.logger, fields);
      const span = startReconcileSpan(this.tracer, fields);
      try {
        if ((await this.stampBucketLabel(key, logger)) || repairOnly) {
          this.queue.forget(key);
          this.lastFailure.delete(key);
          span.end('success');
          continue;
        }
        const result = await this.reconciler.reconcile(key, { logger, trace: span.trace, declarationFailure: this.changeCheckFailures.of(key) });
        this.queue.forget(key);
        this.lastFailure.delete(key);
        if (result?.requeueAfterMs !== undefined) this.queue.addAfter(key, result.requeueAfterMs);
        const outcome = result?.requeueAfterMs !== undefined ? 'requeue_after' : 'success';
        this.metrics?.reconciled(outcome, (performance.now() - started) / 1000);
        span.end(outcome);
      } catch (err) {
        this.metrics?.reconciled('error', (performance.now() - started) / 1000);
        span.end('error', err);
        this.handleError(key, err, logger);
      } finally {
        this.activeWorkers--;
        this.metrics?.activeWorkers(-1);
        if (bucket !== undefined) this.inFlight.set(bucket, this.inFlight.get(bucket)! - 1);
        this.queue.done(key);
      }
    }
  }

  /**
   * Logs a failed reconcile and requeues it (rate limited) unless it is terminal. The first failure of a
   * key, and any whose message differs from its last one, is logged at error with `err` (message and the
   * thrown stack: the user's `file:line` first); a retry failing the same way is one short error line
   * (`message`, `retries`, no stack), its `err` at debug: backoff retries a broken render many times.
   */
  private handleError(key: string, err: unknown, logger: Logger): void {
    const { namespace, name } = ObjectRef.splitCacheKey(key);
    const cr = new ObjectRef({ ...this.options.operator.crd, namespace, name }).toString();
    const summary = { key, cr, ...reconcileErrorFields(err) };
    const log = { ...summary, ...errorFields(err) };
    if (isTerminalError(err)) {
      this.metrics?.terminalError();
      this.queue.forget(key);
      this.lastFailure.delete(key);
      logger.error({ ...log, terminal: true }, 'Reconciler error');
      return;
    }
    this.metrics?.reconcileError();
    this.queue.addRateLimited(key);
    const retries = this.queue.numRequeues(key);
    if (err instanceof ConflictError) {
      logger.debug({ ...log, retries }, 'conflict; retrying');
      return;
    }
    const message = log.err.message;
    if (this.lastFailure.get(key) === message) {
      logger.error({ ...summary, message, terminal: false, retries }, 'Reconciler error (again)');
      logger.debug({ ...log, terminal: false, retries }, 'Reconciler error');
      return;
    }
    this.lastFailure.set(key, message);
    logger.error({ ...log, terminal: false, retries }, 'Reconciler error');
  }
}

/**
 * The CR update predicate: true when generation, labels, annotations, finalizers or deletionTimestamp
 * changed (controller-runtime's GenerationChanged | LabelChanged | AnnotationChanged, plus finalizers
 * and deletion). Status-only updates, including our own, are dropped.
 */
export function crChangeMatters(oldObj: KubeObject, newObj: KubeObject): boolean {
  const a = oldObj.metadata ?? {};
  const b = newObj.metadata ?? {};
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? [])
  );
}
