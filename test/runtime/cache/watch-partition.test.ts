/**
 * The edges of a partitioned watcher's loop (lib/runtime/cache/watch-partition.ts) that the real API
 * server cannot be made to hit on cue: a partition that joins or leaves while a list runs, a partition's
 * list that fails, a 410 right after a join. The fake server answers lists per partition (`b=<value>`)
 * and holds watches open so each test sends the events a real server would (every change after the
 * watch's resourceVersion, replays included). test/integration/watch-partitions.test.ts has the same
 * watcher against the real kube-apiserver.
 */
import { ApiClient } from '../../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { type ChangeEvent, Watcher } from '../../../lib/runtime/cache/watcher.js';
import { type PartitionOwner, WatchPartition } from '../../../lib/runtime/cache/watch-partition.js';
import { localKubeConfig } from '../../support/local-kube-config.js';
import { FakeApiServer, type ListAnswer, type WatchConn, RecordingLogger, cm, until } from '../../support/fake-watch-server.js';

/** The partition a list asks for (`app=x,b=<value>`). */
const valueOf = (q: URLSearchParams) => /(?:^|,)b=([^,]+)/.exec(q.get('labelSelector') ?? '')?.[1];
const inPartition = (b: string, name: string, rv: string): KubeObject => cm(name, rv, { labels: { app: 'x', b } });
const listOf = (rv: string, items: KubeObject[]): ListAnswer => ({ status: 200, body: { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items } });
const send = (conn: WatchConn, type: string, b: string, name: string, rv: string) => conn.send(type, { apiVersion: 'v1', kind: 'ConfigMap', ...inPartition(b, name, rv) });
const summary = (events: ChangeEvent[]) => events.map((e) => `${e.type} ${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`);

/** A list answer the test gives when it chooses. */
function held(): { answer: Promise<ListAnswer>; release: (answer: ListAnswer) => void } {
  let release!: (answer: ListAnswer) => void;
  const answer = new Promise<ListAnswer>((resolve) => (release = resolve));
  return { answer, release };
}

