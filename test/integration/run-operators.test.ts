/**
 * `runOperators` used as a user's own `main.ts` uses it: imported from the package's runtime entry
 * (lib/runtime/index.ts), given a client-node `KubeConfig`, the operator constructs, the ports and an
 * AbortSignal, against a real API server. The memcached example has conversion and admission webhooks;
 * the API server reaches them on loopback (its CRD and webhook configurations point at a url, as
 * envtest's do), with the caBundle the run itself writes (self-managed certificate).
 *
 * Own control plane: the memcached webhook configurations (failurePolicy: Fail) would refuse other test
 * files' Memcached writes once this run stops.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { parse } from 'yaml';
import { CacheSyncError, RuntimeError, ServerStartError, runOperators, type StartedServers } from '../../lib/runtime/index.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { createCertificateAuthority } from '../../lib/runtime/webhook/x509.js';
import { MEMCACHED_POLICY_CONFIGMAP, MemcachedOperator } from '../../operators/memcached/index.js';
import { SlowFinalizerOperator } from './fixtures/slow-finalizer-operator.js';
import { eventually } from '../support/eventually.js';
import { scrapeMetrics } from '../support/metrics-scrape.js';
import { freePort } from '../support/free-port.js';
import { requestServiceAccountToken } from '../support/run-as-pod.js';

const NS = 'programmatic';
const OPERATOR_NS = 'memcached-operator-system';
const BETA = '/apis/cache.example.com/v1beta1';
const ALPHA = '/apis/cache.example.com/v1alpha1';

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
let webhookPort: number;

/** Runs started by a test; stopped after it even when an assertion failed first (else jest never exits). */
const runs: { stop: AbortController; done: Promise<unknown> }[] = [];

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'run-operators-'));
  for (const name of [NS, OPERATOR_NS]) {
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  }
  // The CRD and webhook configurations as synthesized, pointed at the run's webhook port; the CA is a
  // stand-in until the run writes its own.
  webhookPort = await freePort();
  const operator = new MemcachedOperator(new App());
  const objects = operator.node.findAll().filter((c) => 'kind' in c && ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes((c as { kind: string }).kind));
  const file = join(dir, 'memcached.json');
  await writeFile(file, objects.map((o) => JSON.stringify((o as unknown as { toJson(): unknown }).toJson())).join('\n---\n'));
  const standIn = createCertificateAuthority('stand-in', { notAfter: new Date(Date.now() + 86_400_000) }).certPem;
  await installCRDs(plane.kubeConfig, [file], 60_000, { webhook: { url: `https://127.0.0.1:${webhookPort}`, caPem: standIn } });
}, 10 * 60_000);

afterEach(async () => {
  for (const run of runs.splice(0)) {
    run.stop.abort();
    await run.done.catch(() => undefined);
  }
});

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What a user's main.ts does to get its KubeConfig. */
function userKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(plane.kubeconfigPath);
  return kubeConfig;
}

const get = (path: string) => admin.request('GET', path).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));

function condition(cr: KubeObject | undefined, type: string): string | undefined {
  return ((cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type)?.status;
}

/** An HTTP GET to loopback: status and body, or the connection error's code. */
async function http(port: number, path: string): Promise<{ status: number; body: string } | { error: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  } catch (err) {
    return { error: String(((err as Error).cause as { code?: string } | undefined)?.code ?? err) };
  }
}

