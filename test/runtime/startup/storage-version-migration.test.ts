/**
 * The pure parts of the storage-version migration: the plan read from a CRD, and how one pass treats
 * the server's answers (the fake client, scripted, stands in for the server: these are decisions
 * on status codes; the real server's behaviour is test/integration/storage-version-migration.test.ts).
 */
import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import {
  StorageVersionMigrationError,
  StorageVersionMigrator,
  migrateStorageVersion,
  planStorageVersionMigration,
  storageVersionMigratorFor,
} from '../../../lib/runtime/startup/storage-version-migration.js';
import { Registry } from 'prom-client';
import { type FakeCall, FakeKubeClient } from '../../support/fake-kube-client.js';

const KIND = { group: 'cache.example.com', kind: 'Memcached', plural: 'memcacheds', namespaced: true };
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com';
const crd = (storedVersions: string[]) => ({
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
  metadata: { name: 'memcacheds.cache.example.com', uid: 'u1', resourceVersion: '7' },
  spec: { versions: [{ name: 'v1beta1', storage: true }, { name: 'v1alpha1', storage: false }] },
  status: { storedVersions, conditions: [{ type: 'Established', status: 'True' }] },
});
const apiError = (method: string, path: string, code: number, reason: string) => new ApiError(method, path, code, reason, undefined, reason);

/** The fake client answering from `answer` (an Error it returns is thrown); records every call. */
function scripted(answer: (call: FakeCall) => unknown) {
  const client = new FakeKubeClient();
  client.respond = (call) => {
    const result = answer(call);
    if (result instanceof Error) throw result;
    return result;
  };
  return { client, calls: client.calls };
}

describe('planStorageVersionMigration', () => {
  test('GIVEN storedVersions of only the storage version THEN nothing to do', () => {
    expect(planStorageVersionMigration('x', crd(['v1beta1']))).toEqual({ action: 'none', storageVersion: 'v1beta1' });
  });
  test('GIVEN storedVersions with an old version THEN migrate from it', () => {
    expect(planStorageVersionMigration('x', crd(['v1alpha1', 'v1beta1']))).toEqual({ action: 'migrate', storageVersion: 'v1beta1', staleVersions: ['v1alpha1'] });
  });
  test('GIVEN no storage version THEN a NoStorageVersion error naming the CRD', () => {
    const err = (() => {
      try {
        planStorageVersionMigration('memcacheds.cache.example.com', { spec: { versions: [{ name: 'v1', storage: false }] } });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StorageVersionMigrationError);
    expect(err).toMatchObject({ reason: 'NoStorageVersion', crd: 'memcacheds.cache.example.com' });
    expect((err as Error).message).toContain('CustomResourceDefinition memcacheds.cache.example.com');
  });
});

describe('migrateStorageVersion', () => {
  test('GIVEN two pages, one object deleted and one changed meanwhile WHEN a pass runs THEN every object is PUT in the storage version, 404 and 409 count as done, and storedVersions is trimmed with the CRD as read', async () => {
    const items = (names: string[]) => names.map((name) => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: 'ns', resourceVersion: '1' } }));
    const { client, calls } = scripted(({ method, path, query, body }) => {
      if (method === 'GET' && path === CRD) return crd(['v1alpha1', 'v1beta1']);
      if (method === 'GET' && path === '/apis/cache.example.com/v1beta1/memcacheds') {
        return query?.continue === 'p2' ? { metadata: {}, items: items(['c']) } : { metadata: { continue: 'p2' }, items: items(['a', 'b']) };
      }
      if (method === 'PUT' && path.endsWith('/memcacheds/a')) return apiError(method, path, 404, 'NotFound');
      if (method === 'PUT' && path.endsWith('/memcacheds/b')) return apiError(method, path, 409, 'Conflict');
      if (method === 'PUT') return body;
      throw new Error(`unexpected ${method} ${path}`);
    });
    const outcomes: string[] = [];
    const result = await migrateStorageVersion(client, KIND, { pageSize: 2, onObject: (o, outcome) => outcomes.push(`${o.metadata!.name}:${outcome}`) });
    expect(result).toEqual({ crd: 'memcacheds.cache.example.com', storageVersion: 'v1beta1', trimmedVersions: ['v1alpha1'], objects: 3 });
    expect(outcomes).toEqual(['a:gone', 'b:conflict', 'c:rewritten']);
    expect(calls.filter((c) => c.method === 'GET' && c.path.endsWith('/memcacheds')).map((c) => c.query)).toEqual([{ limit: 2, continue: undefined }, { limit: 2, continue: 'p2' }]);
    const trim = calls.at(-1)!;
    expect(trim.method).toBe('PUT');
    expect(trim.path).toBe(`${CRD}/status`);
    expect(trim.body).toMatchObject({ metadata: { resourceVersion: '7' }, status: { storedVersions: ['v1beta1'], conditions: [{ type: 'Established' }] } });
  });

  test('GIVEN nothing stored in other versions THEN only the CRD is read', async () => {
    const { client, calls } = scripted(() => crd(['v1beta1']));
    expect(await migrateStorageVersion(client, KIND)).toMatchObject({ trimmedVersions: [], objects: 0 });
    expect(calls.map((c) => c.method)).toEqual(['GET']);
  });

  test('GIVEN an expired continue token THEN the LIST starts again', async () => {
    let lists = 0;
    const { client } = scripted(({ method, path, query }) => {
      if (path === CRD) return crd(['v1alpha1', 'v1beta1']);
      if (method === 'GET') {
        lists++;
        if (query?.continue === 'old') return apiError(method, path, 410, 'Expired');
        return lists === 1 ? { metadata: { continue: 'old' }, items: [] } : { metadata: {}, items: [] };
      }
      return {};
    });
    await expect(migrateStorageVersion(client, KIND)).resolves.toMatchObject({ trimmedVersions: ['v1alpha1'] });
    expect(lists).toBe(3);
  });

  test.each([
    ['a PUT refused', (m: string, p: string) => (m === 'PUT' && p.endsWith('/x') ? apiError(m, p, 422, 'Invalid') : undefined), 'RewriteFailed', /PUT of Memcached ns\/x in cache.example.com\/v1beta1 failed: .*Invalid/],
    ['the CRD changed meanwhile', (m: string, p: string) => (m === 'PUT' && p.endsWith('/status') ? apiError(m, p, 409, 'Conflict') : undefined), 'TrimFailed', /the CRD changed during the migration/],
    ['the LIST forbidden', (m: string, p: string) => (m === 'GET' && p.endsWith('/memcacheds') ? apiError(m, p, 403, 'Forbidden') : undefined), 'ListFailed', /LIST cache.example.com\/v1beta1 memcacheds failed: .*Forbidden.*re-run cdk8s synth and apply the operator's RBAC/],
  ])('GIVEN %s THEN a StorageVersionMigrationError with the step as reason and the ApiError as cause', async (_what, fail, reason, message) => {
    const { client } = scripted(({ method, path, body }) => {
      const err = fail(method, path);
      if (err) return err;
      if (path === CRD) return crd(['v1alpha1', 'v1beta1']);
      if (method === 'GET') return { metadata: {}, items: [{ metadata: { name: 'x', namespace: 'ns' } }] };
      return body;
    });
    const err = await migrateStorageVersion(client, KIND).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageVersionMigrationError);
    expect(err).toMatchObject({ reason });
    expect((err as Error).message).toMatch(message);
    expect((err as Error).cause).toBeInstanceOf(ApiError);
  });
});

