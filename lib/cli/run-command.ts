/**
 * `cdk8s-operator run`: run operators against a cluster until SIGINT/SIGTERM.
 *
 * ```
 * cdk8s-operator run [--operators a,b] [--module PATH] [--kubeconfig PATH] [--context NAME] [--namespace NS]
 *                    [--max-concurrent-reconciles N] [--log-level LEVEL] [--log-format json|text]
 *                    [--metrics-bind-address ADDR] [--metrics-secure[=false]] [--metrics-cert-path DIR]
 *                    [--health-probe-bind-address ADDR]
 *                    [--graceful-shutdown-timeout DURATION] [--cache-sync-timeout DURATION]
 *                    [--leader-elect [--leader-election-namespace NS] [--leader-election-id NAME]
 *                     [--leader-elect-lease-duration 15s] [--leader-elect-renew-deadline 10s] [--leader-elect-retry-period 2s]]
 *                    [--sharding [--sharding-namespace NS] [--sharding-ring NAME] [--sharding-buckets 32]]
 *                    [--no-rbac-self-check] [--webhook-bind-address ADDR] [--webhook-cert-hosts h1,h2 | --webhook-cert-dir DIR]
 *                    [--validate-children]
 * ```
 *
 * A thin CLI over `runOperators` (lib/runtime/run-operators.ts), the one start-up path: the command parses
 * the flags, loads the operators and the kubeconfig and makes the logger; `runOperators` does everything
 * below (servers, webhooks, RBAC self-check, caches, leader election, shutdown) and logs its failures.
 *
 * - Operators: this project's own (operators/index.ts) or those of `--module`; `--operators` picks some
 *   by name (their `operatorName`). All run in one process and share informers.
 * - Kubeconfig: `--kubeconfig`, else `$KUBECONFIG`, else the in-cluster service account, else
 *   `~/.kube/config`, loaded as client-node's loadFromFile / loadFromDefault / loadFromCluster would, but
 *   without importing client-node's generated API at start (lib/cli/kubeconfig-loader.ts). Credential
 *   files (client certificate, key, CA, a user's `tokenFile`, the in-cluster token) are read again while
 *   the operator runs, as client-go does (lib/runtime/client/client-credentials.ts).
 * - Logs: one JSON object per line on stdout (pino); `--log-format text` for humans (pino-pretty).
 *   Reconcile lines carry controller, namespace, name and reconcileID.
 * - `/metrics` on `--metrics-bind-address` and `/healthz` + `/readyz` on `--health-probe-bind-address`
 *   (default `:8081`, plain HTTP for the kubelet); `0` disables one. `/metrics` is secure by default, as
 *   Kubebuilder scaffolds it: HTTPS on `:8443`, each scrape's bearer token reviewed by the API server
 *   (TokenReview, else 401) and allowed `get` on the non-resource URL `/metrics` (SubjectAccessReview, else
 *   403; the synthesized `<operator>-metrics-reader` ClusterRole grants it), with a self-signed
 *   certificate or `--metrics-cert-path`'s `tls.crt` + `tls.key` (lib/runtime/metrics/metrics-auth.ts,
 *   metrics-certificate.ts). `--metrics-secure=false` serves plain HTTP to anyone, on `:8080` by default:
 *   for local runs.
 *   Liveness = the event loop is not blocked, every watch loop runs, and no watch is blind (the API
 *   server said something to it within its timeoutSeconds + 5 s; lib/runtime/cache/watcher.ts); readiness =
 *   every cache synced and the webhook server listening, except that a process serving a CRD conversion
 *   webhook is Ready once its webhook server listens (its caches may need `/convert` to sync;
 *   lib/runtime/probes/readiness-checks.ts).
 *   Both are independent of leadership (standbys are Ready).
 * - SIGTERM/SIGINT: stop taking work, let reconciles in flight finish up to `--graceful-shutdown-timeout`
 *   (default 30s), close the watches, then release the lease, exit 0.
 * - `--leader-elect`: only the holder of the Lease `--leader-election-id` (default: the operator names)
 *   in `--leader-election-namespace` (default: the pod's namespace, else the operator's own namespace)
 *   reconciles; losing it stops the workers without draining, fences off their writes and exits with
 *   code 1 at once so the pod restarts, as controller-runtime does. No reconcile write (apply, status,
 *   Event, delete) leaves the process unless its last successful renewal is younger than the renew
 *   deadline by the local monotonic clock (lib/runtime/client/write-gate.ts). Timings: client-go's
 *   defaults 15s / 10s / 2s, flags named as kube-controller-manager's; leaseDuration > renewDeadline >
 *   1.2 × retryPeriod, else the run exits 1 naming the values.
 * - `--sharding`: every replica reconciles the CRs of its buckets only (lib/runtime/sharding/): it keeps
 *   its own Lease (named after the pod, `POD_NAME`; else the host name and 8 random hex digits) in
 *   `--sharding-namespace` (default as the leader-election namespace), labelled with `--sharding-ring`
 *   (default: the operator names), renewed with the `--leader-elect-*` timings; `--sharding-buckets`
 *   (default 32) must be the same on every replica. A Lease that can't be created or renewed at start
 *   exits 1 naming the permission or namespace; a Lease later lost (not renewed within the renew
 *   deadline, deleted, or held by another process) stops the workers, fences their writes and exits 1
 *   naming the reason. Excludes `--leader-elect`.
 * - RBAC self-check before anything starts (SelfSubjectAccessReviews), unless `--no-rbac-self-check`.
 * - Webhooks (conversion, admission) of the operators that have them, on `--webhook-bind-address`
 *   (HTTPS; the synthesized Deployment passes `:9443`, controller-runtime's port; default `0`: not
 *   served), by every replica, leader or not, and part of `/readyz`. The certificate is self-managed
 *   (a Secret in the operator's namespace, caBundle patched in, renewed before expiry) or cert-manager's
 *   (lib/runtime/webhook/webhook-runner.ts). `--webhook-cert-hosts` adds names or IPs to a self-managed
 *   certificate (e.g. `127.0.0.1` when the API server calls a url). `--webhook-cert-dir DIR` serves
 *   `DIR/tls.crt` + `DIR/tls.key` instead, re-read when they change, and writes no Secret and no caBundle:
 *   the mode of an operator installed by OLM, which mounts the certificate it issues at
 *   `/tmp/k8s-webhook-server/serving-certs` and injects its CA (lib/runtime/webhook/certificate-directory.ts).
 *   Unreadable or mismatched files exit 1 naming the file.
 *
 * - Caches that don't sync within `--cache-sync-timeout` (default 2m, controller-runtime's
 *   CacheSyncTimeout): the run logs a `CacheSyncError` at error (each informer not synced, with its last
 *   list error, e.g. a 403 for a missing `list` or a 404 for a CRD not installed) and exits 1 at once,
 *   webhooks or not, so the pod restarts and says why.
 *
 * - `--validate-children`: each render's children are checked by Kubernetes' own validation, offline
 *   (lib/validator), before any is applied; a refused one makes its CR Stalled=True `ChildRefused` with
 *   the server's field path and message (an Event, an error log line), and other CRs go on. Off by
 *   default: the API server validates anyway, and the validator adds about 180 MB of memory.
 *
 * Exit codes: 0 after a graceful stop on a signal; 1 when the operators can't be loaded, the kubeconfig
 * can't be read, the children's validator can't be loaded (`--validate-children`), the webhook certificate can't be read (`--webhook-cert-dir`) or kept, a permission is missing, the caches don't sync, or leadership was lost.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Logger } from '../runtime/logger.js';
import type { InitialList } from '../runtime/cache/watcher.js';
import type { Operator } from '../operator/operator.js';
import { DEFAULT_HEALTH_PROBE_BIND_ADDRESS } from '../runtime/probes/probes-server.js';
import { type StartedServers, runOperators } from '../runtime/run-operators.js';
import { type LogFormat, createCliLogger } from './cli-logger.js';
import { durationOption } from './duration-flag.js';
import { useContext } from './kubeconfig-context.js';
import { SERVICE_ACCOUNT_DIR, loadKubeConfig } from './kubeconfig-loader.js';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { loadOperators } from './load-operators.js';
import { type ClusterFlags, type OperatorsFlags, contextOption, kubeconfigOption, logFormatOption, logLevelOption, moduleOption, operatorsOption, parsePositiveInt } from './shared-flags.js';

/** The flags of `cdk8s-operator run`, parsed (durations in milliseconds). */
export interface RunOptions extends OperatorsFlags, ClusterFlags {
  /**
   * The one namespace to watch and reconcile (`--namespace`).
   * @default all namespaces; the synthesized Deployment of an operator with `watchNamespace` passes it
   */
  readonly namespace?: string;
  /** Reconciles running at once per operator (`--max-concurrent-reconciles`). @default 1, controller-runtime's: one CR at a time per operator */
  readonly maxConcurrentReconciles?: number;
  /**
   * How the informers read the whole set (`--initial-list`): `watch-list` streams it where the API server
   * serves WatchList (KEP-3157) and lists elsewhere; `list` always lists. @default 'watch-list'
   */
  readonly initialList?: InitialList;
  /** pino level (`--log-level`): trace, debug, info, warn, error, fatal or silent. @default 'info': start-up, leadership and errors (a successful reconcile's line is at debug) */
  readonly logLevel?: string;
  /** `--log-format`. @default 'json': one object per line, what log collectors read from a container */
  readonly logFormat?: LogFormat;
  /** `host:port` of `/metrics`; '0' disables. @default ':8443' when `metricsSecure`, else ':8080' (controller-runtime's) */
  readonly metricsBindAddress?: string;
  /** `--metrics-secure[=false]`: HTTPS and the API server's authentication and authorization of scrapes. @default true, as Kubebuilder's main.go */
  readonly metricsSecure?: boolean;
  /** `--metrics-cert-path`: a directory with `tls.crt` and `tls.key` for the secure metrics server. @default a self-signed certificate */
  readonly metricsCertPath?: string;
  /** `host:port` of `/healthz` and `/readyz`; '0' disables. @default ':8081', controller-runtime's */
  readonly healthProbeBindAddress?: string;
  /** How long reconciles in flight may finish after SIGTERM. @default 30000 ms, controller-runtime's GracefulShutdownTimeout */
  readonly gracefulShutdownTimeoutMs?: number;
  /** How long the first list of every informer may take before the run fails. @default 120000 ms, controller-runtime's CacheSyncTimeout */
  readonly cacheSyncTimeoutMs?: number;
  /** Only the holder of a Lease reconciles (`--leader-elect`, for replicas > 1). @default false: one replica, which always reconciles */
  readonly leaderElect?: boolean;
  /**
   * Namespace of the Lease (`--leader-election-namespace`).
   * @default the pod's namespace (service account mount), else the first operator's own namespace: where
   *   `cdk8s synth` grants the Lease Role
   */
  readonly leaderElectionNamespace?: string;
  /** Name of the Lease (`--leader-election-id`). @default the operator names joined by '-': one Lease per set of operators run together */
  readonly leaderElectionId?: string;
  /** Shard the CRs across replicas (`--sharding`). @default false */
  readonly sharding?: boolean;
  /** `--sharding-namespace`. @default the pod's namespace, else the operator's own namespace */
  readonly shardingNamespace?: string;
  /** `--sharding-ring`. @default the operator names joined by '-' */
  readonly shardingRing?: string;
  /** `--sharding-buckets`. @default 32 */
  readonly shardingBuckets?: number;
  /** `--leader-elect-lease-duration`, whole seconds. @default 15000 ms (client-go's, kube components' flag of the same name) */
  readonly leaderElectLeaseDurationMs?: number;
  /** `--leader-elect-renew-deadline`. @default 10000 ms, client-go's */
  readonly leaderElectRenewDeadlineMs?: number;
  /** `--leader-elect-retry-period`. @default 2000 ms, client-go's */
  readonly leaderElectRetryPeriodMs?: number;
  /** commander's `--no-rbac-self-check`. @default true: a missing permission fails the start, naming it, instead of a reconcile later */
  readonly rbacSelfCheck?: boolean;
  /** `host:port` of the HTTPS webhook server; '0' disables. @default '0'; the synthesized Deployment passes ':9443' */
  readonly webhookBindAddress?: string;
  /**
   * Comma-separated extra DNS names or IPs of a self-managed serving certificate (`--webhook-cert-hosts`).
   * @default none: the certificate holds the webhook Services' DNS names, all an in-cluster API server calls
   */
  readonly webhookCertHosts?: string;
  /**
   * Directory with the webhook serving certificate's `tls.crt` and `tls.key` (`--webhook-cert-dir`),
   * re-read when they change; no Secret is written and no caBundle patched (the issuer, e.g. OLM, injects
   * the CA). Excludes `--webhook-cert-hosts`.
   * @default none: the certificate of the operators' `webhook.certificates` mode (a Secret)
   */
  readonly webhookCertDir?: string;
  /**
   * Check every render's children with Kubernetes' own validation, offline, before applying them
   * (`--validate-children`; lib/validator): a refused child makes its CR Stalled=True `ChildRefused`
   * (Event, error log) and nothing of that render is applied. The validator is loaded at start (a missing
   * or corrupt one exits 1 naming its file) and takes about 180 MB of memory: raise the container's limit.
   * @default false: the API server validates each apply anyway (a refusal is Stalled=True `ApplyFailed`)
   */
  readonly validateChildren?: boolean;
}

