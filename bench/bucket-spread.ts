/**
 * How evenly the bucket assignments (lib/runtime/sharding/rendezvous.ts) spread a ring's buckets over its
 * replicas, side by side: plain rendezvous (`assignBuckets`, what replicas before 2026-12-04 compute)
 * and the balanced one (`assignBucketsBalanced`, bounded loads): the share of the buckets that the
 * replica holding the most gets, over many random sets of replica names (as a Deployment's pods are
 * named: a random suffix per pod), and how many buckets move when one more replica joins, against the
 * even share of the joiner. Not a test: it prints figures. Pure computation: no control plane.
 *
 * ```
 * npm run bench:bucket-spread -- [--replicas 3] [--rings 2000] [--buckets 16,32,64,128]
 * ```
 *
 * Per bucket count: the largest replica's share (median, 90th and 99th percentile) against the even
 * share (1 / replicas), and the watches per replica that the per-bucket child caches cost with 2 child
 * kinds (held buckets × 2: docs/how-to/sharding.md, "What it costs").
 */
import { randomBytes } from 'node:crypto';
import { assignBuckets, assignBucketsBalanced } from '../lib/runtime/sharding/rendezvous.js';
import { benchOptions, finiteNumber } from './bench-options.js';

const { values, number } = benchOptions({ replicas: { type: 'string', default: '3' }, rings: { type: 'string', default: '2000' }, buckets: { type: 'string', default: '16,32,64,128' } });
const replicas = number('replicas');
const rings = number('rings');
const bucketCounts = values.buckets.split(',').map((count) => finiteNumber('buckets', count));

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

process.stdout.write(`${replicas} replicas, ${rings} random rings each; even share ${(1 / replicas).toFixed(3)}\n`);
process.stdout.write('assignment  buckets  largest share: median    p90    p99   moved on a join / even share (mean)   watches per replica (2 child kinds)\n');
const results = [];
for (const [name, assign] of [['plain', assignBuckets], ['balanced', assignBucketsBalanced]] as const) {
  for (const buckets of bucketCounts) {
    const largest: number[] = [];
    let moved = 0;
    for (let ring = 0; ring < rings; ring++) {
      const members = Array.from({ length: replicas }, () => `operator-${randomBytes(5).toString('hex')}`);
      const owners = assign(buckets, members);
      largest.push(Math.max(...members.map((m) => owners.filter((o) => o === m).length)) / buckets);
      const joined = assign(buckets, [...members, `operator-${randomBytes(5).toString('hex')}`]);
      moved += joined.filter((o, b) => o !== owners[b]).length / (buckets / (replicas + 1));
    }
    largest.sort((a, b) => a - b);
    const figures = { assignment: name, buckets, median: quantile(largest, 0.5), p90: quantile(largest, 0.9), p99: quantile(largest, 0.99), movedOnJoin: moved / rings, watchesPerReplica: Math.round((buckets / replicas) * 2) };
    results.push(figures);
    process.stdout.write(`${name.padEnd(10)}  ${String(buckets).padStart(7)}  ${figures.median.toFixed(3).padStart(20)} ${figures.p90.toFixed(3).padStart(6)} ${figures.p99.toFixed(3).padStart(6)}   ${figures.movedOnJoin.toFixed(2).padStart(35)}   ${String(figures.watchesPerReplica).padStart(4)}\n`);
  }
}
process.stdout.write(`${JSON.stringify({ replicas, rings, results })}\n`);
