/**
 * A partitioned watcher (lib/runtime/cache/watch-partition.ts) against the real local kube-apiserver:
 * one watch per kind over every partition held (`b in (…)`), a partition that joins is listed alone and
 * gets no replayed change, one that leaves is dropped without events, and every partition ends up as the
 * server has its objects. Each test works in its own namespace.
 */
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeClient, KubeObject, RequestOptions } from '../../lib/runtime/client/kube-client.js';
import { type ChangeEvent, Watcher } from '../../lib/runtime/cache/watcher.js';
import type { WatchPartition } from '../../lib/runtime/cache/watch-partition.js';
import { type ResourceRef, resourcePath } from '../../lib/runtime/client/resource-path.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { deleteAndCompact } from '../support/etcd-behind-api-server.js';
import { eventually } from '../support/eventually.js';

const until = (what: string, check: () => boolean, timeoutMs?: number) => eventually(what, async () => check() || undefined, { timeoutMs });

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 180_000;
const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

let plane: ControlPlane;
let client: ApiClient;
const watchers: Watcher[] = [];

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, components: { controllerManager: false, scheduler: false, kwok: false } });
  client = new ApiClient({ kubeConfig: plane.kubeConfig });
}, SETUP_TIMEOUT_MS);

afterEach(async () => {
  await Promise.all(watchers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

let nsCounter = 0;
async function freshNamespace(): Promise<string> {
  const name = `watch-partitions-${process.pid}-${++nsCounter}`;
  await client.request('POST', resourcePath(NAMESPACES), { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

/** The client, recording the label selector of every list and watch it is asked for. */
function recording(): { client: KubeClient; lists: string[]; watches: string[] } {
  const lists: string[] = [];
  const watches: string[] = [];
  const recorder = Object.create(client) as ApiClient;
  recorder.request = ((method: string, path: string, options?: RequestOptions) => {
    if (method === 'GET' && options?.query?.labelSelector !== undefined) lists.push(String(options.query.labelSelector));
    return client.request(method, path, options);
  }) as ApiClient['request'];
  recorder.watch = ((path: string, query: RequestOptions['query'], ...rest: unknown[]) => {
    watches.push(String(query?.labelSelector));
    return (client.watch as (...args: unknown[]) => unknown)(path, query, ...rest);
  }) as ApiClient['watch'];
  return { client: recorder, lists, watches };
}

const put = (ns: string, name: string, b: string, v: string) =>
  client.request('POST', resourcePath(CONFIGMAPS, ns), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { app: 'x', b } }, data: { v } } }) as Promise<KubeObject>;
const change = (ns: string, name: string, v: string) =>
  client.request('PATCH', `${resourcePath(CONFIGMAPS, ns)}/${name}`, { body: { data: { v } }, contentType: 'application/merge-patch+json' }) as Promise<KubeObject>;

/** What the server has in partition `b`: name → data.v. */
async function serverState(ns: string, b: string): Promise<Record<string, string>> {
  const list = (await client.request('GET', resourcePath(CONFIGMAPS, ns), { query: { labelSelector: `app=x,b=${b}` } })) as { items: KubeObject[] };
  return Object.fromEntries(list.items.map((i) => [i.metadata!.name!, String((i as { data?: { v?: string } }).data?.v)]));
}

const stateOf = (p: WatchPartition) => Object.fromEntries([...p.values()].map((i) => [i.metadata!.name!, String((i as { data?: { v?: string } }).data?.v)]));

function partitionOf(watcher: Watcher, value: string) {
  const events: ChangeEvent[] = [];
  const partition = watcher.partition(value, { onChange: (e) => events.push(e) });
  return { partition, events };
}

test('GIVEN two partitions held WHEN a third joins after changes THEN it is listed alone, the one watch re-opens over the three, no change reaches it twice, and each partition ends as the server has it', async () => {
  const ns = await freshNamespace();
  const rec = recording();
  const watcher = new Watcher({ client: rec.client, resource: CONFIGMAPS, namespace: ns, labelSelector: 'app=x', partitionLabel: 'b', onChange: () => {} });
  watchers.push(watcher);
  await put(ns, 'a1', '1', '0');
  await put(ns, 'c1', '3', '0');
  const one = partitionOf(watcher, '1');
  const two = partitionOf(watcher, '2');
  one.partition.start();
  two.partition.start();
  await Promise.all([one.partition.waitForSync(), two.partition.waitForSync()]);
  expect(stateOf(one.partition)).toEqual({ a1: '0' });
  expect(two.partition.size).toBe(0);

  // Changes to every partition, the third not held yet; then it joins, and more changes come.
  await change(ns, 'c1', '1');
  await change(ns, 'a1', '1');
  await put(ns, 'c2', '3', '0');
  await put(ns, 'b1', '2', '0');
  const three = partitionOf(watcher, '3');
  three.partition.start();
  await three.partition.waitForSync();
  const listedAt = BigInt(three.partition.lastResourceVersion!);
  await change(ns, 'c2', '2');
  await change(ns, 'a1', '2');
  await change(ns, 'b1', '1');

  for (const [b, p] of [['1', one.partition], ['2', two.partition], ['3', three.partition]] as const) {
    const want = await serverState(ns, b);
    await until(`partition ${b} as the server has it`, () => JSON.stringify(stateOf(p)) === JSON.stringify(want));
  }
  // Listed alone: the joining partition's list carried its value only; the watch re-opened over all three.
  expect(rec.lists).toEqual(expect.arrayContaining(['app=x,b=1', 'app=x,b=2', 'app=x,b=3']));
  expect(rec.lists.filter((s) => s.includes(' in '))).toEqual([]);
  expect(rec.watches[0]).toBe('app=x,b in (1,2)');
  expect(rec.watches[rec.watches.length - 1]).toBe('app=x,b in (1,2,3)');
  // The third partition got its list and then only changes newer than it: the watch re-opened from an
  // older version, so the changes to c1 and c2 before the list came again and were dropped.
  expect(three.events.map((e) => `${e.type} ${e.object.metadata!.name}`)).toEqual(['add c1', 'add c2', 'update c2']);
  expect(BigInt(three.events[2]!.object.metadata!.resourceVersion!)).toBeGreaterThan(listedAt);
  // Partition 1 saw each of its changes once, in order.
  expect(one.events.map((e) => `${e.type} ${e.object.metadata!.name} ${(e.object as { data?: { v?: string } }).data?.v}`)).toEqual(['add a1 0', 'update a1 1', 'update a1 2']);
}, TEST_TIMEOUT_MS);

test('GIVEN three partitions held WHEN one leaves THEN it gets no event (not even deletes), the watch re-opens without it, and the others still follow the server', async () => {
  const ns = await freshNamespace();
  const rec = recording();
  const watcher = new Watcher({ client: rec.client, resource: CONFIGMAPS, namespace: ns, labelSelector: 'app=x', partitionLabel: 'b', onChange: () => {} });
  watchers.push(watcher);
  await put(ns, 'a1', '1', '0');
  await put(ns, 'b1', '2', '0');
  const parts = ['1', '2', '3'].map((b) => partitionOf(watcher, b));
  for (const { partition } of parts) partition.start();
  await Promise.all(parts.map(({ partition }) => partition.waitForSync()));
  const [one, two] = parts;
  const twoEventsBefore = two!.events.length;

  await two!.partition.stop();
  await change(ns, 'b1', '1');
  await client.request('DELETE', `${resourcePath(CONFIGMAPS, ns)}/b1`);
  await change(ns, 'a1', '1');
  await until('partition 1 follows the server', () => stateOf(one!.partition).a1 === '1');
  await until('the watch re-opened without partition 2', () => rec.watches[rec.watches.length - 1] === 'app=x,b in (1,3)');
  expect(two!.events.length).toBe(twoEventsBefore);
  expect(stateOf(two!.partition)).toEqual({ b1: '0' }); // its last contents, as a stopped informer keeps them
}, TEST_TIMEOUT_MS);

test('GIVEN partitions held WHEN the watch gets 410 Gone THEN each partition is listed again alone and emits the difference (the deletion it missed)', async () => {
  const ns = await freshNamespace();
  const rec = recording();
  const watcher = new Watcher({ client: rec.client, resource: CONFIGMAPS, namespace: ns, labelSelector: 'app=x', partitionLabel: 'b', onChange: () => {} });
  watchers.push(watcher);
  await put(ns, 'doomed', '1', '0');
  await put(ns, 'kept', '2', '0');
  const one = partitionOf(watcher, '1');
  const two = partitionOf(watcher, '2');
  one.partition.start();
  two.partition.start();
  await Promise.all([one.partition.waitForSync(), two.partition.waitForSync()]);
  const listsBefore = rec.lists.length;

  await plane.restartApiServer(() => deleteAndCompact(plane, `/registry/configmaps/${ns}/doomed`));

  await until('the deletion, seen after the relist', () => one.partition.get(`${ns}/doomed`) === undefined, 90_000);
  expect(one.events.map((e) => `${e.type} ${e.object.metadata!.name}`)).toEqual(['add doomed', 'delete doomed']);
  expect(two.events.map((e) => `${e.type} ${e.object.metadata!.name}`)).toEqual(['add kept']);
  expect([...new Set(rec.lists.slice(listsBefore))].sort()).toEqual(['app=x,b=1', 'app=x,b=2']);
}, TEST_TIMEOUT_MS);

test("GIVEN partitions held WHEN an object's partition label is edited to another held value, or to one not held THEN it leaves its partition (a delete there) and joins the held one (an add)", async () => {
  const ns = await freshNamespace();
  const watcher = new Watcher({ client, resource: CONFIGMAPS, namespace: ns, labelSelector: 'app=x', partitionLabel: 'b', onChange: () => {} });
  watchers.push(watcher);
  await put(ns, 'moves', '1', '0');
  await put(ns, 'leaves', '1', '0');
  const one = partitionOf(watcher, '1');
  const three = partitionOf(watcher, '3');
  one.partition.start();
  three.partition.start();
  await Promise.all([one.partition.waitForSync(), three.partition.waitForSync()]);
  const relabel = (name: string, b: string) => client.request('PATCH', `${resourcePath(CONFIGMAPS, ns)}/${name}`, { body: { metadata: { labels: { b } } }, contentType: 'application/merge-patch+json' });

  await relabel('moves', '3');
  await relabel('leaves', '5');
  await until('both gone from partition 1, one in partition 3', () => one.partition.size === 0 && three.partition.get(`${ns}/moves`) !== undefined);
  expect(one.events.map((e) => `${e.type} ${e.object.metadata!.name}`)).toEqual(['add leaves', 'add moves', 'delete moves', 'delete leaves']);
  expect(three.events.map((e) => `${e.type} ${e.object.metadata!.name} b=${e.object.metadata!.labels!.b}`)).toEqual(['add moves b=3']);
}, TEST_TIMEOUT_MS);
