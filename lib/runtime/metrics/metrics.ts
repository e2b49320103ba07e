/**
 * Prometheus metrics of the runtime, under controller-runtime's and client-go's names and labels, so that
 * dashboards and alerts written for Go operators work unchanged
 * (controller-runtime pkg/internal/controller/metrics, pkg/metrics/workqueue.go, pkg/metrics/client_go_adapter.go,
 * pkg/metrics/leaderelection.go), plus a few of our own under the `cdk8s_operator_` prefix.
 *
 * Every metric lives in the {@link OperatorMetrics.registry} of one instance (a prom-client `Registry`, never
 * prom-client's global one), so several managers (and tests) in one process never share counts.
 *
 * | metric | type | labels | meaning |
 * |---|---|---|---|
 * | `controller_runtime_reconcile_total` | counter | controller, result | reconciles by outcome; result is `success`, `error`, `requeue` or `requeue_after` |
 * | `controller_runtime_reconcile_errors_total` | counter | controller | reconciles that returned an error, terminal or not |
 * | `controller_runtime_terminal_reconcile_errors_total` | counter | controller | reconciles that returned a terminal error (not retried) |
 * | `controller_runtime_reconcile_time_seconds` | histogram | controller | duration of one reconcile; controller-runtime's buckets 5 ms … 60 s |
 * | `controller_runtime_max_concurrent_reconciles` | gauge | controller | configured worker count |
 * | `controller_runtime_active_workers` | gauge | controller | workers reconciling right now |
 * | `workqueue_depth` | gauge | name, controller | keys waiting in the queue |
 * | `workqueue_adds_total` | counter | name, controller | keys accepted by the queue |
 * | `workqueue_queue_duration_seconds` | histogram | name, controller | time a key waited before a worker took it; buckets 10 ns … 1000 s (×10) |
 * | `workqueue_work_duration_seconds` | histogram | name, controller | time a worker held a key; same buckets |
 * | `workqueue_retries_total` | counter | name, controller | rate-limited re-adds |
 * | `workqueue_unfinished_work_seconds` | gauge | name, controller | summed age of the keys being processed (grows when a worker is stuck); computed at scrape |
 * | `workqueue_longest_running_processor_seconds` | gauge | name, controller | age of the oldest key being processed; computed at scrape |
 * | `rest_client_requests_total` | counter | code, method, host | API requests by HTTP status (`<error>` when no response arrived), method (a watch counts as GET) and `host:port` |
 * | `leader_election_master_status` | gauge | name | 1 while this process holds the lease `name`, else 0 |
 * | `cdk8s_operator_shard_buckets_owned` | gauge | ring | buckets this replica holds (`run --sharding`) |
 * | `cdk8s_operator_shard_members` | gauge | ring | live members of the ring this replica sees, itself included (`run --sharding`) |
 * | `cdk8s_operator_shard_cached_children` | gauge | ring | children in this replica's caches: those of the buckets it holds or is taking (`run --sharding`) |
 * | `cdk8s_operator_shard_cached_crs` | gauge | ring | CRs in this replica's caches: those of the buckets it holds or is taking, and the strays (no valid bucket label yet) that every replica caches (`run --sharding`) |
 * | `cdk8s_operator_applies_skipped_total` | counter | controller | children not applied because the cache already matched the desired state |
 * | `cdk8s_operator_children_pruned_total` | counter | controller | children deleted because render no longer produces them |
 * | `cdk8s_operator_renders_skipped_total` | counter | controller | reconciles that reused the last render because the inputs render read were unchanged |
 * | `cdk8s_operator_status_write_errors_total` | counter | controller | status writes the API server refused (409 Conflict excepted), each request counted |
 * | `cdk8s_operator_watch_restarts_total` | counter | resource, reason | watches re-opened (`closed`, `idle`, `error`, `expired`, `partitions`: a sharded replica took or gave up a bucket) |
 * | `cdk8s_operator_watch_relists_total` | counter | resource | full relists (after a 410 Expired or a failed watch) |
 * | `cdk8s_operator_watch_events_total` | counter | resource, type | watch events received and parsed, by resource and event type (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`); list items are not counted. What a replica's watches cost it: with `--sharding`, the watches of kinds not split by bucket count every object's events in every replica |
 * | `certwatcher_read_certificate_total` | counter | — | reads of a served certificate's files (`--webhook-cert-dir`, `--metrics-cert-path`: at start, on each change and each poll), as controller-runtime's certwatcher counts them |
 * | `certwatcher_read_certificate_errors_total` | counter | — | those reads that failed (a file missing, not PEM, or the key not the certificate's); the previous certificate stays served |
 * | `process_*`, `nodejs_*` | various | — | prom-client's default process and Node.js metrics; the `nodejs_eventloop_lag_*` statistics from a delay sampled every {@link EVENT_LOOP_MONITORING_PRECISION_MS} ms |
 *
 * For a workqueue, `name` and `controller` are both the controller name, as controller-runtime sets them.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestRecord } from '../client/api-client.js';
import type { LeaderElectionMetrics } from '../lease/leader-election.js';
import type { CertificateReadMetrics } from '../webhook/certificate-directory.js';
import type { CaBundleWriteMetrics } from '../webhook/ca-bundle-injector.js';
import type { ShardMetrics } from '../sharding/membership.js';
import type { WorkqueueMetrics } from '../queue/workqueue.js';

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0,
  3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** controller-runtime's workqueue duration buckets: `prometheus.ExponentialBuckets(10e-9, 10, 12)`, 1e-8 … 1e3 s. */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** Outcome of one reconcile, as the `result` label of `controller_runtime_reconcile_total`. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** What `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds` read at scrape; `Workqueue` has it. */
