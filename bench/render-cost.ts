/**
 * The CPU one render of bench:peers' memcached operator costs, with no API server: how much of `ours`'
 * CPU converging is render at all, and of that the work of the user's constructs and cdk8s' synthesis
 * (what any cdk8s operator's render does) against the SDK's own around them. On the compiled operator
 * `ours` runs (bench/.out, built first by {@link buildOurs}), with `ours`' node flag:
 *
 *   npm run bench:render-cost -- [--renders 2000] [--warm-up 600]
 *
 * Two kinds of render of the same CRs (`mc-<i>`, one replica, as bench:peers creates them), each timed
 * by `process.cpuUsage` (user + system, every thread of this process: what bench:peers counts of an
 * operator), alternating in 4 rounds after a warm-up of each:
 * - `render`: `renderCustomResource`, what `run` calls for a reconcile that renders (parse and validate
 *   the CR, resolve its related references, the user's `render()`, cdk8s' `chart.toJson()`, then
 *   stamp, check and sort the children);
 * - `constructsAndSynthesis`: the user's `render()` into a cdk8s Chart and `chart.toJson()` alone, on
 *   the CR already parsed.
 * Prints one JSON object: `{ renders, msPerRender: { render, constructsAndSynthesis }, rounds }`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { benchOptions } from './bench-options.js';
import { OURS_OUT, buildOurs } from './build-ours.js';

const { number } = benchOptions({ renders: { type: 'string', default: '2000' }, 'warm-up': { type: 'string', default: '600' } });
const RENDERS = number('renders');
const WARM_UP = number('warm-up');

await buildOurs();
const compiled = (path: string) => import(pathToFileURL(join(OURS_OUT, path)).href);
const { renderCustomResource } = (await compiled('lib/operator/render/render-children.js')) as { renderCustomResource: (operator: unknown, cr: unknown, inputs: object) => unknown };
type Memcached = { parseCustomResource(cr: unknown): { metadata: { name: string } }; render(cr: unknown, scope: Construct, context: unknown): void };
const { MemcachedOperator } = (await compiled('operators/memcached/index.js')) as { MemcachedOperator: new (scope: Construct) => Memcached };

const operator = new MemcachedOperator(new App());
const crs = Array.from({ length: RENDERS }, (_, i) => ({
  apiVersion: 'cache.example.com/v1beta1',
  kind: 'Memcached',
  metadata: { name: `mc-${i}`, namespace: 'bench', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, generation: 1, resourceVersion: String(1000 + i) },
  spec: { replicas: 1 },
}));
const parsed = crs.map((cr) => operator.parseCustomResource(cr));
const context = { observed: [], related: { pods: [] } };

const kinds: Record<string, (i: number) => unknown> = {
  render: (i) => renderCustomResource(operator, crs[i], {}),
  constructsAndSynthesis: (i) => {
    const chart = new Chart(new App(), parsed[i]!.metadata.name);
    operator.render(parsed[i], chart, context);
    return chart.toJson();
  },
};

/** CPU milliseconds of `count` calls of `kind`. */
function cpuMs(kind: string, count: number): number {
  let sink = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) sink += kinds[kind]!(i % RENDERS) ? 1 : 0;
  const used = process.cpuUsage(before);
  if (sink !== count) throw new Error(`${kind}: a render returned nothing`);
  return (used.user + used.system) / 1000;
}

for (const kind of Object.keys(kinds)) cpuMs(kind, WARM_UP);
const rounds: Record<string, number>[] = [];
for (let round = 0; round < 4; round++) {
  const order = round % 2 === 0 ? Object.keys(kinds) : Object.keys(kinds).reverse();
  const ms: Record<string, number> = {};
  for (const kind of order) ms[kind] = cpuMs(kind, RENDERS);
  rounds.push(Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, Number((v / RENDERS).toFixed(3))])));
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
};
const msPerRender = Object.fromEntries(Object.keys(kinds).map((k) => [k, Number(median(rounds.map((r) => r[k]!)).toFixed(3))]));
console.log(JSON.stringify({ renders: RENDERS, msPerRender, rounds }));
