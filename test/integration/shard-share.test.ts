/**
 * Shards that each do a share (issue 33 item 4), on the local control plane, with the memcached operator
 * run by in-process sharded Managers (4 buckets) and its webhooks served here:
 *
 * - Stamped at CREATE: with the mutating webhook served, a CR comes back from its create already carrying
 *   its bucket label, and no replica PATCHes it (counted from the replica's own request records). A CR
 *   created by `generateName` (no name at admission, so no bucket) is stamped by the runtime instead: one
 *   PATCH.
 * - Pods per bucket: the children's pod templates carry the bucket, so do their Pods (made by the
 *   Deployment and ReplicaSet controllers), and the replica caches its related Pods
 *   (`createdFromChildren`) through one watch per bucket selected on the bucket label, not one watch of
 *   every memcached Pod (read from the replica's informers); render still sees them (`status.nodes`).
 * - A graceful leave: of 3 replicas, one stops (its Lease deleted); each of the others starts caches
 *   (lists) only for the buckets it took, read from its own bucket caches' `added` events, and no object
 *   was written by two replicas (each replica's request records).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { bucketOf } from '../../lib/runtime/sharding/bucket-hash.js';
import { SHARD_BUCKET_LABEL } from '../../lib/runtime/sharding/bucket-label.js';
import { relatedBucketKey } from '../../lib/runtime/sharding/bucket-child-caches.js';
import { assignBucketsBalanced } from '../../lib/runtime/sharding/rendezvous.js';
import { serveWebhooksLocally, type LocalWebhooks } from '../../lib/testing/local-webhooks.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { eventually } from '../support/eventually.js';

const OPS = 'share-ops';
const NS = 'share-crs';
const BUCKETS = 8;
const crPath = `/apis/cache.example.com/v1beta1/namespaces/${NS}/memcacheds`;

let plane: ControlPlane;
let admin: ApiClient;
let local: LocalWebhooks;
let dir: string;
const replicas: Replica[] = [];
/** Replicas already stopped by a test. */
const left = new Set<Replica>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'shard-share-'));
  // The controller manager makes the Deployments' Pods; they stay Pending (no scheduler): their labels are what counts.
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, components: { controllerManager: true, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  for (const name of [OPS, NS]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  local = await serveWebhooksLocally({ kubeConfig: plane.kubeConfig, operators: [new MemcachedOperator(new App())], shardBucketCount: BUCKETS });
  await local.install();
}, 10 * 60_000);