export interface UnfinishedWorkSource {
  unfinishedWork(): { unfinishedSeconds: number; longestRunningSeconds: number };
}

/** The per-controller hooks the controller calls; from {@link OperatorMetrics.controller}. */
export interface ControllerMetrics {
  /** One reconcile ended with `result` after `seconds` (`reconcile_total` and `reconcile_time_seconds`). */
  reconciled(result: ReconcileResult, seconds: number): void;
  /** A reconcile returned a retryable error: `reconcile_errors_total` + 1. Call it besides `reconciled('error', …)`. */
  reconcileError(): void;
  /**
   * A reconcile returned a terminal error (not retried): `terminal_reconcile_errors_total` + 1 and, as
   * controller-runtime counts it, `reconcile_errors_total` + 1. Call it instead of `reconcileError()`.
   */
  terminalError(): void;
  /** The configured worker count. */
  setMaxConcurrentReconciles(count: number): void;
  /** A worker started (+1) or finished (-1) a reconcile. */
  activeWorkers(delta: 1 | -1): void;
  /** A child was not applied because nothing changed. */
  applySkipped(count?: number): void;
  /** Children were deleted by prune. */
  childrenPruned(count?: number): void;
  /** The API server refused a status write (not a 409): `cdk8s_operator_status_write_errors_total` + 1. */
  statusWriteError(): void;
  /** A reconcile reused the last render (its inputs unchanged): `cdk8s_operator_renders_skipped_total` + 1. */
  renderSkipped(): void;
}

/** The per-queue hooks: the `Workqueue`'s {@link WorkqueueMetrics}, plus scrape-time gauges for in-flight work. */
export interface WorkqueueMetricsAdapter extends WorkqueueMetrics {
  /** Reads the unfinished-work gauges from `source` (the queue) at every scrape. Call once per queue. */
  observe(source: UnfinishedWorkSource): void;
}

/** Hooks the watchers/informers call. */
export interface WatchMetrics {
  /** A watch on `resource` (e.g. `deployments.apps`) was re-opened; `reason` e.g. `closed`, `error`, `expired`. */
  restarted(resource: string, reason: string): void;
  /** `resource` was listed again from scratch. */
  relisted(resource: string): void;
  /** One watch event of `type` (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`) arrived on a watch of `resource`. */
  event(resource: string, type: string): void;
}

/**
 * The period, in ms, at which the event loop's delay is sampled for `nodejs_eventloop_lag_*`
 * (prom-client's `eventLoopMonitoringPrecision`: Node's `monitorEventLoopDelay({ resolution })`). A
 * timer fires at this period for the life of the process and wakes its event loop when it is idle.
 * With prom-client's default, 10 ms, that is 100 times a second: an idle `run` spent 4.8–5.2 ms of CPU
 * per second on it, against 0.8–1.0 ms at 100 ms and 0.3 ms at 1000 ms
 * (docs/reference/benchmark.md, "An idle process"). At 100 ms every stall of 100 ms or more is still
 * sampled, and a 30 s scrape interval holds 300 samples.
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

export interface OperatorMetricsOptions {
  /** Register into this registry. @default a new `Registry` (never prom-client's global one) */
  readonly registry?: Registry;
  /** Add prom-client's process and Node.js metrics (`collectDefaultMetrics`). @default true */
  readonly defaultMetrics?: boolean;
}

