/**
 * The bucket label on CRs (issue 33 item 4, "Bad input"): two `run --sharding` processes of the memcached
 * operator and 8 Memcacheds, on the local control plane. Every CR gets the label
 * `operator.cdk8s.io/shard-bucket` with the bucket of its namespace/name, stamped once by one replica
 * (the holder of that bucket: each replica logs its stamps, and no CR is stamped twice); every CR still
 * gets its Deployment. A label edited by hand is set back (never two owners: the bucket is recomputed
 * from namespace/name), with a Warning Event `ShardBucketLabelRepaired` on the CR and a warn log line.
 *
 * CRs cached per bucket: with three replicas, each replica's CR watches carry its buckets' selectors
 * (`memcacheds with operator.cdk8s.io/shard-bucket=<b>`, from its own log) and its
 * `cdk8s_operator_shard_cached_crs` gauge equals the number of CRs of the buckets its Lease holds or
 * claims; the gauges add up to every CR once. A label that names no bucket of the ring (`x`) is
 * selected by every replica's strays watch (`notin (0,…,7)`) and repaired by the holder of the CR's bucket.
 * A fourth replica joins: only the buckets that move are listed, each by the replica that takes it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { bucketOf } from '../../lib/runtime/sharding/bucket-hash.js';
import { SHARD_BUCKET_LABEL } from '../../lib/runtime/sharding/bucket-label.js';
import { addOperators } from '../../operators/index.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const OPS = 'label-ops';
const NS = 'label-crs';
const BUCKETS = 8;
const CRS = Array.from({ length: 12 }, (_, i) => `m${i}`);
const crPath = `/apis/cache.example.com/v1beta1/namespaces/${NS}/memcacheds`;

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
const processes: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'shard-cr-label-'));
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  for (const name of [OPS, NS]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  const memcached = addOperators(new App()).find((o) => o.operatorName === 'memcached-operator')!;
  const crdFile = join(dir, 'memcached-crd.json');
  await writeFile(crdFile, JSON.stringify(memcached.customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [crdFile], 60_000);
}, 10 * 60_000);

afterAll(async () => {
  for (const child of processes) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Replica {
  readonly name: string;
  readonly output: () => string;
  readonly lines: () => Record<string, unknown>[];
  readonly metricsPort: number;
}

async function startReplica(name: string): Promise<Replica> {
  const metricsPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      'bin/cdk8s-operator.js', 'run',
      '--operators', 'memcached-operator',
      '--kubeconfig', plane.kubeconfigPath,
      '--sharding', '--sharding-namespace', OPS, '--sharding-buckets', String(BUCKETS),
      '--leader-elect-lease-duration', '15s', '--leader-elect-renew-deadline', '10s', '--leader-elect-retry-period', '2s',
      '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--metrics-secure=false',
      '--health-probe-bind-address', '0',
      '--no-rbac-self-check',
      '--log-level', 'debug',
    ],
    { cwd: REPO, env: { ...process.env, NODE_OPTIONS: '', POD_NAME: name }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  processes.push(child);
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const lines = () =>
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { name, output: () => text, lines, metricsPort };
}

async function labels(): Promise<Map<string, string | undefined>> {
  const list = await admin.request<{ items: KubeObject[] }>('GET', crPath);
  return new Map(list.items.map((cr) => [cr.metadata!.name!, cr.metadata?.labels?.[SHARD_BUCKET_LABEL]]));
}

async function cachedCrs(r: Replica): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
  const found = /^cdk8s_operator_shard_cached_crs\{[^}]*\} (\d+)$/m.exec(text);
  if (!found) throw new Error(`${r.name}: no cdk8s_operator_shard_cached_crs in /metrics`);
  return Number(found[1]);
}

/** Each replica's buckets (held and claimed) from its Lease, once the held sets cover every bucket once. */
async function settledBuckets(replicas: Replica[]): Promise<Map<string, Set<number>> | undefined> {
  const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${OPS}/leases`);
  const out = new Map<string, Set<number>>();
  const held: number[] = [];
  for (const r of replicas) {
    const annotations = (list.items.find((l) => l.metadata?.name === r.name)?.metadata?.annotations ?? {}) as Record<string, string>;
    const parse = (v: string | undefined) => (v ?? '').split(',').filter(Boolean).map(Number);
    held.push(...parse(annotations['sharding.cdk8s.io/held']));
    out.set(r.name, new Set([...parse(annotations['sharding.cdk8s.io/held']), ...parse(annotations['sharding.cdk8s.io/claimed'])]));
  }
  return held.length === BUCKETS && new Set(held).size === BUCKETS ? out : undefined;
}

test('GIVEN 3 sharded replicas THEN each CR is stamped once with its bucket, each replica caches only its buckets\' CRs, and a hand-edited label is repaired and told', async () => {
  const replicas = await Promise.all(['label-0', 'label-1', 'label-2'].map(startReplica));
  const context = () => `\n${replicas.map((r) => `--- ${r.name}\n${r.output().split('\n').filter((l) => /sharding|error|"level":[4-6]0/.test(l)).slice(-15).join('\n')}`).join('\n')}`;
  await Promise.all(CRS.map((name) => admin.request('POST', crPath, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NS }, spec: { replicas: 1 } } })));

  const want = new Map(CRS.map((name) => [name, String(bucketOf(NS, name, BUCKETS))]));
  await eventually('every CR carries the bucket of its namespace/name', async () => JSON.stringify([...(await labels())].sort()) === JSON.stringify([...want].sort()), { timeoutMs: 180_000, context });
  await eventually('every CR has its Deployment', async () => {
    const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/apps/v1/namespaces/${NS}/deployments`);
    return CRS.every((name) => list.items.some((d) => d.metadata?.ownerReferences?.some((o) => o.kind === 'Memcached' && o.name === name)));
  }, { timeoutMs: 180_000, context });

  // One writer of each label: every stamp is logged by the replica that made it, and each CR was stamped once.
  const stamps = replicas.flatMap((r) => r.lines().filter((l) => l.msg === 'sharding: stamped the bucket label of a CR').map((l) => ({ replica: r.name, name: l.name as string, bucket: l.bucket as number })));
  expect(stamps.map((s) => s.name).sort()).toEqual([...CRS].sort());
  for (const s of stamps) expect(String(s.bucket)).toBe(want.get(s.name));

  // Each replica caches its buckets' CRs only (its own gauge), through per-bucket CR watches (its own log).
  const shares = await eventually('each replica\'s cached CRs are those of its buckets', async () => {
    const buckets = await settledBuckets(replicas);
    if (!buckets) return undefined;
    const figures: { replica: string; share: number; cached: number }[] = [];
    for (const r of replicas) {
      const share = CRS.filter((name) => buckets.get(r.name)!.has(bucketOf(NS, name, BUCKETS))).length;
      const cached = await cachedCrs(r);
      if (cached !== share) return undefined;
      figures.push({ replica: r.name, share, cached });
    }
    return figures;
  }, { timeoutMs: 120_000, context });
  expect(shares.reduce((n, f) => n + f.cached, 0)).toBe(CRS.length);
  for (const r of replicas) {
    const watched = r.lines().filter((l) => l.msg === 'sharding: caching the children of a bucket').flatMap((l) => (l.informers as string[]).filter((i) => i.startsWith('memcacheds')).map((i) => ({ bucket: l.bucket as number, informer: i })));
    expect(watched.length).toBeGreaterThan(0);
    for (const w of watched) expect(w.informer).toContain(`operator.cdk8s.io/shard-bucket=${w.bucket}`);
    const running = r.lines().find((l) => l.msg === 'informers');
    expect((running?.informers as string[]).filter((i) => i.startsWith('memcacheds'))).toEqual([expect.stringContaining(`operator.cdk8s.io/shard-bucket notin (0,1,2,3,4,5,6,7)`)]);
  }

  // A label edited by hand: set back to the computed bucket, with a Warning Event and a warn log line.
  const victim = CRS[0]!;
  const wrong = String((Number(want.get(victim)) + 1) % BUCKETS);
  await admin.request('PATCH', `${crPath}/${victim}`, { body: { metadata: { labels: { [SHARD_BUCKET_LABEL]: wrong } } }, contentType: 'application/merge-patch+json' });
  await eventually('the hand-edited label is repaired', async () => (await labels()).get(victim) === want.get(victim), { timeoutMs: 120_000, context });
  const event = await eventually('a Warning Event ShardBucketLabelRepaired on the CR', async () => {
    const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${NS}/events`);
    return list.items.find((e) => e.reason === 'ShardBucketLabelRepaired' && (e.regarding as { name?: string } | undefined)?.name === victim);
  }, { timeoutMs: 60_000, context });
  expect(event.type).toBe('Warning');
  expect(event.note).toContain(`was "${wrong}", set back to "${want.get(victim)}"`);
  const warned = replicas.flatMap((r) => r.lines().filter((l) => l.level === 40 && String(l.msg).startsWith('sharding: repaired the bucket label')).map(() => r.name));
  expect(warned).toHaveLength(1);

  // A value that is no bucket of this ring: no bucket watch selects the CR, every replica's strays watch
  // does, and the holder of its computed bucket repairs it.
  const stray = CRS[1]!;
  await admin.request('PATCH', `${crPath}/${stray}`, { body: { metadata: { labels: { [SHARD_BUCKET_LABEL]: 'x' } } }, contentType: 'application/merge-patch+json' });
  await eventually('the stray label is repaired', async () => (await labels()).get(stray) === want.get(stray), { timeoutMs: 120_000, context });
  await eventually('a Warning Event for the stray', async () => {
    const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${NS}/events`);
    return list.items.some((e) => e.reason === 'ShardBucketLabelRepaired' && (e.regarding as { name?: string } | undefined)?.name === stray && String(e.note).includes('was "x"'));
  }, { timeoutMs: 60_000, context });

  // A join re-lists only the buckets that move: each replica starts bucket watches only for buckets it did
  // not hold before (the balanced assignment may move a bucket between two members already there too),
  // the joiner only for the buckets it takes; the gauges still add up to every CR once.
  const caching = (r: Replica) => r.lines().filter((l) => l.msg === 'sharding: caching the children of a bucket').map((l) => l.bucket as number);
  const heldBefore = await eventually('the ring of 3 is settled before the join', () => settledBuckets(replicas), { timeoutMs: 120_000, context });
  const before = new Map(replicas.map((r) => [r.name, caching(r).length]));
  const joiner = await startReplica('label-3');
  const all = [...replicas, joiner];
  const after = await eventually('the ring settles over 4 replicas with each cache its share', async () => {
    const buckets = await settledBuckets(all);
    if (!buckets || buckets.get(joiner.name)!.size === 0) return undefined;
    let total = 0;
    for (const r of all) {
      const cached = await cachedCrs(r);
      if (cached !== CRS.filter((name) => buckets.get(r.name)!.has(bucketOf(NS, name, BUCKETS))).length) return undefined;
      total += cached;
    }
    return total === CRS.length ? buckets : undefined;
  }, { timeoutMs: 120_000, context });
  for (const r of replicas) {
    const gained = [...after.get(r.name)!].filter((b) => !heldBefore.get(r.name)!.has(b)).sort((a, b) => a - b);
    expect([...caching(r).slice(before.get(r.name))].sort((a, b) => a - b)).toEqual(gained);
  }
  expect(new Set(caching(joiner))).toEqual(after.get(joiner.name));
}, 10 * 60_000);
