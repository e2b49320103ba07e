import fc from 'fast-check';
import { selectorMatches } from '../../../lib/operator/render/related.js';
import type { KubeObject, WatchEvent } from '../../../lib/runtime/client/kube-client.js';
import { InformerFactory } from '../../../lib/runtime/cache/informer-factory.js';
import { OWNER_UID_LABEL } from '../../../lib/operator/render/labels.js';
import { Informer, type InformerEvent } from '../../../lib/runtime/cache/informer.js';
import type { Logger } from '../../../lib/runtime/logger.js';
import type { ResourceRef } from '../../../lib/runtime/client/resource-path.js';
import { type FakeCall, FakeKubeClient } from '../../support/fake-kube-client.js';

const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

/** Answers every list with `items`, at resourceVersion 100 (a watch is the fake client's own: the test pushes into it). */
const lists = (items: KubeObject[]) => (call: FakeCall) => (call.method === 'GET' ? { kind: 'List', metadata: { resourceVersion: '100' }, items } : undefined);

function obj(name: string, rv: string, meta: Partial<NonNullable<KubeObject['metadata']>> = {}, namespace = 'ns'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: rv, ...meta }, data: { k: 'v' } };
}

function owned(name: string, rv: string, ownerUid: string, namespace = 'ns'): KubeObject {
  return obj(name, rv, { ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Memcached', name: 'm', uid: ownerUid, controller: true }] }, namespace);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never happened: ${what}`);
}

const errors: string[] = [];
const logger: Logger = { debug() {}, info() {}, warn() {}, error: (_f, msg) => errors.push(msg) };

describe('Informer', () => {
  let stub: FakeKubeClient;
  let informer: Informer | undefined;

  beforeEach(() => {
    stub = new FakeKubeClient();
    stub.respond = lists([]);
    errors.length = 0;
  });

  afterEach(async () => {
    await informer?.stop();
    informer = undefined;
  });

  async function started(options: Partial<ConstructorParameters<typeof Informer>[0]> = {}): Promise<Informer> {
    informer = new Informer({ client: stub, resource: CONFIGMAPS, logger, watch: { timeoutSeconds: 300 }, ...options });
    informer.start();
    await informer.waitForSync();
    await until(() => stub.watches.length === 1, 'a watch');
    return informer;
  }

  test('GIVEN a transform THEN each object is cached as it returns it (after managedFields are stripped), frozen; WHEN it throws THEN the error is logged naming the object and the object is cached untransformed', async () => {
    stub.respond = lists([obj('a', '1', { managedFields: [{ manager: 'other' }] }), obj('broken', '2')]);
    const seen: KubeObject[] = [];
    const inf = await started({
      transform: (o) => {
        seen.push(o);
        if (o.metadata?.name === 'broken') throw new Error('cannot transform this one');
        const { data: _data, ...rest } = o as KubeObject & { data?: unknown };
        return { ...rest, metadata: { ...rest.metadata, annotations: { transformed: 'yes' } } };
      },
    });
    expect(seen[0].metadata).not.toHaveProperty('managedFields');
    const a = inf.get('ns', 'a')!;
    expect(a).not.toHaveProperty('data');
    expect(a.metadata?.annotations).toEqual({ transformed: 'yes' });
    expect(Object.isFrozen(a)).toBe(true);
    expect(inf.get('ns', 'broken')!.data).toBeDefined();
    expect(errors).toContain('cache transform threw; the object is cached untransformed');
    stub.watches[0].push({ type: 'ADDED', object: obj('c', '101') });
    await until(() => inf.get('ns', 'c') !== undefined, 'c cached');
    expect(inf.get('ns', 'c')).not.toHaveProperty('data');
  });

  test('GIVEN a transform that throws on one version of an object THEN transformFailure names the error until a later version transforms cleanly, and goes when the object is deleted', async () => {
    stub.respond = lists([obj('x', '1', { labels: { shape: 'bad' } }), obj('y', '2')]);
    const inf = await started({
      transform: (o) => {
        if (o.metadata?.labels?.shape === 'bad') throw new Error(`bad shape of ${o.metadata.name}`);
        return o;
      },
    });
    expect(inf.transformFailure(obj('x', '1'))).toBe('bad shape of x');
    expect(inf.transformFailure(obj('y', '2'))).toBeUndefined();
    const seen: (string | undefined)[] = [];
    inf.on((event) => {
      // handlers are first handed what is cached (x at resourceVersion 1): only the watch's events count here
      if (event.object.metadata?.name === 'x' && event.object.metadata.resourceVersion !== '1') seen.push(inf.transformFailure(event.object));
    });
    stub.watches[0].push({ type: 'MODIFIED', object: obj('x', '101') });
    await until(() => seen.length === 1, 'the update of x handled');
    expect(seen[0]).toBeUndefined();
    stub.watches[0].push({ type: 'MODIFIED', object: obj('x', '102', { labels: { shape: 'bad' } }) });
    await until(() => seen.length === 2, 'the second update of x handled');
    expect(seen[1]).toBe('bad shape of x');
    stub.watches[0].push({ type: 'DELETED', object: obj('x', '103', { labels: { shape: 'bad' } }) });
    await until(() => seen.length === 3, 'the delete of x handled');
    expect(seen[2]).toBeUndefined();
  });

  test('GIVEN cached objects THEN they are deeply frozen and managedFields keep only the listed managers', async () => {
    stub.respond = lists([
      obj('a', '1', {
        managedFields: [
          { manager: 'memcached-operator', operation: 'Apply', fieldsV1: { 'f:data': {} } },
          { manager: 'kubectl-edit', operation: 'Update' },
        ],
      }),
      obj('b', '2', { managedFields: [{ manager: 'kubectl-edit', operation: 'Update' }] }),
    ]);
    const inf = await started({ keepManagedFieldsOf: ['memcached-operator'] });
    const a = inf.get('ns', 'a')!;
    expect(a.metadata?.managedFields).toEqual([{ manager: 'memcached-operator', operation: 'Apply', fieldsV1: { 'f:data': {} } }]);
    expect(inf.get('ns', 'b')!.metadata).not.toHaveProperty('managedFields');
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.metadata)).toBe(true);
    expect(Object.isFrozen(a.data)).toBe(true);
    expect(() => {
      (a.data as Record<string, string>).k = 'changed';
    }).toThrow(TypeError);
    // Objects from the watch are treated the same way.
    stub.watches[0].push({ type: 'ADDED', object: obj('c', '101', { managedFields: [{ manager: 'other' }] }) });
    await until(() => inf.get('ns', 'c') !== undefined, 'c cached');
    expect(inf.get('ns', 'c')!.metadata).not.toHaveProperty('managedFields');
    expect(Object.isFrozen(inf.get('ns', 'c'))).toBe(true);
  });

  test('GIVEN objects in several namespaces THEN get and list find them by namespace', async () => {
    stub.respond = lists([obj('a', '1'), obj('b', '2'), obj('a', '3', {}, 'other')]);
    const inf = await started();
    expect(inf.get('ns', 'a')?.metadata?.resourceVersion).toBe('1');
    expect(inf.get('other', 'a')?.metadata?.resourceVersion).toBe('3');
    expect(inf.get('nope', 'a')).toBeUndefined();
    expect(inf.list('ns').map((o) => o.metadata?.name).sort()).toEqual(['a', 'b']);
    expect(inf.list().length).toBe(3);
    expect(inf.list('empty')).toEqual([]);
    stub.watches[0].push({ type: 'DELETED', object: obj('b', '101') });
    await until(() => inf.list('ns').length === 1, 'b gone from the namespace index');
    expect(inf.size()).toBe(2);
  });

  test('GIVEN children with ownerReferences or the owner-UID label THEN byOwnerUid finds them, and follows updates and deletes', async () => {
    stub.respond = lists([owned('c1', '1', 'owner-1'), owned('c2', '2', 'owner-1'), owned('c3', '3', 'owner-2'), obj('c4', '4', { labels: { [OWNER_UID_LABEL]: 'owner-1' } })]);
    const inf = await started();
    const names = (uid: string) => inf.byOwnerUid(uid).map((o) => o.metadata?.name).sort();
    expect(names('owner-1')).toEqual(['c1', 'c2', 'c4']);
    expect(names('owner-2')).toEqual(['c3']);
    stub.watches[0].push({ type: 'MODIFIED', object: owned('c2', '101', 'owner-2') });
    stub.watches[0].push({ type: 'DELETED', object: owned('c1', '102', 'owner-1') });
    await until(() => inf.lastResourceVersion === '102', 'both events');
    expect(names('owner-1')).toEqual(['c4']);
    expect(names('owner-2')).toEqual(['c2', 'c3']);
    expect(names('owner-3')).toEqual([]);
  });

  test('GIVEN handlers THEN they see the cache already updated, a throwing one does not stop the others, and unsubscribe works', async () => {
    const inf = await started();
    const seen: string[] = [];
    inf.on(() => {
      throw new Error('first handler fails');
    });
    const off = inf.on((e: InformerEvent) => seen.push(`${e.type} ${e.object.metadata?.name} cached=${inf.get('ns', e.object.metadata!.name!) !== undefined}`));
    stub.watches[0].push({ type: 'ADDED', object: obj('a', '101') });
    stub.watches[0].push({ type: 'DELETED', object: obj('a', '102') });
    await until(() => seen.length === 2, 'two events');
    expect(seen).toEqual(['add a cached=true', 'delete a cached=false']);
    expect(errors).toEqual(['informer handler threw', 'informer handler threw']);
    off();
    stub.watches[0].push({ type: 'ADDED', object: obj('b', '103') });
    await until(() => inf.get('ns', 'b') !== undefined, 'b cached');
    expect(seen).toHaveLength(2);
  });

  test('GIVEN an async handler that rejects THEN the rejection is logged, not unhandled', async () => {
    const inf = await started();
    inf.on(async () => {
      throw new Error('async boom');
    });
    stub.watches[0].push({ type: 'ADDED', object: obj('a', '101') });
    await until(() => errors.length === 1, 'the logged rejection');
    expect(errors).toEqual(['informer handler threw']);
  });

  test('GIVEN a synced informer WHEN a handler subscribes late THEN it first gets an add for every cached object', async () => {
    stub.respond = lists([obj('a', '1'), obj('b', '2')]);
    const inf = await started();
    const seen: string[] = [];
    inf.on((e) => seen.push(`${e.type} ${e.object.metadata?.name}`));
    expect(seen.sort()).toEqual(['add a', 'add b']);
  });

  test('GIVEN a cluster-scoped kind THEN get ignores the namespace argument', async () => {
    stub.respond = lists([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', uid: 'u', resourceVersion: '5' } }]);
    const inf = await started({ resource: NAMESPACES });
    expect(inf.get(undefined, 'team-a')?.metadata?.name).toBe('team-a');
    expect(inf.get('whatever', 'team-a')?.metadata?.name).toBe('team-a');
    expect(stub.calls[0].path).toBe('/api/v1/namespaces');
  });

  test('GIVEN a started informer WHEN asked to keep a new manager THEN it throws; a known one is fine', async () => {
    const inf = await started({ keepManagedFieldsOf: ['a'] });
    expect(() => inf.keepManagedFields(['a'])).not.toThrow();
    expect(() => inf.keepManagedFields(['b'])).toThrow(/already started/);
  });
});

describe('Informer.select against a scan of the cache', () => {
  // Small alphabets, so that names, namespaces and label pairs collide often.
  const labels = fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('1', '2', ''), { maxKeys: 3 });
  const namespace = fc.constantFrom('x', 'y');
  const item = fc.record({ name: fc.constantFrom('p', 'q', 'r', 's'), namespace, labels });
  const event = fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), item });
  const query = fc.record({ namespace: fc.constantFrom(undefined, 'x', 'y'), selector: labels });

  test('GIVEN any list and events WHEN select is first called before or after them THEN it answers what filtering list() answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { maxLength: 6 }), fc.array(event, { maxLength: 10 }), fc.array(query, { minLength: 1, maxLength: 4 }), fc.boolean(), async (items, events, queries, selectFirst) => {
        const stub = new FakeKubeClient();
        stub.respond = lists(items.map((i, n) => obj(i.name, String(n + 1), { labels: i.labels }, i.namespace)));
        const inf = new Informer({ client: stub, resource: CONFIGMAPS, logger, watch: { timeoutSeconds: 300 } });
        const check = () => {
          for (const q of queries) {
            const names = (objects: KubeObject[]) => objects.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();
            const scanned = inf.list(q.namespace).filter((o) => selectorMatches(q.selector, o.metadata?.labels));
            expect(names(inf.select(q.namespace, q.selector))).toEqual(names(scanned));
          }
        };
        try {
          inf.start();
          await inf.waitForSync();
          await until(() => stub.watches.length === 1, 'a watch');
          if (selectFirst) check(); // builds the label index before the events, which must keep it current
          events.forEach((e, n) => stub.watches[0].push({ type: e.type as WatchEvent['type'], object: obj(e.item.name, String(1000 + n), { labels: e.item.labels }, e.item.namespace) }));
          if (events.length > 0) await until(() => inf.lastResourceVersion === String(1000 + events.length - 1), 'every event');
          check();
          // The index is kept current, not only filtered at read time: it holds exactly the cached objects'
          // label pairs (a stale entry would be a leak that no answer shows).
          // (Built by the first select with a non-empty selector.)
          const index = (inf as unknown as { byLabel?: Map<string, Set<string>> }).byLabel ?? new Map<string, Set<string>>();
          const built = queries.some((q) => Object.keys(q.selector).length > 0);
          const pairs = inf.list().flatMap((o) => Object.entries(o.metadata?.labels ?? {}).map(([k, v]) => `${k}=${v} ${o.metadata?.namespace}/${o.metadata?.name}`));
          expect([...index].flatMap(([pair, keys]) => [...keys].map((key) => `${pair.replace('\0', '=')} ${key}`)).sort()).toEqual(built ? pairs.sort() : []);
        } finally {
          await inf.stop();
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('InformerFactory', () => {
  let stub: FakeKubeClient;
  let factory: InformerFactory;

  beforeEach(() => {
    stub = new FakeKubeClient();
    stub.respond = lists([]);
    factory = new InformerFactory({ client: stub, keepManagedFieldsOf: ['base'], watch: { timeoutSeconds: 300 } });
  });

  afterEach(() => factory.stop());

  test('GIVEN the same resource, namespace and selector THEN one informer is shared; a different selector or namespace gets its own', () => {
    const a = factory.informerFor(CONFIGMAPS, { labelSelector: 'app.kubernetes.io/managed-by=x' });
    const b = factory.informerFor(CONFIGMAPS, { labelSelector: 'app.kubernetes.io/managed-by=x' });
    const c = factory.informerFor(CONFIGMAPS, { labelSelector: 'app.kubernetes.io/managed-by=y' });
    const d = factory.informerFor(CONFIGMAPS, { namespace: 'ns', labelSelector: 'app.kubernetes.io/managed-by=x' });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(a).not.toBe(d);
    expect(factory.all()).toHaveLength(3);
  });

  test('GIVEN metadataOnly or a transform THEN informers are shared only with the same shape (metadata-only or not, the same transform function); metadataOnly needs the kind', () => {
    const kind = { ...CONFIGMAPS, kind: 'ConfigMap' };
    const drop = (o: KubeObject) => o;
    const whole = factory.informerFor(kind, {});
    const meta = factory.informerFor(kind, { metadataOnly: true });
    expect(factory.informerFor(kind, { metadataOnly: true })).toBe(meta);
    expect(meta).not.toBe(whole);
    const t1 = factory.informerFor(kind, { transform: drop });
    expect(factory.informerFor(kind, { transform: drop })).toBe(t1);
    expect(factory.informerFor(kind, { transform: (o) => o })).not.toBe(t1);
    expect(t1).not.toBe(whole);
    expect(() => factory.informerFor(CONFIGMAPS, { metadataOnly: true })).toThrow(/needs the kind's name/);
  });

  test('GIVEN managers asked for before start THEN the shared informer keeps all of them; after start a new one throws', async () => {
    stub.respond = lists([obj('a', '1', { managedFields: [{ manager: 'base' }, { manager: 'op-1' }, { manager: 'op-2' }, { manager: 'kubectl' }] })]);
    const inf = factory.informerFor(CONFIGMAPS, { keepManagedFieldsOf: ['op-1'] });
    factory.informerFor(CONFIGMAPS, { keepManagedFieldsOf: ['op-2'] });
    factory.start();
    await factory.waitForSync();
    expect(factory.hasSynced()).toBe(true);
    expect(inf.get('ns', 'a')!.metadata!.managedFields).toEqual([{ manager: 'base' }, { manager: 'op-1' }, { manager: 'op-2' }]);
    expect(() => factory.informerFor(CONFIGMAPS, { keepManagedFieldsOf: ['op-3'] })).toThrow(/already started/);
  });

  test('GIVEN a started factory WHEN a new informer is asked for THEN it starts at once', async () => {
    factory.start();
    const inf = factory.informerFor(NAMESPACES);
    await inf.waitForSync();
    expect(inf.isStarted()).toBe(true);
    expect(factory.hasSynced()).toBe(true);
  });

  test('GIVEN a cluster-scoped kind WHEN a namespace is given THEN it is ignored', () => {
    const inf = factory.informerFor(NAMESPACES, { namespace: 'ns' });
    expect(inf.namespace).toBeUndefined();
  });
});
