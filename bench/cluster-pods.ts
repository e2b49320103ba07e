/**
 * The memcached operator with 0 CRs in a cluster full of other Pods (issue 20, item 1: "with 0 CRs in
 * a cluster of 20 000 Pods, RSS grows by less than 10 MB"; before related kinds were scoped, its Pod
 * cache grew the heap by about 100 MiB and RSS from 123 to 266 MiB). Not a test: it prints figures.
 *
 * ```
 * npm run bench:cluster-pods -- [--pods 20000] [--in-flight 100]
 * ```
 *
 * One fresh local control plane with kwok fake nodes (250 Pods each) and no scheduler: every Pod is
 * bound to a fake node by `spec.nodeName` (kwok marks it Running), created `--in-flight` requests at a
 * time, in the namespace `crowd`, labelled as another workload's (`app: unrelated`), 0 Memcacheds.
 * The operator runs as production does (bench/build-ours.ts: compiled, `run --operators
 * memcached-operator`, all namespaces, plain-HTTP metrics) twice on that control plane: `empty`, before
 * any Pod exists, and `pods`, once all of them exist and kwok has marked them Running. Each time, once
 * `/readyz` is ok and its CPU time stopped moving (< 10 ms per 500 ms), it is measured: RSS of its
 * process (VmRSS), and from its metrics prom-client's `nodejs_heap_size_used_bytes` (no forced GC: a
 * few MiB of noise), and the time from its start to ready. The figure: `pods` − `empty`, against the goal of
 * < 10 MB RSS growth. bench/related-scope.ts measures the same in-process with a forced GC, and the
 * unscoped cache's cost per Pod.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { freePort } from '../test/support/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../lib/testing/control-plane.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';
import { OURS_OUT, buildOurs } from './build-ours.js';
import { statCpuSeconds } from './control-plane-cpu.js';
import { waitFor, stopChild } from './wait-for.js';

const { number } = benchOptions({ pods: { type: 'string', default: '20000' }, 'in-flight': { type: 'string', default: '100' } });
const PODS = number('pods');
const IN_FLIGHT = number('in-flight');
const PODS_PER_NODE = 250;
const GOAL_RSS_GROWTH_BYTES = 10e6;



async function procStatus(pid: number): Promise<{ rssBytes: number; cpuSeconds: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssBytes: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024, cpuSeconds: statCpuSeconds(await readFile(`/proc/${pid}/stat`, 'utf8')) };
}

/** Sum of the samples of `name` whose labels contain every `where` pair. */
function metric(text: string, name: string, where: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(where).some(([k, v]) => !line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

interface Measure {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly startSeconds: number;
}

/** Starts the compiled operator, waits for ready and idle, measures, stops it. */
async function measureOperator(plane: ControlPlane, logPath: string): Promise<Measure> {
  const metricsPort = await freePort();
  const probePort = await freePort();
  const child: ChildProcess = spawn(process.execPath, [
    join(OURS_OUT, 'lib/cli/main.js'), 'run', '--module', join(OURS_OUT, 'operators/index.js'),
    '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
    '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--metrics-secure=false',
    '--health-probe-bind-address', `127.0.0.1:${probePort}`, '--log-level', 'info',
  ], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  const log = createWriteStream(logPath);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let exited = false;
  child.once('exit', () => (exited = true));
  const t0 = performance.now();
  try {
    await waitFor('operator ready', async () => {
      if (exited) throw new Error(`the operator exited; log: ${logPath}`);
      try {
        return (await fetch(`http://127.0.0.1:${probePort}/readyz`)).ok;
      } catch {
        return false;
      }
    }, 300_000);
    const startSeconds = (performance.now() - t0) / 1000;
    let last = (await procStatus(child.pid!)).cpuSeconds;
    await waitFor('operator idle', async () => {
      const now = (await procStatus(child.pid!)).cpuSeconds;
      const quiet = now - last < 0.01;
      last = now;
      return quiet;
    }, 120_000, 500);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const { rssBytes } = await procStatus(child.pid!);
    return {
      rssBytes,
      heapUsedBytes: metric(metrics, 'nodejs_heap_size_used_bytes'),
      startSeconds: Number(startSeconds.toFixed(1)),
    };
  } finally {
    if (!exited) {
      await stopChild(child, 10_000);
    }
  }
}

async function main(): Promise<void> {
  await buildOurs();
  const nodes = Math.ceil(PODS / PODS_PER_NODE);
  const plane = await startControlPlane({ fakeNodes: nodes, podsPerNode: PODS_PER_NODE, components: { scheduler: false } });
  const dir = await mkdtemp(join(tmpdir(), 'bench-cluster-pods-'));
  let failed = true;
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-cluster-pods' });
  try {
    const crd = join(dir, 'memcached-crd.json');
    await writeFile(crd, JSON.stringify(new MemcachedOperator(new App()).customResourceDefinition.toJson()));
    await installCRDs(plane.kubeConfig, [crd]);
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crowd' } } });
    await waitFor('the default ServiceAccount in crowd', async () => {
      try {
        await admin.request('GET', '/api/v1/namespaces/crowd/serviceaccounts/default');
        return true;
      } catch {
        return false;
      }
    }, 120_000);

    const empty = await measureOperator(plane, join(dir, 'empty.log'));
    process.stderr.write(`[bench:cluster-pods] empty cluster: ${JSON.stringify(empty)}\n`);

    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < PODS) {
        const i = next++;
        await admin.request('POST', '/api/v1/namespaces/crowd/pods', {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `pod-${i}`, labels: { app: 'unrelated', 'pod-template-hash': 'abcdef1234' } },
            spec: {
              nodeName: plane.nodeNames[i % plane.nodeNames.length],
              containers: [{ name: 'app', image: 'registry.example.com/app:1.0', ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'production' }] }],
            },
          },
        });
      }
    }));
    const createSeconds = (performance.now() - t0) / 1000;
    process.stderr.write(`[bench:cluster-pods] ${PODS} Pods created in ${createSeconds.toFixed(1)} s\n`);
    // every Pod Running (kwok's status writes are over), asked without listing 20 000 Pods each time
    let running = true;
    await waitFor(`${PODS} Pods Running`, async () => {
      const list = await admin.request<{ items: unknown[] }>('GET', '/api/v1/namespaces/crowd/pods', { query: { fieldSelector: 'status.phase!=Running', limit: '1' } });
      return list.items.length === 0;
    }, 30 * 60_000, 5000).catch((err: Error) => {
      running = false;
      process.stderr.write(`[bench:cluster-pods] ${err.message}; measuring anyway\n`);
    });
    const runningSeconds = (performance.now() - t0) / 1000;

    const pods = await measureOperator(plane, join(dir, 'pods.log'));
    process.stderr.write(`[bench:cluster-pods] ${PODS} Pods: ${JSON.stringify(pods)}\n`);
    const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
    const rssGrowth = pods.rssBytes - empty.rssBytes;
    const report = {
      pods: PODS,
      fakeNodes: nodes,
      createSeconds: Number(createSeconds.toFixed(1)),
      allRunningSeconds: Number(runningSeconds.toFixed(1)),
      allRunning: running,
      empty,
      withPods: pods,
      rssGrowthBytes: rssGrowth,
      heapGrowthBytes: pods.heapUsedBytes - empty.heapUsedBytes,
      goal: { rssGrowthUnderBytes: GOAL_RSS_GROWTH_BYTES, met: rssGrowth < GOAL_RSS_GROWTH_BYTES },
      loadAverageAtEnd: load,
    };
    const mb = (v: number) => (v / 1e6).toFixed(1);
    console.log(`| memcached operator, 0 CRs | empty cluster | ${PODS} other Pods | growth |`);
    console.log('|:--|--:|--:|--:|');
    console.log(`| RSS (MB) | ${mb(empty.rssBytes)} | ${mb(pods.rssBytes)} | ${mb(rssGrowth)} |`);
    console.log(`| heap used (MB, no forced GC) | ${mb(empty.heapUsedBytes)} | ${mb(pods.heapUsedBytes)} | ${mb(report.heapGrowthBytes)} |`);
    console.log(`| start to ready (s) | ${empty.startSeconds} | ${pods.startSeconds} | |`);
    console.log();
    console.log(`goal: RSS grows by less than 10 MB with ${PODS} Pods: ${mb(rssGrowth)} MB ${report.goal.met ? '(met)' : '(MISSED)'}`);
    console.log(`${PODS} Pods created in ${report.createSeconds} s (${IN_FLIGHT} in flight), ${running ? 'all Running' : 'NOT all Running'} after ${report.allRunningSeconds} s; load average at the end: ${load}`);
    console.log(JSON.stringify(report, null, 2));
    failed = false;
  } finally {
    admin.close();
    await plane.stop();
    if (failed) process.stderr.write(`[bench:cluster-pods] failed; the operator's logs stay in ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

await main();
