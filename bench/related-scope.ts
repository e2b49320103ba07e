/**
 * What a related kind's cache costs when the cluster is large and the operator has nothing to do
 * (issue 20: with 0 Memcacheds in a 20 000-Pod cluster, an unscoped Pod cache grew the heap by about
 * 100 MiB and RSS from 123 to 266 MiB).
 *
 *   npm run bench:related-scope -- [--pods N] [--memcached-pods M]
 *
 * A fresh local control plane without scheduler and kwok (the Pods stay Pending: no kubelet is needed to
 * hold them), N Pods of other workloads (default 2000) and M Pods labelled as memcached's
 * (`app.kubernetes.io/name=memcached`, default 1000) in one namespace, 0 Memcacheds. Then, each in its
 * own Node.js process (`--expose-gc`), the memcached example's manager watching all namespaces is started
 * three times: `scoped` (its declaration: `scope.labelSelector` and `metadataOnly`), `scopedWhole` (the
 * label selector, whole Pods) and `unscoped` (no `scope`). Each child measures, after a full GC,
 * heapUsed and RSS before `Manager.start()` and once every cache synced, and how many Pods its cache holds.
 *
 * Prints one JSON object: per variant the cached Pods, heap and RSS growth in MiB, and per cached Pod in
 * KiB; and the unscoped growth extrapolated linearly to 20 000 Pods. One run each: RSS moves with the
 * allocator's whims by a few MiB; heapUsed after GC is the steadier figure.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { Manager } from '../lib/runtime/manager.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';

// `--child VARIANT --kubeconfig FILE`: one variant's process, as main() starts it.
const { values, number } = benchOptions({
  pods: { type: 'string', default: '2000' },
  'memcached-pods': { type: 'string', default: '1000' },
  child: { type: 'string' },
  kubeconfig: { type: 'string', default: '' },
});
const MiB = 1024 * 1024;

interface ChildResult {
  readonly variant: string;
  readonly cachedPods: number;
  readonly heapBeforeMiB: number;
  readonly heapAfterMiB: number;
  readonly rssBeforeMiB: number;
  readonly rssAfterMiB: number;
}

/** One variant, in this (child) process: start the manager, wait for sync, measure. */
async function child(variant: string, kubeconfigPath: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the child with --expose-gc');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const operator = new MemcachedOperator(new App());
  if (variant === 'unscoped') {
    // The declaration as it was before scoping (bench only: the construct's field is readonly).
    const { scope: _scope, ...pods } = operator.related.pods;
    (operator as { related: unknown }).related = { pods };
  } else if (variant === 'scopedWhole') {
    const pods = operator.related.pods;
    (operator as { related: unknown }).related = { pods: { ...pods, scope: { labelSelector: pods.scope?.labelSelector } } };
  }
  gc();
  const before = process.memoryUsage();
  const manager = new Manager({ kubeConfig, operators: [operator], logger: pino({ level: 'silent' }), events: false });
  await manager.start();
  gc();
  const after = process.memoryUsage();
  const pods = manager.informers.all().find((i) => i.resource.plural === 'pods');
  const result: ChildResult = {
    variant,
    cachedPods: pods?.list().length ?? -1,
    heapBeforeMiB: before.heapUsed / MiB,
    heapAfterMiB: after.heapUsed / MiB,
    rssBeforeMiB: before.rss / MiB,
    rssAfterMiB: after.rss / MiB,
  };
  await manager.stop();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main(): Promise<void> {
  const n = number('pods');
  const m = number('memcached-pods');
  const plane = await startControlPlane({ components: { scheduler: false, kwok: false } });
  const dir = await mkdtemp(join(tmpdir(), 'bench-related-scope-'));
  try {
    const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-related-scope' });
    const crd = join(dir, 'memcached-crd.json');
    await writeFile(crd, JSON.stringify(new MemcachedOperator(new App()).customResourceDefinition.toJson()));
    await installCRDs(plane.kubeConfig, [crd]);
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crowd' } } });
    const t0 = performance.now();
    const labelsOf = (i: number) => (i < n ? { app: 'unrelated', 'pod-template-hash': 'abcdef1234' } : { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': `mc-${i % 50}` });
    for (let i = 0; i < n + m; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, n + m - i) }, (_, j) =>
          admin.request('POST', '/api/v1/namespaces/crowd/pods', {
            body: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: `pod-${i + j}`, labels: labelsOf(i + j) },
              spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1.0', ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'production' }] }] },
            },
          }),
        ),
      );
    }
    const createMs = Math.round(performance.now() - t0);
    admin.close();
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(kubeconfigPath, plane.kubeConfig.exportConfig());
    const self = fileURLToPath(import.meta.url);
    const results: Record<string, ChildResult> = {};
    for (const variant of ['scoped', 'scopedWhole', 'unscoped']) {
      const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--child', variant, '--kubeconfig', kubeconfigPath], { encoding: 'utf8' });
      results[variant] = JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult;
    }
    const growth = (r: ChildResult) => ({
      cachedPods: r.cachedPods,
      heapGrowthMiB: round(r.heapAfterMiB - r.heapBeforeMiB),
      rssGrowthMiB: round(r.rssAfterMiB - r.rssBeforeMiB),
      rssAfterMiB: round(r.rssAfterMiB),
    });
    const perPod = (g: ReturnType<typeof growth>) => ({
      ...g,
      heapPerCachedPodKiB: g.cachedPods > 0 ? round((g.heapGrowthMiB * 1024) / g.cachedPods) : 0,
      rssPerCachedPodKiB: g.cachedPods > 0 ? round((g.rssGrowthMiB * 1024) / g.cachedPods) : 0,
    });
    const scoped = perPod(growth(results.scoped));
    const scopedWhole = perPod(growth(results.scopedWhole));
    const unscoped = perPod(growth(results.unscoped));
    console.log(
      JSON.stringify(
        {
          otherPods: n,
          memcachedPods: m,
          createMs,
          scoped,
          scopedWhole,
          unscoped,
          extrapolatedTo20000Pods: {
            unscopedHeapGrowthMiB: round((unscoped.heapGrowthMiB * 20_000) / (n + m)),
            unscopedRssGrowthMiB: round((unscoped.rssGrowthMiB * 20_000) / (n + m)),
            scopedGrowth: 'independent of the number of other Pods: the cache holds none of them',
          },
        },
        null,
        2,
      ),
    );
  } finally {
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

if (values.child !== undefined) await child(values.child, values.kubeconfig);
else await main();
