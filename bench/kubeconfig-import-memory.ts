/**
 * What loading a kubeconfig costs at start (issue 36 item 5, under issue 33's start-memory goal): the
 * resident set after importing each candidate, each in a fresh `node` process. Not a test: it prints
 * figures.
 *
 * ```sh
 * npx tsx bench/kubeconfig-import-memory.ts [--reps 5]
 * ```
 *
 * - `js-yaml`, client-node's `dist/config_types.js`: what our loader (lib/cli/kubeconfig-loader.ts) takes
 *   from client-node;
 * - client-node's `dist/config.js` (its `KubeConfig`, deep-imported) and its main entry: `config.js`
 *   imports `./gen/index.js`, the generated API and models, so the deep import costs what the entry does;
 * - lib/cli/kubeconfig-loader.ts itself, under tsx (against tsx alone).
 *
 * Each row: the median over `--reps` processes of RSS after the import minus RSS before it (after a GC
 * each time, `--expose-gc`), and the import's wall time, in MB (2²⁰ bytes) and ms.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchOptions } from './bench-options.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const reps = benchOptions({ reps: { type: 'string', default: '5' } }).number('reps');

/** Prints `{"rss":…,"delta":…,"ms":…}` after importing argv[1] ('none': nothing). */
const probe = `
const what = process.argv[1];
globalThis.gc();
const before = process.memoryUsage().rss;
const t0 = performance.now();
if (what !== 'none') await import(what);
const ms = performance.now() - t0;
globalThis.gc();
const rss = process.memoryUsage().rss;
console.log(JSON.stringify({ rss, delta: rss - before, ms }));
`;

function measure(specifier: string, tsx: boolean): { delta: number; ms: number } {
  const runs = Array.from({ length: reps }, () => {
    const args = ['--expose-gc', ...(tsx ? ['--import', 'tsx'] : []), '--input-type=module', '-e', probe, specifier];
    return JSON.parse(execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1)!) as { delta: number; ms: number };
  });
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { delta: median(runs.map((r) => r.delta)), ms: median(runs.map((r) => r.ms)) };
}

const rows: [string, string, boolean][] = [
  ['nothing (node)', 'none', false],
  ['js-yaml', 'js-yaml', false],
  ['client-node dist/config_types.js', '@kubernetes/client-node/dist/config_types.js', false],
  ['client-node dist/config.js (KubeConfig)', '@kubernetes/client-node/dist/config.js', false],
  ['client-node (main entry)', '@kubernetes/client-node', false],
  ['nothing (tsx)', 'none', true],
  ['lib/cli/kubeconfig-loader.ts (tsx)', `${root}lib/cli/kubeconfig-loader.ts`, true],
];

console.log(`${'import'.padEnd(44)} ${'+RSS MB'.padStart(8)} ${'ms'.padStart(6)}   (median of ${reps})`);
for (const [label, specifier, tsx] of rows) {
  const { delta, ms } = measure(specifier, tsx);
  console.log(`${label.padEnd(44)} ${(delta / 2 ** 20).toFixed(1).padStart(8)} ${ms.toFixed(0).padStart(6)}`);
}
