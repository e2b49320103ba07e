/**
 * Side-by-side benchmark (not a test): the memcached operator of this SDK (`run`, a separate process)
 * against the same operator written with controller-runtime (bench/peers/controller-runtime) and the raw
 * floor (the same children created directly, 1 and 16 requests in flight). Prints one table and JSON of
 * medians.
 *
 * ```
 * npm run bench:peers -- [--crs 1000] [--reps 3] [--peers ours,controller-runtime,floor-1,floor-16]
 *                        [--idle-seconds 60] [--changes 50] [--out FILE.json] [--ours-entry PATH]
 *                        [--ours-node-args "--cpu-prof --cpu-prof-dir=DIR"] [--heap-snapshot-dir DIR]
 * ```
 *
 * Profiling (bench/PROFILE.md): `--ours-node-args` are given to `ours`' node (a CPU profile is written
 * when it exits after the run); `--heap-snapshot-dir` writes a heap snapshot of `ours` when half of the
 * CRs are Ready (node's `--heapsnapshot-signal=SIGUSR2`).
 *
 * Every run (one peer, one repetition) gets a fresh local control plane with the same raised
 * kube-controller-manager and kube-scheduler client rate limits (`--kube-api-qps=500`), enough fake
 * nodes for one Pod per CR and a /16 service range. Peers alternate within each repetition. Figures:
 *
 * - `readySeconds`: from the first CR created (20 creates in flight) to every CR `Ready=True` (floor:
 *   first child created to every Deployment Available);
 * - `operatorRequests`: requests the operator sent from its start to all Ready (its
 *   `rest_client_requests_total`; a watch counts once); `operatorWrites`: its POST, PUT, PATCH and
 *   DELETE requests from the first CR created to all Ready (start-up access reviews left out);
 * - `idleWrites`: the operator's write requests in a quiet window after convergence (`--idle-seconds`),
 *   and `idleServerWrites`, the API server's `apiserver_request_total` write verbs on memcacheds,
 *   deployments and services in that window;
 * - `rssStartBytes`: resident set of the operator's process tree once it is ready and idle, before any
 *   CR; `peakRssBytes`: the largest sampled (every 250 ms) or the kernel's high-water mark;
 *   `rssGrowthPer1000ObjectsBytes`: (RSS after the idle window − RSS at start) / (4N / 1000), the
 *   cache holding N CRs, N Deployments, N Services and N Pods (both operators report status.nodes);
 * - `cpuStartSeconds`: utime+stime of the process tree until ready; `cpuConvergeSeconds`: from the
 *   first CR to all Ready;
 * - `specChangeMs`: p50/p99 from a spec change (merge-patch `spec.replicas` 1 → 2, one at a time, `--changes`
 *   samples) to the Deployment's new replicas seen in a watch; `serverApplyMs`: the same path without an
 *   operator, a server-side apply of a probe Deployment's replicas seen in the same watch (the floor
 *   that the spec-change figure is compared with).
 *
 * Control plane binaries: tools/control-plane/build.sh; the Go peer: bench/peers/controller-runtime/build.sh
 * (both build once from the Go module proxy into ~/.cache/cdk8s-operator-sdk and are reused).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { ApiClient, type KubeObject } from '../lib/runtime/api-client.js';
import { Informer } from '../lib/runtime/informer.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../lib/testing/control-plane.js';
import { renderForSnapshot } from '../lib/testing/index.js';
import { MemcachedOperator } from '../operators/memcached/index.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const N = Number(flag('crs', '1000'));
const REPS = Number(flag('reps', '3'));
const PEERS = flag('peers', 'ours,controller-runtime,floor-1,floor-16').split(',');
const IDLE_SECONDS = Number(flag('idle-seconds', '60'));
const CHANGES = Math.min(Number(flag('changes', '50')), N);
const OUT = flag('out', '');
/**
 * `ours` runs as production does: compiled JavaScript (lib/ and operators/ built by
 * bench/tsconfig.ours.json into bench/.out/), no TypeScript loader. `ours-tsx` runs the checkout's
 * `bin/cdk8s-operator.js` from the TypeScript sources under tsx (how the repository runs).
 */
