/**
 * The Manager wires the rooms for a set of operators: an API client for reads and one for writes (fenced
 * by the lease), the shared informers, one {@link Controller} per operator, Events, leader election, the
 * RBAC self-check and graceful stop (controller-runtime's manager). runOperators() (run-operators.ts) adds probes and webhooks on top.
 */
import { randomUUID } from 'node:crypto';
import type { Tracer } from '@opentelemetry/api';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { pino } from 'pino';
import { asCustomResource } from '../operator/object-shape.js';
import { hasBrand } from '../operator/brand.js';
import { TerminalError } from '../operator/errors.js';
import { MANAGED_BY_LABEL, toLabelValue } from '../operator/render/labels.js';
import { resourceKey, type ResolvedKind } from '../operator/kinds.js';
import { type RenderInputs, type RenderOutput, type RenderableOperator, renderCustomResource } from '../operator/render/render-children.js';
import { type StatusOperator, statusOfCustomResource } from '../operator/render/custom-status.js';
import { resolveReferences } from '../operator/render/related.js';
import { ApiClient, type ApiClientOptions, type RequestRecord } from './client/api-client.js';
import type { KubeObject } from './client/kube-client.js';
import { type ControlledOperator, Controller } from './reconcile/controller.js';
import { EventRecorder } from './events/events.js';
import { CacheSyncError } from './cache/cache-sync-error.js';
import { InformerFactory } from './cache/informer-factory.js';
import type { KubeConfigSource } from './client/kube-config-source.js';
import { LeaderElector, LeadershipLostError } from './lease/leader-election.js';
import { LoggedWriteGate, WriteFencedError } from './client/write-gate.js';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics/metrics.js';
import { OpenApiFieldTypes } from './reconcile/openapi-field-types.js';
import { assertAccess, requiredAccess } from './startup/rbac-self-check.js';
import { type StorageVersionMigrator, storageVersionMigratorFor } from './startup/storage-version-migration.js';
import { bucketOfKey, ShardingConfigError } from './sharding/bucket-hash.js';
import { ShardMember, ShardMembershipError } from './sharding/membership.js';
import { BucketChildCaches, relatedBucketKey } from './sharding/bucket-child-caches.js';
import type { InitialList } from './cache/watcher.js';
import { detectShardSelector } from './sharding/shard-selector-support.js';

/** An operator the manager runs (lib/operator's `Operator` construct satisfies it). */
export interface RunnableOperator extends ControlledOperator, RenderableOperator {}

