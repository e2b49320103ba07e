/**
 * Summarizes a V8 heap snapshot (`.heapsnapshot`, e.g. from `npm run bench:peers -- --heap-snapshot-dir
 * DIR`) for bench/PROFILE.md: self size by node type and constructor name, largest first. Prints JSON.
 *
 * ```
 * npx tsx bench/heap-summary.ts FILE.heapsnapshot [--top 25]
 * ```
 */
import { readFileSync } from 'node:fs';
import { benchOptions } from './bench-options.js';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: (string[] | string)[] }; node_count: number };
  nodes: number[];
  strings: string[];
}

function main(): void {
  const { positionals, number } = benchOptions({ top: { type: 'string', default: '25' } }, { allowPositionals: true });
  const [file] = positionals;
  if (!file) throw new Error('usage: heap-summary FILE.heapsnapshot [--top N]');
  const top = number('top');
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0] as string[];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byType = new Map<string, number>();
  const byName = new Map<string, { bytes: number; count: number }>();
  let total = 0;
  for (let n = 0; n < snap.nodes.length; n += width) {
    const type = types[snap.nodes[n + typeAt]!]!;
    const size = snap.nodes[n + sizeAt]!;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    const name = type === 'object' || type === 'closure' ? `${type}:${snap.strings[snap.nodes[n + nameAt]!]}` : type;
    const entry = byName.get(name) ?? { bytes: 0, count: 0 };
    entry.bytes += size;
    entry.count++;
    byName.set(name, entry);
  }
  const mb = (b: number) => Number((b / 1e6).toFixed(1));
  console.log(JSON.stringify({
    file,
    totalSelfMB: mb(total),
    byType: Object.fromEntries([...byType.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, mb(v)])),
    top: [...byName.entries()].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top).map(([name, v]) => ({ name, mb: mb(v.bytes), count: v.count })),
  }, null, 2));
}

main();
