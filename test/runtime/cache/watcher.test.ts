import { ApiClient } from '../../../lib/runtime/client/api-client.js';
import { ManualClock } from '../../../lib/runtime/clock.js';
import { type ChangeEvent, METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT, Watcher, type WatcherOptions } from '../../../lib/runtime/cache/watcher.js';
import { localKubeConfig } from '../../support/local-kube-config.js';
import { FakeApiServer, RecordingLogger, cm, event, until } from '../../support/fake-watch-server.js';

describe('Watcher against a fake API server', () => {
  let server: FakeApiServer;
  let client: ApiClient;
  let watcher: Watcher | undefined;
  let logger: RecordingLogger;
  let events: ChangeEvent[];

  let url: string;

  beforeEach(async () => {
    server = new FakeApiServer();
    url = await server.start();
    client = new ApiClient({ kubeConfig: localKubeConfig(url) });
    logger = new RecordingLogger();
    events = [];
  });

  afterEach(async () => {
    await watcher?.stop();
    watcher = undefined;
    client.close();
    await server.stop();
  });

  function startWatcher(options: Partial<WatcherOptions> = {}): Watcher {
    watcher = new Watcher({
      client,
      resource: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
      namespace: 'ns',
      logger,
      timeoutSeconds: 300,
      backoff: { initialMs: 1, maxMs: 20, jitter: 0 },
      onChange: (e) => events.push(e),
      ...options,
    });
    watcher.start();
    return watcher;
  }

  const summary = () => events.map((e) => `${e.type} ${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`);

  test('GIVEN metadataOnly WHEN it lists and watches THEN it asks for PartialObjectMetadata(List) and keeps apiVersion, kind and metadata only, as the given kind, also when the server sends whole objects', async () => {
    server.objects = [cm('a', '5')];
    startWatcher({ metadataOnly: { apiVersion: 'v1', kind: 'ConfigMap' } });
    await until(() => server.watches.length === 1, 'watch opened');
    server.watches[0].send('MODIFIED', { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '11' } });
    server.watches[0].send('ADDED', { apiVersion: 'v1', kind: 'ConfigMap', ...cm('b', '12') }); // a server that ignored the Accept header
    await until(() => events.length === 3, 'three events');
    expect(server.requests.filter((r) => r.query.get('watch') !== 'true').map((r) => r.accept)).toEqual([METADATA_LIST_ACCEPT]);
    expect(server.requests.filter((r) => r.query.get('watch') === 'true').map((r) => r.accept)).toEqual([METADATA_WATCH_ACCEPT]);
    for (const e of events) {
      expect(Object.keys(e.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      expect(e.object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    }
    expect(summary()).toEqual(['add a@5', 'update a@11', 'add b@12']);
  });

  test('GIVEN watch-list WHEN two streams in a row end before their initial-events-end bookmark THEN it warns and lists instead, for good; a bookmark without the annotation does not end the initial events', async () => {
    server.objects = [cm('a', '5'), cm('b', '6')];
    const w = startWatcher({ initialList: 'watch-list' });
    for (const i of [0, 1]) {
      await until(() => server.watches.length === i + 1, `watch-list ${i + 1} opened`);
      const q = server.watches[i].query;
      expect([q.get('sendInitialEvents'), q.get('resourceVersionMatch'), q.get('resourceVersion')]).toEqual(['true', 'NotOlderThan', null]);
      server.watches[i].send('ADDED', { apiVersion: 'v1', kind: 'ConfigMap', ...cm('a', '5') });
      server.watches[i].send('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '7' } });
      server.watches[i].end();
    }
    await until(() => w.synced, 'synced by a list');
    expect(w.initialListMode).toBe('list');
    expect(server.listCalls()).toHaveLength(1);
    expect(summary()).toEqual(['add a@5', 'add b@6']); // nothing of the unfinished streams was emitted
    expect(logger.messages('warn')).toContain('watch-list streams ended before their initial-events-end bookmark; listing instead');
    await until(() => server.watches.length === 3, 'the watch after the list');
    expect(server.watches[2].query.get('resourceVersion')).toBe('10');
  });

  test('GIVEN watch-list WHEN the initial events end with the bookmark THEN the set is swapped in at its resourceVersion and later events on the same stream apply', async () => {
    const w = startWatcher({ initialList: 'watch-list' });
    await until(() => server.watches.length === 1, 'watch-list opened');
    server.watches[0].send('ADDED', { apiVersion: 'v1', kind: 'ConfigMap', ...cm('a', '5') });
    server.watches[0].send('BOOKMARK', { kind: 'ConfigMap', metadata: { resourceVersion: '8', annotations: { 'k8s.io/initial-events-end': 'true' } } });
    await until(() => w.synced, 'synced by the bookmark');
    expect(w.lastResourceVersion).toBe('8');
    server.watches[0].send('MODIFIED', { apiVersion: 'v1', kind: 'ConfigMap', ...cm('a', '9') });
    await until(() => events.length === 2, 'the update');
    expect(summary()).toEqual(['add a@5', 'update a@9']);
    expect(server.listCalls()).toHaveLength(0);
    expect(w.initialListMode).toBe('watch-list');
  });

  test('GIVEN no metadataOnly THEN list and watch ask for application/json and keep whole objects', async () => {
    server.objects = [cm('a', '5')];
    startWatcher();
    await until(() => server.watches.length === 1 && events.length === 1, 'listed and watching');
    expect(server.requests.map((r) => r.accept)).toEqual(['application/json', 'application/json']);
    expect(events[0].object.data).toEqual({ v: '5' });
  });

  test('GIVEN a running watch THEN alive(); WHEN it makes no progress past its budget plus grace, or is stopped THEN not alive', async () => {
    const w = startWatcher({ idleTimeoutMs: 1000 });
    await until(() => server.watches.length === 1, 'a watch');
    expect(w.alive()).toBe(true);
    // an open watch may stay silent for its idle timeout (1 s here) plus a 60 s grace
    expect(w.alive(performance.now() + 1000 + 59_000)).toBe(true);
    expect(w.alive(performance.now() + 1000 + 61_000)).toBe(false);
    await w.stop();
    expect(w.alive()).toBe(false);
    const never = new Watcher({ client, resource: { group: '', version: 'v1', plural: 'configmaps', namespaced: true }, onChange: () => undefined });
    expect(never.alive()).toBe(false);
  });

  test('GIVEN two list pages WHEN started THEN all objects are added, synced is set, and the watch starts from the list RV with bookmarks and a timeout', async () => {
    server.list = (q) =>
      q.get('continue') === 'page2'
        ? { status: 200, body: { kind: 'ConfigMapList', metadata: { resourceVersion: '11' }, items: [cm('b', '8')] } }
        : { status: 200, body: { kind: 'ConfigMapList', metadata: { resourceVersion: '11', continue: 'page2' }, items: [cm('a', '7')] } };
    const w = startWatcher({ pageSize: 1, labelSelector: 'app=x' });
    expect(w.synced).toBe(false);
    await w.waitForSync();
    expect(summary()).toEqual(['add a@7', 'add b@8']);
    expect(w.get('ns/a')?.kind).toBe('ConfigMap');
    expect(w.get('ns/a')?.apiVersion).toBe('v1');
    const lists = server.listCalls();
    expect(lists.map((q) => [q.get('limit'), q.get('continue'), q.get('labelSelector')])).toEqual([
      ['1', null, 'app=x'],
      ['1', 'page2', 'app=x'],
    ]);
    await until(() => server.watches.length === 1, 'a watch');
    const q = server.watches[0].query;
    expect([q.get('resourceVersion'), q.get('allowWatchBookmarks'), q.get('timeoutSeconds'), q.get('labelSelector')]).toEqual(['11', 'true', '300', 'app=x']);
    expect(server.requests[0].path).toBe('/api/v1/namespaces/ns/configmaps');
  });

  test('GIVEN an open watch WHEN objects are added, modified and deleted THEN each change is emitted with the old object', async () => {
    server.objects = [cm('a', '5')];
    const w = startWatcher();
    await until(() => server.watches.length === 1, 'a watch');
    const conn = server.watches[0];
    conn.send('ADDED', event('ADDED', 'b', '11').object);
    conn.send('MODIFIED', event('MODIFIED', 'a', '12').object);
    conn.send('DELETED', event('DELETED', 'b', '13').object);
    await until(() => events.length === 4, 'four events');
    expect(summary()).toEqual(['add a@5', 'add b@11', 'update a@12', 'delete b@13']);
    expect(events[2].oldObject?.metadata?.resourceVersion).toBe('5');
    expect(events[3].oldObject?.metadata?.resourceVersion).toBe('11');
    expect(w.lastResourceVersion).toBe('13');
    expect(w.size).toBe(1);
  });

  test('GIVEN a bookmark WHEN the server then ends the stream THEN nothing is emitted for the bookmark and the re-watch resumes from its RV', async () => {
    const w = startWatcher();
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].send('BOOKMARK', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '50' } });
    await until(() => w.lastResourceVersion === '50', 'bookmark RV');
    expect(events).toEqual([]);
    server.watches[0].end();
    await until(() => server.watches.length === 2, 'a second watch');
    expect(server.watches[1].query.get('resourceVersion')).toBe('50');
    expect(server.listCalls()).toHaveLength(1);
  });

  test('GIVEN the server closes the stream after events THEN the watcher re-watches at once from the last event RV, without relisting', async () => {
    startWatcher();
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].send('ADDED', event('ADDED', 'x', '21').object);
    server.watches[0].end();
    await until(() => server.watches.length === 2, 'a second watch');
    expect(server.watches[1].query.get('resourceVersion')).toBe('21');
    server.watches[1].send('MODIFIED', event('MODIFIED', 'x', '22').object);
    await until(() => events.length === 2, 'the event on the new stream');
    expect(summary()).toEqual(['add x@21', 'update x@22']);
    expect(server.listCalls()).toHaveLength(1);
  });

  test('GIVEN the connection is reset mid-stream THEN the watcher re-watches from the last RV', async () => {
    startWatcher();
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].send('ADDED', event('ADDED', 'x', '31').object);
    await until(() => events.length === 1, 'the event');
    server.watches[0].reset();
    await until(() => server.watches.length === 2, 'a second watch');
    expect(server.watches[1].query.get('resourceVersion')).toBe('31');
    expect(logger.messages('error')).toContain('watch failed; retrying');
  });

  test('GIVEN a list answered 404 (no CRD serves the resource) THEN the error log says what is not served and asks whether the CRD is installed, and the list is retried', async () => {
    server.list = () => ({ status: 404, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: '404 page not found' } });
    startWatcher();
    await until(() => server.listCalls().length >= 2, 'a retried list');
    expect(logger.messages('error')).toContain('list failed: the API server does not serve configmaps v1 (is its CustomResourceDefinition installed, serving this version?); retrying');
  });

  test('GIVEN an ERROR 410 event in the stream THEN the watcher relists and emits add/update/delete from the difference', async () => {
    server.objects = [cm('keep', '1'), cm('change', '2'), cm('gone', '3')];
    const metrics: string[] = [];
    const w = startWatcher({
      metrics: { restarted: (r, why) => metrics.push(`restarted ${r} ${why}`), relisted: (r) => metrics.push(`relisted ${r}`), event: (r, type) => metrics.push(`event ${r} ${type}`) },
    });
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].send('BOOKMARK', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '10' } });
    await until(() => metrics.length === 1, 'the BOOKMARK event counted');
    server.objects = [cm('keep', '1'), cm('change', '40'), cm('new', '41')];
    server.listRv = '42';
    server.watches[0].send('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 10 (30)' });
    await until(() => server.watches.length === 2, 'a watch after the relist');
    expect(summary().slice(3)).toEqual(['delete gone@3', 'update change@40', 'add new@41']);
    expect(events[4].oldObject?.metadata?.resourceVersion).toBe('2');
    expect(server.watches[1].query.get('resourceVersion')).toBe('42');
    expect(server.listCalls()).toHaveLength(2);
    expect([...w.values()].map((o) => o.metadata?.name).sort()).toEqual(['change', 'keep', 'new']);
    expect(w.synced).toBe(true);
    // each event received is counted, the ERROR too; the relist's items are not events
    expect(metrics).toEqual(['event configmaps BOOKMARK', 'event configmaps ERROR', 'restarted configmaps expired', 'relisted configmaps']);
  });

  test('GIVEN an HTTP 410 when a watch starts THEN the watcher relists', async () => {
    server.objects = [cm('a', '1')];
    let calls = 0;
    server.watchStart = () => (++calls === 2 ? { status: 410, body: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } } : undefined);
    startWatcher();
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].end(); // empty end → re-watch after a backoff step → 410 → relist
    server.objects = [];
    server.listRv = '60';
    await until(() => server.watches.length === 2, 'a watch after the relist');
    expect(server.watches[1].query.get('resourceVersion')).toBe('60');
    expect(summary()).toEqual(['add a@1', 'delete a@1']);
    expect(logger.messages('info')).toContain('resourceVersion expired; relisting');
  });

  test('GIVEN every watch answers 410 THEN each relist after the first waits a growing backoff (no tight relist loop)', async () => {
    server.watchStart = () => ({ status: 410, body: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } });
    startWatcher();
    await until(() => server.listCalls().length >= 5, 'five lists');
    await watcher!.stop();
    const delays = logger.lines.filter((l) => l.msg === 'resourceVersion expired; relisting').map((l) => l.fields.delayMs);
    expect(delays.slice(0, 4)).toEqual([0, 1, 2, 4]);
  });

  test('GIVEN watches that end at once without events THEN re-watches wait a growing backoff', async () => {
    startWatcher();
    for (let i = 1; i <= 3; i++) {
      await until(() => server.watches.length === i, `watch ${i}`);
      server.watches[i - 1].end();
    }
    await until(() => server.watches.length === 4, 'watch 4');
    const delays = logger.lines.filter((l) => l.msg.startsWith('watch ended at once')).map((l) => l.fields.delayMs);
    expect(delays).toEqual([1, 2, 4]);
  });

  test('GIVEN a watch that fails with 500 twice THEN it retries with growing backoff from the same RV, logging each failure', async () => {
    let calls = 0;
    server.watchStart = () => (++calls <= 2 ? { status: 500, body: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down' } } : undefined);
    startWatcher();
    await until(() => server.watches.length === 1, 'a watch after two failures');
    const failures = logger.lines.filter((l) => l.msg === 'watch failed; retrying');
    expect(failures.map((l) => l.fields.delayMs)).toEqual([1, 2]);
    expect((failures[0].fields.err as { code: number }).code).toBe(500);
    expect(server.watches[0].query.get('resourceVersion')).toBe('10');
    expect(server.listCalls()).toHaveLength(1);
  });

  test('GIVEN the API server refuses connections for a while THEN the watcher retries every refusedRetryMs without growing the backoff, logs the 1st, 2nd, 4th, 8th refusal, and lists once it listens', async () => {
    const port = Number(new URL(url).port);
    await server.stop(); // nothing listens on the port: every connect is refused
    server.objects = [cm('a', '1')];
    const w = startWatcher({ refusedRetryMs: 5 });
    const refusals = () => logger.lines.filter((l) => l.msg.startsWith('list refused'));
    await until(() => refusals().some((l) => l.fields.refusedInARow === 8), 'the 8th refusal in a row');
    expect(refusals().map((l) => l.fields.refusedInARow).slice(0, 4)).toEqual([1, 2, 4, 8]);
    for (const l of refusals()) expect(l.fields.delayMs).toBeGreaterThanOrEqual(5);
    for (const l of refusals()) expect(l.fields.delayMs).toBeLessThanOrEqual(8);
    expect(logger.messages('error')).toEqual([]);

    let failed = false;
    server.watchStart = () => (failed ? undefined : ((failed = true), { status: 500, body: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down' } }));
    await server.start(port);
    await w.waitForSync();
    expect(summary()).toEqual(['add a@1']);
    // The refusals did not count as backoff steps: the first real failure waits the initial delay.
    await until(() => logger.messages('error').includes('watch failed; retrying'), 'the 500 logged');
    expect(logger.lines.find((l) => l.msg === 'watch failed; retrying')?.fields.delayMs).toBe(1);
  });

  test('GIVEN a watch that ends in refused connections or error answers (manual clock) THEN it is not blind: the server (or its host) answered; a watch request that gets no answer at all is', async () => {
    const clock = new ManualClock(Math.floor(performance.now())); // whole ms: differences of the times it gives are exact
    const port = Number(new URL(url).port);
    const w = startWatcher({ timeoutSeconds: 30, refusedRetryMs: 5, clock });
    await until(() => server.watches.length === 1, 'a watch');
    await server.stop(); // the stream is cut, then every connect is refused
    clock.advance(36_000);
    const refusedBefore = logger.lines.filter((l) => l.msg.includes('refused')).length;
    await until(() => logger.lines.filter((l) => l.msg.includes('refused')).length > refusedBefore, 'a refusal after the clock moved');
    expect(w.blind(clock.now())).toBe(false);
    // Listening again, with every watch answered 500: still word from the server.
    server.watchStart = () => ({ status: 500, body: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down' } });
    await server.start(port);
    await until(() => logger.messages('error').includes('watch failed; retrying'), 'a 500');
    clock.advance(36_000);
    const failedBefore = logger.messages('error').length;
    await until(() => logger.messages('error').length > failedBefore, 'a 500 after the clock moved');
    expect(w.blind(clock.now())).toBe(false);
    // Now the server accepts watch requests and never answers them.
    server.stallWatches = 1_000;
    server.watchStart = () => undefined;
    const requestsBefore = server.requests.length;
    await until(() => server.requests.length > requestsBefore, 'a stalled watch request');
    clock.advance(35_001);
    expect(w.blind(clock.now())).toBe(true);
  });

  test('GIVEN answers with Retry-After (a restarted API server: 503 while paths install, 429 while storage initializes) THEN retried after min(Retry-After, refusedRetryMs) without growing the backoff; past 10 in a row the backoff takes over', async () => {
    let calls = 0;
    const starting = { kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: 'the request has been made before all known HTTP paths have been installed, please try again', details: { retryAfterSeconds: 5 } };
    const initializing = { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing' };
    server.list = () => {
      calls++;
      if (calls === 1) return { status: 503, body: starting }; // Status details only, no header
      if (calls <= 12) return { status: 429, body: initializing, headers: { 'Retry-After': '1' } };
      return server.okList();
    };
    server.objects = [cm('a', '1')];
    const w = startWatcher({ refusedRetryMs: 5 });
    await w.waitForSync();
    expect(calls).toBe(13);
    const retried = logger.lines.filter((l) => l.msg.includes('with Retry-After; retrying'));
    expect(retried.map((l) => l.msg)).toEqual(['list answered 503 with Retry-After; retrying', ...Array(9).fill('list answered 429 with Retry-After; retrying')]);
    for (const l of retried) expect(l.fields.delayMs).toBeGreaterThanOrEqual(5);
    for (const l of retried) expect(l.fields.delayMs).toBeLessThanOrEqual(8);
    // The 11th and 12th in a row: the exponential backoff, from its first step (the ten did not grow it).
    expect(logger.lines.filter((l) => l.msg === 'list failed; retrying').map((l) => l.fields.delayMs)).toEqual([1, 2]);
    expect(summary()).toEqual(['add a@1']);
  });

  test('GIVEN the list fails THEN it is retried after a backoff and synced only once it lands', async () => {
    let calls = 0;
    server.list = () => (++calls === 1 ? { status: 503, body: { kind: 'Status', code: 503, reason: 'ServiceUnavailable' } } : server.okList());
    server.objects = [cm('a', '1')];
    const w = startWatcher();
    await w.waitForSync();
    expect(calls).toBe(2);
    expect(logger.messages('error')).toEqual(['list failed; retrying']);
    expect(summary()).toEqual(['add a@1']);
  });

  test('GIVEN a handler that throws THEN the error is logged and later events still arrive', async () => {
    const w = startWatcher({
      onChange: (e) => {
        events.push(e);
        if (e.object.metadata?.name === 'bad') throw new Error('boom');
      },
    });
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].send('ADDED', event('ADDED', 'bad', '11').object);
    server.watches[0].send('ADDED', event('ADDED', 'good', '12').object);
    await until(() => events.length === 2, 'both events');
    expect(logger.messages('error')).toEqual(['change handler threw']);
    expect(w.get('ns/bad')).toBeDefined();
    expect(server.watches).toHaveLength(1);
    expect(server.watches[0].closed).toBe(false);
  });

  test('GIVEN a stream that goes silent WHEN the idle timeout passes THEN the watcher drops it and re-watches from the last RV', async () => {
    startWatcher({ idleTimeoutMs: 500 });
    await until(() => server.watches.length === 1, 'a watch');
    server.watches[0].send('ADDED', event('ADDED', 'x', '77').object);
    await until(() => server.watches.length === 2, 'a second watch');
    expect(server.watches[0].closed).toBe(true);
    expect(server.watches[1].query.get('resourceVersion')).toBe('77');
    expect(logger.messages('warn')).toContain('watch went silent (half-open connection?); closed it and the idle pooled connections, re-watching');
  });

  test('GIVEN the default timeoutSeconds (manual clock) THEN it is 30–45 s; WHEN the stream stays silent THEN blind after T + 5 s, and after T + 15 s its socket and every idle pooled socket to the server are closed and it re-watches', async () => {
    const clock = new ManualClock(Math.floor(performance.now())); // whole ms: differences of the times it gives are exact
    const writer = new ApiClient({ kubeConfig: localKubeConfig(url) }); // another client to the same server, e.g. the reconcilers'
    try {
      const w = startWatcher({ timeoutSeconds: undefined, clock });
      await until(() => server.watches.length === 1, 'a watch');
      const timeoutSeconds = Number(server.watches[0].query.get('timeoutSeconds'));
      expect(timeoutSeconds).toBeGreaterThanOrEqual(30);
      expect(timeoutSeconds).toBeLessThanOrEqual(45);
      await writer.request('GET', '/api/v1/namespaces/ns/configmaps'); // leaves an idle pooled socket
      // the watch (on the list's socket, reused) and the writer's idle pooled socket
      await until(() => server.openSockets() === 2, 'two connections');
      // The watcher has read the stream's headers (its last sign of life) before the clock moves: an
      // event behind them has been handled. Otherwise, on a busy machine, the headers could be read after
      // the advance and stamp the later time.
      server.watches[0].send('ADDED', event('ADDED', 'x', '11').object);
      await until(() => events.length === 1, 'the event behind the headers');
      clock.advance(timeoutSeconds * 1000 + 5000);
      expect(w.blind(clock.now())).toBe(false);
      clock.advance(1);
      expect(w.blind(clock.now())).toBe(true);
      expect(server.watches[0].closed).toBe(false);
      clock.advance(10_000 - 2);
      expect(server.watches[0].closed).toBe(false);
      clock.advance(1);
      await until(() => server.watches.length === 2, 'a second watch');
      expect(server.watches[0].closed).toBe(true);
      // only the new watch's connection is left: the writer's idle pooled socket was closed too
      await until(() => server.openSockets() === 1, 'the idle pooled socket closed');
      const warning = logger.lines.find((l) => l.level === 'warn' && l.msg.startsWith('watch went silent'));
      expect(warning?.fields).toMatchObject({ resource: 'configmaps in ns', droppedIdleSockets: 1 });
      // the re-opened watch answered (headers): no longer blind
      await until(() => !w.blind(clock.now()), 'not blind after the re-watch answered');
    } finally {
      writer.close();
    }
  });

  test('GIVEN a server that never answers the watch request THEN the idle watchdog also fires', async () => {
    server.stallWatches = 1;
    startWatcher({ idleTimeoutMs: 150 });
    await until(() => server.watches.length === 1, 'a watch after the stalled one');
    expect(server.requests.filter((r) => r.query.get('watch') === 'true')).toHaveLength(2);
    expect(logger.messages('warn')).toContain('watch went silent (half-open connection?); closed it and the idle pooled connections, re-watching');
  });

  test('GIVEN stop() THEN the open stream is closed, the loop ends and pending waitForSync rejects', async () => {
    server.list = () => ({ status: 500, body: {} });
    const w = startWatcher({ backoff: { initialMs: 10_000, jitter: 0 } });
    const sync = w.waitForSync();
    await until(() => server.listCalls().length === 1, 'a list');
    await w.stop();
    await expect(sync).rejects.toThrow(/stopped before sync/);
  });

  test('GIVEN an aborted signal THEN waitForSync rejects', async () => {
    server.list = () => ({ status: 500, body: {} });
    const w = startWatcher();
    const abort = new AbortController();
    const sync = w.waitForSync(abort.signal);
    abort.abort(new Error('cache sync timeout'));
    await expect(sync).rejects.toThrow('cache sync timeout');
  });

  test('GIVEN stop() during an open watch THEN the stream is closed', async () => {
    const w = startWatcher();
    await until(() => server.watches.length === 1, 'a watch');
    await w.stop();
    await until(() => server.watches[0].closed, 'the stream closed');
    expect(server.watches).toHaveLength(1);
  });
});
