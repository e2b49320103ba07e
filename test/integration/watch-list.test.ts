/**
 * The informers' streamed initial list (KEP-3157, WatchList: `sendInitialEvents=true`) against the real
 * local control plane: the whole set arrives as a watch's initial events and the same stream goes on
 * with changes, no LIST is sent, a 410 reads the set again the same way, metadata-only watches stream
 * too, and an API server with the WatchList feature off makes the informer list instead.
 * Each test works in its own namespace.
 */
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { Informer, type InformerEvent } from '../../lib/runtime/cache/informer.js';
import type { InitialList } from '../../lib/runtime/cache/watcher.js';
import type { Logger } from '../../lib/runtime/logger.js';
import { type ResourceRef, resourcePath } from '../../lib/runtime/client/resource-path.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { deleteAndCompact } from '../support/etcd-behind-api-server.js';
import { eventually } from '../support/eventually.js';

/** Waits for `check` to hold (it may throw until then). */
const until = (what: string, check: () => boolean, timeoutMs?: number) => eventually(what, async () => check() || undefined, { timeoutMs, context: () => `\nlog:\n${logLines.slice(-15).join('\n')}` });

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 180_000;
const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

let plane: ControlPlane;
let client: ApiClient;
const requests: RequestRecord[] = [];
const informers: Informer[] = [];
const logLines: string[] = [];
const logger: Logger = {
  debug: (f, m) => logLines.push(`debug ${m} ${JSON.stringify(f)}`),
  info: (f, m) => logLines.push(`info ${m} ${JSON.stringify(f)}`),
  warn: (f, m) => logLines.push(`warn ${m} ${JSON.stringify(f)}`),
  error: (f, m) => logLines.push(`error ${m} ${JSON.stringify(f)}`),
};

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, components: { controllerManager: false, scheduler: false, kwok: false } });
  client = new ApiClient({ kubeConfig: plane.kubeConfig, onRequest: (r) => requests.push(r) });
}, SETUP_TIMEOUT_MS);

afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

let nsCounter = 0;
async function freshNamespace(on: ApiClient = client): Promise<string> {
  const name = `watch-list-${process.pid}-${++nsCounter}`;
  await on.request('POST', resourcePath(NAMESPACES), { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { set: 'a' } }, data };
}

function startInformer(on: ApiClient, namespace: string, initialList: InitialList, extra: Partial<ConstructorParameters<typeof Informer>[0]> = {}): { informer: Informer; events: InformerEvent[] } {
  const informer = new Informer({ client: on, resource: CONFIGMAPS, namespace, logger, watch: { initialList, backoff: { initialMs: 100, maxMs: 2000 } }, ...extra });
  const events: InformerEvent[] = [];
  informer.on((e) => events.push(e));
  informer.start();
  informers.push(informer);
  return { informer, events };
}

/** Requests of `path` by method: `GET` is a list (or get), `WATCH` a watch. */
const sent = (method: string, path: string, from = 0) => requests.slice(from).filter((r) => r.method === method && r.path === path).length;
const seen = (events: InformerEvent[]) => events.map((e) => `${e.type} ${e.object.metadata?.name}`);

test('GIVEN watch-list WHEN an informer starts on objects that exist THEN they arrive as one watch\'s initial events, no LIST is sent, and the same stream goes on with changes', async () => {
  const ns = await freshNamespace();
  for (const name of ['a', 'b', 'c']) await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, name, { v: '1' }) });
  const from = requests.length;
  const { informer, events } = startInformer(client, ns, 'watch-list', { keepManagedFieldsOf: ['watch-list-test'] });
  await informer.waitForSync();

  expect(seen(events).sort()).toEqual(['add a', 'add b', 'add c']);
  expect(informer.get(ns, 'a')?.kind).toBe('ConfigMap');
  expect(informer.get(ns, 'a')?.metadata).not.toHaveProperty('managedFields');
  expect(sent('GET', resourcePath(CONFIGMAPS, ns), from)).toBe(0);
  expect(sent('WATCH', resourcePath(CONFIGMAPS, ns), from)).toBe(1);
  expect(logLines.some((l) => l.startsWith('debug listed') && l.includes(`"resource":"configmaps in ${ns}"`) && l.includes('"how":"watch-list"') && l.includes('"objects":3'))).toBe(true);

  await client.request('PATCH', resourcePath(CONFIGMAPS, ns, 'b'), { contentType: 'application/merge-patch+json', body: { data: { v: '2' } } });
  await client.request('DELETE', resourcePath(CONFIGMAPS, ns, 'c'));
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'd', { v: '1' }) });
  const state = () => informer.list(ns).map((o) => `${o.metadata?.name}=${(o.data as Record<string, string>).v}`).sort().join(',');
  await until('b=2, c gone, d added', () => state() === 'a=1,b=2,d=1');
  expect(seen(events).slice(3)).toEqual(['update b', 'delete c', 'add d']);
  // The changes came on the stream that carried the initial events (unless the server ended it by its timeout).
  expect(sent('GET', resourcePath(CONFIGMAPS, ns), from)).toBe(0);
}, TEST_TIMEOUT_MS);

