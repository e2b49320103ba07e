/**
 * `cdk8s-operator env up|status|down`: a local control plane (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, kwok with one fake Node) for humans, outliving the command.
 *
 * ```
 * eval "$(cdk8s-operator env up [--dir DIR] [--bin-dir DIR] [--kubernetes-version MINOR] [--timeout SECONDS]
 *           [--fake-nodes N] [--pods-per-node N] [--service-cluster-ip-range CIDR])"   # prints: export KUBECONFIG=DIR/kubeconfig
 * cdk8s-operator env status [--dir DIR]
 * cdk8s-operator env stop|start|restart COMPONENT [--dir DIR]
 * cdk8s-operator env down [--dir DIR]
 * ```
 *
 * - `up` starts the components detached (their own process groups, unref'd), waits until every one is
 *   ready, writes `DIR/control-plane.json` and exits; they keep running. Only the `export` line goes to
 *   stdout, progress goes to stderr. If a control plane already runs in DIR and is ready, `up` just
 *   prints the line again. Interrupting `up` (Ctrl-C) stops what it had started.
 * - `status` prints each component's pid and whether it runs, kube-apiserver's /readyz, and the kubeconfig.
 * - `--kubernetes-version` (`up`) picks the Kubernetes minor of the tested range (default the newest;
 *   docs/reference/kubernetes-versions.md), so one's own tests can run against the oldest too.
 * - Sizing (`up`): `--fake-nodes` (default 1), `--pods-per-node` (default 250) and
 *   `--service-cluster-ip-range` (default 10.0.0.0/24, about 250 ClusterIP Services), as
 *   {@link startControlPlane}'s options; e.g. 500 CRs with a Service each need a /16.
 * - `stop COMPONENT` stops one component (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
 *   kwok) and leaves the rest running; `start COMPONENT` starts it again with the same ports, data and
 *   certificates and waits until it is ready (etcd /health, kube-apiserver /readyz, the others running);
 *   `restart` is both. For fault tests of one's own operator: an API server restart, etcd down for 20 s.
 * - `down` stops the components (clients, kube-apiserver, etcd; SIGTERM then SIGKILL after 5 s per process
 *   group) and removes DIR's content.
 *
 * DIR defaults to `${XDG_STATE_HOME:-~/.local/state}/cdk8s-operator-sdk/env/<project>-<hash>`, one per project
 * (the nearest directory with a package.json), so two projects' `env up` and `dev` never share a plane.
 *
 * Exit codes: 0 success (for `status`: running and ready); 1 failure (for `status`: not running, partly
 * running or not ready), with an `error: …` line on stderr for failures.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { startControlPlane } from '../testing/control-plane.js';
import { binDirHelp } from './bin-dir-flag.js';
import { loadKubeConfig } from './kubeconfig-loader.js';
import { kubernetesVersionHelp, parseKubernetesVersion } from './kubernetes-version-flag.js';
import {
  componentLiveness,
  isComponentAlive,
  readControlPlaneState,
  startComponentFromState,
  stopComponentFromState,
  stopControlPlaneFromState,
  type ControlPlaneState,
} from '../testing/control-plane-state.js';
import { ApiClient } from '../runtime/client/api-client.js';
import { readLogTail } from '../testing/component-process.js';
import { PROCESS_OUTPUT } from './command-output.js';
import { parsePositiveInt } from './shared-flags.js';

/** Where the env commands write; the command wires it to the process. */
export interface EnvIo {
  /** What a script reads: `up`'s `export KUBECONFIG=…` line, `status`'s table. */
  writeStdout(text: string): void;
  /** Progress and `error: …` lines. */
  writeStderr(text: string): void;
}

/** Options of `env up`. */
export interface EnvUpOptions {
  /** The control plane's state dir (`--dir`; the command passes {@link defaultEnvDir} without it). */
  readonly dir: string;
  /**
   * Directory with the binaries (`--bin-dir`).
   * @default etcd and kube-apiserver from `KUBEBUILDER_ASSETS` when it has both, the rest from the
   *   cache (used as it is when it holds them, built or downloaded earlier), else downloaded or built
   *   with Go (startControlPlane's; see resolveControlPlaneBinaries)
   */
  readonly binDir?: string;
  /**
   * Kubernetes minor of the control plane (`--kubernetes-version`, e.g. `1.35`), one of the tested range
   * (docs/reference/kubernetes-versions.md). Ignored with `binDir`.
   * @default the newest tested minor
   */
  readonly kubernetesVersion?: string;
  /**
   * Per-component start-up budget, in seconds (`--timeout`).
   * @default 120 s, twice startControlPlane's 60 s: `up` is run by hand, and a slow start only waits where a
   *   failed one must be run again
   */
  readonly timeoutSeconds?: number;
  /** Fake Nodes kwok manages (`--fake-nodes`). @default 1 (startControlPlane's): one Node of `podsPerNode` Pods */
  readonly fakeNodes?: number;
  /** Pod capacity of each fake Node (`--pods-per-node`). @default 250 (startControlPlane's) */
  readonly podsPerNode?: number;
  /**
   * Service CIDR (`--service-cluster-ip-range`, given to kube-apiserver and kube-controller-manager).
   * @default 10.0.0.0/24 (startControlPlane's, as envtest): about 250 ClusterIP Services
   */
  readonly serviceClusterIpRange?: string;
}

