/**
 * The informer layer against the real local control plane (etcd + kube-apiserver): list + watch,
 * label selection, recovery across an API server restart, and a forced 410 after etcd compaction.
 * Each test works in its own namespace.
 */
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { Informer, type InformerEvent } from '../../lib/runtime/cache/informer.js';
import type { Logger } from '../../lib/runtime/logger.js';
import { type ResourceRef, resourcePath } from '../../lib/runtime/client/resource-path.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { deleteAndCompact } from '../support/etcd-behind-api-server.js';

/** A cold build of the binaries can take a long time; a warm start is seconds. */
const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 120_000;
const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

let plane: ControlPlane;
let client: ApiClient;
const requests: RequestRecord[] = [];
const informers: Informer[] = [];
const logLines: string[] = [];
const logger: Logger = {
  debug: () => undefined,
  info: (f, m) => logLines.push(`info ${m} ${JSON.stringify(f)}`),
  warn: (f, m) => logLines.push(`warn ${m} ${JSON.stringify(f)}`),
  error: (f, m) => logLines.push(`error ${m} ${JSON.stringify(f)}`),
};

beforeAll(async () => {
  plane = await startControlPlane({
    components: { controllerManager: false, scheduler: false, kwok: false },
    log: (line) => process.env.CONTROL_PLANE_DEBUG && console.log(line),
  });
  client = new ApiClient({ kubeConfig: plane.kubeConfig, onRequest: (r) => requests.push(r) });
}, SETUP_TIMEOUT_MS);

afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

afterAll(async () => {
  if (process.env.INFORMER_DEBUG) console.log(logLines.join('\n'));
  client?.close();
  await plane?.stop();
});

let nsCounter = 0;
async function freshNamespace(): Promise<string> {
  const name = `informer-${process.pid}-${++nsCounter}`;
  await client.request('POST', resourcePath(NAMESPACES), { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

function startInformer(namespace: string | undefined, labelSelector?: string, extra: Partial<ConstructorParameters<typeof Informer>[0]> = {}): { informer: Informer; events: InformerEvent[] } {
  const informer = new Informer({
    client,
    resource: CONFIGMAPS,
    namespace,
    labelSelector,
    logger,
    watch: { backoff: { initialMs: 100, maxMs: 2000 } },
    ...extra,
  });
  const events: InformerEvent[] = [];
  informer.on((e) => events.push(e));
  informer.start();
  informers.push(informer);
  return { informer, events };
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}\nlog:\n${logLines.slice(-20).join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function configMap(namespace: string, name: string, data: Record<string, string>, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
}

const seen = (events: InformerEvent[]) => events.map((e) => `${e.type} ${e.object.metadata?.name}`);

test('GIVEN an informer on a namespace WHEN ConfigMaps are created, updated and deleted THEN it sees each change and its cache follows', async () => {
  const ns = await freshNamespace();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'before', { a: '1' }) });
  const { informer, events } = startInformer(ns, undefined, { keepManagedFieldsOf: ['informer-test'] });
  await informer.waitForSync();
  expect(seen(events)).toEqual(['add before']);
  expect(informer.get(ns, 'before')?.kind).toBe('ConfigMap');
  expect(informer.get(ns, 'before')?.metadata).not.toHaveProperty('managedFields');

  await client.request('PATCH', resourcePath(CONFIGMAPS, ns, 'after'), {
    query: { fieldManager: 'informer-test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: configMap(ns, 'after', { b: '1' }),
  });
  await until('add after', () => informer.get(ns, 'after') !== undefined);
  const managers = (informer.get(ns, 'after')!.metadata!.managedFields ?? []).map((m) => (m as { manager: string }).manager);
  expect(managers).toEqual(['informer-test']);

  await client.request('PATCH', resourcePath(CONFIGMAPS, ns, 'before'), {
    contentType: 'application/merge-patch+json',
    body: { data: { a: '2' } },
  });
  await until('update before', () => informer.get(ns, 'before')?.data !== undefined && (informer.get(ns, 'before')!.data as Record<string, string>).a === '2');
  await client.request('DELETE', resourcePath(CONFIGMAPS, ns, 'before'));
  await until('delete before', () => informer.get(ns, 'before') === undefined);

  expect(seen(events)).toEqual(['add before', 'add after', 'update before', 'delete before']);
  expect(events[2].oldObject?.data).toEqual({ a: '1' });
  expect(informer.list(ns).map((o) => o.metadata?.name)).toEqual(['after']);
  expect(Object.isFrozen(informer.get(ns, 'after'))).toBe(true);
}, TEST_TIMEOUT_MS);

test('GIVEN a label-selected informer THEN it sees only matching objects, and an object that stops matching is deleted from it', async () => {
  const ns = await freshNamespace();
  const selector = 'app.kubernetes.io/managed-by in (op-a,op-b)';
  const { informer, events } = startInformer(undefined, selector);
  await informer.waitForSync();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'mine', { x: '1' }, { 'app.kubernetes.io/managed-by': 'op-a' }) });
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'theirs', { x: '1' }, { 'app.kubernetes.io/managed-by': 'someone-else' }) });
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'unlabelled', { x: '1' }) });
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'also-mine', { x: '1' }, { 'app.kubernetes.io/managed-by': 'op-b' }) });
  await until('also-mine', () => informer.get(ns, 'also-mine') !== undefined);
  expect(informer.list(ns).map((o) => o.metadata?.name).sort()).toEqual(['also-mine', 'mine']);

  await client.request('PATCH', resourcePath(CONFIGMAPS, ns, 'mine'), {
    contentType: 'application/merge-patch+json',
    body: { metadata: { labels: { 'app.kubernetes.io/managed-by': null } } },
  });
  await until('mine leaves the selection', () => informer.get(ns, 'mine') === undefined);
  expect(seen(events)).toEqual(['add mine', 'add also-mine', 'delete mine']);
}, TEST_TIMEOUT_MS);

