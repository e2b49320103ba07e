/**
 * `cdk8s-operator dev [--once]`: the whole loop on one machine, in one command.
 *
 * ```
 * cdk8s-operator dev [--once] [--no-watch] [--timeout DURATION] [--dir DIR] [--bin-dir DIR] [--module PATH]
 *                    [--kubeconfig PATH] [--context NAME] [--keep]
 *                    [--operators a,b] [--log-level LEVEL] [--log-format json|text]
 * ```
 *
 * 0. **Operators process:** the operators module is loaded in a child process of `dev`
 *    (lib/cli/operator-host.ts, lib/cli/dev-worker-command.ts), which runs everything that executes the
 *    operators' code (webhooks, Manager); `dev` itself reads their description (names, CRDs, samples) and
 *    never imports the module. A module that does not load ends `dev` with `error: file:line:col: message`.
 * 1. **Control plane:** reuses the one `env up` started in DIR when it runs and is ready; otherwise starts
 *    one in DIR (etcd, kube-apiserver, controller manager, scheduler, kwok fake node) that this command
 *    owns and stops when it ends. DIR defaults to `env`'s state dir.
 *    **Your cluster** instead, with `--kubeconfig` and/or `--context` (kind, minikube, a dev cluster):
 *    only the context named (or the file's current one) is used, and it is printed with its cluster and
 *    server before the first write. Webhooks are served on 127.0.0.1, so operators with webhooks need an
 *    API server on this machine (a loopback server address); otherwise `dev` stops before any write,
 *    saying so. When it ends it removes what it created there (dev-installed.ts), unless `--keep`.
 * 2. **CRDs:** synthesized by the operators process from the operators' constructs, installed by
 *    server-side apply, waited for until Established and served. Operators with webhooks (several
 *    versions, admission hooks) get them served by the operators process on 127.0.0.1 with an in-memory
 *    CA, and their CRD conversion and webhook configurations installed pointing there (`url` +
 *    `caBundle`, as envtest does). On a reused `env up` control plane they keep pointing there after
 *    `dev` ends: run `dev` again, or `env down`.
 * 3. **Operators:** all of them (or `--operators`) run in the operators process in one Manager (no
 *    leader election, no RBAC self-check: the admin kubeconfig is used).
 * 4. **Samples:** every operator's `examples` is applied (server-side apply, field manager
 *    `cdk8s-operator-dev`), in its namespace (default `default`), created when missing: first the
 *    related objects that stand beside the CRs (`exampleRelated`: a ConfigMap a CR references), then
 *    the CRs.
 * 5. **Progress:** one line on stderr whenever a sample's Ready condition changes; once every sample is
 *    Ready (or at the deadline) a table on stdout: CR, READY, CHILDREN (ready/total), TIME TO READY.
 *    Before the table, a sample of a kind with several versions is read in each other served version
 *    (the API server calls the operators process's `/convert`): `<cr>: read as <apiVersion>`, or exit 1
 *    naming it.
 * 6. **Reload** (not with `--once` or `--no-watch`): the module and the local files it imports are
 *    watched; a change loads them in a new operators process, and only when that loads does it replace
 *    the running one: the CRDs and webhook configurations are re-applied (webhooks served anew), every CR
 *    is reconciled, and a short diff of each child that changed is printed, then `reloaded in 1.2s: …`.
 *    A module that does not compile or throws at load prints `reload failed: file:line:col: message`,
 *    and so does a CRD the API server refuses (its words, from a dry-run apply made before the previous
 *    version stops); either way the previous version keeps running (lib/cli/dev-reload.ts). A version
 *    that loads and then fails to start is told too, and the previous one, paused meanwhile, starts again. The samples are applied once, at
 *    the start; the control plane stays.
 *
 * `--once`: exits when every sample is Ready (0), or at `--timeout` (default 180s) with 1 and, per sample
 * not Ready, its Ready condition's reason and message. Without `--once` it keeps running, logging
 * reconciles (log level `info`), until SIGINT/SIGTERM. Then a control plane this command started stops
 * at once (its own signal handler, lib/testing/control-plane.ts), the operators stop, and the process ends
 * as interrupted (exit 130 for SIGINT); a reused `env up` control plane keeps running and the exit is 0.
 *
 * Exit codes: 0 all samples Ready (`--once`); 1 a sample not Ready in time, or any failure (operators not
 * loadable, control plane not startable, CRDs not installable, the operators process ended), with
 * `error: …` on stderr. After the start, a failed reload is told and `dev` keeps running.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiClient } from '../runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../runtime/client/kube-client.js';
import { NAMESPACES } from '../runtime/client/builtin-resources.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import type { ObjectLocation, ResourceRef } from '../runtime/client/resource-path.js';
import { sleep } from '../runtime/queue/backoff.js';
import { conditionSummary, conditionsOf, findCondition } from '../runtime/reconcile/conditions.js';
import { type ControlPlane, startControlPlane } from '../testing/control-plane.js';
import { componentLiveness, readControlPlaneState } from '../testing/control-plane-state.js';
import { binDirHelp } from './bin-dir-flag.js';
import type { LogFormat } from './cli-logger.js';
import { DevInstalled } from './dev-installed.js';
import { DevReload } from './dev-reload.js';
import { durationOption } from './duration-flag.js';
import { apiServerReadiness, defaultEnvDir } from './env-command.js';
import { loadKubeConfig } from './kubeconfig-loader.js';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { operatorsModulePath } from './load-operators.js';
import type { OperatorDescription } from './operator-description.js';
import { OperatorHost } from './operator-host.js';
import { type OperatorsFlags, contextOption, kubeconfigOption, logFormatOption, logLevelOption, moduleOption, operatorsOption } from './shared-flags.js';
import { PROCESS_OUTPUT } from './command-output.js';

/** Field manager of the sample CRs `dev` applies. */
export const DEV_FIELD_MANAGER = 'cdk8s-operator-dev';

