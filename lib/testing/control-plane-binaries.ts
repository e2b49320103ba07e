/**
 * Finds the executables of a local control plane: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok.
 *
 * Order: an explicit directory → `KUBEBUILDER_ASSETS` (etcd and kube-apiserver only, as setup-envtest
 * provides them) → what the cache already holds (the downloaded set, and without Go also a set built
 * earlier) → a download (control-plane-download.ts) or `tools/control-plane/build.sh` (shipped in the
 * package), which builds the pinned versions with Go once into the cache.
 * `CDK8S_OPERATOR_SDK_BINARIES` chooses between the last two: `download`, `build` (which also skips
 * the cached sets), or unset (build when `go` is on PATH, else download). Nothing is downloaded while
 * the cache holds what is needed, so a machine without Go and offline works once the cache is filled.
 */
import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { packageRoot } from '../package-root.js';
import { downloadControlPlaneBinaries } from './control-plane-download.js';
import { isExecutable, onPath } from '../executable-file.js';
import { controlPlaneRelease, currentPlatform, goBuildDirName, pinnedVersions, testedKubernetesMinor } from './control-plane-release.js';

/** Absolute paths of the control plane executables. */
export interface ControlPlaneBinaries {
  readonly etcd: string;
  readonly kubeApiServer: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kwok: string;
}

/** Which executables are needed (etcd and kube-apiserver always are). */
export interface RequiredComponents {
  /** kube-controller-manager. */
  readonly controllerManager: boolean;
  /** kube-scheduler. */
  readonly scheduler: boolean;
  /** kwok. */
  readonly kwok: boolean;
}

/** Options of {@link resolveControlPlaneBinaries}. */
export interface ResolveBinariesOptions {
  /**
   * A directory holding all the needed executables.
   * @default none: `KUBEBUILDER_ASSETS` (when it holds etcd and kube-apiserver), then build.sh for the rest
   */
  readonly binDir?: string;
  /**
   * Kubernetes minor of the control plane (`1.35`), one of testedKubernetesMinors
   * (control-plane-release.ts; docs/reference/kubernetes-versions.md). Picks the cached set, the
   * download and build.sh's `--kubernetes-version`; ignored with `binDir` or when KUBEBUILDER_ASSETS
   * gives etcd and kube-apiserver (those are whatever that dir holds).
   * @default the newest tested minor (tools/control-plane/kube/go.mod)
   */
  readonly kubernetesVersion?: string;
  /** Which optional components must be found. @default all three, what `startControlPlane` starts by default */
  readonly components?: RequiredComponents;
  /**
   * Progress lines of build.sh (its stderr) or of the download.
   * @default each line to this process's stderr, so a cold build (minutes) or a download never looks
   *   hung; a warm build.sh or a cached download prints nothing
   */
  readonly log?: (line: string) => void;
  /**
   * Environment to read `KUBEBUILDER_ASSETS`, the cache dir (`CDK8S_OPERATOR_SDK_CACHE`),
   * `CDK8S_OPERATOR_SDK_BINARIES` (`download` | `build`), `CDK8S_OPERATOR_SDK_BINARIES_MIRROR` and
   * `PATH` (is Go there) from.
   * @default process.env
   */
  readonly env?: NodeJS.ProcessEnv;
}

const FILE_NAMES: Record<keyof ControlPlaneBinaries, string> = {
  etcd: 'etcd',
  kubeApiServer: 'kube-apiserver',
  kubeControllerManager: 'kube-controller-manager',
  kubeScheduler: 'kube-scheduler',
  kwok: 'kwok',
};

/** Absolute path of `tools/control-plane/build.sh` in this package. */
export function controlPlaneBuildScript(): string {
  return join(packageRoot(), 'tools', 'control-plane', 'build.sh');
}

/**
 * The ways to give the control plane its binaries, for errors: what a user of the package has (flags,
 * variables, the cache dir), not this repository's paths.
 */