/**
 * One registry with every runtime metric, and the adapters the runtime's parts take as hooks:
 * {@link workqueue} for a `Workqueue`, {@link requestHook} for `ApiClient`'s `onRequest`,
 * {@link leaderElection} for `LeaderElector`, {@link controller} for a controller, {@link watch} for watchers,
 * {@link certificateRead} for a `CertificateDirectory`.
 */
export class OperatorMetrics {
  readonly registry: Registry;

  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly activeWorkersGauge: Gauge<'controller'>;
  readonly workqueueDepth: Gauge<'name' | 'controller'>;
  readonly workqueueAdds: Counter<'name' | 'controller'>;
  readonly workqueueQueueDuration: Histogram<'name' | 'controller'>;
  readonly workqueueWorkDuration: Histogram<'name' | 'controller'>;
  readonly workqueueRetries: Counter<'name' | 'controller'>;
  readonly workqueueUnfinishedWork: Gauge<'name' | 'controller'>;
  readonly workqueueLongestRunning: Gauge<'name' | 'controller'>;
  readonly restClientRequests: Counter<'code' | 'method' | 'host'>;
  readonly leaderElectionStatus: Gauge<'name'>;
  readonly shardBucketsOwned: Gauge<'ring'>;
  readonly shardMembers: Gauge<'ring'>;
  readonly shardCachedChildren: Gauge<'ring'>;
  readonly shardCachedCrs: Gauge<'ring'>;
  private readonly cachedCrsSources = new Map<string, () => number>();
  /** Ring → the count of cached children, read at each scrape. */
  private readonly cachedChildrenSources = new Map<string, () => number>();
  readonly appliesSkipped: Counter<'controller'>;
  readonly childrenPrunedTotal: Counter<'controller'>;
  readonly statusWriteErrors: Counter<'controller'>;
  readonly rendersSkipped: Counter<'controller'>;
  readonly watchRestarts: Counter<'resource' | 'reason'>;
  readonly watchRelists: Counter<'resource'>;
  readonly watchEvents: Counter<'resource' | 'type'>;
  readonly certificateReads: Counter;
  readonly certificateReadErrors: Counter;
  readonly caBundleWritesTotal: Counter;

  private readonly queues = new Map<string, UnfinishedWorkSource>();

