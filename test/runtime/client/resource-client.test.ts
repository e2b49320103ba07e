/**
 * The typed client over the one fake: the paths, query parameters, bodies and content types each verb
 * sends; the pager across `continue` tokens (and a 410 on a continue); errors mapped once (ApiError,
 * serverMessageOf). What the API server does with them is proved by the integration tests of the modules
 * that use the client (test/integration/**).
 */
import { ApiError, isApiError, serverMessageOf } from '../../../lib/runtime/client/kube-client.js';
import { listAll, listPages } from '../../../lib/runtime/client/list-pages.js';
import { ResourceClient } from '../../../lib/runtime/client/resource-client.js';
import type { ResourceRef } from '../../../lib/runtime/client/resource-path.js';
import { apiVersionOf, withTypeMeta } from '../../../lib/runtime/client/type-meta.js';
import { ReconcileError } from '../../../lib/runtime/errors.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
const web = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: 'ns', name: 'web' }, spec: { replicas: 2 } };

describe('ResourceClient requests', () => {
  test('GIVEN get and getIfExists THEN a GET of the object path; a 404 rejects get with ApiError and makes getIfExists undefined', async () => {
    const fake = new FakeKubeClient({ '/apis/apps/v1/namespaces/ns/deployments/web': web });
    const client = new ResourceClient(fake);
    await expect(client.get(DEPLOYMENTS, 'ns', 'web')).resolves.toEqual(web);
    await expect(client.getIfExists(NAMESPACES, undefined, 'gone')).resolves.toBeUndefined();
    const err = await client.get(DEPLOYMENTS, 'ns', 'other').catch((e: unknown) => e);
    expect(isApiError(err, 404)).toBe(true);
    expect(fake.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /apis/apps/v1/namespaces/ns/deployments/web',
      'GET /api/v1/namespaces/gone',
      'GET /apis/apps/v1/namespaces/ns/deployments/other',
    ]);
    expect(() => client.get(DEPLOYMENTS, undefined, 'web')).toThrow('deployments/web: a namespaced resource needs a namespace');
  });

  test('GIVEN create, update and updateStatus THEN POST the collection and PUT the object (and /status), with fieldManager and dryRun=All in the query only when set', async () => {
    const fake = new FakeKubeClient();
    const client = new ResourceClient(fake);
    await client.create(DEPLOYMENTS, web, { fieldManager: 'op', dryRun: true });
    await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } });
    await client.update(DEPLOYMENTS, web);
    await client.updateStatus(DEPLOYMENTS, web, { fieldManager: 'op' });
    expect(fake.calls.map(({ method, path, query, body, contentType }) => ({ method, path, query, body, contentType }))).toEqual([
      { method: 'POST', path: '/apis/apps/v1/namespaces/ns/deployments', query: { fieldManager: 'op', dryRun: 'All' }, body: web },
      { method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } } },
      { method: 'PUT', path: '/apis/apps/v1/namespaces/ns/deployments/web', body: web },
      { method: 'PUT', path: '/apis/apps/v1/namespaces/ns/deployments/web/status', query: { fieldManager: 'op' }, body: web },
    ]);
    expect(fake.calls[1].query).toBeUndefined();
  });

  test('GIVEN apply and applyStatus THEN PATCH apply-patch+yaml with fieldManager, force and dryRun', async () => {
    const fake = new FakeKubeClient();
    const client = new ResourceClient(fake);
    await client.apply(DEPLOYMENTS, web, { fieldManager: 'op', force: true });
    await client.applyStatus(DEPLOYMENTS, { ...web, status: { ready: 1 } }, { fieldManager: 'op', dryRun: true });
    expect(fake.calls.map(({ method, path, query, contentType }) => ({ method, path, query, contentType }))).toEqual([
      { method: 'PATCH', path: '/apis/apps/v1/namespaces/ns/deployments/web', query: { fieldManager: 'op', force: true }, contentType: 'application/apply-patch+yaml' },
      { method: 'PATCH', path: '/apis/apps/v1/namespaces/ns/deployments/web/status', query: { fieldManager: 'op', dryRun: 'All' }, contentType: 'application/apply-patch+yaml' },
    ]);
    expect(fake.calls[1].body.status).toEqual({ ready: 1 });
  });

  test('GIVEN a json patch and a merge patch THEN PATCH with their content types and the body as given', async () => {
    const fake = new FakeKubeClient();
    const client = new ResourceClient(fake);
    const ops = [{ op: 'replace', path: '/spec/replicas', value: 3 }];
    await client.patch(DEPLOYMENTS, 'ns', 'web', { type: 'json', body: ops });
    await client.patch(DEPLOYMENTS, 'ns', 'web', { type: 'merge', body: { spec: { replicas: 1 } } }, { subresource: 'scale', fieldManager: 'op' });
    expect(fake.calls.map(({ path, query, body, contentType }) => ({ path, query, body, contentType }))).toEqual([
      { path: '/apis/apps/v1/namespaces/ns/deployments/web', body: ops, contentType: 'application/json-patch+json' },
      { path: '/apis/apps/v1/namespaces/ns/deployments/web/scale', query: { fieldManager: 'op' }, body: { spec: { replicas: 1 } }, contentType: 'application/merge-patch+json' },
    ]);
  });

  test('GIVEN delete THEN DELETE the object, with DeleteOptions (propagation, uid/resourceVersion preconditions) only when given, and dryRun in the query (and in DeleteOptions when there are any: the server reads the body of a DELETE alone)', async () => {
    const fake = new FakeKubeClient();
    const client = new ResourceClient(fake);
    await client.delete(DEPLOYMENTS, 'ns', 'web');
    await client.delete(DEPLOYMENTS, 'ns', 'web', { propagationPolicy: 'Background', uid: 'u-1', dryRun: true });
    await client.delete(NAMESPACES, undefined, 'ns', { resourceVersion: '7' });
    expect(fake.calls.map(({ method, path, query, body }) => ({ method, path, query, body }))).toEqual([
      { method: 'DELETE', path: '/apis/apps/v1/namespaces/ns/deployments/web' },
      {
        method: 'DELETE',
        path: '/apis/apps/v1/namespaces/ns/deployments/web',
        query: { dryRun: 'All' },
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: 'u-1' }, dryRun: ['All'] },
      },
      { method: 'DELETE', path: '/api/v1/namespaces/ns', body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: '7' } } },
    ]);
    expect(fake.calls[0].body).toBeUndefined();
    expect(fake.calls[2].body).not.toHaveProperty('preconditions.uid');
  });

  test('GIVEN watch THEN the collection is watched with resourceVersion and selectors in the query', async () => {
    const fake = new FakeKubeClient();
    const abort = new AbortController();
    const events = new ResourceClient(fake).watch(DEPLOYMENTS, 'ns', { signal: abort.signal, resourceVersion: '5', labelSelector: 'app=web', query: { allowWatchBookmarks: true } });
    const iterator = events[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setImmediate(resolve));
    fake.watches[0].push({ type: 'ADDED', object: web });
    await expect(first).resolves.toEqual({ done: false, value: { type: 'ADDED', object: web } });
    expect(fake.watches[0].path).toBe('/apis/apps/v1/namespaces/ns/deployments');
    expect(fake.watches[0].query).toMatchObject({ resourceVersion: '5', labelSelector: 'app=web', allowWatchBookmarks: true });
    abort.abort();
    await expect(iterator.next()).rejects.toThrow('aborted');
  });

  test('GIVEN a failing write THEN it rejects with the ApiError the client made, untouched', async () => {
    const fake = new FakeKubeClient();
    const refused = new ApiError('PATCH', '/x', 422, 'Invalid', { message: 'spec.replicas: Invalid value: -1' }, 'spec.replicas: Invalid value: -1');
    fake.fail = () => refused;
    await expect(new ResourceClient(fake).apply(DEPLOYMENTS, web, { fieldManager: 'op' })).rejects.toBe(refused);
  });
});