export interface ManagerOptions {
  /**
   * Where the API server is and how to authenticate: client-node's `KubeConfig` (e.g. after
   * `loadFromDefault()`), or any object with its `getCurrentCluster`, `getCurrentUser` and
   * `applyToHTTPSOptions` ({@link KubeConfigSource}). The current context is read once, here.
   * @throws Error from the constructor when it has no current cluster
   */
  readonly kubeConfig: KubeConfigSource;
  /** The operators to run in this process; they share informers. */
  readonly operators: readonly RunnableOperator[];
  /**
   * How every informer reads its whole set at start and after a 410 (lib/runtime/cache/watcher.ts
   * `initialList`): `watch-list` streams it (KEP-3157, `sendInitialEvents`) where the API server serves
   * it and lists elsewhere, `list` always pages with LIST. `run --initial-list`.
   * @default 'watch-list'
   */
  readonly initialList?: InitialList;
  /**
   * Renders one operator's CR into stamped, sorted children (or a whole RenderOutput).
   * @default lib/operator's `renderCustomResource(operator, cr, inputs)` (validation with defaults,
   *   related objects, stamping, sorting, ordering, status, requeueAfter)
   */
  readonly render?: (operator: RunnableOperator, cr: KubeObject, inputs: RenderInputs) => KubeObject[] | RenderOutput;
  /**
   * Checks each render's children before anything is applied (`run --validate-children`: Kubernetes' own
   * validation run offline, lib/validator). It throws to refuse them, a `ChildRefusedError` naming each
   * child, field path and message: the CR becomes Stalled=True `ChildRefused` with a Warning Event and
   * an error log line, and none of its children is applied; other CRs go on. The refusal is terminal
   * (not retried: the same render gets the same verdict) until the CR, a related object or a child
   * changes. A render reused unchanged (render-memo.ts) was checked when it was made.
   * @default none: the API server validates on apply anyway, and a refused apply is Stalled=True `ApplyFailed`
   */
  readonly validateChildren?: (children: readonly KubeObject[]) => void;
  /** Watch and reconcile one namespace only. @default all namespaces */
  readonly namespace?: string;
  /** Per operator. @default 1, like controller-runtime */
  readonly maxConcurrentReconciles?: number;
  /** @default 36000000 ms (10 h), controller-runtime's SyncPeriod */
  readonly resyncPeriodMs?: number;
  /** Give up waiting for the first list of every informer after this long. @default 120000 ms, controller-runtime's CacheSyncTimeout */
  readonly cacheSyncTimeoutMs?: number;
  /** How long `stop()` lets reconciles in flight finish. @default 30000 ms, controller-runtime's GracefulShutdownTimeout */
  readonly gracefulShutdownMs?: number;
  /** Structured logger. @default pino JSON on stdout, level from nothing (info) */
  readonly logger?: Logger;
  /** Called after every API request (metrics, tests counting writes). */
  readonly onRequest?: (record: RequestRecord) => void;
  /** Act as another user (impersonation headers), e.g. to check an operator's RBAC. @default the kubeconfig's user */
  readonly impersonate?: ApiClientOptions['impersonate'];
  /** Record events.k8s.io Events on CRs. @default true */
  readonly events?: boolean;
  /** Prometheus metrics: controller_runtime_*, workqueue_*, rest_client_requests_total, leader_election_master_status. @default none */
  readonly metrics?: OperatorMetrics;
  /**
   * Before starting informers, check with SelfSubjectAccessReviews that every permission the runtime uses
   * is granted, and fail with the list of missing ones (lib/runtime/startup/rbac-self-check.ts). @default false
   */
  readonly rbacSelfCheck?: boolean;
  /**
   * The metrics server reviews scrapes with this Manager's `client` (TokenReview, SubjectAccessReview;
   * lib/runtime/metrics/metrics-auth.ts): the RBAC self-check includes create on both. @default false
   */
  readonly metricsAuthorization?: boolean;
  /**
   * Only the holder of this Lease runs reconciles; the others keep warm caches and take over when it goes
   * (client-go's algorithm, lib/runtime/lease/leader-election.ts). @default none: this process always reconciles
   */
  readonly leaderElection?: ManagerLeaderElection;
  /**
   * Shard the CRs across replicas (lib/runtime/sharding/): each replica keeps a Lease in the ring and
   * reconciles only the CRs of the buckets it holds. Every child it applies carries its CR's bucket label
   * (`operator.cdk8s.io/shard-bucket`, sharding/bucket-label.ts), and it caches only the children of the
   * buckets it holds or is taking (sharding/bucket-child-caches.ts). Excludes `leaderElection`.
   * @default none: this process reconciles every CR
   */
  readonly sharding?: ManagerSharding;
  /**
   * Where reconcile spans go: one per reconcile, a child span per step (lib/runtime/tracing/reconcile-trace.ts).
   * @default `@opentelemetry/api`'s global tracer: a no-op unless the application registered a tracer provider
   */
  readonly tracer?: Tracer;
}

/** Leader election of a {@link Manager}. */
export interface ManagerLeaderElection {
  /** Namespace of the Lease: the operator's own namespace. */
  readonly namespace: string;
  /** Name of the Lease (controller-runtime's LeaderElectionID). */
  readonly name: string;
  /** Unique per process. @default `${hostname()}_${randomUUID()}`, controller-runtime's choice */
  readonly identity?: string;
  /** @default 15000 ms */
  readonly leaseDurationMs?: number;
  /** @default 10000 ms */
  readonly renewDeadlineMs?: number;
  /** @default 2000 ms */
  readonly retryPeriodMs?: number;
  /**
   * Called when leadership is lost (not on a clean stop), after the workers were stopped and their writes
   * fenced; the process should exit non-zero at once, as controller-runtime does. `why`: the elector's
   * `lostWhy` (not renewed in time, or another holder observed in the Lease).
   */
  readonly onLost?: (why?: string) => void;
}