/** The flags of `cdk8s-operator dev`, parsed (durations in milliseconds). */
export interface DevOptions extends OperatorsFlags {
  /** Exit once every sample is Ready (0) or at the timeout (1); never watches. @default false: keep running */
  readonly once?: boolean;
  /**
   * Without `once`: watch the operators module and the local files it imports, and reload the operators
   * when one changes (`--no-watch` turns it off). @default true: the edit-and-see loop `dev` is for
   */
  readonly watch?: boolean;
  /**
   * With `once`: how long samples may take to become Ready, counted from their apply (the control plane's
   * start and the CRDs' install come before it), in ms (`--timeout`, a duration).
   * @default 180000 ms: kwok's Pods pull no image and start at once, so this is room for the reconciles on a busy machine
   */
  readonly timeoutMs?: number;
  /** Control-plane state dir, shared with `env up` (`--dir`). @default `defaultEnvDir()`: a control plane `env up` left running is reused */
  readonly dir?: string;
  /**
   * Run against your own cluster instead of the local control plane (`--kubeconfig PATH`): that file's
   * current context, or `context`. @default none: the local control plane
   */
  readonly kubeconfig?: string;
  /**
   * With or without `kubeconfig`: the context of your cluster to run against (`--context NAME`; without
   * `kubeconfig` from `KUBECONFIG` or ~/.kube/config, as kubectl). @default none: the local control plane
   */
  readonly context?: string;
  /**
   * In your cluster: leave what `dev` created (CRDs, webhook configurations, namespaces, samples) when it
   * ends (`--keep`). @default false: removed, the samples first (their operators still run to finalize them)
   */
  readonly keep?: boolean;
  /**
   * Directory with the control-plane binaries (`--bin-dir`).
   * @default etcd and kube-apiserver from `KUBEBUILDER_ASSETS` when it has both, the rest from the
   *   cache, downloaded or built with Go (startControlPlane's; see resolveControlPlaneBinaries)
   */
  readonly binDir?: string;
  /** Operator log level. @default 'warn' with `once` (its progress lines are the output), else 'info' */
  readonly logLevel?: string;
  /** Operator log format. @default 'text': a human reads `dev` at a terminal */
  readonly logFormat?: LogFormat;
}