describe('the pager', () => {
  const page = (items: string[], cont?: string, rv = '10') => ({ kind: 'DeploymentList', apiVersion: 'apps/v1', metadata: { resourceVersion: rv, continue: cont }, items: items.map((name) => ({ metadata: { namespace: 'ns', name } })) });

  test('GIVEN three pages THEN list follows the continue tokens with limit and selectors, fills apiVersion/kind into the items, and gives the last resourceVersion', async () => {
    const fake = new FakeKubeClient();
    const answers = [page(['a', 'b'], 't1'), page(['c'], 't2'), page(['d'], undefined, '12')];
    fake.respond = () => answers.shift();
    const list = await new ResourceClient(fake).list(DEPLOYMENTS, 'ns', { limit: 2, labelSelector: 'app=web', fieldSelector: '' });
    expect(list.items.map((item) => `${item.apiVersion} ${item.kind} ${item.metadata?.name}`)).toEqual(['apps/v1 Deployment a', 'apps/v1 Deployment b', 'apps/v1 Deployment c', 'apps/v1 Deployment d']);
    expect(list.resourceVersion).toBe('12');
    expect(fake.calls.map((c) => [c.path, c.query])).toEqual([
      ['/apis/apps/v1/namespaces/ns/deployments', { limit: 2, continue: undefined, labelSelector: 'app=web', fieldSelector: undefined }],
      ['/apis/apps/v1/namespaces/ns/deployments', { limit: 2, continue: 't1', labelSelector: 'app=web', fieldSelector: undefined }],
      ['/apis/apps/v1/namespaces/ns/deployments', { limit: 2, continue: 't2', labelSelector: 'app=web', fieldSelector: undefined }],
    ]);
  });

  test('GIVEN no limit THEN pages of 500, and the empty continue token ends the LIST', async () => {
    const fake = new FakeKubeClient();
    fake.respond = () => ({ kind: 'NamespaceList', metadata: { resourceVersion: '3', continue: '' }, items: [{ metadata: { name: 'x' } }] });
    const { items } = await listAll(fake, '/api/v1/namespaces');
    expect(items).toEqual([{ kind: 'Namespace', metadata: { name: 'x' } }]);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0].query).toMatchObject({ limit: 500 });
  });

  test('GIVEN a 410 on a continue THEN it throws by default, and with onExpiredContinue "restart" lists again from the first page', async () => {
    const expired = new ApiError('GET', '/apis/apps/v1/deployments', 410, 'Expired', { message: 'continue token expired' }, 'continue token expired');
    const serve = (fake: FakeKubeClient) => {
      let n = 0;
      fake.respond = (call) => {
        n++;
        if (call.query?.continue === 't1' && n === 2) throw expired;
        return call.query?.continue === 't1' ? page(['b']) : page(['a'], 't1');
      };
    };
    const strict = new FakeKubeClient();
    serve(strict);
    await expect(listAll(strict, '/apis/apps/v1/deployments')).rejects.toBe(expired);

    const fake = new FakeKubeClient();
    serve(fake);
    const seen: { names: string[]; restarted: boolean }[] = [];
    for await (const p of listPages(fake, '/apis/apps/v1/deployments', { onExpiredContinue: 'restart' })) seen.push({ names: p.items.map((i) => i.metadata?.name ?? ''), restarted: p.restarted });
    expect(seen).toEqual([
      { names: ['a'], restarted: false },
      { names: ['a'], restarted: true },
      { names: ['b'], restarted: false },
    ]);
    expect(fake.calls.map((c) => c.query?.continue)).toEqual([undefined, 't1', undefined, 't1']);
    const again = new FakeKubeClient();
    serve(again);
    await expect(listAll(again, '/apis/apps/v1/deployments', { onExpiredContinue: 'restart' })).resolves.toMatchObject({ items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] });
  });

  test('GIVEN a 410 on the first page THEN it throws even with "restart"', async () => {
    const fake = new FakeKubeClient();
    fake.fail = () => new ApiError('GET', '/x', 410, 'Expired', undefined, 'gone');
    await expect(listAll(fake, '/x', { onExpiredContinue: 'restart' })).rejects.toMatchObject({ code: 410 });
    expect(fake.calls).toHaveLength(1);
  });
});

