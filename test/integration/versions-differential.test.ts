/**
 * Every served version holds what the runtime and conversion write, and conversion of stored data is
 * best effort, against a real API server that calls the examples' conversion webhooks (served in this
 * process on loopback, as envtest does) while a Manager runs the operators.
 *
 * Differential: for every example operator with versions, one object per served version and per way of
 * writing it (create, kubectl client-side apply, server-side apply); each must reach Ready through the
 * operator's own status writes (server-side apply of status in the hub, converted by the API server into
 * every version that owns fields), and read the same status in every version.
 *
 * Best effort (opentelemetry-operator#4288, provider-keycloak#669): objects stored under looser rules
 * (size 0 and replicas 0, before `.min(1)`) must not break a LIST or GET of the kind in any version.
 *
 * Own control plane: the test replaces the memcached CRD with looser forms.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator } from '../../lib/operator/operator.js';
import { spokeVersion } from '../../lib/operator/versions/versions.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { serveWebhooksLocally, type LocalWebhooks } from '../../lib/testing/local-webhooks.js';
import { addOperators } from '../../operators/index.js';
import { eventually as waitFor } from '../support/eventually.js';
import { kubectl as runKubectl } from '../support/kubectl.js';

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 6 * 60_000;

let plane: ControlPlane;
let admin: ApiClient;
let local: LocalWebhooks;
let manager: Manager;
let dir: string;
const operators = addOperators(new App()).filter((o) => o.versions.length > 1);
const logFile = join(tmpdir(), `versions-it-${process.pid}.log`);
const webhookLogFile = join(tmpdir(), `versions-it-webhooks-${process.pid}.log`);

const eventually = <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 150_000) =>
  waitFor(what, check, { timeoutMs, context: () => `; operator log: ${logFile}; control plane logs: ${Object.values(plane.logPaths).join(', ')}` });

const kubectl = (args: string[], stdin?: string) => runKubectl(plane.kubeconfigPath, args, stdin);

const get = (path: string) => admin.request('GET', path).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));

/** A GET that waits out `429 storage is (re)initializing` (the API server rebuilds a CRD's storage after an update); any other error is thrown. */
async function read(path: string): Promise<KubeObject | undefined> {
  let last = '';
  const outcome = await waitFor(`GET ${path} past 429`, async () => {
    try {
      return { value: await get(path) };
    } catch (err) {
      if (!isApiError(err, 429)) return { err };
      last = (err as Error).message; // a failing conversion of a stored object also answers 429 here
      return undefined;
    }
  }, { timeoutMs: 150_000, context: () => ` (last: ${last})` });
  if ('err' in outcome) throw outcome.err;
  return outcome.value;
}