/** Where `dev` writes, and how it is stopped (tests run it in-process). */
export interface DevIo {
  /** The final table. */
  writeStdout(text: string): void;
  /** Progress lines and `error: …` (the operators' log goes to stderr too, through the logger). */
  writeStderr(text: string): void;
  /** Stops a run without `once`, like SIGINT. @default none: SIGINT/SIGTERM only */
  readonly signal?: AbortSignal;
}

/** A sample CR as `dev` follows it. */
export interface SampleProgress {
  /** `Kind namespace/name`. */
  readonly cr: string;
  /** Where the CR is (its kind's hub version, namespace and name), read to follow it. */
  readonly at: ObjectLocation;
  /** When it was applied, in ms since the epoch (`Date.now()`). */
  readonly appliedAtMs: number;
  /** Ready=True, observed at the CR's current generation (`status.observedGeneration`). */
  ready: boolean;
  /** Ready condition as `status reason: message`, or a note when there is none yet. */
  detail: string;
  /** Children ready and in all, from the CR's `status.children`. */
  children: { ready: number; total: number };
  /** Milliseconds from apply to the first Ready=True; absent until then. */
  timeToReadyMs?: number;
}

/**
 * Runs `dev`; returns the exit code (see the module doc). Failures are not thrown: they end as 1 with an
 * `error: …` line on `io.writeStderr`.
 */