/**
 * Default state dir, one per project: `$XDG_STATE_HOME/cdk8s-operator-sdk/env/<project>-<hash>`
 * (`~/.local/state` when XDG_STATE_HOME is unset or empty: the XDG Base Directory spec's state home),
 * where `<project>` is the name of the nearest directory at or above `cwd` holding a package.json (else
 * `cwd`'s) and `<hash>` the first 8 hex digits of the SHA-256 of its absolute path: two projects, even
 * with the same folder name, never reuse each other's control plane, CRDs or samples.
 * @param env read for `XDG_STATE_HOME`; default `process.env`
 * @param cwd where the command runs; default `process.cwd()`
 */
export function defaultEnvDir(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const stateHome = env.XDG_STATE_HOME ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  const project = projectRoot(resolve(cwd));
  const name = basename(project).replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 40) || 'root';
  const hash = createHash('sha256').update(project).digest('hex').slice(0, 8);
  return join(stateHome, 'cdk8s-operator-sdk', 'env', `${name}-${hash}`);
}

/** The nearest directory at or above `dir` that holds a package.json, else `dir`. */
function projectRoot(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return at;
    if (dirname(at) === at) return dir;
  }
}

function exportLine(kubeconfigPath: string): string {
  return `export KUBECONFIG=${kubeconfigPath}\n`;
}

/**
 * GET /readyz (3 s deadline) with the control plane's admin kubeconfig; returns a short description
 * (`HTTP 200`, or the error) and whether it answered 200. `env status`/`up` and `dev` ask it.
 */
export async function apiServerReadiness(state: Pick<ControlPlaneState, 'kubeconfigPath'>, userAgent = 'cdk8s-operator-sdk/env'): Promise<{ ready: boolean; detail: string }> {
  try {
    const kubeConfig = await loadKubeConfig(state.kubeconfigPath, {});
    const response = await ApiClient.sendOnce({ kubeConfig, userAgent }, 'GET', '/readyz', { timeoutMs: 3000 });
    return { ready: response.statusCode === 200, detail: `HTTP ${response.statusCode}` };
  } catch (err) {
    return { ready: false, detail: (err as Error).message };
  }
}

/**
 * `env up`: starts a control plane in `options.dir` that outlives this process.
 * @returns the exit code.
 */
