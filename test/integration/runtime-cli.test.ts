/**
 * `cdk8s-operator run` in-process (runRun) against the real control plane: loads this project's
 * operators (operators/index.ts), picks one with --operators, reads --kubeconfig, and converges a CR.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { runRun } from '../../lib/cli/run-command.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { eventually } from '../support/eventually.js';
import { addOperators } from '../../operators/index.js';

/** No /metrics or probe servers: the defaults (:8080, :8081) would clash between tests running at once. */
const NO_SERVERS = { metricsBindAddress: '0', healthProbeBindAddress: '0' } as const;

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;

beforeAll(async () => {
  plane = await startControlPlane();
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'runtime-cli-'));
  const files: string[] = [];
  for (const operator of addOperators(new App())) {
    const file = join(dir, `${operator.operatorName}-crd.json`);
    await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
    files.push(file);
  }
  await installCRDs(plane.kubeConfig, files);
}, 10 * 60_000);

/** Runs started by a test; stopped after it even when an assertion failed first (else jest never exits). */
const runs: { stop: AbortController; exit: Promise<number> }[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) {
    run.stop.abort();
    await run.exit.catch(() => undefined);
  }
});

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN run --operators memcached-operator --kubeconfig PATH THEN a Memcached CR becomes Ready, and the run stops with exit code 0', async () => {
  const stop = new AbortController();
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const logFile = join(dir, 'run.log');
  const exit = runRun(
    { operators: 'memcached-operator', kubeconfig: plane.kubeconfigPath, maxConcurrentReconciles: 2, ...NO_SERVERS },
    { signal: stop.signal, onStarted: started, logger: pino(pino.destination({ dest: logFile, sync: true })) },
  );
  runs.push({ stop, exit });
  await running;
  await admin.request('POST', '/apis/cache.example.com/v1beta1/namespaces/default/memcacheds', {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'cli', namespace: 'default' }, spec: { replicas: 1 } },
  });
  const deadline = Date.now() + 90_000;
  let cr: KubeObject | undefined;
  for (;;) {
    cr = await admin.request('GET', '/apis/cache.example.com/v1beta1/namespaces/default/memcacheds/cli').catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
    const ready = ((cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
    if (ready?.status === 'True') break;
    if (Date.now() > deadline) throw new Error(`Memcached not Ready: ${JSON.stringify(cr?.status)}; log ${logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  stop.abort();
  expect(await exit).toBe(0);
}, 180_000);

test('GIVEN an unknown operator name THEN exit code 1', async () => {
  const code = await runRun({ operators: 'nope', kubeconfig: plane.kubeconfigPath, ...NO_SERVERS }, { logger: pino({ level: 'silent' }) });
  expect(code).toBe(1);
}, 60_000);

/**
 * apiserver_request_total{verb="APPLY"} per series (resource, subresource, scope, code): only the
 * operators (and installCRDs) use server-side apply.
 */
async function serverAppliesBySeries(): Promise<Map<string, number>> {
  const res = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/metrics');
  const series = new Map<string, number>();
  for (const line of String(res.body).split('\n')) {
    if (line.startsWith('apiserver_request_total{') && line.includes('verb="APPLY"')) {
      const space = line.lastIndexOf(' ');
      series.set(line.slice('apiserver_request_total'.length, space), Number(line.slice(space + 1)));
    }
  }
  return series;
}

async function serverApplies(): Promise<number> {
  let sum = 0;
  for (const n of (await serverAppliesBySeries()).values()) sum += n;
  return sum;
}

/** The series whose count grew from `before` to `after`, with the growth: what a failed quiet window applied. */
function grownSeries(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k, n]) => `+${n - (before.get(k) ?? 0)} ${k}`);
}

/** The apply count once it has stayed the same for `quietMs` (polled every 500 ms); throws after `timeoutMs`. */
async function quietApplies(quietMs: number, timeoutMs: number): Promise<number> {
  let last = -1;
  let since = Date.now();
  return eventually(
    `server-side applies stopped for ${quietMs} ms`,
    async () => {
      const now = await serverApplies();
      if (now !== last) {
        last = now;
        since = Date.now();
        return undefined;
      }
      return Date.now() - since >= quietMs ? now : undefined;
    },
    { timeoutMs, intervalMs: 500, context: () => ` (last count ${last})` },
  );
}

test('GIVEN all three example operators (no --operators) and their samples THEN children appear, and once settled a quiet window has zero applies', async () => {
  const stop = new AbortController();
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const exit = runRun({ kubeconfig: plane.kubeconfigPath, ...NO_SERVERS }, { signal: stop.signal, onStarted: () => started(), logger: pino(pino.destination({ dest: join(dir, 'all.log'), sync: true })) });
  runs.push({ stop, exit });
  await running;
  const samples: KubeObject[] = [];
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'samples' } } });
  for (const op of ['app', 'database', 'memcached']) {
    for (const doc of parseAllDocuments(await readFile(new URL(`../../operators/${op}/sample.yaml`, import.meta.url), 'utf8'))) {
      const object = doc.toJS() as KubeObject;
      object.metadata = { ...object.metadata, namespace: 'samples' };
      // Beside the CRs: the ConfigMaps they reference.
      if (object.kind === 'ConfigMap') await admin.request('POST', '/api/v1/namespaces/samples/configmaps', { body: object });
      else samples.push(object);
    }
  }
  const paths: string[] = [];
  for (const cr of samples) {
    const [group, version] = cr.apiVersion!.split('/');
    const path = `/apis/${group}/${version}/namespaces/samples/${cr.kind!.toLowerCase()}s`;
    await admin.request('POST', path, { body: cr });
    paths.push(`${path}/${cr.metadata!.name}`);
  }
  // Every CR gets a status with all its children listed, and is Ready: a child that becomes ready later
  // moves its CR's status, a write that would land in the quiet window. The database's is the longest
  // chain (its PersistentVolumeClaims provisioned and bound by kube-controller-manager, its pod scheduled
  // and made ready by kwok, then the StatefulSet's status): on a loaded machine a gap in it outlasted the
  // 3 s quiet wait below (CI, 2026-12-05: one status apply of the Database inside the window).
  const deadline = Date.now() + 120_000;
  for (;;) {
    const crs = await Promise.all(paths.map((p) => admin.request('GET', p)));
    const settled = crs.every((cr) => {
      const status = cr.status as { observedGeneration?: number; children?: unknown[]; conditions?: { type: string; status: string }[] } | undefined;
      const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      return ready && status?.observedGeneration === cr.metadata?.generation && (status?.children?.length ?? 0) > 0;
    });
    if (settled) break;
    if (Date.now() > deadline) throw new Error(`samples not reconciled: ${JSON.stringify(crs.map((c) => c.status))}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // Rollouts and dependsOn children still move status after that (a status write is an apply too): wait
  // until no apply has happened for 3 s in a row. A hot loop never gets there, and fails here.
  await quietApplies(3_000, 90_000);
  const before = await serverAppliesBySeries();
  await new Promise((r) => setTimeout(r, 10_000));
  const grown = grownSeries(before, await serverAppliesBySeries());
  console.log(`example operators: applies in a 10 s quiet window: ${grown.length ? grown.join('; ') : 'none'}`);
  expect(grown).toEqual([]);
  stop.abort();
  expect(await exit).toBe(0);
}, 240_000);

async function memcachedReady(ns: string, name: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const cr = await admin.request('GET', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds/${name}`).catch(() => undefined);
    const ready = ((cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
    if (ready?.status === 'True') return;
    if (Date.now() > deadline) throw new Error(`Memcached ${ns}/${name} not Ready: ${JSON.stringify(cr?.status)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('GIVEN two replicas with --leader-elect, /metrics and probes THEN one leads, both are ready, and the standby takes over when the leader stops', async () => {
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'le' } } });
  const replicas = ['a', 'b'].map((id) => {
    const stop = new AbortController();
    let started!: (info: { metricsPort?: number; healthProbePort?: number }) => void;
    const ports = new Promise<{ metricsPort?: number; healthProbePort?: number }>((r) => (started = r));
    const exit = runRun(
      {
        operators: 'memcached-operator',
        kubeconfig: plane.kubeconfigPath,
        namespace: 'le',
        leaderElect: true,
        leaderElectionNamespace: 'le',
        leaderElectionId: 'memcached-le',
        metricsBindAddress: '127.0.0.1:0',
        metricsSecure: false, // plain HTTP, as for a local run (secure scrapes: secure-metrics.test.ts)
        healthProbeBindAddress: '127.0.0.1:0',
      },
      { signal: stop.signal, onStarted: started, logger: pino(pino.destination({ dest: join(dir, `le-${id}.log`), sync: true })) },
    );
    runs.push({ stop, exit });
    return { id, stop, ports, exit };
  });
  const ports = await Promise.all(replicas.map((r) => r.ports));
  for (const p of ports) {
    expect((await fetch(`http://127.0.0.1:${p.healthProbePort}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${p.healthProbePort}/healthz`)).status).toBe(200);
  }
  await admin.request('POST', '/apis/cache.example.com/v1beta1/namespaces/le/memcacheds', {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'one', namespace: 'le' }, spec: { replicas: 1 } },
  });
  await memcachedReady('le', 'one');
  const lease = await admin.request<KubeObject>('GET', '/apis/coordination.k8s.io/v1/namespaces/le/leases/memcached-le');
  const holder = (lease.spec as { holderIdentity: string }).holderIdentity;
  expect(holder).toBeTruthy();

  // which replica leads: the one whose /metrics says so
  const leading: boolean[] = [];
  for (const p of ports) {
    const text = await (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text();
    leading.push(/leader_election_master_status\{name="memcached-le"\} 1/.test(text));
    expect(text).toContain('controller_runtime_reconcile_total{controller="memcached-operator",result="success"}');
  }
  expect(leading.filter(Boolean)).toHaveLength(1);
  const leader = replicas[leading.indexOf(true)];
  const standby = replicas[leading.indexOf(false)];
  const leaderMetrics = await (await fetch(`http://127.0.0.1:${ports[leading.indexOf(true)].metricsPort}/metrics`)).text();
  expect(Number(/controller_runtime_reconcile_total\{controller="memcached-operator",result="success"\} (\d+)/.exec(leaderMetrics)?.[1])).toBeGreaterThan(0);
  const standbyMetrics = await (await fetch(`http://127.0.0.1:${ports[leading.indexOf(false)].metricsPort}/metrics`)).text();
  expect(/controller_runtime_reconcile_total\{controller="memcached-operator",result="success"\} 0/.test(standbyMetrics)).toBe(true);

  // the leader stops cleanly (releases the lease): the standby takes over and reconciles a new CR
  leader.stop.abort();
  expect(await leader.exit).toBe(0);
  await admin.request('POST', '/apis/cache.example.com/v1beta1/namespaces/le/memcacheds', {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'two', namespace: 'le' }, spec: { replicas: 1 } },
  });
  await memcachedReady('le', 'two', 60_000);
  standby.stop.abort();
  expect(await standby.exit).toBe(0);
}, 180_000);