export async function runDev(options: DevOptions, io: DevIo): Promise<number> {
  const stderr = (line: string) => io.writeStderr(line + '\n');
  let plane: ControlPlane | undefined;
  let host: OperatorHost | undefined;
  let reload: DevReload | undefined;
  let client: ApiClient | undefined;
  let installed: DevInstalled | undefined;
  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  const onSignal = (signal: NodeJS.Signals) => {
    stderr(`${signal}: stopping`);
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const modulePath = operatorsModulePath(options.module);
    const log = { level: options.logLevel ?? (options.once ? 'warn' : 'info'), format: options.logFormat ?? 'text' };
    // The operators run in a child process (lib/cli/operator-host.ts): a reload loads them afresh.
    host = await OperatorHost.load({ modulePath, operators: options.operators });
    const operators = host.operators;

    // 1. a cluster: the one the user named, else the local control plane
    let kubeConfig: KubeConfigView;
    let loopbackOnly: ((operators: readonly OperatorDescription[]) => void) | undefined;
    if (options.kubeconfig !== undefined || options.context !== undefined) {
      // The user's cluster: --kubeconfig, else KUBECONFIG, in-cluster or ~/.kube/config; --context made current.
      kubeConfig = await loadKubeConfig(options.kubeconfig, process.env, { context: options.context });
      const cluster = kubeConfig.getCurrentCluster()!;
      // Before the first write: where the writes go.
      stderr(`using your cluster: context ${kubeConfig.getCurrentContext()}, cluster ${cluster.name} (${cluster.server})${options.keep ? '' : '; what dev creates there is removed when it ends (--keep leaves it)'}`);
      loopbackOnly = (loaded) => {
        const served = loaded.filter((o) => o.webhook);
        if (served.length > 0 && !isLoopbackServer(cluster.server)) {
          throw new Error(`${served.map((o) => o.operatorName).join(', ')} serve webhooks, which dev serves on 127.0.0.1, and the API server at ${cluster.server} cannot call this process there; leave them out with --operators, or run dev without --kubeconfig/--context (the local control plane)`);
        }
      };
      loopbackOnly(operators);
      installed = options.keep ? undefined : new DevInstalled();
    } else {
      const dir = resolve(options.dir ?? defaultEnvDir());
      const reused = await runningControlPlane(dir);
      if (reused) {
        stderr(`using the control plane in ${dir} (${reused.getCurrentCluster()?.server})`);
        kubeConfig = reused;
      } else {
        stderr(`starting a local control plane in ${dir} …`);
        const t0 = Date.now();
        plane = await startControlPlane({ dir, binDir: options.binDir, log: (line) => stderr(`  ${line}`) });
        stderr(`control plane ready in ${seconds(Date.now() - t0)}: ${plane.server} (KUBECONFIG=${plane.kubeconfigPath})`);
        kubeConfig = plane.kubeConfig;
      }
    }
    if (stop.signal.aborted) return 0;
    client = new ApiClient({ kubeConfig, userAgent: 'cdk8s-operator-sdk/dev' });
    const recordInstalled = async (loaded: readonly OperatorDescription[]) => {
      if (!installed || !client) return;
      for (const [at, label] of loaded.flatMap((o) => o.installedObjects)) {
        if (!installed.labels.includes(label)) await installed.recordIfAbsent(client, at, label);
      }
    };
    await recordInstalled(operators);

    // 2. CRDs, webhooks (conversion, admission: served by the operators process, on loopback), 3. operators
    const { webhooks } = await host.start(kubeConfig, log);
    const servingLine = (w: { url: string; paths: readonly string[] }) => stderr(`serving webhooks on ${w.url}: ${w.paths.join(', ')}`);
    if (webhooks) servingLine(webhooks);
    stderr(`installed ${operators.length} CRD(s): ${operators.map((o) => `${o.crd.plural}.${o.crd.group}`).join(', ')}`);
    stderr(`running ${operators.map((o) => o.operatorName).join(', ')}`);

    // 4. samples
    const samples = await applySamples(client, operators, stderr, installed);
    if (samples.length === 0) stderr('no operator has examples: nothing to apply');

    // reload on change (not with --once)
    if (!options.once && options.watch !== false && modulePath !== undefined) {
      reload = await DevReload.start({
        modulePath,
        operators: options.operators,
        kubeConfig,
        client,
        log,
        host,
        print: stderr,
        admit: async (loaded) => {
          loopbackOnly?.(loaded);
          await recordInstalled(loaded);
        },
        onWebhooks: servingLine,
      });
      host = undefined; // the reload owns the running version now
      stderr(`watching ${reload.watched.length} file(s) for changes: they reload the operators (--no-watch turns this off)`);
    }

    // 5. progress, then the table
    const deadline = options.once ? Date.now() + (options.timeoutMs ?? 180_000) : Infinity;
    let exited: number | null | undefined;
    void host?.exited.then((code) => (exited = code));
    let tabled = false;
    while (!stop.signal.aborted) {
      if (exited !== undefined) throw new Error(`the operators process exited (code ${exited})`);
      await refresh(client, samples, stderr);
      const allReady = samples.every((s) => s.ready);
      if (allReady && !tabled) {
        await readInEveryVersion(client, operators, samples, stderr);
        io.writeStdout(progressTable(samples));
        tabled = true;
        if (options.once) return 0;
        stderr('all samples Ready; still running (Ctrl-C to stop)');
      }
      if (Date.now() > deadline) {
        io.writeStdout(progressTable(samples));
        for (const s of samples.filter((x) => !x.ready)) stderr(`not Ready: ${s.cr}: ${s.detail}`);
        stderr(`error: ${samples.filter((s) => !s.ready).length} of ${samples.length} sample(s) not Ready within ${seconds(options.timeoutMs ?? 180_000)}`);
        return 1;
      }
      await sleep(250, stop.signal);
    }
    return 0;
  } catch (err) {
    if (stop.signal.aborted) return 0;
    stderr(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await reload?.close();
    const running = reload?.host ?? host;
    if (installed && client) {
      stderr(`removing what dev created in your cluster: ${installed.labels.length === 0 ? 'nothing' : installed.labels.length}`);
      await installed.removeAll(client, stderr);
    }
    await running?.stop();
    client?.close();
    if (plane) {
      stderr('stopping the control plane this command started');
      await plane.stop();
    }
  }
}

/** The kubeconfig of a control plane `env up` left running and ready in `dir`, or undefined. */
async function runningControlPlane(dir: string): Promise<KubeConfigView | undefined> {
  const state = await readControlPlaneState(dir);
  if (!state) return undefined;
  if (!componentLiveness(state).every((c) => c.alive)) {
    if (componentLiveness(state).some((c) => c.alive)) {
      throw new Error(`a control plane in ${dir} is partly running; run \`cdk8s-operator env down --dir ${dir}\` first`);
    }
    return undefined;
  }
  const kubeConfig = await loadKubeConfig(state.kubeconfigPath, {});
  if (!(await apiServerReadiness(state, 'cdk8s-operator-sdk/dev')).ready) throw new Error(`the control plane in ${dir} runs but is not ready; run \`cdk8s-operator env down --dir ${dir}\` first`);
  return kubeConfig;
}

/**
 * Applies every operator's examples (namespaces created as needed): the related objects beside the CRs
 * first, so a CR that requires one finds it; returns the CRs to follow.
 */
async function applySamples(client: ApiClient, operators: readonly OperatorDescription[], log: (line: string) => void, installed?: DevInstalled): Promise<SampleProgress[]> {
  const samples: SampleProgress[] = [];
  const namespaces = new Set<string>();
  const resources = new ResourceClient(client);
  const apply = async (ref: ResourceRef, object: KubeObject, namespace: string | undefined, isCr = false): Promise<ObjectLocation> => {
    if (namespace && !namespaces.has(namespace)) {
      namespaces.add(namespace);
      const created = await resources
        .create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } })
        .then(() => true, (err) => (isApiError(err, 409) ? false : Promise.reject(err)));
      if (created) installed?.record({ ref: NAMESPACES, name: namespace }, `Namespace ${namespace}`);
    }
    const at = { ref, namespace, name: object.metadata?.name ?? '' };
    await installed?.recordIfAbsent(client, at, `${object.kind} ${namespace ? namespace + '/' : ''}${object.metadata?.name ?? ''}`, { waitGone: isCr });
    const body = { ...object, metadata: { ...object.metadata, ...(namespace ? { namespace } : {}) } };
    await resources.apply(ref, body, { fieldManager: DEV_FIELD_MANAGER, force: true });
    log(`applied ${object.kind} ${namespace ? namespace + '/' : ''}${object.metadata?.name ?? ''}`);
    return at;
  };
  for (const operator of operators) {
    for (const related of operator.exampleRelated) await apply(related.ref, related.object, related.namespace);
  }
  for (const operator of operators) {
    const crd = operator.crd;
    for (const example of operator.examples) {
      const name = example.metadata?.name ?? '';
      const namespace = crd.namespaced ? (example.metadata?.namespace ?? 'default') : undefined;
      const at = await apply(crd, { ...example, apiVersion: crd.apiVersion, kind: crd.kind }, namespace, true);
      const cr = `${crd.kind} ${namespace ? namespace + '/' : ''}${name}`;
      samples.push({ cr, at, appliedAtMs: Date.now(), ready: false, detail: 'no Ready condition yet', children: { ready: 0, total: 0 } });
    }
  }
  return samples;
}

