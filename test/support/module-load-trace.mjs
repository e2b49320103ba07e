// `node --import ./test/support/module-load-trace.mjs …`: appends the URL of every ES module the process
// loads, one per line, to the file named by $MODULE_LOAD_TRACE (test/cli/run-start-imports.test.ts).
// The hooks run on Node's loader thread (module-load-trace-hooks.mjs).
import { register } from 'node:module';

if (!process.env.MODULE_LOAD_TRACE) throw new Error('module-load-trace.mjs: set MODULE_LOAD_TRACE to the file to write');
register('./module-load-trace-hooks.mjs', import.meta.url, { data: { file: process.env.MODULE_LOAD_TRACE } });