let nsCounter = 0;
async function newNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${++nsCounter}`;
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'versions-test' });
  dir = await mkdtemp(join(tmpdir(), 'versions-it-'));
  local = await serveWebhooksLocally({ kubeConfig: plane.kubeConfig, operators, logger: pino({ level: 'info' }, pino.destination({ dest: webhookLogFile, sync: true })) });
  await local.install();
  manager = new Manager({ kubeConfig: plane.kubeConfig, operators, logger: pino({ level: 'info' }, pino.destination({ dest: logFile, sync: true })) });
  await manager.start();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await manager?.stop();
  await local?.close();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Way = 'create' | 'client-side apply' | 'server-side apply';
const WAYS: Way[] = ['create', 'client-side apply', 'server-side apply'];

/** Writes `obj` (any served version) the way a user would. */
async function write(way: Way, operator: Operator, obj: KubeObject): Promise<void> {
  const [group, version] = obj.apiVersion!.split('/') as [string, string];
  const collection = `/apis/${group}/${version}/namespaces/${obj.metadata!.namespace}/${operator.crd.plural}`;
  if (way === 'create') {
    await admin.request('POST', collection, { body: obj });
  } else if (way === 'client-side apply') {
    const result = await kubectl(['apply', '-f', '-'], JSON.stringify(obj));
    if (result.code !== 0) throw new Error(`kubectl apply: ${result.stderr}`);
  } else {
    await admin.request('PATCH', `${collection}/${obj.metadata!.name}`, { body: obj, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'versions-test', force: 'true' } });
  }
}

const ready = (obj: KubeObject | undefined) => {
  const status = obj?.status as { observedGeneration?: number; conditions?: { type: string; status: string }[] } | undefined;
  return status?.observedGeneration === obj?.metadata?.generation && status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
};

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));

describe.each(operators.map((o) => [o.operatorName, o] as const))('%s: every served version holds the status', (_name, operator) => {
  const example = operator.examples[0]!;
  const served = operator.versions.filter((v) => v.served).map((v) => v.name);
  const cases = served.flatMap((version) => WAYS.map((way) => [version, way] as const));

  test.each(cases)('GIVEN a CR written in %s by %s WHEN the operator reconciles it THEN it reaches Ready and its status reads the same in every served version', async (version, way) => {
    const ns = await newNamespace(`${operator.crd.plural.slice(0, 10)}-${version}`);
    const name = `${way.replace(/[^a-z]+/g, '-')}-${version}`;
    const hubObject = { ...example, metadata: { name, namespace: ns } } as KubeObject;
    const obj = operator.convert(hubObject as never, `${operator.crd.group}/${version}`) as KubeObject;
    await write(way, operator, obj);

    const path = (v: string) => `/apis/${operator.crd.group}/${v}/namespaces/${ns}/${operator.crd.plural}/${name}`;
    const hubStatus = await eventually(`${name} Ready, read as ${operator.crd.version}`, async () => {
      const hub = await get(path(operator.crd.version));
      return ready(hub) ? hub!.status : undefined;
    });
    expect(hubStatus).toMatchObject({ children: expect.any(Array), conditions: expect.any(Array) });
    // Every version holds the hub's status as it is (re-read until no reconcile changed it in between).
    await eventually(`${name}'s status the same in ${served.join(', ')}`, async () => {
      const reads = await Promise.all(served.map(async (v) => [v, (await get(path(v)))?.status as Record<string, unknown> | undefined] as const));
      const hub = reads.find(([v]) => v === operator.crd.version)![1]!;
      return reads.every(([, status]) => status && Object.entries(hub).every(([key, value]) => canonical(status[key]) === canonical(value)));
    });
    // The operator's status apply went through: its manager owns status fields in the hub.
    const stored = (await get(path(operator.crd.version)))!;
    const managers = (stored.metadata!.managedFields ?? []) as { manager: string; apiVersion: string; subresource?: string }[];
    expect(managers).toContainEqual(expect.objectContaining({ manager: operator.operatorName, subresource: 'status', apiVersion: operator.crd.apiVersion }));
  }, TEST_TIMEOUT_MS);
});

