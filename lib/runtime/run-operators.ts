/**
 * `runOperators`: the one start-up path of the runtime. `cdk8s-operator run` parses its flags, loads the
 * kubeconfig and makes the logger, then calls it; a user's own `main.ts` calls it the same way:
 *
 * ```ts
 * import { KubeConfig } from '@kubernetes/client-node';
 * import { runOperators } from 'cdk8s-operator-sdk/runtime';
 * const kubeConfig = new KubeConfig();
 * kubeConfig.loadFromDefault();
 * await runOperators({ kubeConfig, operators: addOperators(new App()), leaderElection: true })
 *   .catch(() => process.exit(1)); // already logged at error
 * ```
 *
 * Expected flow (controller-runtime's manager, in its order):
 * 1. the `/metrics` and `/healthz` + `/readyz` servers listen (lib/runtime/probes/probes-server.ts);
 *    `/metrics` over HTTPS behind the API server's authentication and authorization unless
 *    `metricsSecure: false` (lib/runtime/metrics/metrics-auth.ts, metrics-certificate.ts);
 * 2. with `webhookBindAddress`: the webhook serving certificate is loaded or created and its CA written
 *    into the caBundles (or, with `webhookCertDir`, read from its files), then the HTTPS webhook server listens, before the caches sync (the API server
 *    may need `/convert` to list a kind; lib/runtime/webhook/webhook-runner.ts);
 * 3. the {@link Manager} starts: RBAC self-check, informers, cache sync (bounded by `cacheSyncTimeoutMs`),
 *    then the workers and the storage-version migration, with leader election once it holds the Lease;
 * 4. on SIGINT/SIGTERM (`stopOnSignals`) or `signal`: graceful stop (reconciles in flight finish within
 *    `gracefulShutdownMs`, the watches close, the Lease is released), then the servers close and the
 *    last spans are exported.
 *
 * Tracing: unless `tracer` is given, the standard `OTEL_*` variables of the process decide, first of all
 * (lib/runtime/tracing/tracing-from-env.ts): with `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_TRACES_EXPORTER=otlp`) every reconcile is a span, with a
 * child span per step, exported over OTLP/HTTP; without them the OpenTelemetry SDK is not loaded.
 *
 * Probes: liveness = the event loop is not blocked and every watch loop runs and hears from the API
 * server; readiness = every cache synced and the webhook server listening, except that a process serving
 * a CRD conversion webhook is Ready once its webhook server listens (lib/runtime/probes/readiness-checks.ts).
 * Both are independent of leadership: standbys are Ready.
 *
 * Errors (the promise): resolves after a graceful stop, also when stopped while starting. Rejects with
 * one of the runtime's errors (lib/runtime/runtime-error.ts: `reason`, `step`), already logged at error,
 * after everything it started has stopped: {@link CacheSyncError} when the caches do not sync (logged
 * `caches did not sync; exiting` with the informers), `RbacSelfCheckError`, `ServerStartError`,
 * `WebhookCertificateError`, `LeaderElectionConfigError` and `TracingConfigError` (before anything starts), `KubeConfigError`
 * (logged `operators failed`); and `LeadershipLostError` when the Lease was lost (the workers stopped at
 * once without draining, their writes fenced; call `process.exit(1)` from `onLeadershipLost` not to wait
 * for the stop). The caller should exit non-zero on a rejection, so the pod restarts and says why.
 */
import type { Tracer } from '@opentelemetry/api';
import { pino } from 'pino';
import type { Operator } from '../operator/operator.js';
import { CacheSyncError } from './cache/cache-sync-error.js';
import { type Logger, errorFields } from './logger.js';
import { Manager, type ManagerOptions } from './manager.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { LeadershipLostError } from './lease/leader-election.js';
import { DEFAULT_LEASE_DURATION_MS, DEFAULT_RENEW_DEADLINE_MS, DEFAULT_RETRY_PERIOD_MS, validateLeaderElectionTiming } from './lease/lease-timing.js';
import { DEFAULT_BUCKET_COUNT } from './sharding/bucket-hash.js';
import { OperatorMetrics } from './metrics/metrics.js';
import { MetricsAuth } from './metrics/metrics-auth.js';
import { metricsCertificateDirectory, selfSignedMetricsCertificate } from './metrics/metrics-certificate.js';
import {
  DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
  type MetricsSecureServing,
  type ProbesServer,
  defaultMetricsBindAddress,
  eventLoopCheck,
  startProbesServer,
} from './probes/probes-server.js';
import { metricsServiceDnsNames } from '../operator/manifests/metrics-objects.js';
import { readinessChecks } from './probes/readiness-checks.js';
import type { RunWebhooks } from './webhook/webhook-runner.js';
import { type Tracing, startTracing } from './tracing/tracing-from-env.js';