test('GIVEN runOperators with the memcached operator, leader election and the ports for /metrics, probes and webhooks THEN the sample becomes Ready, every server answers on its port (/metrics secure: 401 without a token, metrics for a metrics-reader), the webhooks convert and admit; WHEN the signal aborts THEN it resolves, releases the Lease and closes the ports', async () => {
  const [metricsPort, healthProbePort] = [await freePort(), await freePort()];
  const stop = new AbortController();
  let started!: (servers: StartedServers) => void;
  const servers = new Promise<StartedServers>((resolve) => (started = resolve));
  const logFile = join(dir, 'main.log');
  const done = runOperators({
    kubeConfig: userKubeConfig(),
    operators: [new MemcachedOperator(new App())],
    metricsBindAddress: `127.0.0.1:${metricsPort}`,
    healthProbeBindAddress: `127.0.0.1:${healthProbePort}`,
    webhookBindAddress: `127.0.0.1:${webhookPort}`,
    webhookCertHosts: ['127.0.0.1'],
    leaderElection: true,
    signal: stop.signal,
    stopOnSignals: [], // jest's own signals stay jest's
    onStarted: started,
    logger: pino(pino.destination({ dest: logFile, sync: true })),
  });
  runs.push({ stop, done });
  expect(await Promise.race([servers, done.then(() => 'ended early')])).toEqual({ metricsPort, healthProbePort, webhookPort });

  // Probes on the port given: alive, and Ready with the webhook server counted.
  expect(await http(healthProbePort, '/healthz')).toEqual({ status: 200, body: 'ok' });
  const readyz = await http(healthProbePort, '/readyz?verbose');
  expect(readyz).toMatchObject({ status: 200, body: expect.stringContaining('[+]webhooks ok') });

  // The webhooks, through the API server: the caBundle the run wrote is trusted once the server picks it up.
  const alpha = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'from-alpha', namespace: NS }, spec: { size: 1 } };
  await eventually('the API server calls the webhooks with the run\'s CA', async () => {
    const dry = await admin.request('POST', `${ALPHA}/namespaces/${NS}/memcacheds`, { body: alpha, query: { dryRun: 'All' } });
    return dry.metadata?.labels?.['app.kubernetes.io/name'] === 'memcached';
  }, { timeoutMs: 60_000, context: () => `; log ${logFile}` });
  await admin.request('POST', `${ALPHA}/namespaces/${NS}/memcacheds`, { body: alpha });
  // Stored as v1beta1 (conversion), labelled (mutation).
  const converted = await admin.request('GET', `${BETA}/namespaces/${NS}/memcacheds/from-alpha`);
  expect(converted).toMatchObject({ spec: { replicas: 1 }, metadata: { labels: { 'app.kubernetes.io/name': 'memcached' } } });
  // Validation: more replicas than the namespace's policy allows is denied with the hook's message.
  await admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: MEMCACHED_POLICY_CONFIGMAP, namespace: NS }, data: { maxReplicas: '3' } } });
  const denied = await admin
    .request('POST', `${BETA}/namespaces/${NS}/memcacheds`, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'too-big', namespace: NS }, spec: { replicas: 5 } } })
    .then(() => undefined, (err: unknown) => err);
  expect(isApiError(denied)).toBe(true);
  expect((denied as Error).message).toContain('must be at most 3');

  // The sample, as a user applies it, reconciled to Ready.
  const sample = parse(await readFile(new URL('../../operators/memcached/sample.yaml', import.meta.url), 'utf8')) as KubeObject;
  sample.metadata = { ...sample.metadata, namespace: NS };
  await admin.request('POST', `${BETA}/namespaces/${NS}/memcacheds`, { body: sample });
  const ready = await eventually('the sample Ready', async () => {
    const cr = await get(`${BETA}/namespaces/${NS}/memcacheds/${sample.metadata!.name}`);
    return condition(cr, 'Ready') === 'True' && cr;
  }, { timeoutMs: 120_000, context: () => `; log ${logFile}` });
  expect(ready.status).toMatchObject({ observedGeneration: ready.metadata?.generation });
  expect(await get(`/apis/apps/v1/namespaces/${NS}/deployments/${sample.metadata!.name}`)).toMatchObject({ spec: { replicas: 3 } });

  // /metrics on the port given, secure by default: refused without a token; with the token of a
  // ServiceAccount bound to the synthesized metrics-reader ClusterRole, the reconciles, the webhooks, the leader.
  expect(await scrapeMetrics(metricsPort)).toEqual({ status: 401, body: 'Unauthorized\n' });
  const reader = new MemcachedOperator(new App()).toJson().find((o: KubeObject) => o.kind === 'ClusterRole' && o.metadata?.name === 'memcached-operator-metrics-reader');
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: reader });
  await admin.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'prometheus' } } });
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-metrics-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'memcached-operator-metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: NS }],
    },
  });
  // The binding in effect (RBAC reads bindings from an informer) before the first scrape: a denial is cached 30 s.
  await eventually('the prometheus ServiceAccount may get /metrics', async () => {
    const review = await admin.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:serviceaccount:${NS}:prometheus`, groups: ['system:serviceaccounts'], nonResourceAttributes: { verb: 'get', path: '/metrics' } } },
    });
    return review.status?.allowed === true;
  });
  const metrics = await scrapeMetrics(metricsPort, { token: await requestServiceAccountToken(plane.kubeConfig, NS, 'prometheus') });
  expect(metrics).toMatchObject({ status: 200 });
  const text = metrics.body;
  expect(Number(/controller_runtime_reconcile_total\{controller="memcached-operator",result="success"\} (\d+)/.exec(text)?.[1])).toBeGreaterThan(0);
  expect(text).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/convert",code="200"\} [1-9]/);
  expect(text).toMatch(/leader_election_master_status\{name="memcached-operator"\} 1/);
  const lease = await admin.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NS}/leases/memcached-operator`);
  expect((lease.spec as { holderIdentity?: string }).holderIdentity).toBeTruthy();

  // Stop as SIGTERM would: it resolves, the Lease is released, nothing listens any more.
  stop.abort();
  await expect(done).resolves.toBeUndefined();
  const released = await admin.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NS}/leases/memcached-operator`);
  expect((released.spec as { holderIdentity?: string }).holderIdentity ?? '').toBe('');
  for (const port of [metricsPort, healthProbePort]) expect(await http(port, '/healthz')).toEqual({ error: 'ECONNREFUSED' });
  const log = await readFile(logFile, 'utf8');
  expect(log).toContain('"msg":"operators stopped"');
}, 300_000);

test('GIVEN an operator whose CRD is not installed THEN runOperators rejects with a CacheSyncError naming the informer, logged at error, with its servers closed', async () => {
  const healthProbePort = await freePort();
  const stop = new AbortController();
  const logFile = join(dir, 'unsynced.log');
  const done = runOperators({
    kubeConfig: userKubeConfig(),
    operators: [new SlowFinalizerOperator(new App())],
    metricsBindAddress: '0',
    healthProbeBindAddress: `127.0.0.1:${healthProbePort}`,
    cacheSyncTimeoutMs: 2000,
    signal: stop.signal,
    stopOnSignals: [],
    logger: pino(pino.destination({ dest: logFile, sync: true })),
  });
  runs.push({ stop, done });
  const err = await done.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(CacheSyncError);
  expect(err).toBeInstanceOf(RuntimeError);
  expect(err).toMatchObject({ step: 'cache-sync', reason: 'CacheSyncTimeout', informers: [expect.objectContaining({ resource: expect.stringContaining('slows.slow.example.com') })] });
  expect((err as Error).message).toMatch(/^caches did not sync within 2000 ms \(CacheSyncTimeout\): slows\.slow\.example\.com[^)]*\(list failed: (GET|WATCH) [^)]*: 404 /);
  const failure = (await readFile(logFile, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string; err?: { step?: string } }).find((l) => l.msg === 'caches did not sync; exiting');
  expect(failure).toMatchObject({ level: 50, err: { step: 'cache-sync' } });
  expect(await http(healthProbePort, '/healthz')).toEqual({ error: 'ECONNREFUSED' });
}, 120_000);

test('GIVEN the webhook port already taken THEN runOperators rejects with a ServerStartError of the webhook-server step naming the address', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  const stop = new AbortController();
  try {
    const done = runOperators({
      kubeConfig: userKubeConfig(),
      operators: [new MemcachedOperator(new App())],
      metricsBindAddress: '0',
      healthProbeBindAddress: '0',
      webhookBindAddress: `127.0.0.1:${port}`,
      webhookCertHosts: ['127.0.0.1'],
      signal: stop.signal,
      stopOnSignals: [],
      logger: pino({ level: 'silent' }),
    });
    runs.push({ stop, done });
    const err = await done.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStartError);
    expect(err).toMatchObject({ step: 'webhook-server', reason: 'ListenFailed', message: expect.stringContaining(`webhook server: cannot listen on 127.0.0.1:${port}`) });
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
}, 120_000);
