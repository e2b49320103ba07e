/**
 * Production operation against the run's shared control plane (issue 5): the operators under their own
 * synthesized RBAC, the RBAC self-check through `run`, /metrics and /readyz, graceful shutdown with a
 * slow reconcile, and two replicas with leader election when the leader dies. Every test works in a
 * namespace of its own and only watches that namespace. No assertion is about elapsed time; waits are
 * bounded by generous deadlines.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { runRun } from '../../lib/cli/run-command.js';
import type { Operator } from '../../lib/operator/operator.js';
import type { PolicyRule } from '../../lib/operator/manifests/rbac.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { checkAccess, requiredAccess } from '../../lib/runtime/startup/rbac-self-check.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { addOperators } from '../../operators/index.js';
import { TEST_KUBECONFIG_ENV, createTestNamespace, serviceAccountUser, testKubeConfig } from '../support/cluster.js';
import { killCliProcesses, startCli } from '../support/cli-process.js';
import { createExampleSamples } from '../support/example-samples.js';
import { freePort } from '../support/free-port.js';
import { writeServiceAccountKubeconfig } from '../support/kubeconfig-files.js';
import { addOperators as addSlowOperator } from './fixtures/slow-finalizer-operator.js';
import { EXPECTED_METRIC_NAMES } from '../support/metric-names.js';

const SLOW_MODULE = 'test/integration/fixtures/slow-finalizer-operator.ts';

let admin: ApiClient;
let dir: string;
let kubeconfigPath: string;
let operators: Operator[];

beforeAll(async () => {
  kubeconfigPath = process.env[TEST_KUBECONFIG_ENV]!;
  admin = new ApiClient({ kubeConfig: testKubeConfig() });
  dir = await mkdtemp(join(tmpdir(), 'operations-'));
  operators = addOperators(new App());
  const files: string[] = [];
  for (const operator of [...operators, ...addSlowOperator(new App())]) {
    const file = join(dir, `${operator.operatorName}-crd.json`);
    await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
    files.push(file);
  }
  await installCRDs(testKubeConfig(), files, 60_000);
}, 120_000);

afterAll(async () => {
  await killCliProcesses();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// --------------------------------------------------------------------------------------------------
// helpers

async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 90_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function crPath(operator: Operator, namespace: string, name?: string): string {
  const c = operator.crd;
  return `/apis/${c.group}/${c.version}/namespaces/${namespace}/${c.plural}${name ? `/${name}` : ''}`;
}

function memcached(): Operator {
  return operators.find((o) => o.operatorName === 'memcached-operator')!;
}

async function createMemcached(namespace: string, name: string): Promise<void> {
  await admin.request('POST', crPath(memcached(), namespace), {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace }, spec: { replicas: 1 } },
  });
}

async function readyCondition(path: string): Promise<{ status: string; reason?: string; message?: string } | undefined> {
  const cr = await admin.request('GET', path).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
  const status = cr?.status as { conditions?: { type: string; status: string }[]; observedGeneration?: number } | undefined;
  if (status?.observedGeneration !== cr?.metadata?.generation) return undefined;
  return status?.conditions?.find((c) => c.type === 'Ready');
}

async function waitReady(path: string, timeoutMs = 120_000): Promise<void> {
  await eventually(`${path} Ready`, async () => (await readyCondition(path))?.status === 'True', timeoutMs);
}

/** Server-side applies an object as the admin (field manager `operations-test`). */
async function apply(object: KubeObject): Promise<void> {
  const [group, version] = object.apiVersion!.includes('/') ? object.apiVersion!.split('/') : ['', object.apiVersion!];
  const plural = { ServiceAccount: 'serviceaccounts', ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings', Role: 'roles', RoleBinding: 'rolebindings', Namespace: 'namespaces' }[object.kind!];
  if (!plural) throw new Error(`apply: no plural for ${object.kind}`);
  const ns = object.metadata?.namespace;
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  await admin.request('PATCH', `${base}${ns ? `/namespaces/${ns}` : ''}/${plural}/${object.metadata!.name}`, {
    body: object,
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager: 'operations-test', force: true },
  });
}

