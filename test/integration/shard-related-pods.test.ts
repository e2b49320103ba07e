/**
 * A related object cached per bucket (`createdFromChildren`) reaches its CR by its own event: on the
 * local control plane with no controller manager, so nothing but the test makes Pods and no child ever
 * changes after the first apply. A Pod created by hand with the memcached pod labels and its CR's bucket
 * label must show in the CR's `status.nodes`; the Pod's event is the only thing that can cause that
 * reconcile, so the CR must be indexed by the references it declares even though its only related
 * cache is per bucket. A Pod with the same labels but another bucket's, cached by the same replica, is
 * not the CR's: its reconcile looks in its own bucket only (lib/runtime/reconcile/child-cache.ts). A
 * child whose bucket label is edited by hand to another held bucket is not found by that lookup: the
 * reconcile creates it, meets AlreadyExists, finds it the CR's, and its apply sets the label back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { pino } from 'pino';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { bucketOf } from '../../lib/runtime/sharding/bucket-hash.js';
import { SHARD_BUCKET_LABEL } from '../../lib/runtime/sharding/bucket-label.js';
import { relatedBucketKey } from '../../lib/runtime/sharding/bucket-child-caches.js';
import { selectorLabels } from '../../lib/operator/render/selector-labels.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { eventually } from '../support/eventually.js';

const OPS = 'related-pods-ops';
const NS = 'related-pods';
const BUCKETS = 4;
const crPath = `/apis/cache.example.com/v1beta1/namespaces/${NS}/memcacheds`;

let plane: ControlPlane;
let admin: ApiClient;
let manager: Manager | undefined;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'shard-related-pods-'));
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  for (const name of [OPS, NS]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  const crd = Chart.of(new MemcachedOperator(new App())).toJson().find((o) => o.kind === 'CustomResourceDefinition');
  await admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  await eventually('the Memcached CRD is served', async () => (await admin.request<{ items: unknown[] }>('GET', crPath).catch(() => undefined)) !== undefined, { timeoutMs: 60_000 });
}, 10 * 60_000);

afterAll(async () => {
  await manager?.stop().catch(() => undefined);
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const statusNodes = async (name: string) => (await admin.request<KubeObject & { status?: { nodes?: string[] } }>('GET', `${crPath}/${name}`)).status?.nodes;

test('GIVEN a sharded replica whose Pods are cached per bucket WHEN a Pod of a converged CR appears and no child changes THEN the CR reconciles and status.nodes lists it', async () => {
  const operator = new MemcachedOperator(new App());
  manager = new Manager({
    kubeConfig: plane.kubeConfig,
    operators: [operator],
    namespace: NS,
    sharding: { namespace: OPS, ring: 'related-pods', member: 'only', bucketCount: BUCKETS },
    logger: pino({ level: 'warn' }, pino.destination({ dest: join(dir, 'replica.log'), sync: true })),
  });
  await manager.start();
  await eventually('the replica holds every bucket', async () => manager!.shard!.heldBuckets().length === BUCKETS, { timeoutMs: 120_000 });

  const name = 'cache';
  await admin.request('POST', crPath, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NS }, spec: { replicas: 1 } } });
  // Converged with no Pods: no controller manager, so its Deployment makes none.
  await eventually('the CR reports no nodes', async () => (await statusNodes(name))?.length === 0, { timeoutMs: 120_000 });

  const bucket = bucketOf(NS, name, BUCKETS);
  const createPod = (pod: string, podBucket: number) =>
    admin.request('POST', `/api/v1/namespaces/${NS}/pods`, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod, namespace: NS, labels: { ...selectorLabels({ metadata: { name } }, 'memcached'), [SHARD_BUCKET_LABEL]: String(podBucket) } },
        spec: { containers: [{ name: 'memcached', image: 'memcached:1.6' }] },
      },
    });
  // First a Pod of another bucket, which this replica holds too: cached, but never the CR's.
  const stray = 'cache-other-bucket';
  const otherBucket = (bucket + 1) % BUCKETS;
  await createPod(stray, otherBucket);
  const podsCache = () => manager!.shardChildren!.informerIn(relatedBucketKey(operator.operatorName, 'pods'), otherBucket);
  await eventually('the replica caches the other bucket\'s Pod', async () => podsCache()?.get(NS, stray) !== undefined, { timeoutMs: 120_000 });
  const pod = 'cache-by-hand';
  await createPod(pod, bucket);
  await eventually('status.nodes lists the Pod', async () => JSON.stringify(await statusNodes(name)) === JSON.stringify([pod]), { timeoutMs: 120_000 });
}, 10 * 60_000);

test('GIVEN a converged CR of that replica WHEN its Deployment\'s bucket label is edited to another held bucket THEN the label is set back', async () => {
  const name = 'cache';
  const bucket = bucketOf(NS, name, BUCKETS);
  const path = `/apis/apps/v1/namespaces/${NS}/deployments/${name}`;
  const labelOf = async () => (await admin.request<KubeObject>('GET', path)).metadata?.labels?.[SHARD_BUCKET_LABEL];
  expect(await labelOf()).toBe(String(bucket));
  const edited = String((bucket + 2) % BUCKETS);
  await admin.request('PATCH', path, { body: { metadata: { labels: { [SHARD_BUCKET_LABEL]: edited } } }, contentType: 'application/merge-patch+json' });
  await eventually('the bucket label is set back', async () => (await labelOf()) === String(bucket), { timeoutMs: 120_000 });
}, 5 * 60_000);