/** Whether the API server at `server` runs on this machine (so it can call webhooks served on 127.0.0.1). */
function isLoopbackServer(server: string): boolean {
  const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Reads each sample's status; logs a line whenever its Ready condition changes. A read that fails (the
 * API server busy, a conversion webhook restarting during a reload) changes nothing: the sample keeps
 * the state last read, and the next refresh reads again.
 */
async function refresh(client: ApiClient, samples: SampleProgress[], log: (line: string) => void): Promise<void> {
  const resources = new ResourceClient(client);
  for (const sample of samples) {
    const cr = await resources.get(sample.at.ref, sample.at.namespace, sample.at.name).catch(() => undefined);
    if (cr === undefined) continue;
    const line = observeSample(sample, cr);
    if (line !== undefined) log(line);
  }
}

/**
 * Records what `cr` (the sample as just read) says about its Ready condition in `sample` (detail, ready,
 * children, time to Ready). Ready counts only when `status.observedGeneration` is the CR's generation.
 * @returns `<cr>: Ready=<status> <reason>: <message>` when the Ready condition or readiness changed, else undefined
 */
export function observeSample(sample: SampleProgress, cr: KubeObject): string | undefined {
  const status = (cr.status ?? {}) as { children?: { ready?: boolean }[]; observedGeneration?: number };
  const ready = findCondition(conditionsOf(cr), 'Ready');
  const current = status.observedGeneration === cr.metadata?.generation;
  const detail = ready ? conditionSummary(ready).trim() : 'no Ready condition yet';
  const children = status.children ?? [];
  sample.children = { ready: children.filter((c) => c.ready).length, total: children.length };
  const isReady = ready?.status === 'True' && current;
  if (isReady && sample.timeToReadyMs === undefined) sample.timeToReadyMs = Date.now() - sample.appliedAtMs;
  if (detail === sample.detail && isReady === sample.ready) return undefined;
  sample.detail = detail;
  sample.ready = isReady;
  return `${sample.cr}: Ready=${detail}`;
}