/** Sharding of a {@link Manager} (lib/runtime/sharding/membership.ts). */
export interface ManagerSharding {
  /** Namespace of the ring's Leases: the operator's own namespace. */
  readonly namespace: string;
  /** The ring (a label value): the same for every replica of one Deployment. */
  readonly ring: string;
  /** This replica's name, unique in the ring: the pod's name. */
  readonly member: string;
  /** @default 32 */
  readonly bucketCount?: number;
  /** @default 15000 ms */
  readonly leaseDurationMs?: number;
  /** @default 10000 ms */
  readonly renewDeadlineMs?: number;
  /** @default 2000 ms */
  readonly retryPeriodMs?: number;
  /** Called when the member Lease was lost (`error` says how), after the workers stopped and writes were fenced: exit non-zero. */
  readonly onLost?: (error: ShardMembershipError) => void;
}

/**
 * Runs one or many operators in one process: one {@link ApiClient}, one {@link InformerFactory} (child
 * kinds owned by several operators share an informer selected on
 * `app.kubernetes.io/managed-by in (a,b)`), one {@link Controller} per operator.
 *
 * Expected flow: `start()` runs the RBAC self-check (when asked), subscribes every controller, starts
 * the informers, waits for every first list (rejects after `cacheSyncTimeoutMs`), then starts the
 * workers (with leader election: once it holds the lease). `stop()` drains the queues (up to
 * `gracefulShutdownMs`), closes the watches, then releases the lease and closes connections.
 *
 * Losing the lease: the workers stop at once without draining, every request of {@link writer} (in
 * flight or later) is aborted, and `leaderElection.onLost` is called; the process should exit non-zero.
 */
export class Manager {
  readonly client: ApiClient;
  /**
   * The client the controllers write with (reconciles, events). Fenced: when leadership is lost, or the
   * graceful-shutdown deadline passes with reconciles still running, every request of it, in flight or
   * later, is aborted, so nothing reaches the server after another replica may have taken over. With
   * leader election it is also gated (lib/runtime/client/write-gate.ts): a write is sent only while the
   * last successful renewal is younger than the renew deadline by the local monotonic clock, checked as
   * the write goes out, so a leader resumed after a freeze sends nothing before its deadline timer runs.
   */
  readonly writer: ApiClient;
  /** The writer's gate with leader election: logs each write it lets pass (write-gate.ts). */
  private readonly leaderGate: LoggedWriteGate | undefined;
  readonly informers: InformerFactory;
  readonly controllers: Controller[];
  private readonly options: ManagerOptions;
  private readonly logger: Logger;
  private started = false;
  private elector: LeaderElector | undefined;
  private electorRun: Promise<void> | undefined;
  private readonly stopElection = new AbortController();
  private readonly fence = new AbortController();
  private lost = false;
  /** One per controller when events are on, by operator name; flushed by {@link Manager.stop}. */
  private readonly recorderOf = new Map<string, EventRecorder>();
  /** Storage-version migration, started with the workers (startup/storage-version-migration.ts). */
  private migrator: StorageVersionMigrator | undefined;
  /** Sharded: this replica's ring membership, and the held buckets moving away (no new work). */
  readonly shard: ShardMember | undefined;
  /**
   * Sharded: the child caches, one informer set per bucket held or claimed (a claimed bucket is taken
   * only once its set has listed); the children of other buckets are not cached here.
   */
  readonly shardChildren: BucketChildCaches | undefined;
  private draining = new Set<number>();

