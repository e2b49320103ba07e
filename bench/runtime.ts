/**
 * Benchmark of the reconcile runtime on the local control plane (not a test). Prints one JSON object.
 *
 * ```
 * npx tsx bench/runtime.ts [--crs 500] [--idle-seconds 60] [--changes 50] [--renders 2000] [--max-concurrent-reconciles 1]
 * ```
 *
 * - `convergeSeconds`: time from creating N Memcached CRs (1 replica) to all of them Ready=True (the
 *   controller manager and scheduler run with raised client rate limits, so their 20/50 qps defaults
 *   don't dominate the figure);
 * - `idleWrites`: write requests (non-GET) the operator sent during a quiet window after convergence,
 *   and `idleServerWrites`, the API server's apiserver_request_total for write verbs on memcacheds,
 *   deployments and services in that window (cross-check; other controllers don't write those once settled);
 * - `peakRssBytes`: peak resident set size of this process (operator + bench client);
 * - `specChangeToChildMs`: p50/p99 from a spec change (PATCH spec.replicas) to the Deployment showing the new
 *   replicas in a watch;
 * - `rendersPerSecond`: `renderChildren` of a Memcached CR, in-process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import type { CustomResource } from '../lib/operator/custom-resource.js';
import { renderChildren } from '../lib/operator/render/render-children.js';
import { ApiClient, type RequestRecord } from '../lib/runtime/client/api-client.js';
import { Informer } from '../lib/runtime/cache/informer.js';
import { Manager } from '../lib/runtime/manager.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';

const { number } = benchOptions({
  crs: { type: 'string', default: '500' },
  'idle-seconds': { type: 'string', default: '60' },
  changes: { type: 'string', default: '50' },
  renders: { type: 'string', default: '2000' },
  'max-concurrent-reconciles': { type: 'string', default: '1' },
});
const N = number('crs');
const IDLE_SECONDS = number('idle-seconds');
const CHANGES = Math.min(number('changes'), N);
const RENDERS = number('renders');
const MAX_CONCURRENT = number('max-concurrent-reconciles');
const NAMESPACE = 'bench';
const base = `/apis/cache.example.com/v1beta1/namespaces/${NAMESPACE}/memcacheds`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function serverWrites(plane: { kubeConfig: import('@kubernetes/client-node').KubeConfig }, resources: string[]): Promise<number> {
  const res = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/metrics');
  let sum = 0;
  for (const line of String(res.body).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '';
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    if (resources.includes(resource) && ['APPLY', 'PATCH', 'POST', 'PUT', 'DELETE'].includes(verb)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function main(): Promise<void> {
  const operator = new MemcachedOperator(new App());

  // renders per second, in-process
  const sample = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'r', namespace: 'x', uid: '00000000-0000-4000-8000-000000000001' }, spec: { replicas: 3 } };
  const renderStart = performance.now();
  for (let i = 0; i < RENDERS; i++) renderChildren(operator, { ...sample, metadata: { ...sample.metadata, name: `r${i}` } } as CustomResource);
  const rendersPerSecond = Math.round(RENDERS / ((performance.now() - renderStart) / 1000));

  // The default /24 service range holds ~250 ClusterIPs and one fake node 250 Pods; every Memcached
  // has a Service and a Pod. kube-controller-manager's and kube-scheduler's own client rate limits (20 and 50 qps by default) would
  // otherwise be what the convergence figure measures: with them, 500 CRs took 121 s; raised, 25 s.
  const fastClient = ['--kube-api-qps=500', '--kube-api-burst=1000'];
  const plane = await startControlPlane({
    fakeNodes: Math.ceil((N + 10) / 250),
    serviceClusterIpRange: '10.0.0.0/16',
    extraArgs: { controllerManager: fastClient, scheduler: fastClient },
  });
  const dir = await mkdtemp(join(tmpdir(), 'bench-runtime-'));
  const requests: RequestRecord[] = [];
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench' });
  let manager: Manager | undefined;
  const deployments = new Informer({
    client: admin,
    resource: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
    namespace: NAMESPACE,
  });
  try {
    await writeFile(join(dir, 'crd.json'), JSON.stringify(operator.customResourceDefinition.toJson()));
    await installCRDs(plane.kubeConfig, [join(dir, 'crd.json')]);
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
    manager = new Manager({
      kubeConfig: plane.kubeConfig,
      operators: [operator],
      maxConcurrentReconciles: MAX_CONCURRENT,
      logger: pino({ level: 'warn' }, pino.destination(2)),
      onRequest: (r) => requests.push(r),
    });
    await manager.start();
    deployments.start();
    await deployments.waitForSync();

    // converge N CRs
    const t0 = performance.now();
    for (let i = 0; i < N; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, N - i) }, (_, j) =>
          admin.request('POST', base, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: `mc-${i + j}`, namespace: NAMESPACE }, spec: { replicas: 1 } } }),
        ),
      );
    }
    for (;;) {
      const list = await admin.request<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>('GET', base);
      const ready = list.items.filter((cr) => cr.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
      if (ready === N) break;
      if (performance.now() - t0 > 30 * 60_000) throw new Error(`only ${ready}/${N} Ready after 30 min`);
      await sleep(500);
    }
    const convergeSeconds = (performance.now() - t0) / 1000;

    // idle window
    await sleep(2000);
    const before = requests.length;
    const serverBefore = await serverWrites(plane, ['memcacheds', 'deployments', 'services']);
    await sleep(IDLE_SECONDS * 1000);
    const idleWrites = requests.slice(before).filter((r) => !r.watch && r.method !== 'GET').length;
    const idleServerWrites = (await serverWrites(plane, ['memcacheds', 'deployments', 'services'])) - serverBefore;

    // spec change → child updated, one at a time
    const latencies: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const name = `mc-${i}`;
      const seen = new Promise<number>((resolve) => {
        const off = deployments.on((event) => {
          const replicas = (event.object.spec as { replicas?: number } | undefined)?.replicas;
          if (event.object.metadata?.name === name && replicas === 2) {
            off();
            resolve(performance.now());
          }
        });
      });
      const start = performance.now();
      await admin.request('PATCH', `${base}/${name}`, { body: { spec: { replicas: 2 } }, contentType: 'application/merge-patch+json' });
      latencies.push((await seen) - start);
    }
    latencies.sort((a, b) => a - b);

    console.log(
      JSON.stringify(
        {
          date: new Date().toISOString(),
          crs: N,
          maxConcurrentReconciles: MAX_CONCURRENT,
          convergeSeconds: Number(convergeSeconds.toFixed(1)),
          idleWindowSeconds: IDLE_SECONDS,
          idleWrites,
          idleServerWrites,
          peakRssBytes: process.resourceUsage().maxRSS * 1024,
          specChangeToChildMs: { samples: latencies.length, p50: Math.round(percentile(latencies, 50)), p99: Math.round(percentile(latencies, 99)) },
          rendersPerSecond,
          totalOperatorRequests: requests.filter((r) => !r.watch).length,
        },
        null,
        2,
      ),
    );
  } finally {
    await deployments.stop();
    await manager?.stop();
    admin.close();
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