/** Leader election of {@link runOperators}: client-go's algorithm on a coordination.k8s.io/v1 Lease. */
export interface RunLeaderElection {
  /**
   * Namespace of the Lease. @default the first operator's own namespace (`operatorNamespace`, where
   * `cdk8s synth` grants the Lease Role), else `default`; `cdk8s-operator run` passes the pod's namespace
   */
  readonly namespace?: string;
  /** Name of the Lease (controller-runtime's LeaderElectionID). @default the operator names joined by `-` */
  readonly name?: string;
  /** Unique per process. @default `${hostname()}_${randomUUID()}`, controller-runtime's choice */
  readonly identity?: string;
  /**
   * How long a standby waits after the last renewal it saw before taking over; whole seconds (the Lease
   * stores `leaseDurationSeconds`). @default 15000 ms, client-go's (`--leader-elect-lease-duration`)
   */
  readonly leaseDurationMs?: number;
  /** How long the leader tries to renew before it stops writing and gives up. @default 10000 ms, client-go's */
  readonly renewDeadlineMs?: number;
  /** Wait between two acquire or renew tries. @default 2000 ms, client-go's */
  readonly retryPeriodMs?: number;
}

/** Sharding of {@link runOperators} across replicas (lib/runtime/sharding/). */
export interface RunSharding {
  /** Namespace of the ring's Leases. @default as {@link RunLeaderElection.namespace} */
  readonly namespace?: string;
  /** The ring, the same for every replica of one Deployment. @default the operator names joined by `-` */
  readonly ring?: string;
  /** This replica's name in the ring, unique (its Lease's name). @default `${hostname()}-${8 hex}`; `cdk8s-operator run` passes the pod's name (`POD_NAME`) */
  readonly member?: string;
  /** Buckets of the ring; every replica must agree. @default 32 */
  readonly bucketCount?: number;
  /** @default 15000 ms */
  readonly leaseDurationMs?: number;
  /** @default 10000 ms */
  readonly renewDeadlineMs?: number;
  /** @default 2000 ms */
  readonly retryPeriodMs?: number;
}

/** The ports the servers bound (useful with port 0); undefined for a server that is off. */
export interface StartedServers {
  readonly metricsPort?: number;
  readonly healthProbePort?: number;
  readonly webhookPort?: number;
}

/**
 * Options of {@link runOperators}: the {@link ManagerOptions} (kubeConfig, namespace,
 * maxConcurrentReconciles, cacheSyncTimeoutMs, gracefulShutdownMs, logger …) and what the Manager does
 * not do itself. Defaults are `cdk8s-operator run`'s (and controller-runtime's).
 */
