/**
 * Operator Lifecycle Manager for tests that install a bundle with OLM's own controllers:
 * tools/olm/build.sh builds OLM's `olm` and `catalog` operators and operator-registry's `opm` once into
 * the binaries cache (a warm run is instant) and copies OLM's CRDs beside them. Never skipped: without
 * Go the build fails, and so do the tests that need OLM, in CI and elsewhere.
 */
import { join } from 'node:path';
import { runCommand } from './run-command.js';
import { REPO_ROOT } from './sdk-tarball.js';

/** Where tools/olm/build.sh put OLM: the binaries and OLM's own CRDs (operators.coreos.com). */
export interface OlmTools {
  /** olm-operator (ClusterServiceVersions, OperatorGroups). */
  readonly olm: string;
  /** catalog-operator (CatalogSources, Subscriptions, InstallPlans). */
  readonly catalog: string;
  /** operator-registry's `opm` (`render`, `validate`, `serve` of a file-based catalog). */
  readonly opm: string;
  /** Directory of OLM's CRDs, taken from the OLM module's deploy/chart/crds. */
  readonly crds: string;
}

let built: Promise<OlmTools> | undefined;

/**
 * Runs `opm` with `args` in `cwd` and returns its stdout.
 * @throws Error with the command, its exit code and its output when it exits non-zero (5 min limit)
 */
export async function runOpm(tools: OlmTools, args: readonly string[], cwd: string): Promise<string> {
  const result = await runCommand(tools.opm, args, { cwd, timeoutMs: 5 * 60_000 });
  if (result.code !== 0) throw new Error(`opm ${args.join(' ')} exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  return result.stdout;
}

/**
 * OLM's binaries and CRDs, built on first use (a cold build takes minutes on a busy machine).
 * @throws Error with build.sh's output when the build fails
 */
export function olmTools(): Promise<OlmTools> {
  built ??= (async () => {
    const result = await runCommand('bash', [join(REPO_ROOT, 'tools', 'olm', 'build.sh')], { cwd: REPO_ROOT, timeoutMs: 40 * 60_000 });
    const dir = result.stdout.trim().split('\n').at(-1);
    if (result.code !== 0 || !dir) throw new Error(`tools/olm/build.sh exited ${result.code}:\n${result.stderr}`);
    return { olm: join(dir, 'olm'), catalog: join(dir, 'catalog'), opm: join(dir, 'opm'), crds: join(dir, 'crds') };
  })();
  return built;
}