/** The apiVersion an object is stored in, read from etcd (its v3 JSON gateway). */
async function storedApiVersion(key: string): Promise<string | undefined> {
  const response = await fetch(`${plane.etcdEndpoint}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from(key).toString('base64') }) });
  const body = (await response.json()) as { kvs?: { value: string }[] };
  const value = body.kvs?.[0]?.value;
  return value === undefined ? undefined : (JSON.parse(Buffer.from(value, 'base64').toString()) as { apiVersion: string }).apiVersion;
}

/** The memcached CRD as an earlier release had it: size 0 and replicas 0 allowed; stored in `storage`. */
class LooseMemcached extends Operator {
  constructor(scope: Construct, storage: 'v1beta1' | 'v1alpha1') {
    const Hub = z.object({ replicas: z.int().min(0).max(100), cache: z.object({ memoryMiB: z.int().min(16).max(64).default(64) }).default({ memoryMiB: 64 }) });
    const Old = z.object({ size: z.int().min(0).max(100) });
    super(scope, `loose-${storage}`, {
      name: 'memcached-operator', group: 'cache.example.com', version: 'v1beta1', kind: 'Memcached', shortNames: ['mc'], spec: Hub,
      status: z.object({ nodes: z.array(z.string()) }),
      versions: [spokeVersion({ hubSpec: Hub, name: 'v1alpha1', spec: Old, storage: storage === 'v1alpha1', toHub: (o) => ({ spec: { replicas: o.spec.size } }), fromHub: (h) => ({ spec: { size: h.spec.replicas } }) })],
    });
  }
  render(): void {}
}

describe('memcached: stored objects that today\'s rules reject', () => {
  test('GIVEN a v1beta1 and a v1alpha1 object stored before .min(1) WHEN the tightened CRD and webhook are installed THEN LIST and GET succeed in every version and the objects read back', async () => {
    const ns = await newNamespace('stored');
    const crdOnly = async (storage: 'v1beta1' | 'v1alpha1') => {
      const file = join(dir, `loose-${storage}.json`);
      await writeFile(file, JSON.stringify(new LooseMemcached(new App(), storage).customResourceDefinition.toJson()));
      await installCRDs(plane.kubeConfig, [file], 60_000, { webhook: local.webhook });
    };
    // The earlier release had no admission hooks; its schema allowed 0.
    for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
      await admin.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}/memcached-operator-webhook`);
    }
    await crdOnly('v1beta1');
    const beta = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'zero-beta', namespace: ns }, spec: { replicas: 0 } };
    await eventually('replicas 0 accepted by the loose CRD and no hook', async () => (await admin.request('POST', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`, { body: beta, query: { dryRun: 'All' } })) !== undefined);
    await admin.request('POST', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`, { body: beta });
    await crdOnly('v1alpha1');
    const alpha = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'zero-alpha', namespace: ns }, spec: { size: 0 } };
    // The API server switches its storage version asynchronously: create until etcd holds the object as v1alpha1.
    await eventually('zero-alpha stored as v1alpha1 in etcd', async () => {
      await admin.request('DELETE', `/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds/zero-alpha`).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
      await eventually('zero-alpha gone', async () => (await get(`/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds/zero-alpha`)) === undefined);
      await admin.request('POST', `/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds`, { body: alpha });
      return (await storedApiVersion(`/registry/cache.example.com/memcacheds/${ns}/zero-alpha`)) === 'cache.example.com/v1alpha1';
    });
    expect(await storedApiVersion(`/registry/cache.example.com/memcacheds/${ns}/zero-beta`)).toBe('cache.example.com/v1beta1');

    // The upgrade: today's CRD (min 1) and the webhooks.
    await local.install();
    await eventually('the tightened schema in force', async () => {
      try {
        await admin.request('POST', `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`, { body: { ...beta, metadata: { name: 'probe', namespace: ns } }, query: { dryRun: 'All' } });
        return false;
      } catch (err) {
        return isApiError(err, 422);
      }
    });

    for (const version of ['v1beta1', 'v1alpha1']) {
      for (const path of [`/apis/cache.example.com/${version}/namespaces/${ns}/memcacheds`, `/apis/cache.example.com/${version}/memcacheds`]) {
        const list = (await read(path)) as unknown as { items: KubeObject[] };
        const mine = list.items.filter((i) => i.metadata!.namespace === ns).map((i) => [i.metadata!.name, i.spec]).sort();
        expect([path, mine]).toEqual([path, version === 'v1beta1'
          ? [['zero-alpha', { replicas: 0, cache: { memoryMiB: 64 } }], ['zero-beta', { replicas: 0, cache: { memoryMiB: 64 } }]]
          : [['zero-alpha', { size: 0 }], ['zero-beta', { size: 0 }]]]);
      }
    }
    expect((await read(`/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds/zero-alpha`))!.spec).toEqual({ replicas: 0, cache: { memoryMiB: 64 } });
    expect((await read(`/apis/cache.example.com/v1alpha1/namespaces/${ns}/memcacheds/zero-beta`))!.spec).toEqual({ size: 0 });
    const table = await kubectl(['get', 'memcacheds.v1alpha1.cache.example.com', '-n', ns]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/zero-alpha\s+0\s/);

    // Not silent: the webhook server said so at warn, once per object and direction, however many reads converted it.
    const warnings = (await readFile(webhookLogFile, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as { level: number; msg: string }).filter((l) => l.level === 40);
    const about = (name: string, to: string) => warnings.filter((w) => w.msg.startsWith(`Memcached ${ns}/${name}: converted to cache.example.com/${to} best effort:`));
    expect(about('zero-alpha', 'v1beta1')).toEqual([expect.objectContaining({ msg: expect.stringContaining('spec.size: Too small') })]);
    expect(about('zero-beta', 'v1alpha1')).toEqual([expect.objectContaining({ msg: expect.stringContaining('spec.replicas: Too small') })]);
  }, TEST_TIMEOUT_MS);
});
