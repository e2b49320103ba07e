// `node --import ./test/support/module-load-trace.mjs …`: appends the URL of every ES module the process
// loads, one per line, to the file named by $MODULE_LOAD_TRACE (test/cli/run-start-imports.test.ts).
// The hooks run on Node's loader thread (module-load-trace-hooks.mjs). CommonJS modules loaded by
// `require` (which those hooks do not see on Node 20, e.g. through `createRequire`) are appended as
// file URLs when the process exits, from require.cache.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.MODULE_LOAD_TRACE;
if (!file) throw new Error('module-load-trace.mjs: set MODULE_LOAD_TRACE to the file to write');
register('./module-load-trace-hooks.mjs', import.meta.url, { data: { file } });
const { cache } = createRequire(import.meta.url);
process.on('exit', () => {
  const urls = Object.keys(cache).filter((path) => path.startsWith('/')).map((path) => pathToFileURL(path).href);
  if (urls.length > 0) appendFileSync(file, `${urls.join('\n')}\n`);
});