afterAll(async () => {
  await Promise.all(replicas.filter((r) => !left.has(r)).map((r) => r.manager.stop().catch(() => undefined)));
  await local?.close();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Replica {
  readonly name: string;
  readonly manager: Manager;
  readonly requests: RequestRecord[];
  /** Buckets whose caches (CRs, children, related Pods) were created, in order: each is one list per kind. */
  readonly listed: number[];
}

async function startReplica(name: string): Promise<Replica> {
  const requests: RequestRecord[] = [];
  const manager = new Manager({
    kubeConfig: plane.kubeConfig,
    operators: [new MemcachedOperator(new App())],
    namespace: NS,
    sharding: { namespace: OPS, ring: 'share', member: name, bucketCount: BUCKETS },
    onRequest: (record) => requests.push(record),
    logger: pino({ level: 'warn', base: { replica: name } }, pino.destination({ dest: join(dir, `${name}.log`), sync: true })),
  });
  const listed: number[] = [];
  manager.shardChildren!.on({ added: (bucket) => listed.push(bucket), removed: () => undefined });
  const replica = { name, manager, requests, listed };
  replicas.push(replica);
  await manager.start();
  return replica;
}

const writes = (r: Replica) => r.requests.filter((q) => q.method !== 'GET' && !q.watch && !q.path.includes('/leases') && !q.path.includes('/events'));
const crPatches = (r: Replica, name: string) => r.requests.filter((q) => q.method === 'PATCH' && q.path.split('?')[0] === `${crPath}/${name}`);

async function converged(names: readonly string[]): Promise<boolean> {
  const list = await admin.request<{ items: KubeObject[] }>('GET', crPath);
  return names.every((name) => {
    const cr = list.items.find((i) => i.metadata?.name === name) as (KubeObject & { status?: { nodes?: string[]; conditions?: { type: string; status: string }[] } }) | undefined;
    return cr?.status?.nodes?.length === 1;
  });
}

test('GIVEN the mutating webhook served WHEN a CR is created THEN the create response carries its bucket label, no replica patches it, and its Pods are cached per bucket', async () => {
  const replica = await startReplica('share-0');
  await eventually('share-0 holds every bucket', async () => replica.manager.shard!.heldBuckets().length === BUCKETS, { timeoutMs: 120_000 });

  const name = 'stamped';
  const created = await admin.request<KubeObject>('POST', crPath, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NS }, spec: { replicas: 1 } } });
  const bucket = String(bucketOf(NS, name, BUCKETS));
  expect(created.metadata?.labels?.[SHARD_BUCKET_LABEL]).toBe(bucket);

  // By generateName: no name at admission, so the runtime stamps it (the fallback).
  const generated = await admin.request<KubeObject>('POST', crPath, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { generateName: 'gen-', namespace: NS }, spec: { replicas: 1 } } });
  const generatedName = generated.metadata!.name!;
  expect(generated.metadata?.labels?.[SHARD_BUCKET_LABEL]).toBeUndefined();

  // Render sees the Pods through the per-bucket cache: status.nodes lists the one Pod.
  await eventually('both CRs report their Pod', () => converged([name, generatedName]), { timeoutMs: 180_000 });
  const generatedNow = await admin.request<KubeObject>('GET', `${crPath}/${generatedName}`);
  expect(generatedNow.metadata?.labels?.[SHARD_BUCKET_LABEL]).toBe(String(bucketOf(NS, generatedName, BUCKETS)));
  expect(crPatches(replica, name)).toHaveLength(0);
  expect(crPatches(replica, generatedName)).toHaveLength(1);

  // The Deployment's pod template carries the bucket (its selector does not), and so do its Pods.
  const deployment = await admin.request<KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> } } } }>(
    'GET',
    `/apis/apps/v1/namespaces/${NS}/deployments/${name}`,
  );
  expect(deployment.spec.template.metadata.labels[SHARD_BUCKET_LABEL]).toBe(bucket);
  expect(deployment.spec.selector.matchLabels[SHARD_BUCKET_LABEL]).toBeUndefined();
  const pods = await admin.request<{ items: KubeObject[] }>('GET', `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(`${SHARD_BUCKET_LABEL}=${bucket}`)}`);
  expect(pods.items.some((p) => p.metadata?.ownerReferences?.some((o) => o.kind === 'ReplicaSet' && o.name.startsWith(`${name}-`)))).toBe(true);

  // The replica's Pod watches: one per bucket, each selected on that bucket; none over every memcached Pod.
  const podWatches = replica.manager.shardChildren!.informersOf(relatedBucketKey('memcached-operator', 'pods')).map((i) => i.describe());
  expect(podWatches).toHaveLength(BUCKETS);
  for (let b = 0; b < BUCKETS; b++) expect(podWatches.some((d) => d.includes(`app.kubernetes.io/name=memcached,${SHARD_BUCKET_LABEL}=${b}`))).toBe(true);
  expect(replica.manager.informers.all().map((i) => i.describe()).filter((d) => d.startsWith('pods'))).toEqual([]);
}, 10 * 60_000);