export interface RunOperatorsOptions extends Omit<ManagerOptions, 'operators' | 'leaderElection' | 'sharding' | 'metrics' | 'rbacSelfCheck' | 'tracer'> {
  /**
   * Where reconcile spans go (an application's own OpenTelemetry setup).
   * @default as the process's `OTEL_*` variables say (lib/runtime/tracing/tracing-from-env.ts): an OTLP
   *   exporter when they ask for one, else `@opentelemetry/api`'s global tracer (a no-op unless registered)
   */
  readonly tracer?: Tracer;
  /** The operators to run in this process; they share informers, one webhook server and one certificate. */
  readonly operators: readonly Operator[];
  /** Stops the operators gracefully when aborted. @default only `stopOnSignals` stop them */
  readonly signal?: AbortSignal;
  /**
   * Process signals that stop the operators gracefully (logged `stopping`); each is listened to once,
   * until the run ends. `[]` leaves the process's signals alone. @default ['SIGINT', 'SIGTERM']
   */
  readonly stopOnSignals?: readonly NodeJS.Signals[];
  /**
   * `host:port`, `:port` or `[ipv6]:port` of `/metrics` (Prometheus; `controller_runtime_*`,
   * `workqueue_*`, `rest_client_requests_total` …); port 0 picks a free one; `'0'` disables it (and the
   * metrics). @default ':8443' (Kubebuilder's) with `metricsSecure`, else ':8080' (controller-runtime's)
   */
  readonly metricsBindAddress?: string;
  /**
   * Serve `/metrics` over HTTPS, each scrape authenticated by a TokenReview of its bearer token (else 401)
   * and authorized by a SubjectAccessReview of `get` on the non-resource URL `/metrics` (else 403), as
   * controller-runtime's `filters.WithAuthenticationAndAuthorization`; results cached briefly
   * (lib/runtime/metrics/metrics-auth.ts). Needs create on tokenreviews and subjectaccessreviews (the
   * synthesized `<operator>-metrics-auth` ClusterRole grants it; the RBAC self-check checks it). `false`
   * serves plain HTTP to anyone.
   * @default true: secure, as Kubebuilder scaffolds it
   */
  readonly metricsSecure?: boolean;
  /**
   * With `metricsSecure`: a directory holding `tls.crt` and `tls.key` (a mounted `kubernetes.io/tls`
   * Secret, e.g. cert-manager's), re-read on each change and every 10 s (lib/runtime/metrics/metrics-certificate.ts). Without
   * `metricsSecure` it is not read (a warning says so).
   * @default none: a self-signed certificate made at start-up
   */
  readonly metricsCertPath?: string;
  /** The same for `/healthz` and `/readyz`. @default ':8081', controller-runtime's */
  readonly healthProbeBindAddress?: string;
  /**
   * The same for the HTTPS webhook server (conversion and admission webhooks of the operators that have
   * them, served by every replica, leader or not, and part of `/readyz`); `'0'` serves none.
   * @default '0': no webhooks (the synthesized Deployment passes ':9443', controller-runtime's)
   */
  readonly webhookBindAddress?: string;
  /**
   * Names or IPs a self-managed serving certificate holds besides the webhook Services' names, e.g.
   * `['127.0.0.1']` when the API server calls a url. @default none
   */
  readonly webhookCertHosts?: readonly string[];
  /**
   * A directory whose `tls.crt` and `tls.key` the webhook server serves, re-read when they change (a
   * mounted Secret: OLM mounts the certificate it issues at `/tmp/k8s-webhook-server/serving-certs`,
   * controller-runtime's CertDir). The runtime then writes no Secret and patches no caBundle: whoever issued
   * the certificate injects its CA (lib/runtime/webhook/certificate-directory.ts). Files that can't be read
   * or don't make a pair fail the start (`WebhookCertificateError` naming the file); later, such files are
   * logged at error and the previous certificate kept. Unused without `webhookBindAddress` (a warning says so).
   * @default none: the Secret of the operators' `webhook.certificates` mode
   */
  readonly webhookCertDir?: string;
  /**
   * Check with SelfSubjectAccessReviews, before any informer starts, that every permission the runtime
   * uses is granted; fail with the missing ones (lib/runtime/startup/rbac-self-check.ts). @default true
   */
  readonly rbacSelfCheck?: boolean;
  /**
   * Only the holder of a Lease reconciles; the others keep warm caches, serve probes and webhooks, and
   * take over when it goes (lib/runtime/lease/leader-election.ts). `true` for the defaults.
   * @default false: this process always reconciles (one replica)
   */
  readonly leaderElection?: boolean | RunLeaderElection;
  /**
   * Shard the CRs across replicas: each keeps a Lease in the ring and reconciles the CRs of the buckets it
   * holds (lib/runtime/sharding/membership.ts). `true` for the defaults. Excludes `leaderElection`. A
   * replica that cannot create or renew its Lease fails at start naming the permission or namespace; one
   * whose Lease is not renewed in time stops, and the run rejects (`onLeadershipLost` is called).
   * @default false
   */
  readonly sharding?: boolean | RunSharding;
  /** Called once every cache synced and the workers run (or, with leader election, wait for the Lease). @default none */
  readonly onStarted?: (servers: StartedServers) => void;
  /**
   * Called at once when the Lease is lost, after the workers stopped and their writes were fenced, before
   * the rest stops; `cdk8s-operator run` exits 1 here. @default none: the run stops and rejects with
   * {@link LeadershipLostError}
   */
  readonly onLeadershipLost?: () => void;
}