  constructor(options: ManagerOptions) {
    this.options = options;
    this.logger = options.logger ?? pino({ base: { component: 'cdk8s-operator' } });
    if (options.sharding && options.leaderElection) throw new ShardingConfigError('sharding and leader election exclude each other (a sharded replica reconciles its own buckets)');
    const server = options.kubeConfig.getCurrentCluster()?.server;
    const onRequest = options.metrics && server ? options.metrics.requestHook(server, options.onRequest) : options.onRequest;
    this.client = new ApiClient({ kubeConfig: options.kubeConfig, userAgent: 'cdk8s-operator-sdk/manager', onRequest, impersonate: options.impersonate });
    this.leaderGate = options.leaderElection
      ? new LoggedWriteGate((method, path) => (this.elector ? this.elector.assertLeading(method, path) : fenceNotLeading(method, path)), this.logger)
      : undefined;
    this.writer = new ApiClient({
      kubeConfig: options.kubeConfig,
      userAgent: 'cdk8s-operator-sdk/manager',
      onRequest,
      impersonate: options.impersonate,
      signal: this.fence.signal,
      // With leader election a write leaves only while the lease is held by the local clock (write-gate.ts);
      // each write that passes is logged at debug with the time its check began (LoggedWriteGate).
      writeGate:
        this.leaderGate ??
        (options.sharding
          ? { assertMayWrite: (method, path) => this.shard!.writeGate().assertMayWrite(method, path) }
          : undefined),
    });
    const sharding = options.sharding;
    const crds = [...new Map(options.operators.map((o) => [resourceKey(o.crd), o.crd])).values()];
    this.shard = sharding
      ? new ShardMember({
          client: this.client,
          namespace: sharding.namespace,
          ring: sharding.ring,
          member: sharding.member,
          bucketCount: sharding.bucketCount,
          leaseDurationMs: sharding.leaseDurationMs,
          renewDeadlineMs: sharding.renewDeadlineMs,
          retryPeriodMs: sharding.retryPeriodMs,
          logger: this.logger,
          metrics: options.metrics?.sharding(),
          busy: () => new Set(this.controllers.flatMap((c) => [...c.busyBuckets()])),
          ready: (bucket) => this.shardChildren!.synced(bucket),
          // A bucket's load for the load-aware assignment: its CRs in this replica's cache (load-balance.ts).
          load: (bucket) => crds.reduce((n, crd) => n + (this.shardChildren!.informerIn(crd, bucket)?.size() ?? 0), 0),
          onChange: (change) => {
            this.draining = new Set(change.draining);
            // Cache the children of the buckets held and claimed, drop the others' (before enqueueing: a
            // released bucket's children leave without a delete event).
            this.shardChildren!.follow([...change.held, ...change.claimed]);
            for (const controller of this.controllers) controller.enqueueBuckets(change.taken);
            // Cluster-wide work runs once in the ring: on the holder of bucket 0.
            if (change.taken.includes(0)) this.startStorageVersionMigration();
            if (change.released.includes(0)) void this.migrator?.stop();
          },
          onLost: (error) => this.loseShard(sharding, error),
        })
      : undefined;
    this.informers = new InformerFactory({
      client: this.client,
      logger: this.logger,
      watch: { initialList: options.initialList ?? 'watch-list', ...(options.metrics ? { metrics: options.metrics.watch() } : {}) },
    });

    const ownersByKind = new Map<string, string[]>();
    for (const operator of options.operators) {
      for (const kind of operator.childKinds()) {
        const key = resourceKey(kind);
        ownersByKind.set(key, [...(ownersByKind.get(key) ?? []), operator.operatorName]);
      }
    }
    const selector = (kind: ResolvedKind): string => {
      const owners = [...new Set(ownersByKind.get(resourceKey(kind)) ?? [])].map(toLabelValue).sort();
      return owners.length === 1 ? `${MANAGED_BY_LABEL}=${owners[0]}` : `${MANAGED_BY_LABEL} in (${owners.join(',')})`;
    };
    const keepManagedFieldsOf = [...new Set(options.operators.map((o) => o.operatorName))].sort();
    this.shardChildren = this.shard
      ? new BucketChildCaches({
          client: this.client,
          namespace: options.namespace,
          logger: this.logger,
          watch: { initialList: options.initialList ?? 'watch-list', ...(options.metrics ? { metrics: options.metrics.watch() } : {}) },
          // The CRs too, selected on the bucket label alone (cr-bucket-label.ts); the strays are each controller's own informer.
          kinds: [
            ...options.operators.flatMap((operator) => operator.childKinds().map((kind) => ({ kind, labelSelector: selector(kind), keepManagedFieldsOf }))),
            ...options.operators.map((operator) => ({ kind: operator.crd, labelSelector: '', keepManagedFieldsOf: [] })),
            // Related objects made from the children (their Pods): their templates carry the bucket (bucket-label.ts).
            ...options.operators.flatMap((operator) =>
              Object.entries(operator.relatedKinds ?? {})
                .filter(([key]) => operator.related?.[key]?.scope?.createdFromChildren === true)
                .map(([key, kind]) => {
                  const scope = operator.related![key]!.scope!;
                  return {
                    kind,
                    key: relatedBucketKey(operator.operatorName, key),
                    labelSelector: scope.labelSelector ?? '',
                    fieldSelector: scope.fieldSelector,
                    metadataOnly: scope.metadataOnly,
                    transform: scope.transform as ((object: KubeObject) => KubeObject) | undefined,
                    keepManagedFieldsOf: [],
                  };
                }),
            ),
          ],
        })
      : undefined;
    if (this.shardChildren && sharding) {
      const cachedCrs = () => crds.reduce((n, crd) => n + this.shardChildren!.list(crd).length, 0);
      options.metrics?.observeShardCachedChildren(sharding.ring, () => this.shardChildren!.size() - cachedCrs());
      // The CRs of the buckets held or being taken, and the strays (each controller's own CR informer).
      options.metrics?.observeShardCachedCrs(sharding.ring, () => cachedCrs() + this.controllers.reduce((n, c) => n + c.cachedStrays(), 0));
    }
    const shardOf = this.shard
      ? {
          children: this.shardChildren,
          bucketOf: bucketOfKey(this.shard.bucketCount),
          admits: (bucket: number) => this.shard!.holds(bucket) && !this.draining.has(bucket),
          bucketCount: this.shard.bucketCount,
        }
      : undefined;
    // One reader of the server's OpenAPI v3 documents, shared by every controller's child diff.
    const fieldTypes = new OpenApiFieldTypes({ client: this.client });
    this.controllers = options.operators.map((operator) => {
      const logger = this.logger;
      const events =
        options.events === false
          ? undefined
          : new EventRecorder({
              client: this.writer,
              reportingController: `cdk8s.io/${operator.operatorName}`,
              reportingInstance: `${operator.operatorName}-${hostname()}`, // the pod name in a cluster
              logger,
            });
      if (events) this.recorderOf.set(operator.operatorName, events);
      return new Controller({
        operator,
        render: (cr, inputs) => {
          const output = options.render ? options.render(operator, cr, inputs) : renderCustomResource(operator, asCustomResource(cr), inputs);
          try {
            options.validateChildren?.(Array.isArray(output) ? output : output.children);
          } catch (err) {
            // The same render gets the same verdict: retrying cannot help until an input changes.
            throw hasBrand(err, 'ChildRefusedError') ? new TerminalError((err as Error).message, { cause: err }) : err;
          }
          return output;
        },
        status: typeof (operator as StatusOperator).status === 'function' ? (cr, inputs) => statusOfCustomResource(operator, asCustomResource(cr), inputs) : undefined,
        references: (cr) =>
          operator.related && Object.keys(operator.related).length > 0
            ? resolveReferences(operator.related, operator.relatedKinds ?? {}, operator.parseCustomResource(cr))
            : [],
        statusFields: statusFieldsOf(operator),
        client: this.writer,
        signal: this.fence.signal,
        informers: this.informers,
        namespace: options.namespace,
        childLabelSelector: selector,
        keepManagedFieldsOf,
        maxConcurrentReconciles: options.maxConcurrentReconciles,
        resyncPeriodMs: options.resyncPeriodMs,
        metrics: options.metrics,
        fieldTypes,
        logger,
        events,
        tracer: options.tracer,
        shard: shardOf,
      });
    });
  }

