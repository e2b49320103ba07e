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
 * registers for a TypeScript `--module` (and always in a checkout). A JavaScript module loads without
 * them, so compiled production code pays for no loader; when such a module turns out to import
 * TypeScript (its load fails with a module-not-found or unknown-extension error), the hooks are
 * registered and it is loaded once more.
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
  try {
    return await load(path, '');
  } catch (err) {
    if (!NEEDS_TYPESCRIPT.has((err as { code?: string }).code ?? '') || !(await registerTypeScript())) throw err;
    // A failed ESM graph stays cached under its URL: load the entry under another one.
    return await load(path, '?typescript');
  }
}

async function load(path: string, query: string): Promise<Record<string, unknown>> {
  if (moduleSystemOf(path) === 'commonjs') {
    return createRequire(pathToFileURL(path))(path) as Record<string, unknown>;
  }
  return await import(pathToFileURL(path).href + query) as Record<string, unknown>;
}

/** Errors of a JavaScript module that imports a TypeScript file without a TypeScript loader. */
const NEEDS_TYPESCRIPT = new Set(['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND', 'ERR_UNKNOWN_FILE_EXTENSION']);

/** Set by bin/cdk8s-operator.js (and here) once tsx's hooks are registered. */
const TYPESCRIPT_REGISTERED = Symbol.for('cdk8s-operator-sdk.typescript-registered');

/** Registers tsx's CommonJS and ESM hooks unless they are; @returns false when they already were. */
async function registerTypeScript(): Promise<boolean> {
  const global = globalThis as { [TYPESCRIPT_REGISTERED]?: boolean };
  if (global[TYPESCRIPT_REGISTERED]) return false;
  const [{ register: registerCommonJs }, { register: registerEsm }] = await Promise.all([import('tsx/cjs/api'), import('tsx/esm/api')]);
  registerCommonJs();
  registerEsm();
  global[TYPESCRIPT_REGISTERED] = true;
  return true;
}
