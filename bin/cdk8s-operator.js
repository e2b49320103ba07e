#!/usr/bin/env node
// The `cdk8s-operator` command.
//
// tsx's hooks load a user's operator module (`--module x.ts|.mts|.cts`) with no build step, in a
// CommonJS project (ts-node style, `require`) and in an ESM one ("type": "module") alike: both the
// CommonJS and the ESM hook are registered.
//
// Where the SDK is installed as a package it runs compiled (out/esm/), and tsx is registered only when
// `--module` names a TypeScript file: with a `.js` module no TypeScript loader is loaded at all (faster
// start, less memory) unless that module turns out to import TypeScript (import-user-module.ts). In a
// checkout of this repository the CLI runs from its TypeScript sources (lib/), always under tsx, whose
// ESM hook gets the checkout's tsconfig.json whatever the working directory: its `paths` resolve the
// examples' `import … from 'cdk8s-operator-sdk'` to lib/, the modules this CLI runs (one copy of each,
// never out/).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const sources = new URL('../lib/cli/main.ts', import.meta.url);
const fromSources = existsSync(sources);

/** The value of `--module` (`--module x` or `--module=x`), if any. */
function moduleFlag(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--module') return argv[i + 1];
    if (argv[i].startsWith('--module=')) return argv[i].slice('--module='.length);
  }
  return undefined;
}

if (fromSources || /\.(c|m)?tsx?$/.test(moduleFlag(process.argv.slice(2)) ?? '')) {
  const [{ register: registerCommonJs }, { register: registerEsm }] = await Promise.all([import('tsx/cjs/api'), import('tsx/esm/api')]);
  registerCommonJs();
  registerEsm(fromSources ? { tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) } : undefined);
  // lib/cli/import-user-module.ts registers them itself for a .js module that imports TypeScript.
  globalThis[Symbol.for('cdk8s-operator-sdk.typescript-registered')] = true;
}
await import(fromSources ? sources.href : new URL('../out/esm/cli/main.js', import.meta.url).href);
