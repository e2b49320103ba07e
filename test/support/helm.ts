/**
 * The Helm CLI for tests of generated charts: tools/helm/build.sh builds the pinned helm.sh/helm/v4 once
 * into the binaries cache (a warm run is instant). Never skipped: without Go the build fails, and so do
 * the tests that need Helm, in CI and elsewhere.
 */
import { join } from 'node:path';
import { type CommandResult, commandEnv, runCommand } from './run-command.js';
import { REPO_ROOT } from './sdk-tarball.js';

let built: Promise<string> | undefined;

/**
 * Absolute path of the helm binary, built on first use (a cold build takes minutes on a busy machine).
 * @throws Error with build.sh's output when the build fails
 */
export function helmBinary(): Promise<string> {
  built ??= (async () => {
    const result = await runCommand('bash', [join(REPO_ROOT, 'tools', 'helm', 'build.sh')], { cwd: REPO_ROOT, timeoutMs: 30 * 60_000 });
    const path = result.stdout.trim().split('\n').at(-1);
    if (result.code !== 0 || !path) throw new Error(`tools/helm/build.sh exited ${result.code}:\n${result.stderr}`);
    return path;
  })();
  return built;
}

/**
 * Runs `helm ARGS` with its own config, cache and data directories under `home` (nothing of the
 * user's Helm setup is read or written).
 */
export async function helm(args: readonly string[], options: { cwd: string; home: string; timeoutMs?: number }): Promise<CommandResult> {
  const env = commandEnv({
    HELM_CONFIG_HOME: join(options.home, 'config'),
    HELM_CACHE_HOME: join(options.home, 'cache'),
    HELM_DATA_HOME: join(options.home, 'data'),
    KUBECONFIG: undefined,
  });
  return runCommand(await helmBinary(), args, { cwd: options.cwd, env, timeoutMs: options.timeoutMs ?? 5 * 60_000 });
}