/** A ServiceAccount in `namespace` bound to a ClusterRole with `rules`; returns a kubeconfig file that authenticates as it (TokenRequest). */
/** Lets ServiceAccount `namespace/name` use leader-election Leases in its namespace (what the runtime does with them). */
async function grantLeases(namespace: string, name: string): Promise<void> {
  await apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'leases', namespace },
    rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
  });
  await apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'leases', namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leases' },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
}

async function serviceAccountKubeconfig(namespace: string, name: string, rules: PolicyRule[]): Promise<string> {
  const roleName = `${namespace}-${name}`;
  await apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  await apply({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: roleName }, rules });
  await apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: roleName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  });
  return writeServiceAccountKubeconfig(admin, kubeconfigPath, namespace, name, join(dir, `${roleName}.kubeconfig`));
}

/** The memcached operator's synthesized ClusterRole rules. */
function memcachedRules(): PolicyRule[] {
  const role = memcached().toJson().find((o: KubeObject) => o.kind === 'ClusterRole') as { rules: PolicyRule[] };
  return structuredClone(role.rules);
}

async function httpStatus(url: string): Promise<number | undefined> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return undefined;
  }
}

function metricValue(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{')) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// --------------------------------------------------------------------------------------------------

test('GIVEN each example operator impersonating its own synthesized ServiceAccount THEN the self-check passes and every sample converges with zero 403s', async () => {
  const ns = await createTestNamespace('own-rbac', admin);
  const codes: number[] = [];
  const managers: Manager[] = [];
  const impersonations: { user: string; groups: string[] }[] = [];
  try {
    for (const operator of operators) {
      for (const object of operator.toJson() as KubeObject[]) {
        if (['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(object.kind!)) await apply(object);
      }
      const sa = operator.toJson().find((o: KubeObject) => o.kind === 'ServiceAccount') as KubeObject;
      const saNs = sa.metadata!.namespace!;
      const impersonate = serviceAccountUser(saNs, sa.metadata!.name!);
      impersonations.push(impersonate);
      managers.push(
        new Manager({
          kubeConfig: testKubeConfig(),
          operators: [operator],
          namespace: ns,
          rbacSelfCheck: true,
          impersonate,
          onRequest: (r: RequestRecord) => codes.push(r.code),
          logger: pino(pino.destination({ dest: join(dir, `own-rbac-${operator.operatorName}.log`), sync: true })),
        }),
      );
    }
    // The RBAC authorizer reads bindings from an informer: wait until each ServiceAccount's grants count.
    for (const [i, operator] of operators.entries()) {
      const probe = new ApiClient({ kubeConfig: testKubeConfig(), impersonate: impersonations[i] });
      await eventually('bindings effective', async () => (await checkAccess(probe, requiredAccess([operator], { namespace: ns }))).length === 0, 30_000, 250);
      probe.close();
    }
    for (const manager of managers) await manager.start();
    const paths: string[] = [];
    for (const operator of operators) paths.push(...(await createExampleSamples(admin, operator, ns)));
    for (const path of paths) await waitReady(path);
    expect(codes.filter((c) => c === 403)).toEqual([]);
  } finally {
    for (const manager of managers) await manager.stop();
  }
}, 240_000);

test('GIVEN run as a ServiceAccount missing one permission THEN it exits 1 at once, naming exactly that rule', async () => {
  const ns = await createTestNamespace('missing-perm', admin);
  const rules = memcachedRules().map((rule) =>
    rule.resources.includes('deployments') ? { ...rule, verbs: rule.verbs.filter((v) => v !== 'delete') } : rule,
  );
  const kubeconfig = await serviceAccountKubeconfig(ns, 'no-delete', rules);
  const logFile = join(dir, 'missing-perm.log');
  // wait until the binding counts (the authorizer's informer), with a check that does not need the operator
  const probe = new ApiClient({ kubeConfig: testKubeConfig(), impersonate: { user: `system:serviceaccount:${ns}:no-delete` } });
  await eventually('binding effective', () => probe.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments`).then(() => true, () => false), 30_000);
  probe.close();
  const code = await runRun(
    { operators: 'memcached-operator', kubeconfig, namespace: ns, metricsBindAddress: '0', healthProbeBindAddress: '0' },
    { logger: pino(pino.destination({ dest: logFile, sync: true })) },
  );
  expect(code).toBe(1);
  const log = await readFile(logFile, 'utf8');
  expect(log).toContain(`cannot delete deployments.apps in namespace \\"${ns}\\"`);
  // exactly one rule is named
  const failed = log.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; err?: { message: string } }).find((l) => l.msg === 'operators failed');
  expect(failed?.err?.message.match(/cannot /g)).toHaveLength(1);
}, 120_000);

test('GIVEN run with /metrics THEN the controller-runtime names are served with counts that match what happened', async () => {
  const ns = await createTestNamespace('metrics', admin);
  const stop = new AbortController();
  let started!: (info: { metricsPort?: number }) => void;
  const ports = new Promise<{ metricsPort?: number }>((r) => (started = r));
  const exit = runRun(
    { operators: 'memcached-operator', kubeconfig: kubeconfigPath, namespace: ns, metricsBindAddress: '127.0.0.1:0', metricsSecure: false, healthProbeBindAddress: '0' },
    { signal: stop.signal, onStarted: started, logger: pino(pino.destination({ dest: join(dir, 'metrics.log'), sync: true })) },
  );
  try {
    const { metricsPort } = await ports;
    const names = ['m1', 'm2', 'm3'];
    for (const name of names) await createMemcached(ns, name);
    for (const name of names) await waitReady(crPath(memcached(), ns, name));
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const metric of EXPECTED_METRIC_NAMES) {
      expect(text).toContain(`# TYPE ${metric} `);
    }
    const controller = { controller: 'memcached-operator' };
    expect(metricValue(text, 'controller_runtime_reconcile_total', { ...controller, result: 'success' })).toBeGreaterThanOrEqual(names.length);
    expect(metricValue(text, 'controller_runtime_reconcile_total', { ...controller, result: 'error' })).toBe(0);
    expect(metricValue(text, 'controller_runtime_max_concurrent_reconciles', controller)).toBe(1);
    expect(metricValue(text, 'controller_runtime_reconcile_time_seconds_count', controller)).toBeGreaterThanOrEqual(names.length);
    expect(metricValue(text, 'workqueue_adds_total', { name: 'memcached-operator' })).toBeGreaterThanOrEqual(names.length);
    // each child created with a POST (201), status and later applies by server-side apply (200)
    expect(metricValue(text, 'rest_client_requests_total', { method: 'POST', code: '201' })).toBeGreaterThanOrEqual(names.length * 2);
    expect(metricValue(text, 'rest_client_requests_total', { method: 'PATCH', code: '200' })).toBeGreaterThanOrEqual(names.length);
    expect(metricValue(text, 'rest_client_requests_total', { method: 'GET', code: '200' })).toBeGreaterThan(0);
    expect(metricValue(text, 'rest_client_requests_total', { code: '403' })).toBe(0);
    // the CRs' status writes come after the caches synced, so the CR watch heard them as MODIFIED events
    const crResource = `${memcached().crd.plural}.${memcached().crd.group}`;
    expect(metricValue(text, 'cdk8s_operator_watch_events_total', { resource: crResource, type: 'MODIFIED' })).toBeGreaterThanOrEqual(names.length);
  } finally {
    stop.abort();
    expect(await exit).toBe(0);
  }
}, 180_000);

test('GIVEN a cache that cannot sync THEN /readyz answers 500 while /healthz answers 200; once the permission is granted it syncs and /readyz flips to 200', async () => {
  const ns = await createTestNamespace('readyz', admin);
  const full = memcachedRules();
  const withoutDeployments = full.filter((rule) => !rule.resources.includes('deployments'));
  const kubeconfig = await serviceAccountKubeconfig(ns, 'late', withoutDeployments);
  const port = await freePort();
  const cli = startCli([
    'run',
    '--operators', 'memcached-operator',
    '--kubeconfig', kubeconfig,
    '-n', ns,
    '--no-rbac-self-check',
    '--metrics-bind-address', '0',
    '--health-probe-bind-address', `127.0.0.1:${port}`,
  ]);
  try {
    await eventually('/readyz answers 500', async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 500, 60_000);
    const body = await (await fetch(`http://127.0.0.1:${port}/readyz`)).text();
    expect(body).toContain('[-]informers');
    expect(await httpStatus(`http://127.0.0.1:${port}/healthz`)).toBe(200);
    await serviceAccountKubeconfig(ns, 'late', full); // same ClusterRole, now with deployments
    await eventually('/readyz answers 200', async () => (await httpStatus(`http://127.0.0.1:${port}/readyz`)) === 200, 120_000, 500);
    expect(await httpStatus(`http://127.0.0.1:${port}/healthz`)).toBe(200);
  } finally {
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  }
}, 240_000);

test('GIVEN SIGTERM during a slow finalize THEN the reconcile completes, then the lease is released (no holder), and run exits 0', async () => {
  const ns = await createTestNamespace('sigterm', admin);
  const slow = addSlowOperator(new App())[0];
  const cli = startCli(
    [
      'run',
      '--module', SLOW_MODULE,
      '--kubeconfig', kubeconfigPath,
      '-n', ns,
      '--leader-elect', '--leader-election-namespace', ns, '--leader-election-id', 'slow-lease',
      '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
    ],
    { SLOW_FINALIZE_MS: '3000' },
  );
  try {
    await admin.request('POST', crPath(slow, ns), { body: { apiVersion: 'slow.example.com/v1', kind: 'Slow', metadata: { name: 'one', namespace: ns }, spec: {} } });
    await waitReady(crPath(slow, ns, 'one'));
    const lease = await admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/slow-lease`);
    expect((lease.spec as { holderIdentity?: string }).holderIdentity).toBeTruthy();

    await admin.request('DELETE', crPath(slow, ns, 'one'));
    await eventually('finalize started', async () => cli.output().includes(`finalize started ${ns}/one`), 60_000, 20);
    cli.child.kill('SIGTERM');
    const code = await eventually('run exits', async () => (cli.child.exitCode !== null ? cli.child.exitCode : undefined), 60_000);
    expect(code).toBe(0);
    const out = cli.output();
    expect(out).toContain(`finalize done ${ns}/one`);
    // the finalizer was removed before the process ended, so the CR is gone
    await expect(admin.request('GET', crPath(slow, ns, 'one'))).rejects.toMatchObject({ code: 404 });
    const after = await admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/slow-lease`);
    expect((after.spec as { holderIdentity?: string }).holderIdentity ?? '').toBe('');
    // order in the log: the finalize finished, then the operators stopped
    expect(out.indexOf(`finalize done ${ns}/one`)).toBeLessThan(out.indexOf('"msg":"operators stopped"'));
  } finally {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  }
}, 180_000);

test('GIVEN two replicas with --leader-elect THEN exactly one reconciles; WHEN the leader is killed (no release) THEN the other takes over, and at no sampled point do both write', async () => {
  const ns = await createTestNamespace('two-replicas', admin);
  const replicas = await Promise.all(
    ['a', 'b'].map(async (id) => {
      const metricsPort = await freePort();
      const healthPort = await freePort();
      const cli = startCli([
        'run',
        '--operators', 'memcached-operator',
        '--kubeconfig', kubeconfigPath,
        '-n', ns,
        '--leader-elect', '--leader-election-namespace', ns, '--leader-election-id', 'memcached-two',
        '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--metrics-secure=false',
        '--health-probe-bind-address', `127.0.0.1:${healthPort}`,
      ]);
      return { id, cli, metricsPort, healthPort };
    }),
  );
  /**
   * Reconcile writes of a replica: PATCHes (server-side apply, status, event series) and DELETEs, from its
   * /metrics. POSTs (children's creates) are left out: the metric does not tell them from the Lease's
   * create, which a standby sends too; every CR's status write is a PATCH, so a reconcile still shows.
   */
  const writes = async (r: (typeof replicas)[number]): Promise<number | undefined> => {
    try {
      const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`, { signal: AbortSignal.timeout(3000) })).text();
      return metricValue(text, 'rest_client_requests_total', { method: 'PATCH' }) + metricValue(text, 'rest_client_requests_total', { method: 'DELETE' });
    } catch {
      return undefined; // killed
    }
  };
  const leading = async (r: (typeof replicas)[number]): Promise<boolean> => {
    const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
    return metricValue(text, 'leader_election_master_status', { name: 'memcached-two' }) === 1;
  };
  // sampler: at every sample, which replicas' write counters moved since the previous one
  const bothWrote: string[] = [];
  let last: (number | undefined)[] = [undefined, undefined];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const now = await Promise.all(replicas.map(writes));
      const moved = now.map((n, i) => n !== undefined && last[i] !== undefined && n > last[i]!);
      if (moved.every(Boolean)) bothWrote.push(`${JSON.stringify(last)} → ${JSON.stringify(now)}`);
      last = now;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    for (const r of replicas) await eventually(`replica ${r.id} ready`, async () => (await httpStatus(`http://127.0.0.1:${r.healthPort}/readyz`)) === 200, 60_000);
    await createMemcached(ns, 'first');
    await waitReady(crPath(memcached(), ns, 'first'));
    const lead = await Promise.all(replicas.map(leading));
    expect(lead.filter(Boolean)).toHaveLength(1);
    const leader = replicas[lead.indexOf(true)];
    const standby = replicas[lead.indexOf(false)];
    expect(await writes(leader)).toBeGreaterThan(0);
    expect(await writes(standby)).toBe(0);
    // both are Ready (probes don't depend on leadership)
    expect(await httpStatus(`http://127.0.0.1:${standby.healthPort}/readyz`)).toBe(200);

    leader.cli.child.kill('SIGKILL'); // a crash: the lease is not released
    await leader.cli.exited;
    await eventually('standby leads', () => leading(standby), 60_000, 250);
    await createMemcached(ns, 'second');
    await waitReady(crPath(memcached(), ns, 'second'));
    expect(await writes(standby)).toBeGreaterThan(0);
    const lease = await admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/memcached-two`);
    expect((lease.spec as { leaseTransitions?: number }).leaseTransitions).toBeGreaterThanOrEqual(1);
  } finally {
    sampling = false;
    await sampler;
    for (const r of replicas) if (r.cli.child.exitCode === null) r.cli.child.kill('SIGTERM');
    await Promise.all(replicas.map((r) => r.cli.exited));
  }
  expect(bothWrote).toEqual([]);
}, 240_000);

test('GIVEN a leading Manager WHEN it can no longer renew its lease THEN leadership is lost, the workers stop, and no reconcile write reaches the server afterwards', async () => {
  const ns = await createTestNamespace('lost-lease', admin);
  await serviceAccountKubeconfig(ns, 'loser', memcachedRules());
  await grantLeases(ns, 'loser');
  const impersonate = serviceAccountUser(ns, 'loser');
  const probe = new ApiClient({ kubeConfig: testKubeConfig(), impersonate });
  await eventually(
    'bindings effective',
    async () => (await checkAccess(probe, requiredAccess([memcached()], { namespace: ns, leaderElectionNamespace: ns }))).length === 0,
    30_000,
    250,
  );
  probe.close();

  const records: RequestRecord[] = [];
  let lostAt: number | undefined;
  const manager = new Manager({
    kubeConfig: testKubeConfig(),
    operators: [memcached()],
    namespace: ns,
    impersonate,
    onRequest: (r) => records.push(r),
    logger: pino(pino.destination({ dest: join(dir, 'lost-lease.log'), sync: true })),
    leaderElection: { namespace: ns, name: 'loser', identity: 'loser-1', leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 500, onLost: () => (lostAt = records.length) },
  });
  try {
    await manager.start();
    await eventually('leading', async () => manager.isLeader(), 30_000);
    await createMemcached(ns, 'before');
    await waitReady(crPath(memcached(), ns, 'before'));

    await admin.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/leases`);
    await eventually('leadership lost', async () => lostAt !== undefined, 60_000);
    expect(manager.isLeader()).toBe(false);

    await createMemcached(ns, 'after');
    // give a (wrongly) still-running worker every chance to act: the CR's own event plus a few retry periods
    await new Promise((r) => setTimeout(r, 3000));
    const writesAfter = records.slice(lostAt).filter((r) => r.method !== 'GET' && !r.path.includes('/leases/') && r.code !== 0);
    expect(writesAfter).toEqual([]);
    const after = await admin.request('GET', crPath(memcached(), ns, 'after'));
    expect(after.status).toBeUndefined();
  } finally {
    await manager.stop();
  }
}, 180_000);

test('GIVEN a CR whose child drifts twice THEN its events.k8s.io Events: none for the create, Applied regarding the CR for the first revert, the repeat aggregated into the same Event\'s series', async () => {
  const ns = await createTestNamespace('events', admin);
  const stop = new AbortController();
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const exit = runRun(
    { operators: 'memcached-operator', kubeconfig: kubeconfigPath, namespace: ns, metricsBindAddress: '0', healthProbeBindAddress: '0' },
    { signal: stop.signal, onStarted: () => started(), logger: pino(pino.destination({ dest: join(dir, 'events.log'), sync: true })) },
  );
  try {
    await running;
    await createMemcached(ns, 'ev');
    await waitReady(crPath(memcached(), ns, 'ev'));
    const cr = await admin.request('GET', crPath(memcached(), ns, 'ev'));
    type Event = KubeObject & { reason: string; type: string; note: string; reportingController: string; regarding: { uid: string; kind: string }; series?: { count: number; lastObservedTime: string } };
    const events = async () => (await admin.request<{ items: Event[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)).items;
    // Creating the children records no Event (transitions and failures only).
    expect((await events()).filter((e) => e.reason === 'Applied')).toEqual([]);

    // drift on a field the operator sets, twice: each is reverted, each records the same "applied Deployment" event
    const driftAndWait = async (replicas: number) => {
      await admin.request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/ev`, { body: { spec: { replicas } }, contentType: 'application/merge-patch+json' });
      await eventually('drift reverted', async () => {
        const d = await admin.request<{ spec: { replicas: number } }>('GET', `/apis/apps/v1/namespaces/${ns}/deployments/ev`);
        return d.spec.replicas === 1;
      }, 30_000);
    };
    await driftAndWait(5);
    const first = await eventually('an Applied event', async () => (await events()).find((e) => e.reason === 'Applied'), 30_000);
    expect(first).toMatchObject({ type: 'Normal', reportingController: 'cdk8s.io/memcached-operator', regarding: { kind: 'Memcached', uid: cr.metadata!.uid } });
    expect(first.note).toBe(`applied Deployment ${ns}/ev`);
    await driftAndWait(6);
    const aggregated = await eventually(
      'the Applied event counted as a series',
      async () => (await events()).filter((e) => e.reason === 'Applied' && e.note === `applied Deployment ${ns}/ev`).find((e) => (e.series?.count ?? 1) >= 2),
      30_000,
    );
    expect(aggregated.metadata!.name).toBeDefined();
    expect(aggregated.series!.lastObservedTime).toMatch(/Z$/);
    // one Event object per distinct note, not one per observation
    expect((await events()).filter((e) => e.reason === 'Applied' && e.note === `applied Deployment ${ns}/ev`)).toHaveLength(1);
  } finally {
    stop.abort();
    expect(await exit).toBe(0);
  }
}, 120_000);

test('GIVEN run --leader-elect as a ServiceAccount WHEN it can no longer renew its lease THEN the process exits 1 on its own', async () => {
  const ns = await createTestNamespace('lost-exit', admin);
  const kubeconfig = await serviceAccountKubeconfig(ns, 'leader', memcachedRules());
  await grantLeases(ns, 'leader');
  const probe = new ApiClient({ kubeConfig: testKubeConfig(), impersonate: serviceAccountUser(ns, 'leader') });
  await eventually(
    'bindings effective',
    async () => (await checkAccess(probe, requiredAccess([memcached()], { namespace: ns, leaderElectionNamespace: ns }))).length === 0,
    30_000,
    250,
  );
  probe.close();
  const cli = startCli([
    'run',
    '--operators', 'memcached-operator',
    '--kubeconfig', kubeconfig,
    '-n', ns,
    '--leader-elect', '--leader-election-namespace', ns, '--leader-election-id', 'exit-lease',
    '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
  ]);
  try {
    await eventually('lease held', async () => {
      const lease = await admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/exit-lease`).catch(() => undefined);
      return Boolean((lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity);
    }, 60_000);
    await admin.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/leases`);
    // renew deadline 10 s by default; the process must end by itself
    const code = await eventually('run exits', async () => (cli.child.exitCode !== null ? cli.child.exitCode : undefined), 90_000, 250);
    expect(code).toBe(1);
    expect(cli.output()).toContain('leadership lost');
  } finally {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  }
}, 150_000);

test('GIVEN SIGTERM during a finalize longer than --graceful-shutdown-timeout THEN run stops waiting at the deadline, its late writes are cut off, the lease is released, exit 0', async () => {
  const ns = await createTestNamespace('grace', admin);
  const slow = addSlowOperator(new App())[0];
  const cli = startCli(
    [
      'run',
      '--module', SLOW_MODULE,
      '--kubeconfig', kubeconfigPath,
      '-n', ns,
      '--leader-elect', '--leader-election-namespace', ns, '--leader-election-id', 'grace-lease',
      '--graceful-shutdown-timeout', '1s',
      '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
    ],
    { SLOW_FINALIZE_MS: '60000' },
  );
  try {
    await admin.request('POST', crPath(slow, ns), { body: { apiVersion: 'slow.example.com/v1', kind: 'Slow', metadata: { name: 'stuck', namespace: ns }, spec: {} } });
    await waitReady(crPath(slow, ns, 'stuck'));
    await admin.request('DELETE', crPath(slow, ns, 'stuck'));
    await eventually('finalize started', async () => cli.output().includes(`finalize started ${ns}/stuck`), 60_000, 20);
    cli.child.kill('SIGTERM');
    const code = await eventually('run exits', async () => (cli.child.exitCode !== null ? cli.child.exitCode : undefined), 30_000);
    expect(code).toBe(0);
    expect(cli.output()).not.toContain(`finalize done ${ns}/stuck`);
    expect(cli.output()).toContain('reconciles still running at the graceful-shutdown deadline');
    // the finalizer is still there: the cut-off reconcile never removed it
    const cr = await admin.request('GET', crPath(slow, ns, 'stuck'));
    expect(cr.metadata?.finalizers).toContain('operator.cdk8s.io/slow-operator');
    const lease = await admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/grace-lease`);
    expect((lease.spec as { holderIdentity?: string }).holderIdentity ?? '').toBe('');
  } finally {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  }
}, 180_000);