export async function runEnvUp(options: EnvUpOptions, io: EnvIo): Promise<number> {
  const dir = resolve(options.dir);
  const existing = await readControlPlaneState(dir);
  if (existing && componentLiveness(existing).every((c) => c.alive)) {
    const readiness = await apiServerReadiness(existing);
    if (readiness.ready) {
      io.writeStderr(`control plane already running in ${dir} (${existing.server})\n`);
      io.writeStdout(exportLine(existing.kubeconfigPath));
      return 0;
    }
  }
  if (existing && componentLiveness(existing).some((c) => c.alive)) {
    io.writeStderr(`error: a control plane in ${dir} is partly running or not ready; run \`cdk8s-operator env down --dir ${dir}\` first\n`);
    return 1;
  }

  // Ctrl-C while starting: stop whatever was started (the components are detached and would survive).
  const interrupted = (signal: NodeJS.Signals): void => {
    io.writeStderr(`\n${signal}: stopping the partly started control plane\n`);
    void stopControlPlaneFromState(dir, 1000).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const t0 = Date.now();
  try {
    const plane = await startControlPlane({
      dir,
      binDir: options.binDir,
      ...(options.kubernetesVersion === undefined ? {} : { kubernetesVersion: options.kubernetesVersion }),
      startTimeoutMs: (options.timeoutSeconds ?? 120) * 1000,
      outliveProcess: true,
      log: (line) => io.writeStderr(`${line}\n`),
      ...(options.fakeNodes === undefined ? {} : { fakeNodes: options.fakeNodes }),
      ...(options.podsPerNode === undefined ? {} : { podsPerNode: options.podsPerNode }),
      ...(options.serviceClusterIpRange === undefined ? {} : { serviceClusterIpRange: options.serviceClusterIpRange }),
    });
    io.writeStderr(`control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${plane.server}, state in ${dir}\n`);
    io.writeStderr(`stop it with: cdk8s-operator env down --dir ${dir}\n`);
    io.writeStdout(exportLine(plane.kubeconfigPath));
    return 0;
  } catch (err) {
    io.writeStderr(`error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
}

/**
 * `env status`: prints each component and kube-apiserver's readiness.
 * @returns 0 when every component runs and /readyz is ok, else 1.
 */
export async function runEnvStatus(options: { readonly dir: string }, io: EnvIo): Promise<number> {
  const dir = resolve(options.dir);
  const state = await readControlPlaneState(dir);
  if (!state) {
    io.writeStdout(`not running (no control plane state in ${dir})\n`);
    return 1;
  }
  const liveness = componentLiveness(state);
  for (const c of liveness) io.writeStdout(`${c.name.padEnd(24)} pid ${String(c.pid).padEnd(8)} ${c.alive ? 'running' : 'NOT RUNNING'}\n`);
  const anyAlive = liveness.some((c) => c.alive);
  const readiness = anyAlive ? await apiServerReadiness(state) : { ready: false, detail: 'not running' };
  io.writeStdout(`${'kube-apiserver /readyz'.padEnd(24)} ${readiness.ready ? 'ok' : readiness.detail} (${state.server})\n`);
  io.writeStdout(`${'kubeconfig'.padEnd(24)} ${state.kubeconfigPath}\n`);
  io.writeStdout(`${'started'.padEnd(24)} ${state.startedAt}\n`);
  const running = liveness.every((c) => c.alive) && readiness.ready;
  const stopped = liveness.filter((c) => !c.alive).map((c) => c.name);
  io.writeStdout(
    running
      ? 'running\n'
      : anyAlive
        ? `partly running: start what is stopped with \`cdk8s-operator env start <component>\`${stopped.length > 0 ? ` (${stopped.join(', ')})` : ''}, or \`env down\` and \`env up\` again\n`
        : 'not running (stale state)\n',
  );
  return running ? 0 : 1;
}

/** What `env stop|start|restart` does to the component. */
export type ComponentAction = 'stop' | 'start' | 'restart';

/** Waits until a started component is ready: etcd /health, kube-apiserver /readyz, the others alive. */
async function waitComponentReady(state: ControlPlaneState, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let detail = 'not checked yet';
  while (Date.now() < deadline) {
    const current = (await readControlPlaneState(state.dir)) ?? state;
    const component = current.components.find((c) => c.name === name);
    if (!component || !isComponentAlive(component)) {
      // Quote the end of its log: the cause is there, and a test's temporary dir is gone afterwards.
      const tail = component ? await readLogTail(component.logPath, 15) : '';
      throw new Error(`${name} exited right after it was started; see ${component?.logPath ?? 'its log'}${tail ? `; it ends:\n${tail}` : ''}`);
    }
    if (name === 'etcd') {
      try {
        const response = await fetch(`${current.etcdEndpoint}/health`, { signal: AbortSignal.timeout(3000) });
        detail = `etcd /health: HTTP ${response.status}`;
        if (response.ok) return;
      } catch (err) {
        detail = `etcd /health: ${(err as Error).message}`;
      }
    } else if (name === 'kube-apiserver') {
      const readiness = await apiServerReadiness(current);
      detail = `kube-apiserver /readyz: ${readiness.detail}`;
      if (readiness.ready) return;
    } else {
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} not ready within ${timeoutMs / 1000} s (${detail})`);
}

/**
 * `env stop|start|restart COMPONENT`: one component of the control plane in `dir`.
 * @param options.timeoutSeconds readiness budget of `start` and `restart`, in seconds; default 120, as
 *   {@link EnvUpOptions.timeoutSeconds}
 * @returns 0 when done (`start`: ready), 1 with an `error:` line otherwise (no state, unknown component,
 *   `start` of a running one, not ready within `timeoutSeconds`).
 */
export async function runEnvComponent(
  action: ComponentAction,
  options: { readonly dir: string; readonly component: string; readonly timeoutSeconds?: number },
  io: EnvIo,
): Promise<number> {
  const dir = resolve(options.dir);
  const name = options.component;
  try {
    if (action !== 'start') {
      const wasRunning = await stopComponentFromState(dir, name, 1000);
      io.writeStderr(wasRunning ? `stopped ${name}\n` : `${name} was not running\n`);
    }
    if (action !== 'stop') {
      const started = await startComponentFromState(dir, name);
      const state = (await readControlPlaneState(dir)) as ControlPlaneState;
      await waitComponentReady(state, name, (options.timeoutSeconds ?? 120) * 1000);
      io.writeStderr(`started ${name} (pid ${started.pid})\n`);
    }
    return 0;
  } catch (err) {
    io.writeStderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

/**
 * `env down`: stops the control plane in `dir` and removes its content.
 * @returns 0 when nothing is left running (also when nothing ran), 1 if a process survived SIGKILL.
 */
export async function runEnvDown(options: { readonly dir: string }, io: EnvIo): Promise<number> {
  const dir = resolve(options.dir);
  try {
    const stopped = await stopControlPlaneFromState(dir);
    if (stopped === undefined) {
      io.writeStderr(`not running (no control plane state in ${dir})\n`);
    } else {
      io.writeStderr(stopped.length > 0 ? `stopped ${stopped.join(', ')}\n` : 'no component was running; state removed\n');
    }
    return 0;
  } catch (err) {
    io.writeStderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number of seconds');
  return n;
}

/** Adds `env up|status|down` to the `cdk8s-operator` program. */
export function registerEnvCommand(program: Command): void {
  const env = program
    .command('env')
    .description('A local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok fake node) that keeps running.');
  const dirHelp = `state dir (default: ${defaultEnvDir()})`;

  env
    .command('up')
    .description('Start it in the background and print `export KUBECONFIG=…` (use: eval "$(cdk8s-operator env up)").')
    .option('--dir <dir>', dirHelp)
    .option('--bin-dir <dir>', binDirHelp())
    .option('--kubernetes-version <minor>', kubernetesVersionHelp(), parseKubernetesVersion)
    .option('--timeout <seconds>', 'start-up budget per component, in seconds', parseSeconds, 120)
    .option('--fake-nodes <n>', 'fake Nodes kwok manages (default 1)', parsePositiveInt)
    .option('--pods-per-node <n>', 'Pod capacity of each fake Node (default 250)', parsePositiveInt)
    .option('--service-cluster-ip-range <cidr>', 'Service CIDR, e.g. 10.0.0.0/16 for thousands of ClusterIP Services (default 10.0.0.0/24)')
    .action(async (opts: { dir?: string; binDir?: string; kubernetesVersion?: string; timeout: number; fakeNodes?: number; podsPerNode?: number; serviceClusterIpRange?: string }) => {
      process.exitCode = await runEnvUp(
        {
          dir: opts.dir ?? defaultEnvDir(),
          binDir: opts.binDir,
          kubernetesVersion: opts.kubernetesVersion,
          timeoutSeconds: opts.timeout,
          fakeNodes: opts.fakeNodes,
          podsPerNode: opts.podsPerNode,
          serviceClusterIpRange: opts.serviceClusterIpRange,
        },
        PROCESS_OUTPUT,
      );
    });

  const componentHelp = 'etcd, kube-apiserver, kube-controller-manager, kube-scheduler or kwok';
  for (const [action, description] of [
    ['stop', 'Stop one component and leave the others running (a fault test of your operator).'],
    ['start', 'Start a stopped component again (same ports, data, certificates) and wait until it is ready.'],
    ['restart', 'Stop one component, start it again, and wait until it is ready.'],
  ] as const) {
    env
      .command(`${action} <component>`)
      .description(`${description} <component>: ${componentHelp}.`)
      .option('--dir <dir>', dirHelp)
      .option('--timeout <seconds>', 'readiness budget, in seconds', parseSeconds, 120)
      .action(async (component: string, opts: { dir?: string; timeout: number }) => {
        process.exitCode = await runEnvComponent(action, { dir: opts.dir ?? defaultEnvDir(), component, timeoutSeconds: opts.timeout }, PROCESS_OUTPUT);
      });
  }

  env
    .command('status')
    .description('Show whether it runs (pids, kube-apiserver /readyz) and its kubeconfig. Exit code 0 only when running and ready.')
    .option('--dir <dir>', dirHelp)
    .action(async (opts: { dir?: string }) => {
      process.exitCode = await runEnvStatus({ dir: opts.dir ?? defaultEnvDir() }, PROCESS_OUTPUT);
    });

  env
    .command('down')
    .description('Stop every component and remove the state dir content.')
    .option('--dir <dir>', dirHelp)
    .action(async (opts: { dir?: string }) => {
      process.exitCode = await runEnvDown({ dir: opts.dir ?? defaultEnvDir() }, PROCESS_OUTPUT);
    });
}