  /** The member Lease was lost (`error` says how): stop at once, fence writes, tell. */
  private loseShard(sharding: ManagerSharding, error: ShardMembershipError): void {
    this.lost = true;
    for (const controller of this.controllers) controller.abort();
    void this.migrator?.stop();
    this.fence.abort(error);
    this.logger.error({ lease: `${sharding.namespace}/${sharding.member}` }, error.message);
    sharding.onLost?.(error);
  }

  /**
   * Starts informers and workers; resolves once every cache synced and the workers run.
   * @throws CacheSyncError naming each informer not synced within `cacheSyncTimeoutMs` and its last list error
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.options.rbacSelfCheck) {
      const requirements = requiredAccess(this.options.operators, {
        namespace: this.options.namespace,
        leaderElectionNamespace: this.options.leaderElection?.namespace,
        shardingNamespace: this.options.sharding?.namespace,
        metricsAuthorization: this.options.metricsAuthorization,
      });
      await assertAccess(this.client, requirements, { signal });
      this.logger.info({ permissions: requirements.length }, 'RBAC self-check passed');
    }
    for (const controller of this.controllers) controller.watch();
    this.informers.start();
    const cacheSyncTimeoutMs = this.options.cacheSyncTimeoutMs ?? 120_000;
    const timeout = AbortSignal.timeout(cacheSyncTimeoutMs);
    const syncSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
    setMaxListeners(0, syncSignal); // one listener per informer
    try {
      await this.informers.waitForSync(syncSignal);
    } catch (err) {
      const reason = timeout.aborted ? 'CacheSyncTimeout' : signal?.aborted ? 'Aborted' : 'InformerStopped';
      throw CacheSyncError.of(reason, this.informers.all(), cacheSyncTimeoutMs, err);
    }
    const election = this.options.leaderElection;
    if (election) {
      this.elector = new LeaderElector({
        client: this.client,
        namespace: election.namespace,
        name: election.name,
        identity: election.identity ?? `${hostname()}_${randomUUID()}`,
        leaseDurationMs: election.leaseDurationMs,
        renewDeadlineMs: election.renewDeadlineMs,
        retryPeriodMs: election.retryPeriodMs,
        logger: this.logger,
        metrics: this.options.metrics?.leaderElection(),
        onStartedLeading: () => {
          this.logger.info({ lease: `${election.namespace}/${election.name}` }, 'became leader; starting workers');
          for (const controller of this.controllers) controller.startWorkers();
          this.startStorageVersionMigration();
        },
        onStoppedLeading: (reason) => {
          if (reason !== 'lost') return;
          // The lines of writes that passed before: the process may exit from inside the check that deposed it.
          this.leaderGate?.flush();
          // Another replica may be writing soon: stop without draining and cut off what is in flight.
          this.lost = true;
          for (const controller of this.controllers) controller.abort();
          void this.migrator?.stop();
          const why = this.elector?.lostWhy;
          this.fence.abort(new LeadershipLostError(election, { why }));
          this.logger.error({ lease: `${election.namespace}/${election.name}`, why }, 'leadership lost; workers stopped, writes fenced');
          election.onLost?.(why);
        },
      });
      this.electorRun = this.elector.run(this.stopElection.signal);
    } else if (this.shard) {
      // KEP-5866: told, not used (its hash is of the uid or namespace, our buckets of namespace/name).
      const crd = this.options.operators[0]?.crd;
      if (crd) {
        const support = await detectShardSelector(this.client, crd, this.options.namespace, signal);
        this.logger.info(
          { shardSelector: support.supported ? 'supported' : 'unsupported', detail: support.detail },
          `sharding: the API server ${support.supported ? 'supports' : 'does not support'} shardSelector (KEP-5866); CRs are filtered here by their namespace/name bucket, which the server's uid or namespace ranges cannot express`,
        );
      }
      // Workers first (they drop keys of buckets not held), then membership: buckets taken are enqueued.
      for (const controller of this.controllers) controller.startWorkers();
      await this.shard.start(signal);
    } else {
      for (const controller of this.controllers) controller.startWorkers();
      this.startStorageVersionMigration();
    }
    // One line at info (the dev loop prints it); the informers, one per watched resource, at debug.
    this.logger.info({ operators: this.controllers.map((c) => c.name), namespace: this.options.namespace ?? '(all)' }, 'operators running');
    this.logger.debug({ informers: this.informers.all().map((i) => i.describe()) }, 'informers');
  }

  /**
   * The leader, its caches synced, rewrites objects stored in old versions and trims the CRDs'
   * `status.storedVersions`, beside the reconciles (never blocking them); failures are told and retried.
   */
  private startStorageVersionMigration(): void {
    this.migrator ??= storageVersionMigratorFor(this.options.operators, {
      client: this.writer,
      namespace: this.options.namespace,
      logger: this.logger,
      registry: this.options.metrics?.registry,
      events: (operatorName) => this.recorderOf.get(operatorName),
    });
    this.migrator?.start();
  }

