/**
 * Benchmark (not a test) of what `run --validate-children` costs in memory (issue 37, case 2): the peak
 * resident set (VmHWM of /proc/<pid>/status, what a memory limit is held against) of the compiled `run`
 * process of the memcached operator at its first reconcile, with and without `--validate-children`.
 * Prints one JSON line: each run's peak in MiB, their medians and the difference.
 *
 * ```sh
 * npm run bench:validate-children-memory -- [--reps 3]
 * ```
 *
 * `run` as production runs it (bench/build-ours.ts: compiled, no TypeScript loader), on the local
 * control plane, webhooks off (`--webhook-bind-address 0`); per repetition and mode a fresh process, one
 * Memcached CR; the peak is read once the CR's `Ready` condition is `True` (its first reconcile done).
 * The figure behind `VALIDATE_CHILDREN_MEMORY` in lib/operator/manifests/operator-deployment.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import type { KubeObject } from '../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';
import { OURS_OUT, buildOurs } from './build-ours.js';

const reps = benchOptions({ reps: { type: 'string', default: '3' } }).number('reps');

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Peak resident set of `pid` so far, in MiB (VmHWM). */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  await buildOurs();
  const plane = await startControlPlane();
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-validate-children-memory' });
  const dir = await mkdtemp(join(tmpdir(), 'bench-validate-children-'));
  try {
    const crd = join(dir, 'memcached-crd.json');
    await writeFile(crd, JSON.stringify(new MemcachedOperator(new App()).customResourceDefinition.toJson()));
    await installCRDs(plane.kubeConfig, [crd]);
    const peaks: Record<'without' | 'with', number[]> = { without: [], with: [] };
    for (let rep = 0; rep < reps; rep++) {
      for (const mode of ['without', 'with'] as const) {
        const ns = `mem-${mode}-${rep}`;
        await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
        await admin.request('POST', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`, {
          body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'bench', namespace: ns }, spec: { replicas: 1 } },
        });
        const args = [join(OURS_OUT, 'lib/cli/main.js'), 'run', '--module', join(OURS_OUT, 'operators/index.js'), '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath, '-n', ns];
        args.push('--metrics-bind-address', '0', '--health-probe-bind-address', '0', '--webhook-bind-address', '0', '--log-level', 'warn');
        if (mode === 'with') args.push('--validate-children');
        const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
        try {
          await until(`${mode}: first reconcile`, async () => {
            if (child.exitCode !== null) throw new Error(`run exited ${child.exitCode}`);
            const cr = await admin.request<KubeObject>('GET', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds/bench`);
            return ((cr.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
          });
          peaks[mode].push(Math.round(await peakRssMiB(child.pid!)));
        } finally {
          const gone = new Promise((r) => child.once('exit', r));
          child.kill('SIGKILL');
          await gone;
        }
      }
    }
    const withoutMiB = median(peaks.without);
    const withMiB = median(peaks.with);
    console.log(JSON.stringify({ reps, peakRssMiB: peaks, medianWithoutMiB: withoutMiB, medianWithMiB: withMiB, addedMiB: withMiB - withoutMiB, loadAverage1m: Number(loadavg()[0].toFixed(1)) }));
  } finally {
    admin.close();
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