describe('a partitioned Watcher against a fake API server', () => {
  let server: FakeApiServer;
  let client: ApiClient;
  let watcher: Watcher;
  let logger: RecordingLogger;

  beforeEach(async () => {
    server = new FakeApiServer();
    client = new ApiClient({ kubeConfig: localKubeConfig(await server.start()) });
    logger = new RecordingLogger();
    watcher = new Watcher({
      client,
      resource: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
      namespace: 'ns',
      labelSelector: 'app=x',
      partitionLabel: 'b',
      logger,
      timeoutSeconds: 300,
      backoff: { initialMs: 1, maxMs: 20, jitter: 0 },
      onChange: () => {
        throw new Error('a partitioned watcher has no change handler of its own');
      },
    });
  });

  afterEach(async () => {
    await watcher.stop();
    client.close();
    await server.stop();
  });

  function join(value: string) {
    const events: ChangeEvent[] = [];
    const partition = watcher.partition(value, { onChange: (e) => events.push(e) });
    partition.start();
    return { partition, events };
  }

  const lists = () => server.listCalls().map((q) => q.get('labelSelector'));
  const watchQuery = (i: number) => [server.watches[i].query.get('labelSelector'), server.watches[i].query.get('resourceVersion')];

  test('GIVEN a partition joins while another one is listed THEN both are listed alone, one watch opens over both from the older list, and each drops the replays of what it listed', async () => {
    const first = held();
    server.list = (q) => (valueOf(q) === '1' ? first.answer : listOf('12', [inPartition('2', 'c', '11')]));
    const one = join('1');
    await until(() => lists().length === 1, "partition 1's list asked for");
    const two = join('2');
    first.release(listOf('10', [inPartition('1', 'a', '5')]));
    await until(() => server.watches.length === 1, 'the watch opened');
    expect(lists()).toEqual(['app=x,b=1', 'app=x,b=2']);
    expect(watchQuery(0)).toEqual(['app=x,b in (1,2)', '10']);
    // Every change after 10: a@11 is new to partition 1; c@11 is in partition 2's list (at 12) already.
    send(server.watches[0], 'MODIFIED', '1', 'a', '11');
    send(server.watches[0], 'MODIFIED', '2', 'c', '11');
    send(server.watches[0], 'MODIFIED', '2', 'c', '13');
    await until(() => two.events.length === 2, "partition 2's change after its list");
    expect(summary(one.events)).toEqual(['add a@5', 'update a@11']);
    expect(summary(two.events)).toEqual(['add c@11', 'update c@13']);
    expect(server.watches).toHaveLength(1);
    await Promise.all([one.partition.waitForSync(), two.partition.waitForSync()]);
  });

  test('GIVEN a partition leaves while it is listed THEN it gets no events, its waitForSync rejects, and the watch re-opens over the others from where it was', async () => {
    const second = held();
    server.list = (q) => (valueOf(q) === '1' ? listOf('10', [inPartition('1', 'a', '5')]) : second.answer);
    const one = join('1');
    await until(() => server.watches.length === 1, 'the watch over partition 1 opened');
    expect(watchQuery(0)).toEqual(['app=x,b in (1)', '10']);
    const two = join('2');
    const synced = two.partition.waitForSync();
    await until(() => lists().length === 2 && server.watches[0].closed, "the watch closed for partition 2's list");
    await two.partition.stop();
    await expect(synced).rejects.toThrow(/b=2: stopped before sync/);
    second.release(listOf('12', [inPartition('2', 'c', '11')]));
    await until(() => server.watches.length === 2, 'the watch re-opened');
    expect(watchQuery(1)).toEqual(['app=x,b in (1)', '10']);
    expect(two.events).toEqual([]);
    expect([two.partition.synced, two.partition.size]).toEqual([false, 0]);
    send(server.watches[1], 'MODIFIED', '1', 'a', '13');
    await until(() => one.events.length === 2, "partition 1's change");
    expect(summary(one.events)).toEqual(['add a@5', 'update a@13']);
  });

  test('GIVEN the only partition leaves while it is listed THEN no watch opens for it: the next watch is the next partition\'s', async () => {
    const first = held();
    server.list = (q) => (valueOf(q) === '1' ? first.answer : listOf('20', [inPartition('3', 'd', '19')]));
    const one = join('1');
    await until(() => lists().length === 1, "partition 1's list asked for");
    await one.partition.stop();
    first.release(listOf('10', [inPartition('1', 'a', '5')]));
    const three = join('3');
    await until(() => server.watches.length === 1, 'a watch opened');
    expect(lists()).toEqual(['app=x,b=1', 'app=x,b=3']);
    expect(watchQuery(0)).toEqual(['app=x,b in (3)', '20']);
    expect(one.events).toEqual([]);
    expect(summary(three.events)).toEqual(['add d@19']);
  });

  test("GIVEN a joining partition's list fails twice THEN the error is logged naming that partition, the others keep their objects, and once it is listed the watch replays what the others missed meanwhile", async () => {
    let failures = 0;
    server.list = (q) => {
      if (valueOf(q) === '1') return listOf('10', [inPartition('1', 'a', '5')]);
      return ++failures <= 2 ? { status: 500, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'etcd is unhappy' } } : listOf('15', [inPartition('2', 'c', '14')]);
    };
    const one = join('1');
    await until(() => server.watches.length === 1, 'the watch over partition 1 opened');
    const two = join('2');
    await until(() => server.watches.length === 2, 'the watch re-opened with partition 2');
    expect(lists()).toEqual(['app=x,b=1', 'app=x,b=2', 'app=x,b=2', 'app=x,b=2']);
    expect(watchQuery(1)).toEqual(['app=x,b in (1,2)', '10']);
    const failed = logger.lines.filter((l) => l.level === 'error');
    expect(failed.map((l) => [l.msg, l.fields.resource])).toEqual([
      ['list failed; retrying', 'configmaps in ns with app=x,b=2'],
      ['list failed; retrying', 'configmaps in ns with app=x,b=2'],
    ]);
    expect(summary(one.events)).toEqual(['add a@5']);
    await two.partition.waitForSync();
    expect(two.partition.lastError).toBeUndefined();
    // Partition 1 changed while the watch was closed (a@12); c@14 is in partition 2's list already.
    send(server.watches[1], 'MODIFIED', '1', 'a', '12');
    send(server.watches[1], 'MODIFIED', '2', 'c', '14');
    send(server.watches[1], 'MODIFIED', '2', 'c', '16');
    await until(() => two.events.length === 2, "partition 2's change after its list");
    expect(summary(one.events)).toEqual(['add a@5', 'update a@12']);
    expect(summary(two.events)).toEqual(['add c@14', 'update c@16']);
  });

  test('GIVEN the watch re-opened after a join answers 410 THEN every partition is listed alone again, each emits only its difference, and the watch opens from the older list', async () => {
    let firstLists = 0;
    server.list = (q) => {
      if (valueOf(q) === '2') return listOf('20', [inPartition('2', 'c', '19')]);
      return ++firstLists === 1 ? listOf('10', [inPartition('1', 'a', '5'), inPartition('1', 'b', '6')]) : listOf('25', [inPartition('1', 'a', '24')]);
    };
    let watchCalls = 0;
    server.watchStart = () => (++watchCalls === 2 ? { status: 410, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 10 (21)' } } : undefined);
    const one = join('1');
    await until(() => server.watches.length === 1, 'the watch over partition 1 opened');
    const two = join('2');
    await until(() => server.watches.length === 2, 'the watch opened after the 410');
    expect(watchCalls).toBe(3);
    expect(lists()).toEqual(['app=x,b=1', 'app=x,b=2', 'app=x,b=1', 'app=x,b=2']);
    expect(watchQuery(1)).toEqual(['app=x,b in (1,2)', '20']);
    expect(summary(one.events)).toEqual(['add a@5', 'add b@6', 'delete b@6', 'update a@24']);
    expect(summary(two.events)).toEqual(['add c@19']);
    // From 20: a@24 is in partition 1's second list (at 25) already.
    send(server.watches[1], 'MODIFIED', '1', 'a', '24');
    send(server.watches[1], 'MODIFIED', '2', 'c', '22');
    await until(() => two.events.length === 2, "partition 2's change");
    expect(summary(one.events)).toHaveLength(4);
    expect(summary(two.events)).toEqual(['add c@19', 'update c@22']);
  });
});

test('a partition takes an event as a replay when its resourceVersion is at or below the mark, as numbers (9 < 10 < 11 < 100), and none before it has a mark', () => {
  const partition = new WatchPartition({} as PartitionOwner, '1', { onChange: () => {} });
  const replay = (rv: string) => partition.isReplay(cm('a', rv));
  expect(['9', '10', '11', '100'].map(replay)).toEqual([false, false, false, false]);
  partition.mark = 10n;
  expect(['9', '10', '11', '99', '100', '1000'].map(replay)).toEqual([true, true, false, false, false, false]);
  partition.mark = 100n;
  expect(['99', '100', '101', '11'].map(replay)).toEqual([true, true, false, true]);
});