describe('type meta and the server message', () => {
  test('GIVEN an object without apiVersion or kind THEN withTypeMeta fills in what is missing and keeps what it has', () => {
    expect(apiVersionOf(NAMESPACES)).toBe('v1');
    expect(apiVersionOf(DEPLOYMENTS)).toBe('apps/v1');
    const whole = { apiVersion: 'apps/v1', kind: 'Deployment' };
    expect(withTypeMeta(whole, 'x/v1', 'X')).toBe(whole);
    expect(withTypeMeta({ kind: 'Deployment' }, 'apps/v1', 'X')).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment' });
  });

  test('GIVEN ApiErrors and other errors THEN serverMessageOf gives the Status message through the cause chain, else code and reason, else the first line', () => {
    const api = new ApiError('PATCH', '/p', 422, 'Invalid', { message: 'spec.x: Invalid value' }, 'spec.x: Invalid value');
    expect(serverMessageOf(api)).toBe('spec.x: Invalid value');
    expect(serverMessageOf(new ReconcileError('ApplyFailed', 'patch: 422', { cause: api }))).toBe('spec.x: Invalid value');
    expect(serverMessageOf(new ApiError('GET', '/x', 503, 'ServiceUnavailable', { message: '' }, ''))).toBe('503 ServiceUnavailable');
    expect(serverMessageOf(new Error('connect ECONNREFUSED\nstack'))).toBe('connect ECONNREFUSED');
    expect(serverMessageOf('plain')).toBe('plain');
  });
});