function howToGetThem(env: NodeJS.ProcessEnv, kubernetesMinor?: string): string {
  const cache = join(controlPlaneCacheRoot(env), 'bin');
  let dirs: string;
  try {
    const versions = pinnedVersions(kubernetesMinor);
    const downloaded = cachedDirName(kubernetesMinor);
    dirs = `${join(cache, goBuildDirName(versions))}/${downloaded ? ` or ${join(cache, downloaded)}/` : ''}`;
  } catch {
    dirs = `${cache}/<version>/`;
  }
  return (
    'Give the binaries one of these ways: `--bin-dir DIR` (env up, dev; `binDir` of startControlPlane) naming a dir with etcd, ' +
    'kube-apiserver, kube-controller-manager, kube-scheduler and kwok; KUBEBUILDER_ASSETS=DIR with etcd and kube-apiserver ' +
    `(e.g. from setup-envtest; the other three from the cache); or put them in the cache, ${dirs}, where they are used without ` +
    'a download. To fetch them: CDK8S_OPERATOR_SDK_BINARIES=download when online (envtest, dl.k8s.io, kwok releases; ' +
    'CDK8S_OPERATOR_SDK_BINARIES_MIRROR=<base URL> for a mirror), or with Go >= 1.26 ' +
    `\`bash ${controlPlaneBuildScript()}${kubernetesMinor ? ` --kubernetes-version ${kubernetesMinor}` : ''}\`, which builds them into the cache.`
  );
}

/** The downloaded set's dir name on this platform, or undefined where there is none. */
function cachedDirName(kubernetesMinor?: string): string | undefined {
  try {
    return controlPlaneRelease(currentPlatform(), { versions: pinnedVersions(kubernetesMinor) }).dirName;
  } catch {
    return undefined;
  }
}

/** How missing binaries are obtained: `CDK8S_OPERATOR_SDK_BINARIES`. */
export type BinariesSource = 'download' | 'build';

/**
 * `CDK8S_OPERATOR_SDK_BINARIES`, or without it `build` when an executable `go` is on `PATH`, else
 * `download`.
 * @throws Error for any other value, naming the variable
 */
export function binariesSource(env: NodeJS.ProcessEnv): BinariesSource {
  const value = env.CDK8S_OPERATOR_SDK_BINARIES;
  if (value === 'download' || value === 'build') return value;
  if (value) throw new Error(`CDK8S_OPERATOR_SDK_BINARIES: expected "download" or "build", got ${JSON.stringify(value)}`);
  const goOnPath = onPath('go', env).some(isExecutable);
  return goOnPath ? 'build' : 'download';
}

/** `${CDK8S_OPERATOR_SDK_CACHE:-~/.cache/cdk8s-operator-sdk}`, the cache root build.sh uses too. */
export function controlPlaneCacheRoot(env: NodeJS.ProcessEnv): string {
  return env.CDK8S_OPERATOR_SDK_CACHE || join(env.HOME || homedir(), '.cache', 'cdk8s-operator-sdk');
}

/**
 * Runs `tools/control-plane/build.sh` and returns the bin dir it printed (its last stdout line).
 * A warm run (everything built) takes a few milliseconds; a cold one 5–15 minutes on 2 cores (measured: 6.6 min of builds with empty Go caches on an idle machine, 14 min under heavy load).
 *
 * @param options.log receives each line build.sh writes to stderr; default none: the lines are dropped
 *   (only the last 40 go into the error)
 * @param options.env build.sh's environment (`KUBEBUILDER_ASSETS`, `CDK8S_OPERATOR_SDK_CACHE`); default
 *   `process.env`
 * @param options.kubernetesVersion build.sh's `--kubernetes-version` (`1.35`); default none: the newest
 * @throws Error with build.sh's last stderr lines if it fails or cannot be started.
 */