  constructor(options: OperatorMetricsOptions = {}) {
    const registry = options.registry ?? new Registry();
    this.registry = registry;
    const registers = [registry];
    const queues = this.queues;
    // The metrics without a collect hook, each in one line: name, help, labels (and buckets).
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter({ name, help, labelNames, registers });
    const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Gauge({ name, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: readonly number[]) =>
      new Histogram({ name, help, labelNames, buckets: [...buckets], registers });

    this.reconcileTotal = counter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']);
    this.reconcileErrors = counter('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']);
    this.terminalReconcileErrors = counter('controller_runtime_terminal_reconcile_errors_total', 'Total number of terminal reconciliation errors per controller', ['controller']);
    this.reconcileTime = histogram('controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', ['controller'], RECONCILE_TIME_BUCKETS);
    this.maxConcurrentReconciles = gauge('controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', ['controller']);
    this.activeWorkersGauge = gauge('controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller']);
    this.workqueueDepth = gauge('workqueue_depth', 'Current depth of workqueue', ['name', 'controller']);
    this.workqueueAdds = counter('workqueue_adds_total', 'Total number of adds handled by workqueue', ['name', 'controller']);
    this.workqueueQueueDuration = histogram('workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', ['name', 'controller'], WORKQUEUE_DURATION_BUCKETS);
    this.workqueueWorkDuration = histogram('workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes', ['name', 'controller'], WORKQUEUE_DURATION_BUCKETS);
    this.workqueueRetries = counter('workqueue_retries_total', 'Total number of retries handled by workqueue', ['name', 'controller']);
    this.workqueueUnfinishedWork = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. ' +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const [name, source] of queues) this.set({ name, controller: name }, source.unfinishedWork().unfinishedSeconds);
      },
    });
    this.workqueueLongestRunning = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const [name, source] of queues) this.set({ name, controller: name }, source.unfinishedWork().longestRunningSeconds);
      },
    });
    this.restClientRequests = counter('rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host.', ['code', 'method', 'host']);
    this.leaderElectionStatus = gauge('leader_election_master_status', 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease.', ['name']);
    this.shardBucketsOwned = gauge('cdk8s_operator_shard_buckets_owned', 'Buckets of the ring this replica holds (reconciles the CRs of)', ['ring']);
    this.shardMembers = gauge('cdk8s_operator_shard_members', 'Live members of the ring seen by this replica, itself included', ['ring']);
    const cachedChildrenSources = this.cachedChildrenSources;
    this.shardCachedChildren = new Gauge({
      name: 'cdk8s_operator_shard_cached_children',
      help: 'Children in this replica\'s caches: those of the buckets it holds or is taking',
      labelNames: ['ring'],
      registers,
      collect() {
        for (const [ring, count] of cachedChildrenSources) this.set({ ring }, count());
      },
    });
    const cachedCrsSources = this.cachedCrsSources;
    this.shardCachedCrs = new Gauge({
      name: 'cdk8s_operator_shard_cached_crs',
      help: 'CRs in this replica\'s caches: those of the buckets it holds or is taking, and the strays with no valid bucket label',
      labelNames: ['ring'],
      registers,
      collect() {
        for (const [ring, count] of cachedCrsSources) this.set({ ring }, count());
      },
    });
    this.appliesSkipped = counter('cdk8s_operator_applies_skipped_total', 'Children not applied because the cached object already matched the desired state', ['controller']);
    this.childrenPrunedTotal = counter('cdk8s_operator_children_pruned_total', 'Children deleted because render no longer produces them', ['controller']);
    this.statusWriteErrors = counter('cdk8s_operator_status_write_errors_total', 'Status writes the API server refused (409 Conflict excepted)', ['controller']);
    this.rendersSkipped = counter('cdk8s_operator_renders_skipped_total', 'Reconciles that reused the last render because the inputs render read were unchanged', ['controller']);
    this.watchRestarts = counter('cdk8s_operator_watch_restarts_total', 'Watches re-opened, by resource and reason', ['resource', 'reason']);
    this.watchRelists = counter('cdk8s_operator_watch_relists_total', 'Full relists, by resource', ['resource']);
    this.watchEvents = counter('cdk8s_operator_watch_events_total', 'Watch events received, by resource and event type', ['resource', 'type']);

    // controller-runtime pkg/certwatcher/metrics: its names, no labels.
    this.certificateReads = new Counter({ name: 'certwatcher_read_certificate_total', help: 'Total number of certificate reads', registers });
    this.certificateReadErrors = new Counter({ name: 'certwatcher_read_certificate_errors_total', help: 'Total number of certificate read errors', registers });

    this.caBundleWritesTotal = counter('cdk8s_operator_webhook_ca_bundle_writes_total', 'Webhook caBundle writes (self-managed certificates), by object and result: written, or undone (changed again by another writer soon after)', ['object', 'result']);

    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS });
  }

  /** Hooks for a certificate read from files (webhook/certificate-directory.ts). */
  get certificateRead(): CertificateReadMetrics {
    return { read: () => this.certificateReads.inc(), failed: () => this.certificateReadErrors.inc() };
  }

  /** Hooks for the caBundle injector (webhook/ca-bundle-injector.ts). */
  get caBundleWrites(): CaBundleWriteMetrics {
    return { written: (object) => this.caBundleWritesTotal.inc({ object, result: 'written' }), undone: (object) => this.caBundleWritesTotal.inc({ object, result: 'undone' }) };
  }

  /** Hooks for the controller named `controller`; the labelled series start at 0 so they are scraped before the first event. */
  controller(controller: string): ControllerMetrics {
    const labels = { controller };
    for (const result of ['success', 'error', 'requeue', 'requeue_after'] as const) this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc(labels, 0);
    this.terminalReconcileErrors.inc(labels, 0);
    this.activeWorkersGauge.set(labels, 0);
    this.appliesSkipped.inc(labels, 0);
    this.childrenPrunedTotal.inc(labels, 0);
    this.statusWriteErrors.inc(labels, 0);
    this.rendersSkipped.inc(labels, 0);
    return {
      reconciled: (result, seconds) => {
        this.reconcileTotal.inc({ controller, result });
        this.reconcileTime.observe(labels, seconds);
      },
      reconcileError: () => this.reconcileErrors.inc(labels),
      terminalError: () => {
        this.reconcileErrors.inc(labels);
        this.terminalReconcileErrors.inc(labels);
      },
      setMaxConcurrentReconciles: (count) => this.maxConcurrentReconciles.set(labels, count),
      activeWorkers: (delta) => this.activeWorkersGauge.inc(labels, delta),
      applySkipped: (count = 1) => this.appliesSkipped.inc(labels, count),
      childrenPruned: (count = 1) => this.childrenPrunedTotal.inc(labels, count),
      statusWriteError: () => this.statusWriteErrors.inc(labels),
      renderSkipped: () => this.rendersSkipped.inc(labels),
    };
  }

  /**
   * The `WorkqueueMetrics` of the queue of controller `name` (pass it as `new Workqueue({name, metrics})`),
   * then call `observe(queue)` so the unfinished-work gauges can read it at scrape time.
   */
  workqueue(name: string): WorkqueueMetricsAdapter {
    const labels = { name, controller: name };
    this.workqueueDepth.set(labels, 0);
    this.workqueueAdds.inc(labels, 0);
    this.workqueueRetries.inc(labels, 0);
    return {
      depth: (depth) => this.workqueueDepth.set(labels, depth),
      added: () => this.workqueueAdds.inc(labels),
      queueDuration: (seconds) => this.workqueueQueueDuration.observe(labels, seconds),
      workDuration: (seconds) => this.workqueueWorkDuration.observe(labels, seconds),
      retried: () => this.workqueueRetries.inc(labels),
      observe: (source) => {
        this.queues.set(name, source);
      },
    };
  }

  /**
   * An `ApiClient` `onRequest` hook counting `rest_client_requests_total`. `server` is the API server URL
   * (`ApiClient.server`); its `host:port` is the `host` label. Chain another hook with `next`.
   */
  requestHook(server: string, next?: (record: RequestRecord) => void): (record: RequestRecord) => void {
    const host = new URL(server).host;
    return (record) => {
      const method = record.method === 'WATCH' ? 'GET' : record.method.toUpperCase();
      const code = record.code > 0 ? String(record.code) : '<error>';
      this.restClientRequests.inc({ code, method, host });
      next?.(record);
    };
  }

  /** The `LeaderElector`'s `metrics` option: sets `leader_election_master_status{name}`. */
  leaderElection(): LeaderElectionMetrics {
    return {
      leading: (name, isLeading) => this.leaderElectionStatus.set({ name }, isLeading ? 1 : 0),
    };
  }

  /** The `ShardMember`'s `metrics` option: `cdk8s_operator_shard_buckets_owned{ring}` and `cdk8s_operator_shard_members{ring}`. */
  sharding(): ShardMetrics {
    return {
      bucketsOwned: (ring, count) => this.shardBucketsOwned.set({ ring }, count),
      members: (ring, count) => this.shardMembers.set({ ring }, count),
    };
  }

  /** Sets `cdk8s_operator_shard_cached_children{ring}` to `count()` at each scrape. */
  observeShardCachedChildren(ring: string, count: () => number): void {
    this.cachedChildrenSources.set(ring, count);
  }

  /** Sets `cdk8s_operator_shard_cached_crs{ring}` to `count()` at each scrape. */
  observeShardCachedCrs(ring: string, count: () => number): void {
    this.cachedCrsSources.set(ring, count);
  }

  /** Hooks for watchers: `cdk8s_operator_watch_restarts_total`, `_watch_relists_total` and `_watch_events_total`. */
  watch(): WatchMetrics {
    return {
      restarted: (resource, reason) => this.watchRestarts.inc({ resource, reason }),
      relisted: (resource) => this.watchRelists.inc({ resource }),
      event: (resource, type) => this.watchEvents.inc({ resource, type }),
    };
  }

  /** The exposition text (`/metrics` body). */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
