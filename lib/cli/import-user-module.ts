/**
 * Loads a user's module (`--module`) the way its own project's module system expects, so that the same
 * flag works in a CommonJS project (what `cdk8s init typescript-app` makes) and in an ESM one.
 *
 * - CommonJS files (`.cts`, `.cjs`; `.ts`, `.tsx`, `.js` under a package.json without `"type": "module"`)
 *   are loaded with `require`. Through `import()`, Node 20 hands a transpiled CommonJS file a `require`
 *   that skips tsx's CommonJS hook, so a `.cts` file's own `require('./operator')` of a `.ts` file would
 *   fail with `Cannot use import statement outside a module`.
 * - ESM files (`.mts`, `.mjs`; the others under `"type": "module"`) are loaded with `import()`.
 *
 * TypeScript is compiled on the fly by tsx, whose CommonJS and ESM hooks `bin/cdk8s-operator.js`
 * registers; without them only JavaScript modules load.
 *
 * @see https://nodejs.org/api/packages.html#determining-module-system
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The module system Node uses for the file at `path` (absolute). */
export function moduleSystemOf(path: string): 'commonjs' | 'module' {
  const extension = extname(path);
  if (extension === '.cts' || extension === '.cjs') return 'commonjs';
  if (extension === '.mts' || extension === '.mjs') return 'module';
  return packageTypeOf(dirname(path));
}

/** `type` of the nearest package.json at or above `dir`; `commonjs` when none says `module`. */
function packageTypeOf(dir: string): 'commonjs' | 'module' {
  for (let current = dir; ; current = dirname(current)) {
    const manifest = join(current, 'package.json');
    if (existsSync(manifest)) {
      const { type } = JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown };
      return type === 'module' ? 'module' : 'commonjs';
    }
    if (dirname(current) === current) return 'commonjs';
  }
}

/**
 * The exports of the module at `path` (absolute): `module.exports` for CommonJS, the namespace for ESM.
 * @throws whatever loading or evaluating the module throws
 */
export async function importUserModule(path: string): Promise<Record<string, unknown>> {
  if (moduleSystemOf(path) === 'commonjs') {
    return createRequire(pathToFileURL(path))(path) as Record<string, unknown>;
  }
  return await import(pathToFileURL(path).href) as Record<string, unknown>;
}