export async function runControlPlaneBuild(options: { log?: (line: string) => void; env?: NodeJS.ProcessEnv; kubernetesVersion?: string } = {}): Promise<string> {
  const script = controlPlaneBuildScript();
  const minor = testedKubernetesMinor(options.kubernetesVersion);
  return await new Promise<string>((resolvePromise, reject) => {
    const child = spawn('bash', [script, ...(minor ? ['--kubernetes-version', minor] : [])], { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const stderrTail: string[] = [];
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        options.log?.(line);
        stderrTail.push(line);
        if (stderrTail.length > 40) stderrTail.shift();
      }
    });
    child.on('error', (err) => reject(new Error(`cannot run ${script}: ${err.message}. ${howToGetThem(options.env ?? process.env, minor)}`, { cause: err })));
    child.on('close', (code, signal) => {
      if (partial) stderrTail.push(partial);
      const binDir = stdout.trim().split('\n').pop()?.trim() ?? '';
      if (code === 0 && binDir) {
        resolvePromise(binDir);
        return;
      }
      reject(
        new Error(
          `${script} failed (${signal ? `signal ${signal}` : `exit code ${code}`}). ${howToGetThem(options.env ?? process.env, minor)}\n` +
            `--- last lines of its output ---\n${stderrTail.join('\n')}`,
        ),
      );
    });
  });
}

/** build.sh or download results of this process by source, Kubernetes minor, KUBEBUILDER_ASSETS, cache dir and mirror: each runs once per process. */
const builds = new Map<string, Promise<string>>();

function obtainOncePerProcess(source: BinariesSource, log: ((line: string) => void) | undefined, env: NodeJS.ProcessEnv, minor: string | undefined): Promise<string> {
  const key = [source, minor ?? '', env.KUBEBUILDER_ASSETS ?? '', env.CDK8S_OPERATOR_SDK_CACHE ?? '', env.CDK8S_OPERATOR_SDK_BINARIES_MIRROR ?? ''].join('\0');
  let build = builds.get(key);
  if (!build) {
    build =
      source === 'build'
        ? runControlPlaneBuild({ log, env, kubernetesVersion: minor })
        : downloadControlPlaneBinaries({
            cacheRoot: controlPlaneCacheRoot(env),
            mirror: env.CDK8S_OPERATOR_SDK_BINARIES_MIRROR || undefined,
            log,
            ...(minor ? { release: controlPlaneRelease(currentPlatform(), { versions: pinnedVersions(minor) }) } : {}),
          }).catch((err: unknown) => {
            throw new Error(`cannot download the control plane binaries: ${(err as Error).message}. ${howToGetThem(env, minor)}`, { cause: err });
          });
    build.catch(() => builds.delete(key)); // a failed build or download is retried by the next caller
    builds.set(key, build);
  }
  return build;
}

/**
 * The sets the cache holds for the pinned versions, in the order they are looked in: the downloaded one
 * (`<cache>/bin/<k8s>-envtest-kwok<kwok>/`), then, when `withGoBuild`, the one build.sh made
 * (`<cache>/bin/<k8s>-etcd<etcd>-kwok<kwok>/`). Either may be partial (build.sh skips what
 * KUBEBUILDER_ASSETS gives); the caller takes what each has.
 */
function cachedSets(env: NodeJS.ProcessEnv, withGoBuild: boolean, minor: string | undefined): string[] {
  const bin = join(controlPlaneCacheRoot(env), 'bin');
  const dirs: string[] = [];
  const downloaded = cachedDirName(minor);
  if (downloaded) dirs.push(join(bin, downloaded));
  if (withGoBuild) dirs.push(join(bin, goBuildDirName(pinnedVersions(minor))));
  return dirs;
}

