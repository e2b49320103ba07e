// `node --import ./test/support/module-load-trace.mjs …`: appends the URL of every ES module the process
// loads, one per line, to the file named by $MODULE_LOAD_TRACE (test/cli/run-start-imports.test.ts).
// The hooks run on this thread (Node ≥ 22.15) or on Node's loader thread (module-load-trace-hooks.mjs). CommonJS modules loaded by
// `require` (which those hooks do not see on Node 20, e.g. through `createRequire`) are appended as
// file URLs when the process exits, from require.cache.
import { appendFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.MODULE_LOAD_TRACE;
if (!file) throw new Error('module-load-trace.mjs: set MODULE_LOAD_TRACE to the file to write');
if (typeof nodeModule.registerHooks === 'function') {
  // Node ≥ 22.15: synchronous hooks on this thread (`module.register`, which starts the loader thread,
  // is deprecated from Node 26 on: DEP0205, a warning on stderr the tests read).
  nodeModule.registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(file, `${url}\n`);
      return nextLoad(url, context);
    },
  });
} else {
  nodeModule.register('./module-load-trace-hooks.mjs', import.meta.url, { data: { file } });
}
const { createRequire } = nodeModule;
const { cache } = createRequire(import.meta.url);
process.on('exit', () => {
  const urls = Object.keys(cache).filter((path) => path.startsWith('/')).map((path) => pathToFileURL(path).href);
  if (urls.length > 0) appendFileSync(file, `${urls.join('\n')}\n`);
});
