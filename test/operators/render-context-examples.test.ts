/**
 * The example operators' use of render's context, offline: what they render and report for given
 * observed children and related objects (renderResultForSnapshot), the branches an integration test
 * reaches only slowly.
 */
import { App } from 'cdk8s';
import { RenderError, type KubeResource } from 'cdk8s-operator-sdk';
import { renderResultForSnapshot } from 'cdk8s-operator-sdk/testing';
import { AppOperator, CONFIG_REF_HASH_ANNOTATION } from '../../operators/app/index.js';
import { DatabaseOperator } from '../../operators/database/index.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { find } from '../support/manifests.js';

const scope = new App();
const memcached = new MemcachedOperator(scope);
const app = new AppOperator(scope);
const database = new DatabaseOperator(scope);

function pod(name: string, instance: string, extra: Record<string, unknown> = {}): KubeResource {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop', labels: { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': instance }, ...extra },
  };
}

describe('memcached: status.nodes from its Pods', () => {
  const cr = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'cache', namespace: 'shop' }, spec: { replicas: 2 } };

  test('GIVEN its pods, another Memcached\'s pod and a terminating pod THEN nodes lists its running pods, sorted', () => {
    const result = renderResultForSnapshot(memcached, cr, {
      related: [pod('cache-b', 'cache'), pod('cache-a', 'cache'), pod('other-a', 'other'), pod('cache-c', 'cache', { deletionTimestamp: '2026-12-01T00:00:00Z' })],
    });
    expect(result.status).toEqual({ nodes: ['cache-a', 'cache-b'] });
    expect(result.children.map((c) => c.kind)).toEqual(['Deployment', 'Service']);
  });

  test('GIVEN no pods yet THEN nodes is empty and the children are the same', () => {
    const none = renderResultForSnapshot(memcached, cr);
    const some = renderResultForSnapshot(memcached, cr, { related: [pod('cache-a', 'cache')] });
    expect(none.status).toEqual({ nodes: [] });
    expect(none.children).toEqual(some.children);
  });
});

describe('app: configMapRef and status.url', () => {
  const cr = (spec: Record<string, unknown>) => ({ apiVersion: 'apps.example.com/v1alpha1', kind: 'App', metadata: { name: 'web', namespace: 'shop' }, spec: { image: 'ghcr.io/example/hello:1.4.2', ...spec } });
  const configMap = (data: Record<string, string>): KubeResource => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' }, data });
  const hash = (result: ReturnType<typeof renderResultForSnapshot>) => find(result.children, 'Deployment').spec.template.metadata.annotations?.[CONFIG_REF_HASH_ANNOTATION];

  test('GIVEN a referenced ConfigMap THEN it is mounted at /etc/app and its content hash changes with its data only', () => {
    const a = renderResultForSnapshot(app, cr({ configMapRef: { name: 'settings' } }), { related: [configMap({ x: '1' })] });
    const b = renderResultForSnapshot(app, cr({ configMapRef: { name: 'settings' } }), { related: [configMap({ x: '2' })] });
    const again = renderResultForSnapshot(app, cr({ configMapRef: { name: 'settings' } }), { related: [configMap({ x: '1' })] });
    expect(hash(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(hash(b)).not.toBe(hash(a));
    expect(hash(again)).toBe(hash(a));
    const deployment = find(a.children, 'Deployment');
    expect(deployment.spec.template.spec.volumes).toContainEqual({ name: 'config-ref', configMap: { name: 'settings' } });
    expect(deployment.spec.template.spec.containers[0].volumeMounts).toContainEqual({ mountPath: '/etc/app', name: 'config-ref', readOnly: true });
  });

  test('GIVEN the referenced ConfigMap missing THEN render refuses with ReferenceNotFound naming it', () => {
    let error: unknown;
    try {
      renderResultForSnapshot(app, cr({ configMapRef: { name: 'settings' } }));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(RenderError);
    expect((error as RenderError).reason).toBe('ReferenceNotFound');
    expect((error as RenderError).message).toBe('render App shop/web: ConfigMap shop/settings (spec.configMapRef.name) not found');
  });

  test('GIVEN an Ingress or none THEN status.url is the ingress host or the Service DNS name', () => {
    expect(renderResultForSnapshot(app, cr({ ingress: { host: 'web.example.com' } })).status).toEqual({ url: 'http://web.example.com/' });
    expect(renderResultForSnapshot(app, cr({ port: 9090 })).status).toEqual({ url: 'http://web.shop.svc:9090/' });
  });
});

describe('database: a migration Job that waits for the StatefulSet, and status', () => {
  const cr = { apiVersion: 'databases.example.com/v1alpha1', kind: 'Database', metadata: { name: 'orders', namespace: 'shop' }, spec: { version: '16', storageSize: '1Gi', migration: { image: 'migrate:1', args: ['up'] } } };
  const statefulSet = (readyReplicas: number): KubeResource => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'orders', namespace: 'shop' }, status: { readyReplicas } });

  test('GIVEN a migration THEN the Job waits for the StatefulSet, and its name follows the migration', () => {
    const result = renderResultForSnapshot(database, cr);
    const job = find(result.children, 'Job');
    expect(job.metadata.name).toMatch(/^orders-migrate-[0-9a-f]{8}$/);
    expect(result.waitsFor).toEqual({ [`Job shop/${job.metadata.name}`]: ['StatefulSet shop/orders'] });
    const changed = renderResultForSnapshot(database, { ...cr, spec: { ...cr.spec, migration: { image: 'migrate:2' } } });
    expect(find(changed.children, 'Job').metadata.name).not.toBe(job.metadata.name);
  });

  test('GIVEN the StatefulSet as observed THEN status reports its ready replicas and the endpoint', () => {
    expect(renderResultForSnapshot(database, cr).status).toEqual({ endpoint: 'orders-0.orders.shop.svc:5432', readyReplicas: 0 });
    expect(renderResultForSnapshot(database, cr, { observed: [statefulSet(1)] }).status).toEqual({ endpoint: 'orders-0.orders.shop.svc:5432', readyReplicas: 1 });
  });

  test('GIVEN no migration THEN no Job and nothing waits', () => {
    const result = renderResultForSnapshot(database, { ...cr, spec: { version: '16', storageSize: '1Gi' } });
    expect(result.children.some((c) => c.kind === 'Job')).toBe(false);
    expect(result.waitsFor).toEqual({});
  });
});
