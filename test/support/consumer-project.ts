/**
 * Consumer projects: a user's own project with the SDK installed from its tarball, as users get it.
 * The fixtures live in test/consumers/<name>/, each with a lock file that pins its dependencies from the
 * registry; the SDK itself is added with `npm install --no-save <tarball>` (its tarball changes with
 * every build, so no lock file can pin it).
 */
import { cpSync, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { oncePerRun } from './once-per-run.js';
import { type CommandResult, commandEnv, runCommand } from './run-command.js';
import { REPO_ROOT, sdkTarball } from './sdk-tarball.js';

/**
 * Runs `command args` in `cwd` with this process's environment plus `env` (an `undefined` value removes
 * a variable), less jest's own settings; never throws for a non-zero exit.
 */
export function runIn(cwd: string, command: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CommandResult> {
  return runCommand(command, args, { cwd, env: commandEnv({ ...AS_A_USER, ...env }) });
}

/**
 * A user's machine: the children's validator comes from the installed package (not the file jest.config.js
 * names for the repository's tests), and no Go on the PATH (the package must not need it).
 */
const AS_A_USER: Record<string, string | undefined> = {
  CDK8S_OPERATOR_VALIDATOR_WASM: undefined,
  PATH: (process.env.PATH ?? '').split(delimiter).filter((dir) => !existsSync(join(dir, 'go'))).join(delimiter),
};

/**
 * The directory of consumer project `name` (test/consumers/<name>), copied into this run's directory,
 * installed from its lock file (`npm ci`) plus the SDK tarball. Installed once per jest run.
 *
 * @throws Error with npm's output when an install fails
 */
export function consumerProject(name: string): Promise<string> {
  return oncePerRun(`consumer-${name}`, async (dir) => {
    const tarball = await sdkTarball();
    cpSync(join(REPO_ROOT, 'test', 'consumers', name), dir, { recursive: true });
    for (const args of [['ci'], ['install', '--no-save', tarball]]) {
      const result = await runIn(dir, 'npm', [...args, '--no-audit', '--no-fund']);
      if (result.code !== 0) throw new Error(`npm ${args.join(' ')} in ${dir} exited ${result.code}:\n${result.stderr}`);
    }
    return dir;
  });
}