test('GIVEN a running informer WHEN the API server restarts THEN the watch recovers and later changes are seen', async () => {
  const ns = await freshNamespace();
  const { informer, events } = startInformer(ns);
  await informer.waitForSync();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'one', { v: '1' }) });
  await until('one', () => informer.get(ns, 'one') !== undefined);

  await plane.restartApiServer();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'two', { v: '1' }) });
  await client.request('DELETE', resourcePath(CONFIGMAPS, ns, 'one'));
  await until('two after the restart', () => informer.get(ns, 'two') !== undefined && informer.get(ns, 'one') === undefined);
  expect(seen(events)).toEqual(['add one', 'add two', 'delete one']);
}, TEST_TIMEOUT_MS);

test('GIVEN a change made while the API server is down and etcd compacted THEN the informer relists on 410 and misses nothing', async () => {
  const ns = await freshNamespace();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'doomed', { v: '1' }) });
  const { informer, events } = startInformer(ns);
  await informer.waitForSync();
  const listsBefore = requests.filter((r) => r.method === 'GET' && r.path === resourcePath(CONFIGMAPS, ns)).length;

  // While kube-apiserver is down: delete the object behind its back (straight in etcd) and compact
  // etcd past the informer's resourceVersion, so resuming the watch must fail with 410.
  await plane.restartApiServer(() => deleteAndCompact(plane, `/registry/configmaps/${ns}/doomed`));

  await until('the deletion, seen through a relist', () => informer.get(ns, 'doomed') === undefined);
  expect(seen(events)).toEqual(['add doomed', 'delete doomed']);
  const listsAfter = requests.filter((r) => r.method === 'GET' && r.path === resourcePath(CONFIGMAPS, ns)).length;
  expect(listsAfter).toBeGreaterThan(listsBefore);
  expect(logLines.some((l) => l.startsWith('info resourceVersion expired; relisting'))).toBe(true);

  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'later', { v: '1' }) });
  await until('a change after the relist', () => informer.get(ns, 'later') !== undefined);
}, TEST_TIMEOUT_MS);
