/**
 * Where this package is installed: the directory of the `package.json` named `cdk8s-operator-sdk` at or
 * above this file. The same answer from the sources (`lib/`) and from the compiled package
 * (`out/esm/`), whose depths differ. ESM only (`import.meta`): used by the CLI and the control plane.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's name in its package.json. */
export const PACKAGE_NAME = 'cdk8s-operator-sdk';

let cached: string | undefined;

/**
 * Absolute path of the package root.
 * @throws Error when no package.json named {@link PACKAGE_NAME} is found above this file
 */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === PACKAGE_NAME) {
      cached = dir;
      return dir;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json named ${PACKAGE_NAME} above ${start}`);
  }
}

/** The package's version, from its package.json (e.g. `0.1.0`). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