describe('StorageVersionMigrator', () => {
  test('GIVEN a failing first pass THEN it is logged at error, evented, counted and retried until it succeeds', async () => {
    let reads = 0;
    const { client } = scripted(({ method, path, body }) => {
      if (path === CRD) return ++reads === 1 ? apiError(method, path, 503, 'ServiceUnavailable') : crd(['v1alpha1', 'v1beta1']);
      if (method === 'GET') return { metadata: {}, items: [] };
      return body;
    });
    const logged: string[] = [];
    const logger = { debug: () => {}, info: (_: object, msg: string) => logged.push(`info ${msg}`), warn: () => {}, error: (_: object, msg: string) => logged.push(`error ${msg}`) };
    const events: string[] = [];
    const recorder = {
      warning: async (o: { kind?: string; metadata?: { name?: string } }, reason: string) => (events.push(`Warning ${reason} ${o.kind} ${o.metadata?.name}`), 'created' as const),
      normal: async (o: { kind?: string; metadata?: { name?: string; uid?: string } }, reason: string) => (events.push(`Normal ${reason} ${o.metadata?.uid}`), 'created' as const),
    };
    const registry = new Registry();
    const migrator = storageVersionMigratorFor([{ operatorName: 'm', crd: KIND, versions: [1, 2] }], { client, logger, registry, retry: { initialMs: 1, maxMs: 1 }, events: () => recorder as never })!;
    migrator.start();
    await migrator.done();
    expect(logged).toEqual(['error storage-version migration failed; retrying', 'info storage-version migration done']);
    expect(events).toEqual(['Warning StorageVersionMigrationFailed CustomResourceDefinition memcacheds.cache.example.com', 'Normal StorageVersionMigrated u1']);
    const text = await registry.metrics();
    expect(text).toContain('cdk8s_operator_storage_version_migrations_total{crd="memcacheds.cache.example.com",result="error"} 1');
    expect(text).toContain('cdk8s_operator_storage_version_migrations_total{crd="memcacheds.cache.example.com",result="success"} 1');
  });

  test('GIVEN operators of one version, or a manager watching one namespace, or an operator watching one namespace THEN no migrator', () => {
    const client = new FakeKubeClient();
    expect(storageVersionMigratorFor([{ operatorName: 'm', crd: KIND, versions: [1] }], { client })).toBeUndefined();
    expect(storageVersionMigratorFor([{ operatorName: 'm', crd: KIND, versions: [1, 2] }], { client, namespace: 'ns' })).toBeUndefined();
    expect(storageVersionMigratorFor([{ operatorName: 'm', crd: KIND, versions: [1, 2], watchNamespace: 'ns' }], { client })).toBeUndefined();
    expect(storageVersionMigratorFor([{ operatorName: 'm', crd: KIND, versions: [1, 2] }], { client })).toBeInstanceOf(StorageVersionMigrator);
  });
});