  /** Resolves when the storage-version migration has succeeded for every CRD (at once when none runs). */
  storageVersionMigrationDone(): Promise<void> {
    return this.migrator?.done() ?? Promise.resolve();
  }

  /** True once every informer has synced (the readiness probe). */
  hasSynced(): boolean {
    return this.informers.hasSynced();
  }

  /** True when this process runs reconciles: no leader election, or it holds the lease (sharded: its member Lease is renewed). */
  isLeader(): boolean {
    if (this.shard) return this.shard.hasRun() && !this.lost;
    return this.elector ? this.elector.isLeader() : this.started;
  }

  /**
   * Graceful stop (controller-runtime's order): stop taking new work; let reconciles in flight and keys
   * already queued finish, and the Events they recorded be written, up to `gracefulShutdownMs` (past it,
   * whatever still runs is fenced off: its requests are aborted); close the watches; then release the
   * lease (client-go's ReleaseOnCancel), so a standby takes over at its next retry; close connections. After a lost lease nothing is drained or
   * released. Idempotent enough to call after a failed `start()`.
   */
  async stop(): Promise<void> {
    const grace = this.options.gracefulShutdownMs ?? 30_000;
    const deadline = AbortSignal.timeout(grace);
    await Promise.all([...this.controllers.map((c) => c.stop(deadline)), this.migrator?.stop()]);
    await Promise.all([...this.recorderOf.values()].map((r) => r.flush(deadline)));
    if (deadline.aborted) {
      this.logger.warn({ gracefulShutdownMs: grace }, 'reconciles still running at the graceful-shutdown deadline; fencing them off');
      this.fence.abort(new Error('graceful shutdown timed out'));
    }
    await Promise.all([this.informers.stop(), this.shardChildren?.stop()]);
    if (this.shard && !this.lost) await this.shard.stop();
    if (this.elector) {
      if (!this.lost) await this.elector.release();
      this.stopElection.abort();
      await this.electorRun;
    }
    this.client.close();
    this.writer.close();
    this.logger.info({ operators: this.controllers.map((c) => c.name) }, 'operators stopped');
  }

