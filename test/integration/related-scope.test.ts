/**
 * A scoped related cache against the real local control plane: the memcached example declares its Pods
 * with `scope: { labelSelector: 'app.kubernetes.io/name=memcached' }` and runs watching one namespace.
 * Bare Pods with and without that label, in the watched namespace and in another one, exist before the
 * manager starts and are created after it synced; only the labelled ones of the watched namespace are
 * ever cached, and a Memcached still becomes Ready with its own pods in `status.nodes`.
 *
 * Evidence: the Pod informer the manager opened (its namespace and selectors are the list and watch
 * query; informer-scope.test.ts checks they are sent), the API server's requests for pods as the
 * manager's client reported them (only on the watched namespace's path, never `/api/v1/pods`), and the
 * cache's contents. A Pod without the label created just before a labelled one never shows up, though
 * the watch delivers events in resourceVersion order: had the server sent it, it would have come first.
 *
 * The declaration is also `metadataOnly`: the cached Pods hold apiVersion, kind and metadata only, and the
 * Accept headers the watcher sends (watcher.test.ts checks they are sent) make this API server answer
 * with PartialObjectMetadataList / PartialObjectMetadata, read here directly.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT } from '../../lib/runtime/cache/watcher.js';
import { Manager } from '../../lib/runtime/manager.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually as waitFor } from '../support/eventually.js';

const SETUP_TIMEOUT_MS = 5 * 60_000;
const TEST_TIMEOUT_MS = 240_000;
const MEMCACHED = { 'app.kubernetes.io/name': 'memcached' };

const memcached = new MemcachedOperator(new App());
const logFile = join(tmpdir(), `related-scope-it-${process.pid}.log`);
const requests: RequestRecord[] = [];
let admin: ApiClient;
let manager: Manager;
let dir: string;
let ns: string;
let other: string;

function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitFor(what, check, { timeoutMs, context: () => `; operator log: ${logFile}` });
}

async function createPod(namespace: string, name: string, labels: Record<string, string> = {}): Promise<void> {
  await admin.request('POST', `/api/v1/namespaces/${namespace}/pods`, {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { containers: [{ name: 'c', image: 'example.com/none:1' }] } },
  });
}

/** The manager's Pod informer (the memcached operator's only Pod cache). */
function podInformer() {
  const pods = manager.informers.all().filter((informer) => informer.resource.plural === 'pods' && informer.resource.group === '');
  expect(pods).toHaveLength(1);
  return pods[0];
}

