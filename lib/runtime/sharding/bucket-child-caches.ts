/**
 * The child caches of a sharded replica: one set of child informers per bucket it holds or is taking,
 * each caching only that bucket's children (`<owners>,operator.cdk8s.io/shard-bucket=<n>`,
 * bucket-label.ts), so the replica caches its share of the children, not all of them.
 *
 * Each bucket's informer of a kind is a partition of one watcher per kind (watch-partition.ts): one
 * watch with `operator.cdk8s.io/shard-bucket in (…)` over every bucket cached, not one watch per bucket
 * and kind (each re-opened every 30–45 s, each a socket and its bookkeeping: with 32 buckets, one
 * replica holding them all started 17 MB larger and sent about 450 more GETs per benchmark window,
 * docs/reference/benchmark.md, "One watch per kind over the held buckets"). A bucket that joins is still
 * listed alone, and joins the watch with no change lost or replayed (comparable resource versions);
 * releasing a bucket drops its informers with no event at all; taking one waits for its list only. While
 * a bucket is listed, the kind's watch is paused (its changes come when it re-opens, from where it was).
 *
 * Expected flow (manager.ts): every round of the ring membership calls {@link follow} with the buckets
 * held and claimed; new buckets' informers start at once, and a claimed bucket is taken only when
 * {@link synced} says its informers listed (handover.ts `ready`); the informers of a bucket no longer
 * held or claimed are dropped: listeners hear {@link BucketCachesListener.removed} first (no delete
 * events), then the watches stop. {@link stop} stops them all.
 */
import { resourceKey, type ResolvedKind } from '../../operator/kinds.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import type { Informer } from '../cache/informer.js';
import { InformerFactory, type InformerFactoryOptions } from '../cache/informer-factory.js';
import type { CacheReader } from '../reconcile/child-cache.js';
import { type Logger, silentLogger } from '../logger.js';
import { SHARD_BUCKET_LABEL, bucketSelector } from './bucket-label.js';
import { Watcher } from '../cache/watcher.js';

/**
 * One kind every bucket caches: a child kind, the CR kind, or a related declaration whose objects are
 * made from the children (`RelatedCacheScope.createdFromChildren`, e.g. the Pods of the children's Deployments).
 */
export interface BucketChildKind {
  readonly kind: ResolvedKind;
  /**
   * The informer's key in {@link BucketInformers}. @default {@link childKindKey} of the kind (one
   * informer per kind); a related declaration's own key ({@link relatedBucketKey}) keeps its scope apart.
   */
  readonly key?: string;
  /** Label selector of the kind's children, without the bucket (e.g. `app.kubernetes.io/managed-by in (a,b)`). */
  readonly labelSelector: string;
  /** Field managers whose managedFields entries the cache keeps. */
  readonly keepManagedFieldsOf: readonly string[];
  /** A related scope's field selector. @default none */
  readonly fieldSelector?: string;
  /** A related scope's `metadataOnly`. @default whole objects */
  readonly metadataOnly?: boolean;
  /** A related scope's `transform`. @default none */
  readonly transform?: (object: KubeObject) => KubeObject;
}

/** The key in {@link BucketInformers} of an operator's related declaration cached per bucket. */
export function relatedBucketKey(operatorName: string, related: string): string {
  return `related:${operatorName}:${related}`;
}

/** The informers of one bucket, by the kind's key (`group/version/plural`, {@link childKindKey}; a related declaration's {@link relatedBucketKey}). */
export type BucketInformers = ReadonlyMap<string, Informer>;

/** Told when a bucket's informers are created (before they start) and before they are dropped. */
export interface BucketCachesListener {
  added(bucket: number, informers: BucketInformers): void;
  /** The informers are about to be dropped: unsubscribe, forget their objects (no delete events follow). */
  removed(bucket: number, informers: BucketInformers): void;
}

export interface BucketChildCachesOptions {
  readonly client: KubeClient;
  readonly kinds: readonly BucketChildKind[];
  /** Watch one namespace only. @default all namespaces */
  readonly namespace?: string;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Watch tuning and metrics, as the manager's other informers. */
  readonly watch?: InformerFactoryOptions['watch'];
}

/** The key of a child kind's informer in {@link BucketInformers}: the kind's {@link resourceKey}. */
export const childKindKey = resourceKey;

/** The per-bucket child informers of a sharded replica; see the module docs. */
export class BucketChildCaches {
  private readonly options: BucketChildCachesOptions;
  private readonly logger: Logger;
  private readonly buckets = new Map<number, { factory: InformerFactory; informers: Map<string, Informer> }>();
  /**
   * The informers of each key over the cached buckets, rebuilt when a bucket is added or dropped: every
   * lookup of a reconcile goes over them (one array, not one built per lookup).
   */
  private byKey = new Map<string, readonly Informer[]>();
  private readonly listeners = new Set<BucketCachesListener>();
  private readonly stopping = new Set<Promise<void>>();
  private stopped = false;
  /** One partitioned watcher per kind (by its key): one watch over every bucket cached, each bucket a partition. */
  private readonly watchers = new Map<string, Watcher>();

  constructor(options: BucketChildCachesOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
  }