test('GIVEN watch-list and metadataOnly THEN the initial events are PartialObjectMetadata, kept as the given kind without data', async () => {
  const ns = await freshNamespace();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'm', { secret: 'x'.repeat(100) }) });
  const from = requests.length;
  const { informer } = startInformer(client, ns, 'watch-list', { metadataOnly: { apiVersion: 'v1', kind: 'ConfigMap' } });
  await informer.waitForSync();
  const cached = informer.get(ns, 'm');
  expect(cached?.kind).toBe('ConfigMap');
  expect(cached?.metadata?.labels).toEqual({ set: 'a' });
  expect(cached).not.toHaveProperty('data');
  expect(sent('GET', resourcePath(CONFIGMAPS, ns), from)).toBe(0);
}, TEST_TIMEOUT_MS);

test('GIVEN watch-list WHEN the watch\'s resourceVersion is compacted away while the API server is down THEN the set is read again by a watch-list (no LIST) and the deletion in between is seen', async () => {
  const ns = await freshNamespace();
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'doomed', { v: '1' }) });
  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'kept', { v: '1' }) });
  const from = requests.length;
  const { informer, events } = startInformer(client, ns, 'watch-list');
  await informer.waitForSync();

  await plane.restartApiServer(() => deleteAndCompact(plane, `/registry/configmaps/${ns}/doomed`));

  await until('the deletion, seen through a watch-list', () => informer.get(ns, 'doomed') === undefined, 90_000);
  expect(seen(events).sort()).toEqual(['add doomed', 'add kept', 'delete doomed']);
  expect(logLines.some((l) => l.startsWith('info resourceVersion expired; relisting') && l.includes(ns))).toBe(true);
  expect(logLines.filter((l) => l.startsWith('debug listed') && l.includes(`"resource":"configmaps in ${ns}"`) && l.includes('"how":"watch-list"')).length).toBeGreaterThanOrEqual(2);
  expect(sent('GET', resourcePath(CONFIGMAPS, ns), from)).toBe(0);
  expect(informer.initialListMode).toBe('watch-list');

  await client.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'later', { v: '1' }) });
  await until('a change after the watch-list', () => informer.get(ns, 'later') !== undefined);
}, TEST_TIMEOUT_MS);

test('GIVEN an API server with the WatchList feature off WHEN a watch-list informer starts THEN the server refuses sendInitialEvents, the informer says so and lists instead, and changes still arrive', async () => {
  const off = await startControlPlane({
    binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR,
    components: { controllerManager: false, scheduler: false, kwok: false },
    extraArgs: { apiServer: ['--feature-gates=WatchList=false'] },
  });
  const offClient = new ApiClient({ kubeConfig: off.kubeConfig, onRequest: (r) => requests.push(r) });
  try {
    const ns = await freshNamespace(offClient);
    await offClient.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'one', { v: '1' }) });
    const from = requests.length;
    const { informer, events } = startInformer(offClient, ns, 'watch-list');
    await informer.waitForSync();
    expect(seen(events)).toEqual(['add one']);
    expect(informer.initialListMode).toBe('list');
    expect(logLines.some((l) => l.startsWith('info the API server does not stream the initial list (WatchList); listing instead') && l.includes(ns))).toBe(true);
    expect(sent('GET', resourcePath(CONFIGMAPS, ns), from)).toBe(1);

    await offClient.request('POST', resourcePath(CONFIGMAPS, ns), { body: configMap(ns, 'two', { v: '1' }) });
    await until('a change after the list', () => informer.get(ns, 'two') !== undefined);
  } finally {
    await Promise.all(informers.splice(0).map((i) => i.stop()));
    offClient.close();
    await off.stop();
  }
}, SETUP_TIMEOUT_MS);