test('GIVEN 3 replicas WHEN one leaves gracefully THEN the others list only the buckets they take, and no object is written by two replicas', async () => {
  const names = Array.from({ length: 8 }, (_, i) => `leave-${i}`);
  await Promise.all(names.map((name) => admin.request('POST', crPath, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NS }, spec: { replicas: 1 } } })));
  // The first test's replica stays; two more join.
  await Promise.all(['share-1', 'share-2'].map(startReplica));
  replicas.sort((a, b) => a.name.localeCompare(b.name));
  const context = () => `\n${replicas.map((r) => `${r.name}: held ${r.manager.shard!.heldBuckets().join(',')}, members ${r.manager.shard!.members().join(',')}`).join('\n')}`;
  // Settled: every replica holds exactly the buckets the balanced rendezvous assignment gives it among the live members.
  const settled = (live: readonly Replica[]) => {
    const owners = assignBucketsBalanced(BUCKETS, live.map((r) => r.name));
    return live.every((r) => r.manager.shard!.members().length === live.length && JSON.stringify(r.manager.shard!.heldBuckets()) === JSON.stringify(owners.flatMap((o, b) => (o === r.name ? [b] : []))));
  };
  await eventually('3 replicas hold their buckets', async () => settled(replicas), { timeoutMs: 180_000, context });
  await eventually('every CR reports its Pod', () => converged(names), { timeoutMs: 180_000 });

  // The replica holding the most buckets leaves.
  const leaver = [...replicas].sort((a, b) => b.manager.shard!.heldBuckets().length - a.manager.shard!.heldBuckets().length)[0]!;
  const stayers = replicas.filter((r) => r !== leaver);
  const before = new Map(stayers.map((r) => [r.name, new Set(r.manager.shard!.heldBuckets())]));
  const listedBefore = new Map(stayers.map((r) => [r.name, r.listed.length]));
  const requestsBefore = new Map(replicas.map((r) => [r.name, r.requests.length]));
  const moved = leaver.manager.shard!.heldBuckets();
  expect(moved.length).toBeGreaterThan(0);
  await leaver.manager.stop();
  left.add(leaver);
  const leaverStopped = leaver.requests.length;

  const after = await eventually('the 2 left hold their buckets', async () => (settled(stayers) ? stayers.map((r) => r.manager.shard!.heldBuckets()) : undefined), { timeoutMs: 180_000, context });
  stayers.forEach((r, i) => {
    const taken = after[i]!.filter((b) => !before.get(r.name)!.has(b));
    for (const b of taken) expect(moved).toContain(b);
    // The bucket caches it created since the leave (one list per kind each) are exactly the buckets it took.
    expect(r.listed.slice(listedBefore.get(r.name)).sort((a, b) => a - b)).toEqual([...taken].sort((a, b) => a - b));
  });
  expect(stayers.flatMap((r, i) => after[i]!.filter((b) => !before.get(r.name)!.has(b))).sort((a, b) => a - b)).toEqual([...moved].sort((a, b) => a - b));

  // A spec change of a CR of a moved bucket (if one has any) converges under its new holder.
  const changed = names.find((n) => moved.includes(bucketOf(NS, n, BUCKETS))) ?? names[0]!;
  await admin.request('PATCH', `${crPath}/${changed}`, { body: { spec: { replicas: 2 } }, contentType: 'application/merge-patch+json' });
  await eventually(`${changed} reports 2 Pods`, async () => {
    const cr = await admin.request<KubeObject & { status?: { nodes?: string[] } }>('GET', `${crPath}/${changed}`);
    return cr.status?.nodes?.length === 2;
  }, { timeoutMs: 180_000 });

  // From the leave on: the leaver wrote nothing after its stop, and no object was written by two replicas.
  expect(writes({ ...leaver, requests: leaver.requests.slice(leaverStopped) })).toEqual([]);
  const writersOf = new Map<string, Set<string>>();
  for (const r of replicas) {
    for (const w of writes({ ...r, requests: r.requests.slice(requestsBefore.get(r.name)) })) {
      const path = w.path.split('?')[0]!.replace(/\/status$/, '');
      writersOf.set(path, new Set([...(writersOf.get(path) ?? []), r.name]));
    }
  }
  expect([...writersOf].filter(([, who]) => who.size > 1)).toEqual([]);
  // The change was written, by the holder of its bucket alone.
  const holder = stayers[after.findIndex((held) => held.includes(bucketOf(NS, changed, BUCKETS)))]!;
  expect(writersOf.get(`/apis/apps/v1/namespaces/${NS}/deployments/${changed}`)).toEqual(new Set([holder.name]));
}, 15 * 60_000);