  /** Subscribes; `added` is called at once for every bucket cached now. Returns the unsubscribe function. */
  on(listener: BucketCachesListener): () => void {
    this.listeners.add(listener);
    for (const [bucket, { informers }] of this.buckets) listener.added(bucket, informers);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Caches exactly `buckets` from now on: starts the new ones' informers, drops the others'. */
  follow(buckets: Iterable<number>): void {
    if (this.stopped) return;
    const wanted = new Set(buckets);
    for (const bucket of [...this.buckets.keys()]) if (!wanted.has(bucket)) this.drop(bucket);
    for (const bucket of [...wanted].sort((a, b) => a - b)) if (!this.buckets.has(bucket)) this.add(bucket);
  }

  /** True when every informer of `bucket` has listed; false for a bucket not cached. */
  synced(bucket: number): boolean {
    const entry = this.buckets.get(bucket);
    return entry !== undefined && entry.factory.hasSynced();
  }

  /** The buckets cached now, sorted. */
  cached(): number[] {
    return [...this.buckets.keys()].sort((a, b) => a - b);
  }

  /** The children cached, over every bucket. */
  size(): number {
    let n = 0;
    for (const { informers } of this.buckets.values()) for (const informer of informers.values()) n += informer.size();
    return n;
  }

  /** Every informer, for the liveness checks. */
  all(): Informer[] {
    return [...this.buckets.values()].flatMap(({ factory }) => factory.all());
  }

  /**
   * A reader of one kind's children over every cached bucket (the reconciler's child cache); its
   * `inBucket(b)` is bucket `b`'s informer alone (what one CR's reconcile reads: child-cache.ts).
   */
  reader(kind: ResolvedKind): CacheReader {
    const key = childKindKey(kind);
    const informers = () => this.byKey.get(key) ?? [];
    return {
      inBucket: (bucket) => this.informerIn(key, bucket),
      get: (namespace, name) => {
        for (const informer of informers()) {
          const found = informer.get(namespace, name);
          if (found) return found;
        }
        return undefined;
      },
      byOwnerUid: (uid) => {
        const out: KubeObject[] = [];
        for (const informer of informers()) out.push(...informer.byOwnerUid(uid));
        return out;
      },
    };
  }

  /** Every cached object of one kind over every cached bucket (e.g. the CRs, when the CR kind is one of {@link BucketChildCachesOptions.kinds}). */
  list(kind: { readonly group: string; readonly version: string; readonly plural: string }): KubeObject[] {
    const key = childKindKey(kind);
    return [...this.buckets.values()].flatMap((b) => b.informers.get(key)?.list() ?? []);
  }

  /** The informers of one kind (or of one {@link relatedBucketKey}), one per cached bucket. */
  informersOf(kind: { readonly group: string; readonly version: string; readonly plural: string } | string): readonly Informer[] {
    return this.byKey.get(typeof kind === 'string' ? kind : childKindKey(kind)) ?? [];
  }

  /** The informer of one kind (or of one {@link relatedBucketKey}) of `bucket`; undefined when that bucket is not cached. */
  informerIn(kind: { readonly group: string; readonly version: string; readonly plural: string } | string, bucket: number): Informer | undefined {
    return this.buckets.get(bucket)?.informers.get(typeof kind === 'string' ? kind : childKindKey(kind));
  }

  /** Drops every bucket and resolves once every watch has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const bucket of [...this.buckets.keys()]) this.drop(bucket);
    await Promise.all([...this.stopping]);
    await Promise.all([...this.watchers.values()].map((w) => w.stop()));
  }

  /** The kind's one watch over the cached buckets (each bucket's informer a partition of it), made on first use. */
  private watcherOf(key: string, child: BucketChildKind): Watcher {
    let watcher = this.watchers.get(key);
    if (!watcher) {
      const { kind } = child;
      watcher = new Watcher({
        client: this.options.client,
        resource: kind,
        namespace: kind.namespaced ? this.options.namespace : undefined,
        labelSelector: child.labelSelector || undefined,
        fieldSelector: child.fieldSelector,
        metadataOnly: child.metadataOnly ? { apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version, kind: kind.kind } : undefined,
        partitionLabel: SHARD_BUCKET_LABEL,
        onChange: () => {},
        logger: this.logger,
        ...this.options.watch,
      });
      this.watchers.set(key, watcher);
    }
    return watcher;
  }

  private add(bucket: number): void {
    const factory = new InformerFactory({ client: this.options.client, logger: this.logger, watch: this.options.watch });
    const informers = new Map<string, Informer>();
    for (const child of this.options.kinds) {
      const key = child.key ?? childKindKey(child.kind);
      if (informers.has(key)) continue;
      informers.set(
        key,
        factory.informerFor(child.kind, {
          namespace: this.options.namespace,
          labelSelector: bucketSelector(child.labelSelector, bucket),
          fieldSelector: child.fieldSelector,
          metadataOnly: child.metadataOnly,
          transform: child.transform,
          keepManagedFieldsOf: child.keepManagedFieldsOf,
          partitionOf: { watcher: this.watcherOf(key, child), value: String(bucket) },
        }),
      );
    }
    this.buckets.set(bucket, { factory, informers });
    this.indexKeys();
    for (const listener of this.listeners) listener.added(bucket, informers);
    factory.start();
    this.logger.debug({ bucket, informers: factory.all().map((i) => i.describe()) }, 'sharding: caching the children of a bucket');
  }

  private drop(bucket: number): void {
    const entry = this.buckets.get(bucket);
    if (!entry) return;
    this.buckets.delete(bucket);
    this.indexKeys();
    for (const listener of this.listeners) listener.removed(bucket, entry.informers);
    const done = entry.factory.stop().finally(() => this.stopping.delete(done));
    this.stopping.add(done);
    this.logger.debug({ bucket }, 'sharding: dropped the children cache of a bucket');
  }

  private indexKeys(): void {
    const byKey = new Map<string, Informer[]>();
    for (const { informers } of this.buckets.values()) for (const [key, informer] of informers) byKey.set(key, [...(byKey.get(key) ?? []), informer]);
    this.byKey = byKey;
  }
}
