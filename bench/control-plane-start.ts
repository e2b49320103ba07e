/**
 * Start-up time of the local control plane (lib/testing/control-plane.ts), binaries already built.
 *
 *   npx tsx bench/control-plane-start.ts [--runs N]
 *
 * Prints one JSON object on stdout:
 *   { coldStartMs, warmStartMs[], stopMs[], components, k8sBinDir, cpus }
 * - coldStartMs: the first startControlPlane() in this process (module loading, first build.sh check,
 *   first exec of each binary: the page cache may already be warm from earlier runs);
 * - warmStartMs: each later start in the same process (default 2 more runs);
 * - stopMs: each stop().
 * Times are wall-clock milliseconds until every component is ready (etcd, kube-apiserver /readyz,
 * kube-controller-manager and kube-scheduler /healthz, kwok and its fake Node Ready).
 */
import { cpus } from 'node:os';
import { startControlPlane } from '../lib/testing/control-plane.js';
import { benchOptions } from './bench-options.js';

const warmRuns = benchOptions({ runs: { type: 'string', default: '2' } }).number('runs');

async function timedStart(): Promise<{ startMs: number; stopMs: number; binDir: string }> {
  const t0 = performance.now();
  const plane = await startControlPlane();
  const startMs = Math.round(performance.now() - t0);
  const t1 = performance.now();
  await plane.stop();
  return { startMs, stopMs: Math.round(performance.now() - t1), binDir: plane.binaries.kubeApiServer.replace(/\/kube-apiserver$/, '') };
}

const cold = await timedStart();
const warm: number[] = [];
const stopMs = [cold.stopMs];
for (let i = 0; i < warmRuns; i++) {
  const run = await timedStart();
  warm.push(run.startMs);
  stopMs.push(run.stopMs);
}
console.log(
  JSON.stringify({
    coldStartMs: cold.startMs,
    warmStartMs: warm,
    stopMs,
    components: ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'],
    k8sBinDir: cold.binDir,
    cpus: cpus().length,
  }),
);