const cachedNames = () => podInformer().list().map((pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`).sort();

beforeAll(async () => {
  const kubeConfig = testKubeConfig();
  admin = new ApiClient({ kubeConfig, userAgent: 'related-scope-test' });
  dir = await mkdtemp(join(tmpdir(), 'related-scope-it-'));
  const file = join(dir, 'memcached-crd.json');
  await writeFile(file, JSON.stringify(memcached.customResourceDefinition.toJson()));
  await installCRDs(kubeConfig, [file]);
  ns = await createTestNamespace('scope');
  other = await createTestNamespace('scope-other');
  for (const namespace of [ns, other]) {
    await createPod(namespace, 'stray');
    await createPod(namespace, 'labelled', MEMCACHED);
  }
  manager = new Manager({
    kubeConfig,
    namespace: ns,
    operators: [memcached],
    onRequest: (record) => requests.push(record),
    logger: pino({ level: 'debug' }, pino.destination({ dest: logFile, sync: true })),
  });
  await manager.start();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('memcached with its Pods scoped by label', () => {
  test('GIVEN Pods with and without the memcached label in two namespaces WHEN the manager synced THEN it read (a streamed list) and watches only the labelled Pods of its namespace', async () => {
    const informer = podInformer();
    expect({ namespace: informer.namespace, labelSelector: informer.labelSelector, fieldSelector: informer.fieldSelector }).toEqual({
      namespace: ns,
      labelSelector: 'app.kubernetes.io/name=memcached',
      fieldSelector: undefined,
    });
    const podRequests = () => requests.filter((r) => /\/pods$/.test(r.path) && (r.method === 'GET' || r.watch));
    await eventually('the Pod watch opened', async () => podRequests().some((r) => r.watch));
    expect([...new Set(podRequests().map((r) => r.path))]).toEqual([`/api/v1/namespaces/${ns}/pods`]);
    expect(cachedNames()).toEqual([`${ns}/labelled`]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN scope.metadataOnly THEN every cached Pod is apiVersion, kind and metadata only, and the API server answers the watcher\'s Accept headers with PartialObjectMetadata', async () => {
    const cached = podInformer().list();
    expect(cached.length).toBeGreaterThan(0);
    for (const pod of cached) {
      expect(Object.keys(pod).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(pod).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: ns, labels: MEMCACHED } });
    }
    const list = await admin.request<{ kind: string; metadata: { resourceVersion: string }; items: KubeObject[] }>('GET', `/api/v1/namespaces/${ns}/pods`, { accept: METADATA_LIST_ACCEPT });
    expect(list.kind).toBe('PartialObjectMetadataList');
    expect(list.items.every((item) => (item as { spec?: unknown }).spec === undefined && item.metadata?.name)).toBe(true);
    const stop = new AbortController();
    try {
      const events = admin.watch(`/api/v1/namespaces/${ns}/pods`, { resourceVersion: '0', timeoutSeconds: 5 }, stop.signal, undefined, METADATA_WATCH_ACCEPT);
      for await (const event of events) {
        expect(event.type).toBe('ADDED');
        expect(event.object).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' });
        expect((event.object as { spec?: unknown }).spec).toBeUndefined();
        break;
      }
    } finally {
      stop.abort();
    }
  }, TEST_TIMEOUT_MS);

  test('GIVEN the synced cache WHEN a Pod without the label and then a labelled one are created, in both namespaces THEN only the labelled one of the watched namespace arrives', async () => {
    await createPod(ns, 'late-stray');
    await createPod(other, 'late-labelled', MEMCACHED);
    await createPod(ns, 'late-labelled', MEMCACHED);
    await eventually('late-labelled cached', async () => cachedNames().includes(`${ns}/late-labelled`));
    expect(cachedNames()).toEqual([`${ns}/labelled`, `${ns}/late-labelled`]);
  }, TEST_TIMEOUT_MS);

  test('GIVEN the scoped cache WHEN a Memcached is created THEN it becomes Ready and status.nodes lists exactly its own pods', async () => {
    const path = `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`;
    await admin.request('POST', path, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'cache', namespace: ns }, spec: { replicas: 2 } } });
    const cr = await eventually('Memcached Ready with two nodes', async () => {
      const obj = (await admin.request('GET', `${path}/cache`)) as KubeObject;
      const status = obj.status as { nodes?: string[]; conditions?: { type: string; status: string }[] } | undefined;
      const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return ready && status?.nodes?.length === 2 ? obj : undefined;
    }, 180_000);
    const selector = encodeURIComponent('app.kubernetes.io/name=memcached,app.kubernetes.io/instance=cache');
    const own = (await admin.request('GET', `/api/v1/namespaces/${ns}/pods`, { query: { labelSelector: decodeURIComponent(selector) } })) as { items: KubeObject[] };
    const ownNames = own.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name!).sort();
    expect((cr.status as { nodes: string[] }).nodes).toEqual(ownNames);
    // The cache holds its pods beside the bare labelled ones, and still nothing unlabelled or elsewhere.
    expect(cachedNames().every((key) => key.startsWith(`${ns}/`))).toBe(true);
    expect(cachedNames()).not.toContain(`${ns}/stray`);
    expect(cachedNames()).not.toContain(`${ns}/late-stray`);
    for (const name of ownNames) expect(cachedNames()).toContain(`${ns}/${name}`);
  }, TEST_TIMEOUT_MS);
});