/**
 * The children's validator of `--validate-children`, loaded now (imported only with the flag) so that a
 * missing or corrupt one stops the start, naming its file.
 * @throws ValidatorLoadError
 */
async function loadChildValidator(logger: Logger): Promise<(children: readonly object[]) => void> {
  const { assertChildrenAccepted, builtInValidatorKubernetesVersion } = await import('../validator/validate-built-in-objects.js');
  logger.info({ kubernetesVersion: builtInValidatorKubernetesVersion() }, "children are validated by Kubernetes' own code before each apply");
  return assertChildrenAccepted;
}

/** The pod's namespace, mounted with the service account. */
const IN_CLUSTER_NAMESPACE = `${SERVICE_ACCOUNT_DIR}/namespace`;

function podNamespace(): string | undefined {
  try {
    return readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A boolean flag's value as Go's flag package reads it (`--metrics-secure=false`). */
export function parseBoolFlag(value: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw new InvalidArgumentError('must be true or false');
}

/** Adds `run` to the `cdk8s-operator` program. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run operators against a cluster (reconcile their custom resources) until SIGINT/SIGTERM')
    .addOption(operatorsOption())
    .addOption(moduleOption())
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .option('-n, --namespace <namespace>', 'watch and reconcile one namespace only; default: all namespaces')
    .option('--max-concurrent-reconciles <n>', 'reconciles running at once per operator', parsePositiveInt, 1)
    .addOption(new Option('--initial-list <how>', "how informers read the whole set: watch-list streams it where the API server serves WatchList (KEP-3157), else lists; list always lists").choices(['watch-list', 'list']).default('watch-list'))
    .addOption(logLevelOption('info'))
    .addOption(logFormatOption('json'))
    .option('--metrics-bind-address <addr>', 'serve Prometheus /metrics here (host:port or :port); 0 disables; default :8443 when secure, else :8080')
    .addOption(new Option('--metrics-secure [bool]', 'serve /metrics over HTTPS, each scrape authenticated and authorized by the API server; --metrics-secure=false: plain HTTP, for local runs').argParser(parseBoolFlag).default(true))
    .option('--metrics-cert-path <dir>', 'directory with tls.crt and tls.key for the secure metrics server; default: a self-signed certificate')
    .option('--health-probe-bind-address <addr>', 'serve /healthz and /readyz here (host:port or :port); 0 disables', DEFAULT_HEALTH_PROBE_BIND_ADDRESS)
    .addOption(durationOption('--graceful-shutdown-timeout <duration>', 'how long reconciles in flight may finish on SIGTERM (e.g. 30s)', 30_000, '30s'))
    .addOption(durationOption('--cache-sync-timeout <duration>', 'fail (exit 1) when the caches have not synced after this long (e.g. 2m)', 120_000, '2m'))
    .option('--leader-elect', 'only the holder of a Lease reconciles (for replicas > 1)', false)
    .option('--leader-election-namespace <namespace>', "Lease namespace; default: the pod's namespace, else the operator's namespace")
    .option('--leader-election-id <name>', 'Lease name; default: the operator names')
    .addOption(durationOption('--leader-elect-lease-duration <duration>', 'how long a standby waits after the last renewal it saw before taking over (whole seconds)'))
    .addOption(durationOption('--leader-elect-renew-deadline <duration>', 'how long the leader tries to renew before it stops writing and exits'))
    .addOption(durationOption('--leader-elect-retry-period <duration>', 'wait between two acquire or renew tries'))
    .option('--sharding', 'each replica reconciles the CRs of its buckets only (a Lease per replica); the --leader-elect-* timings apply', false)
    .option('--sharding-namespace <namespace>', "namespace of the replicas' Leases; default: the pod's namespace, else the operator's namespace")
    .option('--sharding-ring <name>', 'ring name shared by the replicas; default: the operator names')
    .addOption(new Option('--sharding-buckets <count>', 'number of buckets, the same on every replica').default(32).argParser((value) => Number(value)))
    .option('--no-rbac-self-check', 'skip the start-up check that every needed permission is granted')
    .option('--webhook-bind-address <addr>', 'serve the operators\' conversion and admission webhooks (HTTPS) here, e.g. :9443; 0 disables', '0')
    .option('--webhook-cert-hosts <hosts>', 'comma-separated extra DNS names / IPs of the self-managed webhook certificate')
    .option('--webhook-cert-dir <dir>', 'serve the webhooks with tls.crt and tls.key from this directory, reloaded when they change (e.g. /tmp/k8s-webhook-server/serving-certs, where OLM mounts them); no Secret or caBundle is written')
    .option('--validate-children', "check each render's children with Kubernetes' own validation before applying them (adds ~180 MB of memory)", false)
    .action(async (options: RunOptions & { gracefulShutdownTimeout?: number; cacheSyncTimeout?: number; leaderElectLeaseDuration?: number; leaderElectRenewDeadline?: number; leaderElectRetryPeriod?: number }) => {
      // Losing the lease ends the process at once, as controller-runtime does (another replica may write now).
      const code = await runRun(
        {
          ...options,
          gracefulShutdownTimeoutMs: options.gracefulShutdownTimeout,
          cacheSyncTimeoutMs: options.cacheSyncTimeout,
          leaderElectLeaseDurationMs: options.leaderElectLeaseDuration,
          leaderElectRenewDeadlineMs: options.leaderElectRenewDeadline,
          leaderElectRetryPeriodMs: options.leaderElectRetryPeriod,
        },
        { onLeadershipLost: () => process.exit(1) },
      );
      // Exit now: a reconcile cut off at the graceful-shutdown deadline may still hold timers (a user's
      // finalize hook), which would otherwise keep the process alive. Logs are written synchronously.
      process.exit(code);
    });
}

/** Hooks for running the command in-process (tests). */
export interface RunHooks {
  /** Stops the operators like a signal would. @default none: SIGINT/SIGTERM only */
  readonly signal?: AbortSignal;
  /** Called once the caches synced (and, without leader election, the workers run), with the bound ports. @default none */
  readonly onStarted?: (info: StartedServers) => void;
  /** @default pino on stdout at `logLevel`, in `logFormat` */
  readonly logger?: Logger;
  /**
   * Called when leadership is lost, after the workers were stopped and their writes fenced. The command
   * passes `process.exit(1)`. @default the run stops without draining and returns 1 (in-process use)
   */
  readonly onLeadershipLost?: () => void;
}

/**
 * Runs the command until SIGINT/SIGTERM (or `hooks.signal`); returns the exit code. Loads the operators
 * and the kubeconfig and makes the logger, then hands everything else to `runOperators`
 * (lib/runtime/run-operators.ts), which logs its own failures.
 */
export async function runRun(options: RunOptions, hooks: RunHooks = {}): Promise<number> {
  let logger: Logger;
  try {
    logger = hooks.logger ?? createCliLogger({ level: options.logLevel, format: options.logFormat });
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  if (options.webhookCertDir !== undefined && options.webhookCertHosts !== undefined) {
    logger.error({}, 'cannot start: --webhook-cert-hosts and --webhook-cert-dir exclude each other (the hosts of a certificate read from a directory are its issuer\'s)');
    return 1;
  }
  let operators: Operator[];
  let kubeConfig: KubeConfigView;
  let validateChildren: ((children: readonly object[]) => void) | undefined;
  try {
    operators = (await loadOperators({ modulePath: options.module })).pick(options.operators);
    kubeConfig = await loadKubeConfig(options.kubeconfig);
    if (options.context !== undefined) useContext(kubeConfig, options.context);
    if (options.validateChildren) validateChildren = await loadChildValidator(logger);
  } catch (err) {
    logger.error({ err: { message: (err as Error).message } }, 'cannot start');
    return 1;
  }
  if (options.sharding && options.leaderElect) {
    logger.error({}, 'cannot start: --sharding and --leader-elect exclude each other');
    return 1;
  }
  try {
    await runOperators({
      kubeConfig,
      operators,
      namespace: options.namespace,
      maxConcurrentReconciles: options.maxConcurrentReconciles,
      initialList: options.initialList,
      gracefulShutdownMs: options.gracefulShutdownTimeoutMs,
      cacheSyncTimeoutMs: options.cacheSyncTimeoutMs,
      logger,
      rbacSelfCheck: options.rbacSelfCheck ?? true,
      metricsBindAddress: options.metricsBindAddress,
      metricsSecure: options.metricsSecure ?? true,
      metricsCertPath: options.metricsCertPath,
      healthProbeBindAddress: options.healthProbeBindAddress,
      webhookBindAddress: options.webhookBindAddress,
      webhookCertHosts: options.webhookCertHosts?.split(',').map((h) => h.trim()).filter((h) => h !== ''),
      webhookCertDir: options.webhookCertDir,
      validateChildren,
      leaderElection: options.leaderElect
        ? {
            namespace: options.leaderElectionNamespace ?? podNamespace(),
            name: options.leaderElectionId,
            leaseDurationMs: options.leaderElectLeaseDurationMs,
            renewDeadlineMs: options.leaderElectRenewDeadlineMs,
            retryPeriodMs: options.leaderElectRetryPeriodMs,
          }
        : false,
      sharding: options.sharding
        ? {
            namespace: options.shardingNamespace ?? podNamespace(),
            ring: options.shardingRing,
            member: process.env.POD_NAME || undefined,
            bucketCount: options.shardingBuckets,
            leaseDurationMs: options.leaderElectLeaseDurationMs,
            renewDeadlineMs: options.leaderElectRenewDeadlineMs,
            retryPeriodMs: options.leaderElectRetryPeriodMs,
          }
        : false,
      signal: hooks.signal,
      onStarted: hooks.onStarted,
      onLeadershipLost: hooks.onLeadershipLost,
    });
    return 0;
  } catch {
    return 1; // logged by runOperators (or, for a lost Lease, by the Manager)
  }
}
