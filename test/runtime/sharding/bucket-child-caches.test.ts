/**
 * The per-bucket child caches of a sharded replica (lib/runtime/sharding/bucket-child-caches.ts) over the
 * fake client: which selectors the lists and the one watch per kind send, when a bucket counts as synced, the reader over
 * every bucket and over one, and that dropping a bucket tells listeners before, and fires no delete event. The real
 * list and watch are covered by test/integration/shard-share.test.ts and sharding.test.ts.
 */
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import type { InformerEvent } from '../../../lib/runtime/cache/informer.js';
import { BucketChildCaches, childKindKey } from '../../../lib/runtime/sharding/bucket-child-caches.js';
import { SHARD_BUCKET_LABEL } from '../../../lib/runtime/sharding/bucket-label.js';
import { eventually } from '../../support/eventually.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const SELECTOR = 'app.kubernetes.io/managed-by=app';

function child(name: string, bucket: number, owner: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'demo', uid: `uid-${name}`, resourceVersion: '1', labels: { [SHARD_BUCKET_LABEL]: String(bucket), 'operator.cdk8s.io/owner-uid': owner } } };
}

/** Answers each list with the children of the bucket its selector names; lists of bucket 9 are held until `release9()`. */
function serverWith(children: KubeObject[]) {
  const client = new FakeKubeClient();
  let release9: () => void = () => undefined;
  const held9 = new Promise<void>((resolve) => (release9 = resolve));
  client.hold = (call) => (call.method === 'GET' && String(call.query?.labelSelector).endsWith('=9') ? held9 : Promise.resolve());
  client.respond = (call) => {
    if (call.method !== 'GET') return undefined;
    const bucket = /shard-bucket=(\d+)$/.exec(String(call.query?.labelSelector))?.[1];
    return { kind: 'List', metadata: { resourceVersion: '5' }, items: children.filter((c) => c.metadata?.labels?.[SHARD_BUCKET_LABEL] === bucket) };
  };
  return { client, release9: () => release9() };
}

describe('BucketChildCaches', () => {
  test('GIVEN buckets to follow THEN each gets its own list selected on the owners and its bucket, and one watch covers them all once listed; synced per bucket; the reader sees every cached bucket', async () => {
    const { client, release9 } = serverWith([child('a', 1, 'cr-1'), child('b', 2, 'cr-2'), child('c', 2, 'cr-2'), child('d', 3, 'cr-3'), child('e', 9, 'cr-9')]);
    const caches = new BucketChildCaches({ client, kinds: [{ kind: configMapKind, labelSelector: SELECTOR, keepManagedFieldsOf: ['app'] }] });
    try {
      caches.follow([2, 1, 9]);
      expect(caches.cached()).toEqual([1, 2, 9]);
      await eventually('buckets 1 and 2 synced', async () => caches.synced(1) && caches.synced(2));
      expect(caches.synced(9)).toBe(false); // its list is not answered yet: a claim on it is not taken
      expect(caches.synced(3)).toBe(false); // not followed
      const selectors = client.calls.filter((c) => c.method === 'GET').map((c) => c.query?.labelSelector).sort();
      expect(selectors).toEqual([`${SELECTOR},${SHARD_BUCKET_LABEL}=1`, `${SELECTOR},${SHARD_BUCKET_LABEL}=2`, `${SELECTOR},${SHARD_BUCKET_LABEL}=9`]);
      expect(client.watches).toEqual([]); // the kind's one watch opens once every bucket it covers is listed
      const reader = caches.reader(configMapKind);
      expect(reader.get('demo', 'a')?.metadata?.name).toBe('a');
      expect(reader.get('demo', 'c')?.metadata?.name).toBe('c');
      expect(reader.get('demo', 'd')).toBeUndefined(); // bucket 3: another replica's
      expect(reader.byOwnerUid('cr-2').map((o) => o.metadata?.name).sort()).toEqual(['b', 'c']);
      expect(caches.size()).toBe(3);
      // One CR's reconcile reads its bucket alone: bucket 2's informer, which holds none of bucket 1's children.
      const bucket2 = reader.inBucket!(2)!;
      expect(bucket2).toBe(caches.informerIn(configMapKind, 2));
      expect(bucket2.byOwnerUid('cr-2').map((o) => o.metadata?.name).sort()).toEqual(['b', 'c']);
      expect(bucket2.get('demo', 'a')).toBeUndefined();
      expect(bucket2.byOwnerUid('cr-1')).toEqual([]);
      expect(reader.inBucket!(3)).toBeUndefined(); // not cached here: the whole reader answers (child-cache.ts readerIn)
      release9();
      await eventually('bucket 9 synced', async () => caches.synced(9));
      expect(caches.size()).toBe(4);
      await eventually('one watch', async () => client.watches.length === 1);
      expect(client.watches[0]!.query?.labelSelector).toBe(`${SELECTOR},${SHARD_BUCKET_LABEL} in (1,2,9)`);
    } finally {
      await caches.stop();
    }
  });

  test('GIVEN a bucket no longer followed THEN listeners hear removed with its informers, its handlers get no delete, the watch re-opens without it, and the reader no longer sees it', async () => {
    const { client } = serverWith([child('a', 1, 'cr-1'), child('b', 2, 'cr-2')]);
    const caches = new BucketChildCaches({ client, kinds: [{ kind: configMapKind, labelSelector: SELECTOR, keepManagedFieldsOf: ['app'] }] });
    const events: string[] = [];
    const told: string[] = [];
    const offs = new Map<number, () => void>();
    caches.on({
      added: (bucket, informers) => {
        told.push(`added ${bucket}`);
        const informer = informers.get(childKindKey(configMapKind))!;
        offs.set(bucket, informer.on((event: InformerEvent) => events.push(`${event.type} ${event.object.metadata?.name}`)));
      },
      removed: (bucket, informers) => {
        told.push(`removed ${bucket} (${informers.get(childKindKey(configMapKind))!.list().map((o) => o.metadata?.name)})`);
        offs.get(bucket)!();
      },
    });
    try {
      caches.follow([1, 2]);
      await eventually('synced', async () => caches.synced(1) && caches.synced(2));
      await eventually('one watch', async () => client.watches.length === 1);
      expect(events.sort()).toEqual(['add a', 'add b']);
      const first = client.watches[0]!;
      expect(first.query?.labelSelector).toBe(`${SELECTOR},${SHARD_BUCKET_LABEL} in (1,2)`);
      caches.follow([2, 4]);
      expect(told).toEqual(['added 1', 'added 2', 'removed 1 (a)', 'added 4']);
      expect(first.signal.aborted).toBe(true);
      await eventually('the watch re-opened over 2 and 4', async () => client.watches.at(-1)?.query?.labelSelector === `${SELECTOR},${SHARD_BUCKET_LABEL} in (2,4)`);
      expect(caches.cached()).toEqual([2, 4]);
      expect(caches.reader(configMapKind).get('demo', 'a')).toBeUndefined();
      expect(caches.reader(configMapKind).get('demo', 'b')?.metadata?.name).toBe('b');
      expect(events.filter((e) => e.startsWith('delete'))).toEqual([]);
      // A listener subscribing later hears of the buckets cached now.
      const late: number[] = [];
      caches.on({ added: (bucket) => late.push(bucket), removed: () => undefined });
      expect(late).toEqual([2, 4]);
    } finally {
      await caches.stop();
    }
    expect(caches.cached()).toEqual([]);
    expect(told.slice(-2)).toEqual(['removed 2 (b)', 'removed 4 ()']);
  });
});