/**
 * Reads every sample of a kind with several versions in each other served version (through the API
 * server, which calls the operator's `/convert`), and logs `<cr>: read as <apiVersion>`.
 * @throws Error naming the sample and version when a read fails (e.g. the conversion webhook failed)
 */
async function readInEveryVersion(client: ApiClient, operators: readonly OperatorDescription[], samples: readonly SampleProgress[], log: (line: string) => void): Promise<void> {
  const resources = new ResourceClient(client);
  for (const operator of operators.filter((o) => o.versions.length > 1)) {
    const { group, version: hub, plural } = operator.crd;
    for (const { at, cr } of samples.filter((s) => s.at.ref.group === group && s.at.ref.version === hub && s.at.ref.plural === plural)) {
      for (const version of operator.versions.slice(1).filter((v) => v.served)) {
        const apiVersion = `${group}/${version.name}`;
        try {
          await resources.get({ ...at.ref, version: version.name }, at.namespace, at.name);
        } catch (err) {
          throw new Error(`${cr} cannot be read as ${apiVersion}: ${(err as Error).message}`, { cause: err });
        }
        log(`${cr}: read as ${apiVersion}`);
      }
    }
  }
}

/** The final table: CR, READY, CHILDREN (ready/total), TIME TO READY. */
export function progressTable(samples: readonly SampleProgress[]): string {
  const rows = [
    ['CR', 'READY', 'CHILDREN', 'TIME TO READY'],
    ...samples.map((s) => [s.cr, s.ready ? 'True' : 'False', `${s.children.ready}/${s.children.total}`, s.timeToReadyMs === undefined ? '-' : seconds(s.timeToReadyMs)]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('   ')).join('\n') + '\n';
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Adds `dev` to the `cdk8s-operator` program. */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('start (or reuse) the local control plane, install the CRDs, run every operator in-process and apply their samples')
    .option('--once', 'exit 0 once every sample is Ready, 1 at --timeout with the reasons (never watches)', false)
    .option('--no-watch', 'do not watch the operators module and the files it imports (by default a change reloads the operators)')
    .addOption(durationOption('--timeout <duration>', 'with --once: how long samples may take to become Ready', 180_000, '180s'))
    .option('--dir <dir>', `control-plane state dir, shared with env up (default: ${defaultEnvDir()})`)
    .addOption(kubeconfigOption('run against your cluster: this kubeconfig (its current-context, or --context) instead of the local control plane'))
    .addOption(contextOption('run against your cluster: this context (of --kubeconfig, else KUBECONFIG / ~/.kube/config)'))
    .option('--keep', 'in your cluster: leave what dev created (CRDs, namespaces, samples) when it ends', false)
    .option('--bin-dir <dir>', binDirHelp())
    .addOption(moduleOption())
    .addOption(operatorsOption())
    .addOption(logLevelOption({ note: 'warn with --once, else info' }))
    .addOption(logFormatOption('text'))
    .action(async (opts: DevOptions & { timeout: number }) => {
      process.exitCode = await runDev(
        { ...opts, timeoutMs: opts.timeout },
        PROCESS_OUTPUT,
      );
    });
}
