/**
 * The package as users get it: `npm pack` of this checkout, made once per jest run.
 *
 * The pack runs in a staging copy (sources, bin, tools, manifests; node_modules linked), so its build
 * (`prepack` → out/) never touches the checkout a developer is working in.
 */
import { execFile } from 'node:child_process';
import { cpSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { oncePerRun } from './once-per-run.js';

const run = promisify(execFile);

/** The repository root (test/support/../..). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/** What the staging copy takes from the checkout: everything `npm pack` reads. */
const STAGED = ['package.json', 'package-lock.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.build-cjs.json', 'bin', 'lib', 'tools'];

/**
 * Absolute path of this run's SDK tarball (`cdk8s-operator-sdk-<version>.tgz`).
 * @throws Error with npm's output when the build or pack fails
 */
export function sdkTarball(): Promise<string> {
  return oncePerRun('sdk-pack', async (stage) => {
    for (const entry of STAGED) cpSync(join(REPO_ROOT, entry), join(stage, entry), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', stage], { cwd: stage, maxBuffer: 64 * 1024 * 1024 });
    const [result] = JSON.parse(stdout) as Array<{ filename: string }>;
    return join(stage, result.filename);
  });
}
