/**
 * Where the validator's WebAssembly module is: `out/validator/validator.wasm` in the installed package
 * (`npm run build` copies it there from tools/validator/build.sh's cache), or the file
 * `CDK8S_OPERATOR_VALIDATOR_WASM` names (jest.config.js sets it in this repository, whose tests run
 * the TypeScript sources and never read out/).
 *
 * In a checkout of this repository (which has tools/validator/), last: the file tools/validator/build.sh
 * writes into the cache (`${CDK8S_OPERATOR_SDK_CACHE:-~/.cache/cdk8s-operator-sdk}/validator/<k8s version>/`),
 * so `npm run synth` (which runs build.sh first) and the CLI work without `npm run build`.
 *
 * Loads from CommonJS and ESM alike (no `import.meta`): the package root is what the CLI registered
 * ({@link setValidatorPackageRoot}), else found above this file (`__filename` in CommonJS; in ESM, this
 * module's own URL in a stack trace), else from the working directory's resolution of the package's
 * own name.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Environment variable naming the validator file, ahead of every other place. */
export const VALIDATOR_WASM_ENV = 'CDK8S_OPERATOR_VALIDATOR_WASM';
/** Path of the validator inside the package. */
export const VALIDATOR_WASM_IN_PACKAGE = join('out', 'validator', 'validator.wasm');

const PACKAGE_NAME = 'cdk8s-operator-sdk';
let registeredRoot: string | undefined;

/** The CLI (ESM, which knows its package root through `import.meta`) tells where the package is. */
export function setValidatorPackageRoot(root: string): void {
  registeredRoot = root;
}

/**
 * The validator file to load, and the places looked at (for an error message when it is not there).
 * `file` is the first existing candidate, or undefined.
 */
export function locateValidatorWasm(): { readonly file: string | undefined; readonly candidates: readonly string[] } {
  const fromEnv = process.env[VALIDATOR_WASM_ENV];
  if (fromEnv) return { file: fromEnv, candidates: [`${fromEnv} (${VALIDATOR_WASM_ENV})`] };
  const roots = [registeredRoot, rootAbove(thisModuleDir()), rootFromCwd()];
  const inPackage = roots.filter((root): root is string => root !== undefined).map((root) => join(root, VALIDATOR_WASM_IN_PACKAGE));
  const built = roots.map((root) => (root === undefined ? undefined : checkoutBuild(root))).filter((file): file is string => file !== undefined);
  const candidates = [...new Set([...inPackage, ...built])];
  return { file: candidates.find((candidate) => existsSync(candidate)), candidates };
}

/** This module's directory: `__filename`'s in CommonJS, in ESM the `file:` URL of the top frame of a stack trace. */
function thisModuleDir(): string | undefined {
  if (typeof __filename === 'string') return dirname(__filename);
  const url = /(file:\/\/[^\s)]+?):\d+:\d+/.exec(new Error().stack ?? '')?.[1];
  try {
    return url === undefined ? undefined : dirname(fileURLToPath(url));
  } catch {
    return undefined;
  }
}

function rootAbove(start: string | undefined): string | undefined {
  for (let dir = start; dir !== undefined; dir = dirname(dir) === dir ? undefined : dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === PACKAGE_NAME) return dir;
  }
  return undefined;
}

function rootFromCwd(): string | undefined {
  try {
    return dirname(createRequire(join(process.cwd(), 'index.js')).resolve(`${PACKAGE_NAME}/package.json`));
  } catch {
    return rootAbove(process.cwd());
  }
}

/** In a checkout (`root` has tools/validator/go.mod): where tools/validator/build.sh writes the file. */
function checkoutBuild(root: string): string | undefined {
  const goMod = join(root, 'tools', 'validator', 'go.mod');
  if (!existsSync(goMod)) return undefined;
  const version = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v\S+)/m.exec(readFileSync(goMod, 'utf8'))?.[1];
  if (version === undefined) return undefined;
  const cacheRoot = process.env.CDK8S_OPERATOR_SDK_CACHE || join(homedir(), '.cache', 'cdk8s-operator-sdk');
  return join(cacheRoot, 'validator', version, 'validator.wasm');
}