const OURS_OUT = join(repoRoot, 'bench/.out');
const OURS_NODE_ARGS = flag('ours-node-args', '').split(' ').filter(Boolean);
const HEAP_SNAPSHOT_DIR = flag('heap-snapshot-dir', '');
const NAMESPACE = 'bench';
const CR_PATH = `/apis/cache.example.com/v1beta1/namespaces/${NAMESPACE}/memcacheds`;
const PODS_PER_NODE = 250;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Peer = 'ours' | 'ours-tsx' | 'controller-runtime' | 'floor-1' | 'floor-16';
const ALL_PEERS: readonly Peer[] = ['ours', 'ours-tsx', 'controller-runtime', 'floor-1', 'floor-16'];

interface RunResult {
  peer: Peer;
  rep: number;
  crs: number;
  readySeconds: number;
  operatorRequests: number | null;
  operatorWrites: number | null;
  idleWrites: number | null;
  idleServerWrites: number;
  rssStartBytes: number | null;
  peakRssBytes: number | null;
  rssAfterBytes: number | null;
  rssGrowthPer1000ObjectsBytes: number | null;
  cpuStartSeconds: number | null;
  cpuConvergeSeconds: number | null;
  specChangeMs: { p50: number; p99: number; samples: number } | null;
  /** `controller_runtime_reconcile_total` by result, from start to all Ready, and `meanReconcileMs` (`controller_runtime_reconcile_time_seconds` sum / count). */
  reconciles: Record<string, number> | null;
  serverApplyMs: { p50: number; p99: number; samples: number };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

// ---- process tree accounting (Linux /proc) ----

async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const text = await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '');
      for (const c of text.trim().split(/\s+/)) if (c) out.push(Number(c));
    }
  } catch {
    // gone
  }
  return out;
}

async function processTree(pid: number): Promise<number[]> {
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(await childrenOf(all[i]!)));
  return all;
}

interface Usage {
  rssBytes: number;
  hwmBytes: number;
  cpuSeconds: number;
}

async function usageOf(pid: number): Promise<Usage> {
  let rssBytes = 0;
  let hwmBytes = 0;
  let cpuSeconds = 0;
  for (const p of await processTree(pid)) {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8');
      rssBytes += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      if (p === pid) hwmBytes = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      const stat = await readFile(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[11..14] = utime stime cutime cstime (stat fields 14..17)
      cpuSeconds += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLK_TCK;
    } catch {
      // exited between listing and reading
    }
  }
  return { rssBytes, hwmBytes, cpuSeconds };
}

/** Samples a process tree's RSS every 250 ms; `peak` is the largest sum seen. */
class RssSampler {
  peak = 0;
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly pid: number) {}
  start(): void {
    const tick = async () => {
      const u = await usageOf(this.pid);
      this.peak = Math.max(this.peak, u.rssBytes, u.hwmBytes);
      this.timer = setTimeout(tick, 250);
    };
    void tick();
  }
  stop(): void {
    clearTimeout(this.timer);
  }
}

// ---- metrics ----

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

/** Sum of `rest_client_requests_total` (all, and write methods only). */
function clientRequests(metrics: string): { all: number; writes: number } {
  let all = 0;
  let writes = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    all += value;
    const method = /method="([A-Za-z]+)"/.exec(line)?.[1]?.toUpperCase() ?? '';
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) writes += value;
  }
  return { all, writes };
}

/** `controller_runtime_reconcile_total` by result (summed over controllers). */
function reconcileTotals(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  let sum = 0;
  let count = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith('controller_runtime_reconcile_time_seconds_sum')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('controller_runtime_reconcile_time_seconds_count')) count += Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!line.startsWith('controller_runtime_reconcile_total{')) continue;
    const result = /result="([^"]*)"/.exec(line)?.[1] ?? '?';
    out[result] = (out[result] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  if (count > 0) out.meanReconcileMs = Math.round((1000 * sum) / count);
  return out;
}