/** Runs operators until stopped; see the module doc for the flow, the probes and the errors. */
export async function runOperators(options: RunOperatorsOptions): Promise<void> {
  if (options.signal?.aborted) return;
  const logger: Logger = options.logger ?? pino({ base: { component: 'cdk8s-operator' } });
  const election = leaderElectionOf(options);
  const sharding = shardingOf(options);
  const metricsSecure = options.metricsSecure ?? true;
  const metricsBindAddress = options.metricsBindAddress ?? defaultMetricsBindAddress(metricsSecure);
  const reviewsScrapes = metricsSecure && metricsBindAddress !== '0';
  const webhookBindAddress = options.webhookBindAddress ?? '0';
  const servesWebhooks = webhookBindAddress !== '0' && options.operators.some((o) => o.webhook);

  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'stopping');
    stop.abort();
  };
  const stopOnSignals = options.stopOnSignals ?? ['SIGINT', 'SIGTERM'];
  for (const signal of stopOnSignals) process.once(signal, onSignal);

  let lost: Error | undefined;
  let manager: Manager | undefined;
  let probes: ProbesServer | undefined;
  let webhooks: RunWebhooks | undefined;
  /** `--metrics-cert-path`: the certificate directory's reload loop, awaited at shutdown. */
  let metricsReload: Promise<void> | undefined;
  let tracing: Tracing | undefined;
  const loop = eventLoopCheck();
  let failure: unknown;
  /** Whether a stop was asked for when the failure happened: a start cut short by it is no failure. */
  let stoppingAtFailure = false;
  try {
    if (election) validateLeaderElectionTiming(election.leaseDurationMs, election.renewDeadlineMs, election.retryPeriodMs);
    if (!options.tracer) tracing = await startTracing({ serviceName: options.operators.map((o) => o.operatorName).join('-') || 'cdk8s-operator', logger });
    const metrics = metricsBindAddress !== '0' ? new OperatorMetrics() : undefined;
    const running = new Manager({
      ...options,
      logger,
      metrics,
      tracer: options.tracer ?? tracing?.tracer,
      rbacSelfCheck: options.rbacSelfCheck ?? true,
      metricsAuthorization: reviewsScrapes,
      sharding: sharding && {
        ...sharding,
        // Told as a lost leadership is: stop at once; `cdk8s-operator run` exits 1.
        onLost: (error) => {
          lost = error;
          options.onLeadershipLost?.();
          stop.abort();
        },
      },
      leaderElection: election && {
        ...election,
        onLost: (why) => {
          lost = new LeadershipLostError(election, { why });
          options.onLeadershipLost?.();
          stop.abort();
        },
      },
    });
    manager = running;
    if (options.metricsCertPath && !reviewsScrapes) logger.warn({ metricsCertPath: options.metricsCertPath }, 'metrics are not served securely: the metrics certificate path is not used');
    let metricsSecureServing: MetricsSecureServing | undefined;
    // --metrics-cert-path: read now (a bad pair fails the start), reloaded once the server runs.
    const metricsFiles = reviewsScrapes && options.metricsCertPath
      ? metricsCertificateDirectory({ dir: options.metricsCertPath, onCertificate: (next) => probes?.setMetricsCertificate(next), logger, metrics: metrics?.certificateRead })
      : undefined;
    if (reviewsScrapes) {
      const certificate = metricsFiles
        ? await metricsFiles.load()
        : await selfSignedMetricsCertificate(options.operators.flatMap((o) => metricsServiceDnsNames(o.operatorName, o.operatorNamespace)));
      const auth = new MetricsAuth({ client: running.client, logger });
      metricsSecureServing = { certificate, authorize: (request) => auth.check(request) };
    }
    probes = await startProbesServer({
      metricsBindAddress,
      metricsSecureServing,
      healthProbeBindAddress: options.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS,
      registry: metrics?.registry,
      healthz: { 'event-loop': loop.check, watchers: () => running.assertWatchersAlive() },
      readyz: readinessChecks({
        // Sharded: ready once the caches synced and the replica knows its buckets.
        informersSynced: () => running.hasSynced() && (running.shard?.hasRun() ?? true),
        webhooksReady: () => webhooks?.server.ready(),
        servesWebhooks,
        servesConversion: servesWebhooks && options.operators.some((o) => o.webhook?.conversion),
      }),
      logger,
    });
    metricsReload = metricsFiles?.run(stop.signal);
    if (options.webhookCertDir !== undefined && webhookBindAddress === '0') logger.warn({ webhookCertDir: options.webhookCertDir }, 'webhooks are not served (no webhook bind address): the webhook certificate directory is not used');
    if (webhookBindAddress !== '0') {
      // Before the caches sync: the API server may need /convert to list a kind in a spoke version.
      // Imported only here: an operator that serves no webhooks never loads the webhook server.
      const { startRunWebhooks } = await import('./webhook/webhook-runner.js');
      webhooks = await startRunWebhooks({
        operators: options.operators,
        client: running.client,
        bindAddress: webhookBindAddress,
        extraHosts: options.webhookCertHosts,
        certDir: options.webhookCertDir,
        registry: metrics?.registry,
        certificateMetrics: metrics?.certificateRead,
        caBundleMetrics: metrics?.caBundleWrites,
        logger,
        // Sharded: the mutating hook stamps each CR's bucket label at CREATE; the runtime's stamp is the fallback.
        shardBucketCount: sharding ? (sharding.bucketCount ?? DEFAULT_BUCKET_COUNT) : undefined,
        signal: stop.signal,
      });
    }
    await running.start(stop.signal);
    options.onStarted?.({ metricsPort: probes.metricsPort, healthProbePort: probes.healthProbePort, webhookPort: webhooks?.server.port });
    await aborted(stop.signal);
  } catch (err) {
    failure = err;
    stoppingAtFailure = stop.signal.aborted;
  }
  try {
    await manager?.stop();
  } catch (err) {
    if (failure === undefined) {
      failure = err;
      stoppingAtFailure = stop.signal.aborted;
    }
  } finally {
    // Ends the webhooks' certificate loop too: without it, a failed start would never return.
    stop.abort();
    loop.stop();
    // The metrics certificate's reload loop ends on the abort; a read in progress finishes first.
    await metricsReload;
    await webhooks?.close();
    await probes?.close();
    await tracing?.shutdown();
    options.signal?.removeEventListener('abort', onAbort);
    for (const signal of stopOnSignals) process.off(signal, onSignal);
  }
  if (lost) throw lost; // told by the Manager at error when it happened
  // Stopped while starting (SIGTERM during the cache sync, say): not a failure.
  if (failure === undefined || stoppingAtFailure) return;
  const unsynced = failure instanceof CacheSyncError ? { informers: failure.informers } : {};
  logger.error({ ...errorFields(failure), ...unsynced }, failure instanceof CacheSyncError ? 'caches did not sync; exiting' : 'operators failed');
  throw failure;
}

