#!/usr/bin/env node
// The `cdk8s-operator` command.
//
// tsx's hooks load a user's operator module (`--module x.ts|.mts|.cts|.js`) with no build step, in a
// CommonJS project (ts-node style, `require`) and in an ESM one ("type": "module") alike: both the
// CommonJS and the ESM hook are registered.
//
// In a checkout of this repository the CLI runs from its TypeScript sources (lib/); the published
// package ships them compiled (out/esm/) and no lib/.
import { existsSync } from 'node:fs';
import { register as registerCommonJs } from 'tsx/cjs/api';
import { register as registerEsm } from 'tsx/esm/api';

registerCommonJs();
registerEsm();
const sources = new URL('../lib/cli/main.ts', import.meta.url);
await import(existsSync(sources) ? sources.href : new URL('../out/esm/cli/main.js', import.meta.url).href);