  /**
   * The liveness probe's "watchers" check: passes while every started informer's watch loop runs, is not
   * stuck, and is not blind (the API server said something to it within a healthy watch's longest
   * silence, see Watcher); throws naming the ones that are not.
   *
   * Blind watches and restarts: as with client-go's reflector, a dead watch is recovered in process, not by
   * restarting the pod (a restart would drop every warm cache and, for a leader, the lease): its stream
   * is closed within timeoutSeconds + 15 s of the last word and re-opened, so a single half-open
   * connection makes this check fail for about 10 s, less than one period of the synthesized liveness
   * probe (every 20 s, restart after 3 failures in a row). Only a watch that stays blind, because its
   * re-opened watch gets no answer of any kind either (a silent network path to the API server for about
   * a minute or more), gets the pod restarted. Not blind, so no restart: error answers (403, 429, 5xx)
   * and refused connections (the API server down or restarting): they are logged, and a restart would
   * only slow recovery (the new process cannot sync its caches either).
   */
  assertWatchersAlive(): void {
    const bucketInformers = (this.shardChildren?.all() ?? []).filter((i) => i.isStarted());
    const dead = [...this.informers.notAlive(), ...bucketInformers.filter((i) => !i.alive())];
    const blind = [...this.informers.blind(), ...bucketInformers.filter((i) => i.blind())].filter((i) => !dead.includes(i));
    const problems = [
      ...(dead.length > 0 ? [`watch not alive: ${dead.map((i) => i.describe()).join(', ')}`] : []),
      ...(blind.length > 0 ? [`watch blind (no word from the API server): ${blind.map((i) => `${i.describe()} for ${Math.round(i.silentForMs() / 1000)} s`).join(', ')}`] : []),
    ];
    if (problems.length > 0) throw new Error(problems.join('; '));
  }
}

function fenceNotLeading(method: string, path: string): never {
  throw new WriteFencedError(method, path, 'leader election has not started');
}

/** The keys of an operator's status schema (a zod object's shape), if it has one. */
function statusFieldsOf(operator: RunnableOperator): string[] {
  const shape = (operator.statusSchema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape && typeof shape === 'object' ? Object.keys(shape).sort() : [];
}