async function serverWrites(admin: ApiClient, resources: string[]): Promise<number> {
  const text = await admin.request<string>('GET', '/metrics');
  let sum = 0;
  for (const line of String(text).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '';
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    if (resources.includes(resource) && ['APPLY', 'PATCH', 'POST', 'PUT', 'DELETE'].includes(verb)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

// ---- operators ----

interface OperatorProcess {
  pid: number;
  metricsUrl: string;
  stop(): Promise<void>;
}

async function startOperator(peer: 'ours' | 'ours-tsx' | 'controller-runtime', plane: ControlPlane, logPath: string): Promise<OperatorProcess> {
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  let child: ChildProcess;
  let readyUrl: string | undefined;
  if (peer === 'ours' || peer === 'ours-tsx') {
    const probePort = await freePort();
    readyUrl = `http://127.0.0.1:${probePort}/readyz`;
    const entry = peer === 'ours'
      ? [join(OURS_OUT, 'lib/cli/main.js'), 'run', '--module', join(OURS_OUT, 'operators/index.js')]
      : [join(repoRoot, 'bin/cdk8s-operator.js'), 'run'];
    child = spawn(
      process.execPath,
      [...OURS_NODE_ARGS, ...(HEAP_SNAPSHOT_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_SNAPSHOT_DIR}`] : []), ...entry,
        '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
        '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--health-probe-bind-address', `127.0.0.1:${probePort}`, '--log-level', 'info'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
  } else {
    const bin = goPeerBinary();
    child = spawn(bin, ['--kubeconfig', plane.kubeconfigPath, '--metrics-bind-address', `127.0.0.1:${metricsPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  }
  const log = createWriteStream(logPath);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let exited = false;
  child.once('exit', () => (exited = true));
  const stop = async () => {
    if (exited) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  };
  try {
    await waitFor(`${peer} metrics endpoint`, async () => {
      if (exited) throw new Error(`${peer} exited during start-up; log: ${logPath}`);
      try {
        await scrape(metricsUrl);
        if (readyUrl) return (await fetch(readyUrl)).ok;
        return true;
      } catch {
        return false;
      }
    }, 120_000);
    // Idle = its CPU time stops moving (< 10 ms per 500 ms): start-up work (loading, cache sync) is over.
    let last = (await usageOf(child.pid!)).cpuSeconds;
    await waitFor(`${peer} idle after start`, async () => {
      const now = (await usageOf(child.pid!)).cpuSeconds;
      const quiet = now - last < 0.01;
      last = now;
      return quiet;
    }, 60_000, 500);
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid!, metricsUrl, stop };
}

/** Compiles lib/ and operators/ into bench/.out (incremental) with the example samples next to them. */
async function buildOurs(): Promise<void> {
  execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', join(repoRoot, 'bench/tsconfig.ours.json')], { stdio: 'inherit' });
  for (const name of await readdir(join(repoRoot, 'operators'), { withFileTypes: true })) {
    if (!name.isDirectory()) continue;
    const sample = join(repoRoot, 'operators', name.name, 'sample.yaml');
    await writeFile(join(OURS_OUT, 'operators', name.name, 'sample.yaml'), await readFile(sample)).catch(() => undefined);
  }
}

let goBinary: string | undefined;
function goPeerBinary(): string {
  if (!goBinary) {
    const out = execFileSync('bash', [join(repoRoot, 'bench/peers/controller-runtime/build.sh')], { stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim().split('\n');
    goBinary = out[out.length - 1]!;
  }
  return goBinary;
}

// ---- one run ----

function memcached(name: string, size: number): KubeObject {
  return { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NAMESPACE }, spec: { replicas: size } } as KubeObject;
}

function isReadyCr(obj: KubeObject): boolean {
  const conditions = (obj as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions;
  return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function isAvailable(obj: KubeObject): boolean {
  const d = obj as { metadata?: { generation?: number }; status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] } };
  return (d.status?.observedGeneration ?? -1) >= (d.metadata?.generation ?? 0) && (d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false);
}

/** Runs `tasks` with at most `limit` in flight. */
async function inFlight(limit: number, count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

async function oneRun(peer: Peer, rep: number, operator: MemcachedOperator, crdFile: string): Promise<RunResult> {
  const fastClient = ['--kube-api-qps=500', '--kube-api-burst=1000'];
  const plane = await startControlPlane({
    fakeNodes: Math.ceil((N + 2 * CHANGES + 20) / PODS_PER_NODE),
    podsPerNode: PODS_PER_NODE,
    serviceClusterIpRange: '10.0.0.0/16',
    extraArgs: { controllerManager: fastClient, scheduler: fastClient },
  });
  const dir = await mkdtemp(join(tmpdir(), `bench-peers-${peer}-`));
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-peers' });
  const deployments = new Informer({ client: admin, resource: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true }, namespace: NAMESPACE });
  const crs = new Informer({ client: admin, resource: { group: 'cache.example.com', version: 'v1beta1', plural: 'memcacheds', namespaced: true }, namespace: NAMESPACE });
  let op: OperatorProcess | undefined;
  let sampler: RssSampler | undefined;
  try {
    await installCRDs(plane.kubeConfig, [crdFile]);
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
    deployments.start();
    crs.start();
    await Promise.all([deployments.waitForSync(), crs.waitForSync()]);

    const floor = peer === 'floor-1' || peer === 'floor-16';
    let start: Usage | undefined;
    let requestsAtStart = { all: 0, writes: 0 };
    if (!floor) {
      op = await startOperator(peer, plane, join(dir, `${peer}.log`));
      sampler = new RssSampler(op.pid);
      sampler.start();
      start = await usageOf(op.pid);
      requestsAtStart = clientRequests(await scrape(op.metricsUrl));
    }

    // converge
    const t0 = performance.now();
    if (floor) {
      const children = Array.from({ length: N }, (_, i) =>
        renderForSnapshot(operator, memcached(`mc-${i}`, 1) as never).map((c) => {
          const { ownerReferences: _o, ...metadata } = c.metadata as Record<string, unknown>;
          return { ...c, metadata };
        }),
      ).flat();
      await inFlight(peer === 'floor-1' ? 1 : 16, children.length, async (i) => {
        const c = children[i]! as { apiVersion: string; kind: string };
        const path = c.kind === 'Deployment' ? `/apis/apps/v1/namespaces/${NAMESPACE}/deployments` : `/api/v1/namespaces/${NAMESPACE}/services`;
        await admin.request('POST', path, { body: c });
      });
      await waitFor(`${N} Deployments Available`, () => deployments.list(NAMESPACE).filter(isAvailable).length >= N, 60 * 60_000, 100);
    } else {
      await inFlight(20, N, (i) => admin.request('POST', CR_PATH, { body: memcached(`mc-${i}`, 1) }));
      let snapshotTaken = !(HEAP_SNAPSHOT_DIR && (peer === 'ours' || peer === 'ours-tsx'));
      await waitFor(`${N} Memcached Ready`, () => {
        const ready = crs.list(NAMESPACE).filter(isReadyCr).length;
        if (!snapshotTaken && ready >= N / 2) {
          snapshotTaken = true;
          process.kill(op!.pid, 'SIGUSR2');
        }
        return ready >= N;
      }, 60 * 60_000, 100);
    }
    const readySeconds = (performance.now() - t0) / 1000;
    const converged = op ? await usageOf(op.pid) : undefined;
    const metricsAtReady = op ? await scrape(op.metricsUrl) : undefined;
    const requestsAtReady = metricsAtReady ? clientRequests(metricsAtReady) : undefined;

    // idle window
    await sleep(2000);
    const idleBefore = op ? clientRequests(await scrape(op.metricsUrl)) : undefined;
    const serverBefore = await serverWrites(admin, ['memcacheds', 'deployments', 'services']);
    await sleep(IDLE_SECONDS * 1000);
    const idleAfter = op ? clientRequests(await scrape(op.metricsUrl)) : undefined;
    const idleServerWrites = (await serverWrites(admin, ['memcacheds', 'deployments', 'services'])) - serverBefore;
    const after = op ? await usageOf(op.pid) : undefined;
    if (op) {
      // Both operators do the same job: status.nodes names each CR's one Pod once it has settled.
      const withoutNodes = crs.list(NAMESPACE).filter((cr) => ((cr as { status?: { nodes?: string[] } }).status?.nodes ?? []).length !== 1);
      if (withoutNodes.length > 0) throw new Error(`${peer}: ${withoutNodes.length} Memcacheds without exactly one name in status.nodes after the idle window, e.g. ${withoutNodes[0]?.metadata?.name}`);
    }

    // server apply latency: a probe Deployment nobody owns, its replicas changed by server-side apply
    const probe = (replicas: number) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'latency-probe', namespace: NAMESPACE },
      spec: { replicas, selector: { matchLabels: { probe: 'x' } }, template: { metadata: { labels: { probe: 'x' } }, spec: { containers: [{ name: 'c', image: 'probe:1' }] } } },
    });
    const seenReplicas = (name: string, replicas: number) =>
      new Promise<number>((resolve) => {
        const existing = deployments.get(NAMESPACE, name) as { spec?: { replicas?: number } } | undefined;
        if (existing?.spec?.replicas === replicas) return resolve(performance.now());
        const off = deployments.on((event) => {
          if (event.object.metadata?.name === name && (event.object.spec as { replicas?: number } | undefined)?.replicas === replicas) {
            off();
            resolve(performance.now());
          }
        });
      });
    const applyPath = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/latency-probe`;
    const apply = (body: unknown) => admin.request('PATCH', applyPath, { body, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'bench', force: true } });
    await apply(probe(0));
    const serverLatencies: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const replicas = (i % 2) + 1;
      const seen = seenReplicas('latency-probe', replicas);
      const s = performance.now();
      await apply(probe(replicas));
      serverLatencies.push((await seen) - s);
    }
    serverLatencies.sort((a, b) => a - b);

    // spec change → child updated
    let specChangeMs: RunResult['specChangeMs'] = null;
    if (!floor) {
      const latencies: number[] = [];
      for (let i = 0; i < CHANGES; i++) {
        const name = `mc-${i}`;
        const seen = seenReplicas(name, 2);
        const s = performance.now();
        await admin.request('PATCH', `${CR_PATH}/${name}`, { body: { spec: { replicas: 2 } }, contentType: 'application/merge-patch+json' });
        latencies.push((await seen) - s);
      }
      latencies.sort((a, b) => a - b);
      specChangeMs = { p50: Math.round(percentile(latencies, 50)), p99: Math.round(percentile(latencies, 99)), samples: latencies.length };
    }

    const objects = 4 * N; // N CRs, N Deployments, N Services, N Pods (both operators cache the Pods for status.nodes)
    return {
      peer,
      rep,
      crs: N,
      readySeconds: Number(readySeconds.toFixed(1)),
      operatorRequests: requestsAtReady ? requestsAtReady.all : null,
      operatorWrites: requestsAtReady ? requestsAtReady.writes - requestsAtStart.writes : null,
      idleWrites: idleBefore && idleAfter ? idleAfter.writes - idleBefore.writes : null,
      idleServerWrites,
      rssStartBytes: start?.rssBytes ?? null,
      peakRssBytes: sampler ? sampler.peak : null,
      rssAfterBytes: after?.rssBytes ?? null,
      rssGrowthPer1000ObjectsBytes: start && after ? Math.round((after.rssBytes - start.rssBytes) / (objects / 1000)) : null,
      cpuStartSeconds: start ? Number(start.cpuSeconds.toFixed(2)) : null,
      cpuConvergeSeconds: start && converged ? Number((converged.cpuSeconds - start.cpuSeconds).toFixed(2)) : null,
      specChangeMs,
      reconciles: metricsAtReady ? reconcileTotals(metricsAtReady) : null,
      serverApplyMs: { p50: Math.round(percentile(serverLatencies, 50)), p99: Math.round(percentile(serverLatencies, 99)), samples: serverLatencies.length },
    };
  } finally {
    sampler?.stop();
    await op?.stop();
    await deployments.stop();
    await crs.stop();
    admin.close();
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- summary ----

type Figure = Exclude<keyof RunResult, 'peer' | 'rep' | 'crs' | 'specChangeMs' | 'serverApplyMs' | 'reconciles'> | 'specChangeP50Ms' | 'specChangeP99Ms' | 'serverApplyP50Ms' | 'serverApplyP99Ms';

function figureOf(r: RunResult, f: Figure): number | null {
  switch (f) {
    case 'specChangeP50Ms': return r.specChangeMs?.p50 ?? null;
    case 'specChangeP99Ms': return r.specChangeMs?.p99 ?? null;
    case 'serverApplyP50Ms': return r.serverApplyMs.p50;
    case 'serverApplyP99Ms': return r.serverApplyMs.p99;
    default: return r[f];
  }
}

const FIGURES: { key: Figure; label: string; format: (v: number) => string }[] = [
  { key: 'readySeconds', label: `all ${N} CRs Ready (s)`, format: (v) => v.toFixed(1) },
  { key: 'operatorRequests', label: 'requests sent by the operator (start → Ready)', format: (v) => String(Math.round(v)) },
  { key: 'operatorWrites', label: 'writes while converging', format: (v) => String(Math.round(v)) },
  { key: 'idleWrites', label: `writes in a ${IDLE_SECONDS} s idle window`, format: (v) => String(Math.round(v)) },
  { key: 'idleServerWrites', label: '… API server\'s count (all clients)', format: (v) => String(Math.round(v)) },
  { key: 'rssStartBytes', label: 'RSS at start (MB)', format: (v) => (v / 1e6).toFixed(0) },
  { key: 'peakRssBytes', label: 'peak RSS (MB)', format: (v) => (v / 1e6).toFixed(0) },
  { key: 'rssGrowthPer1000ObjectsBytes', label: 'RSS growth per 1000 cached objects (MB)', format: (v) => (v / 1e6).toFixed(1) },
  { key: 'cpuStartSeconds', label: 'CPU at start-up (s)', format: (v) => v.toFixed(2) },
  { key: 'cpuConvergeSeconds', label: 'CPU converging (s)', format: (v) => v.toFixed(1) },
  { key: 'specChangeP50Ms', label: 'spec change → child, p50 (ms)', format: (v) => String(Math.round(v)) },
  { key: 'specChangeP99Ms', label: 'spec change → child, p99 (ms)', format: (v) => String(Math.round(v)) },
  { key: 'serverApplyP50Ms', label: 'server apply → watch, p50 (ms)', format: (v) => String(Math.round(v)) },
  { key: 'serverApplyP99Ms', label: 'server apply → watch, p99 (ms)', format: (v) => String(Math.round(v)) },
];

function summarize(results: RunResult[]): Record<string, Record<string, number | null>> {
  const medians: Record<string, Record<string, number | null>> = {};
  for (const peer of PEERS) {
    const runs = results.filter((r) => r.peer === peer);
    medians[peer] = {};
    for (const { key } of FIGURES) {
      const values = runs.map((r) => figureOf(r, key)).filter((v): v is number => v !== null && !Number.isNaN(v));
      medians[peer]![key] = values.length ? median(values) : null;
    }
  }
  return medians;
}

function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a == null || b == null || b === 0 ? null : Number((a / b).toFixed(2));
}

function table(medians: Record<string, Record<string, number | null>>): string {
  const ratios = PEERS.includes('ours') && PEERS.includes('controller-runtime');
  const floorPeer = PEERS.includes('floor-16') ? 'floor-16' : PEERS.find((p) => p.startsWith('floor'));
  const header = ['figure (median)', ...PEERS, ...(ratios ? ['ours/cr'] : []), ...(floorPeer && PEERS.includes('ours') ? [`ours/${floorPeer}`] : [])];
  const rows = FIGURES.map(({ key, label, format }) => {
    const cells = PEERS.map((p) => {
      const v = medians[p]?.[key];
      return v == null ? '–' : format(v);
    });
    const extra: string[] = [];
    if (ratios) extra.push(String(ratio(medians.ours?.[key], medians['controller-runtime']?.[key]) ?? '–'));
    if (floorPeer && PEERS.includes('ours')) extra.push(String(ratio(medians.ours?.[key], medians[floorPeer]?.[key]) ?? '–'));
    return [label, ...cells, ...extra];
  });
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i === 0 ? ':' : '') + '-'.repeat(w + 1) + (i === 0 ? '' : ':')).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  for (const p of PEERS) if (!(ALL_PEERS as readonly string[]).includes(p)) throw new Error(`unknown peer ${p} (known: ${ALL_PEERS.join(', ')})`);
  // build before timing anything
  if (PEERS.includes('controller-runtime')) goPeerBinary();
  if (PEERS.includes('ours')) await buildOurs();
  const operator = new MemcachedOperator(new App());
  const dir = await mkdtemp(join(tmpdir(), 'bench-peers-'));
  const crdFile = join(dir, 'crd.json');
  await writeFile(crdFile, JSON.stringify(operator.customResourceDefinition.toJson()));
  const started = new Date().toISOString();
  const results: RunResult[] = [];
  try {
    for (let rep = 1; rep <= REPS; rep++) {
      for (const peer of PEERS as Peer[]) {
        process.stderr.write(`[bench:peers] ${new Date().toISOString()} run ${peer} rep ${rep}/${REPS}, ${N} CRs\n`);
        const r = await oneRun(peer, rep, operator, crdFile);
        process.stderr.write(`[bench:peers]   ${JSON.stringify(r)}\n`);
        if (OUT) await appendFile(`${OUT}.runs.jsonl`, JSON.stringify(r) + '\n'); // survives an interrupted run
        results.push(r);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const medians = summarize(results);
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  const report = {
    started,
    finished: new Date().toISOString(),
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version, loadAverageAtEnd: load },
    crs: N,
    repetitions: REPS,
    peers: PEERS,
    medians,
    ratios: {
      oursOverControllerRuntime: Object.fromEntries(FIGURES.map(({ key }) => [key, ratio(medians.ours?.[key], medians['controller-runtime']?.[key])])),
      oursOverFloor16: Object.fromEntries(FIGURES.map(({ key }) => [key, ratio(medians.ours?.[key], medians['floor-16']?.[key])])),
    },
    runs: results,
  };
  console.log(table(medians));
  console.log();
  console.log(JSON.stringify(report, null, 2));
  if (OUT) await writeFile(OUT, JSON.stringify(report, null, 2) + '\n');
}

await main();