/** A {@link RunLeaderElection} with its defaults filled in (the identity's is the Manager's). */
type ResolvedLeaderElection = Required<Omit<RunLeaderElection, 'identity'>> & Pick<RunLeaderElection, 'identity'>;

/** The leader election to run, with every default filled in; undefined without one. */
function leaderElectionOf(options: RunOperatorsOptions): ResolvedLeaderElection | undefined {
  const asked = options.leaderElection;
  if (!asked) return undefined;
  const given: RunLeaderElection = asked === true ? {} : asked;
  return {
    namespace: given.namespace ?? options.operators[0]?.operatorNamespace ?? 'default',
    name: given.name ?? options.operators.map((o) => o.operatorName).join('-'),
    identity: given.identity,
    leaseDurationMs: given.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
    renewDeadlineMs: given.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS,
    retryPeriodMs: given.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
  };
}

/** The Manager's sharding, with defaults filled in; undefined without. */
function shardingOf(options: RunOperatorsOptions): ManagerOptions['sharding'] {
  const asked = options.sharding;
  if (!asked) return undefined;
  const given: RunSharding = asked === true ? {} : asked;
  return {
    namespace: given.namespace ?? options.operators[0]?.operatorNamespace ?? 'default',
    ring: given.ring ?? options.operators.map((o) => o.operatorName).join('-'),
    member: given.member ?? `${hostname()}-${randomUUID().slice(0, 8)}`,
    bucketCount: given.bucketCount,
    leaseDurationMs: given.leaseDurationMs,
    renewDeadlineMs: given.renewDeadlineMs,
    retryPeriodMs: given.retryPeriodMs,
  };
}

/** Resolves when `signal` aborts (at once when it already has). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
