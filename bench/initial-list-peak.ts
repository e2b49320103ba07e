/**
 * The start-up peak of reading N custom resources into an informer: a streamed watch-list (KEP-3157,
 * `sendInitialEvents`) against a plain paged LIST (`limit=500`), side by side in one run (issue 33 item 3).
 * Not a test; prints one JSON object.
 *
 *   npm run bench:initial-list-peak -- [--crs 10000] [--reps 2]
 *
 * One local control plane (etcd and kube-apiserver only), the memcached operator's CRD and N Memcached
 * CRs in one namespace (created 20 at a time). Then, per repetition, the two modes alternate: a fresh
 * Node process (this file with `--informer MODE`, under tsx, like every bench) starts one Informer on
 * the CRs, as `run` does for an operator's CRs, and reports when it synced. Figures per run:
 * - `peakRssMB`: the informer process's peak resident set (`process.resourceUsage().maxRSS`) at sync,
 *   and `rssBeforeMB`, its RSS just before the informer started (the same modules loaded): the
 *   difference is what reading the set cost at its peak;
 * - `apiServerPeakRssMB`: kube-apiserver's peak resident set while the informer synced (VmHWM, reset
 *   through `/proc/PID/clear_refs` just before the process starts), and its RSS before;
 * - `syncMs`, `cpuMs` (the informer process's user + system CPU until synced), `requests` by verb.
 * Medians per mode, and the ratio watch-list / list of each.
 */
import { execFileSync, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient, type RequestRecord } from '../lib/runtime/client/api-client.js';
import { Informer } from '../lib/runtime/cache/informer.js';
import type { InitialList } from '../lib/runtime/cache/watcher.js';
import { mapConcurrently } from '../lib/runtime/reconcile/map-concurrently.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';

const NAMESPACE = 'bench';
// `--informer MODE KUBECONFIG`: the measured process, as the runs below fork it.
const { values, positionals, number } = benchOptions({ crs: { type: 'string', default: '10000' }, reps: { type: 'string', default: '2' }, informer: { type: 'string' } }, { allowPositionals: true });
if (values.informer === undefined && positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);

interface Report {
  readonly mode: InitialList;
  readonly objects: number;
  readonly syncMs: number;
  readonly cpuMs: number;
  readonly rssBeforeMB: number;
  readonly peakRssMB: number;
  readonly requests: Record<string, number>;
}

if (values.informer !== undefined) {
  // The measured process: one informer on the CRs, then report and exit.
  const mode = values.informer as InitialList;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(positionals[0]!);
  const { crd } = new MemcachedOperator(new App());
  const requests: Record<string, number> = {};
  const client = new ApiClient({ kubeConfig, onRequest: (r: RequestRecord) => (requests[r.method] = (requests[r.method] ?? 0) + 1) });
  const rssBefore = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const informer = new Informer({ client, resource: { group: crd.group, version: crd.version, plural: crd.plural, namespaced: true }, watch: { initialList: mode } });
  informer.start();
  await informer.waitForSync();
  const cpu = process.cpuUsage(cpu0);
  const report: Report = {
    mode,
    objects: informer.list(undefined).length,
    syncMs: Math.round(performance.now() - t0),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    rssBeforeMB: mb(rssBefore),
    peakRssMB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    requests,
  };
  process.send!(report);
  await informer.stop();
  client.close();
  process.exit(0);
}

function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

function procStatusKB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? NaN);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const crs = number('crs');
const reps = number('reps');
const plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
try {
  const dir = await mkdtemp(join(tmpdir(), 'bench-initial-list-'));
  const operator = new MemcachedOperator(new App());
  const crdFile = join(dir, 'crd.json');
  await writeFile(crdFile, JSON.stringify(operator.customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [crdFile]);
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, plane.kubeConfig.exportConfig());
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench' });
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
  const { crd } = operator;
  const base = `/apis/${crd.group}/${crd.version}/namespaces/${NAMESPACE}/${crd.plural}`;
  const t0 = performance.now();
  await mapConcurrently(
    Array.from({ length: crs }, (_, i) => i),
    20,
    (i) => admin.request('POST', base, { body: { apiVersion: `${crd.group}/${crd.version}`, kind: crd.kind, metadata: { name: `mc-${i}`, labels: { 'bench/index': String(i) } }, spec: { replicas: 1 + (i % 3) } } }),
  );
  process.stderr.write(`[initial-list-peak] ${crs} CRs created in ${Math.round(performance.now() - t0)} ms\n`);
  // kube-apiserver's pid: the process whose --cert-dir is inside this control plane's directory.
  const apiServerPid = Number(execFileSync('pgrep', ['-f', '--', `--cert-dir=${join(plane.dir, 'kube-apiserver')}`], { encoding: 'utf8' }).trim().split('\n')[0]) || undefined;
  const runs: (Report & { rep: number; apiServerRssBeforeMB: number | null; apiServerPeakRssMB: number | null })[] = [];
  for (let rep = 1; rep <= reps; rep++) {
    for (const mode of (rep % 2 ? ['list', 'watch-list'] : ['watch-list', 'list']) as InitialList[]) {
      let apiServerRssBeforeMB: number | null = null;
      if (apiServerPid) {
        writeFileSync(`/proc/${apiServerPid}/clear_refs`, '5'); // resets VmHWM to the current RSS
        apiServerRssBeforeMB = Math.round(procStatusKB(apiServerPid, 'VmRSS') / 102.4) / 10;
      }
      const child = fork(process.argv[1]!, ['--informer', mode, kubeconfigPath], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const report = await new Promise<Report>((resolve, reject) => {
        child.once('message', (m) => resolve(m as Report));
        child.once('exit', (code) => reject(new Error(`informer process (${mode}) exited ${code} before reporting`)));
      });
      await new Promise((resolve) => child.once('exit', resolve));
      const apiServerPeakRssMB = apiServerPid ? Math.round(procStatusKB(apiServerPid, 'VmHWM') / 102.4) / 10 : null;
      runs.push({ ...report, rep, apiServerRssBeforeMB, apiServerPeakRssMB });
      process.stderr.write(`[initial-list-peak] rep ${rep} ${JSON.stringify(runs.at(-1))}\n`);
    }
  }
  const figures = ['syncMs', 'cpuMs', 'rssBeforeMB', 'peakRssMB', 'apiServerRssBeforeMB', 'apiServerPeakRssMB'] as const;
  const medians: Record<string, Record<string, number>> = {};
  for (const mode of ['list', 'watch-list']) {
    medians[mode] = Object.fromEntries(figures.map((f) => [f, median(runs.filter((r) => r.mode === mode).map((r) => Number(r[f])))]));
    medians[mode]!.peakMinusBeforeMB = median(runs.filter((r) => r.mode === mode).map((r) => r.peakRssMB - r.rssBeforeMB));
    if (apiServerPid) medians[mode]!.apiServerPeakMinusBeforeMB = median(runs.filter((r) => r.mode === mode).map((r) => r.apiServerPeakRssMB! - r.apiServerRssBeforeMB!));
  }
  const ratios = Object.fromEntries(Object.keys(medians.list!).map((f) => [f, Math.round((medians['watch-list']![f]! / medians.list![f]!) * 100) / 100]));
  console.log(JSON.stringify({ crs, reps, machine: { load: (await import('node:os')).loadavg().map((l) => Math.round(l * 100) / 100) }, medians, ratios, runs }, null, 2));
  admin.close();
} finally {
  await plane.stop();
}