/**
 * Resolves the control plane executables.
 *
 * - `binDir` given: every needed executable must be in it.
 * - else `KUBEBUILDER_ASSETS` with etcd and kube-apiserver: those two come from it; the others (if
 *   needed) as below (build.sh then skips etcd and kube-apiserver).
 * - else, unless `CDK8S_OPERATOR_SDK_BINARIES=build`: what the cache holds, first the downloaded set
 *   (`<cache>/bin/<k8s>-envtest-kwok<kwok>/`), then, when {@link binariesSource} says `download` (no
 *   Go), a set built earlier (`<cache>/bin/<k8s>-etcd<etcd>-kwok<kwok>/`): no request is sent when
 *   these hold every needed executable.
 * - else, by {@link binariesSource}: a download into the first dir, or build.sh, which builds or finds
 *   everything in the second (with Go, build.sh runs even when that dir is full: a warm run takes
 *   milliseconds and rebuilds what its stamps say changed). Either runs once per process; later calls
 *   reuse its answer.
 *
 * @throws Error naming each missing executable and how to get it (`--bin-dir`, `KUBEBUILDER_ASSETS`,
 *   the cache dirs); a download's error (digest mismatch, truncated file, unreachable URL) names the URL
 *   and the same remedies; an invalid `CDK8S_OPERATOR_SDK_BINARIES`; a `kubernetesVersion` outside the
 *   tested range (naming the tested minors).
 */
export async function resolveControlPlaneBinaries(options: ResolveBinariesOptions = {}): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const minor = testedKubernetesMinor(options.kubernetesVersion);
  const components = options.components ?? { controllerManager: true, scheduler: true, kwok: true };
  const needed: (keyof ControlPlaneBinaries)[] = ['etcd', 'kubeApiServer'];
  if (components.controllerManager) needed.push('kubeControllerManager');
  if (components.scheduler) needed.push('kubeScheduler');
  if (components.kwok) needed.push('kwok');

  const found: Partial<Record<keyof ControlPlaneBinaries, string>> = {};
  const take = (dir: string, names: readonly (keyof ControlPlaneBinaries)[]): void => {
    for (const name of names) {
      const path = join(resolve(dir), FILE_NAMES[name]);
      if (found[name] === undefined && isExecutable(path)) found[name] = path;
    }
  };

  let source: string;
  if (options.binDir !== undefined) {
    take(options.binDir, needed);
    source = `binDir ${options.binDir}`;
  } else {
    const assets = env.KUBEBUILDER_ASSETS;
    if (assets && isExecutable(join(assets, 'etcd')) && isExecutable(join(assets, 'kube-apiserver'))) {
      take(assets, needed); // setup-envtest ships etcd, kube-apiserver (and kubectl); take whatever is there
    }
    if (needed.some((name) => found[name] === undefined)) {
      const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
      // An explicit `build` is always build.sh (CI builds with Go); otherwise a downloaded set in the cache comes first.
      const how = binariesSource(env);
      const buildAsked = env.CDK8S_OPERATOR_SDK_BINARIES === 'build';
      const used: string[] = [];
      if (!buildAsked) {
        for (const dir of cachedSets(env, how === 'download', minor)) {
          if (needed.every((name) => found[name] !== undefined)) break;
          const before = Object.keys(found).length;
          take(dir, needed);
          if (Object.keys(found).length > before) used.push(dir);
        }
      }
      if (needed.some((name) => found[name] === undefined)) {
        const from = await obtainOncePerProcess(how, log, env, minor);
        take(from, needed);
        used.push(from);
      }
      source = [...(assets ? [`KUBEBUILDER_ASSETS ${assets}`] : []), ...used].join(' and ') || 'the cache';
    } else {
      source = `KUBEBUILDER_ASSETS ${assets}`;
    }
  }

  const missing = needed.filter((name) => found[name] === undefined);
  if (missing.length > 0) {
    throw new Error(
      `control plane executables not found (${missing.map((name) => FILE_NAMES[name]).join(', ')}) in ${source}. ${howToGetThem(env, minor)}`,
    );
  }
  // Components that were not asked for resolve to '' and are never started.
  return {
    etcd: found.etcd!,
    kubeApiServer: found.kubeApiServer!,
    kubeControllerManager: found.kubeControllerManager ?? '',
    kubeScheduler: found.kubeScheduler ?? '',
    kwok: found.kwok ?? '',
  };
}
