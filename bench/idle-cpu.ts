/**
 * CPU of idle `cdk8s-operator run` processes: what an operator with nothing to do costs its node, per
 * second. Not a test: it prints figures.
 *
 * ```
 * npm run bench:idle-cpu -- [--seconds 60] [--settle-seconds 45] [--precisions 10,1000] [--shards] [--profile DIR] [--out FILE.json]
 * ```
 *
 * Options are read by bench/bench-options.ts: one it does not know, or a number that is not one, is an error.
 *
 * On one local control plane (etcd and kube-apiserver only), the memcached operator compiled as
 * bench:peers runs it (bench/build-ours.ts, the image's `--max-semi-space-size=2`), 0 CRs, all processes
 * side by side: `as shipped`, one replica as `run` starts it; `precision N`, the same with the event-loop
 * delay sampled every N ms instead of the shipped period (metrics.ts `EVENT_LOOP_MONITORING_PRECISION_MS`,
 * forced by bench/idle-cpu-precision.cjs, preloaded: prom-client's default is 10); with `--shards`,
 * three `run --sharding` replicas as shipped. After `--settle-seconds` (start-up, first lists, the ring
 * settled) it reads each process's CPU time (utime + stime of all its threads, /proc) and its threads'
 * voluntary context switches (each one an idle wait that was woken) over `--seconds`, and prints one JSON
 * object (also written to `--out FILE.json`): per process, CPU ms per second and wake-ups per second. `--profile DIR`: each process also
 * writes a V8 CPU profile (`--cpu-prof`, into DIR/<process>/, on exit) and its log (DIR/<process>.log);
 * the profiler costs CPU of its own, so figures of such a run are not the shipped ones.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { addOperators } from '../operators/index.js';
import { buildOurs, OURS_OUT } from './build-ours.js';
import { statCpuSeconds } from './control-plane-cpu.js';
import { freePort } from '../test/support/free-port.js';
import { benchOptions, finiteNumber } from './bench-options.js';

const { values: options, number } = benchOptions({
  seconds: { type: 'string', default: '60' },
  'settle-seconds': { type: 'string', default: '45' },
  precisions: { type: 'string', default: '10,1000' },
  shards: { type: 'boolean', default: false },
  profile: { type: 'string', default: '' },
  out: { type: 'string', default: '' },
});
const SECONDS = number('seconds');
const SETTLE_SECONDS = number('settle-seconds');
const PRECISIONS = options.precisions.split(',').filter((p) => p !== '').map((p) => finiteNumber('precisions', p));
const SHARDS = options.shards;
const SHARD_NAMESPACE = 'bench-shards';
const PROFILE_DIR = options.profile;
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const PRELOAD = join(dirname(fileURLToPath(import.meta.url)), 'idle-cpu-precision.cjs');

/** A process's name as a file name: `precision 10` → `precision-10`. */
const fileNameOf = (name: string) => name.replace(/ /g, '-');

/** utime + stime of every thread of `pid`, in seconds. */
function cpuSeconds(pid: number): number {
  return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** Voluntary context switches of every thread of `pid`. */
function wakeUps(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    n += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))![1]);
  }
  return n;
}

await buildOurs();
const plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
const dir = await mkdtemp(join(tmpdir(), 'idle-cpu-'));
const processes: { name: string; child: ChildProcess }[] = [];
try {
  const operator = addOperators(new App()).find((o) => o.operatorName === 'memcached-operator')!;
  const crdFile = join(dir, 'crd.json');
  await writeFile(crdFile, JSON.stringify(operator.customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [crdFile]);
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SHARD_NAMESPACE } } });
  admin.close();

  const start = async (name: string, options: { precision?: number; shard?: boolean } = {}) => {
    const child = spawn(
      process.execPath,
      [
        '--max-semi-space-size=2',
        ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE_DIR, fileNameOf(name))}`] : []),
        ...(options.precision !== undefined ? ['--require', PRELOAD] : []),
        join(OURS_OUT, 'lib/cli/main.js'), 'run', '--module', join(OURS_OUT, 'operators/index.js'),
        '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
        '--metrics-bind-address', `127.0.0.1:${await freePort()}`, '--metrics-secure=false',
        '--health-probe-bind-address', `127.0.0.1:${await freePort()}`,
        ...(options.shard ? ['--sharding', '--sharding-namespace', SHARD_NAMESPACE] : []),
      ],
      {
        stdio: ['ignore', PROFILE_DIR ? openSync(join(PROFILE_DIR, `${fileNameOf(name)}.log`), 'w') : 'ignore', 'inherit'],
        env: { ...process.env, NODE_OPTIONS: '', POD_NAME: name, ...(options.precision !== undefined ? { IDLE_CPU_PRECISION_MS: String(options.precision) } : {}) },
      },
    );
    processes.push({ name, child });
  };
  await start('as shipped');
  for (const precision of PRECISIONS) await start(`precision ${precision}`, { precision });
  if (SHARDS) for (const member of ['shard-1', 'shard-2', 'shard-3']) await start(member, { shard: true });

  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  const exited = processes.filter((p) => p.child.exitCode !== null).map((p) => p.name);
  if (exited.length > 0) throw new Error(`exited before the measurement: ${exited.join(', ')}`);
  const before = processes.map(({ child }) => ({ cpu: cpuSeconds(child.pid!), wakeUps: wakeUps(child.pid!) }));
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const after = processes.map(({ child }) => ({ cpu: cpuSeconds(child.pid!), wakeUps: wakeUps(child.pid!) }));
  const figures = Object.fromEntries(
    processes.map(({ name }, i) => [
      name,
      {
        cpuMsPerSecond: Number((((after[i]!.cpu - before[i]!.cpu) * 1000) / SECONDS).toFixed(2)),
        wakeUpsPerSecond: Number(((after[i]!.wakeUps - before[i]!.wakeUps) / SECONDS).toFixed(1)),
      },
    ]),
  );
  const report = JSON.stringify({ seconds: SECONDS, settleSeconds: SETTLE_SECONDS, processes: figures }, null, 2);
  console.log(report);
  if (options.out) await writeFile(options.out, `${report}\n`);
} finally {
  for (const { child } of processes) child.kill('SIGTERM');
  await Promise.all(processes.map(({ child }) => (child.exitCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))));
  await plane.stop();
  await rm(dir, { recursive: true, force: true });
}
