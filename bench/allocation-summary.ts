/**
 * Summarizes an allocation profile (`.heapprofile` from bench/allocation-sampler.mjs, or `--heap-prof`)
 * for bench/PROFILE.md: bytes sampled by function, self and inclusive (the runtime's and the operator's
 * functions), and with `--callers NAME` the call paths that allocate inside the functions named NAME.
 *
 * ```
 * npx tsx bench/allocation-summary.ts FILE.heapprofile [--top 30] [--callers firstDifference] [--depth 3]
 * ```
 */
import { readFileSync } from 'node:fs';
import { benchOptions } from './bench-options.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: ProfileNode[];
}

function main(): void {
  const { values, positionals, number } = benchOptions({ top: { type: 'string', default: '30' }, callers: { type: 'string', default: '' }, depth: { type: 'string', default: '3' } }, { allowPositionals: true });
  const [file] = positionals;
  if (!file) throw new Error('usage: allocation-summary FILE.heapprofile [--top N] [--callers NAME] [--depth N]');
  const top = number('top');
  const callersOf = values.callers;
  const depth = number('depth');
  const head = (JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode }).head;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const callers = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);
  let total = 0;
  // Iterative walk (the profile's trees are deep): each node with the functions above it.
  const stack: { node: ProfileNode; above: string[] }[] = [{ node: head, above: [] }];
  while (stack.length > 0) {
    const { node, above } = stack.pop()!;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(lib|node_modules|operators)\//, '$1/')}:${lineNumber + 1}`;
    const path = [...above, name];
    total += node.selfSize;
    add(self, name, node.selfSize);
    for (const fn of new Set(path)) add(inclusive, fn, node.selfSize);
    if (callersOf && functionName === callersOf) add(callers, path.slice(-depth - 1).reverse().join(' < '), node.selfSize);
    for (const child of node.children ?? []) stack.push({ node: child, above: path });
  }
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1).padStart(7)} MB`;
  const list = (map: Map<string, number>, keep: (name: string) => boolean = () => true) =>
    [...map].filter(([name]) => keep(name)).sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, bytes]) => `  ${mb(bytes)} ${name}`).join('\n');
  console.log(`sampled ${mb(total).trim()} allocated`);
  console.log(`self:\n${list(self)}`);
  console.log(`inclusive (lib/, operators/):\n${list(inclusive, (name) => / (lib|operators)\//.test(name))}`);
  if (callersOf) console.log(`allocating in ${callersOf}, by caller:\n${list(callers)}`);
}

main();
