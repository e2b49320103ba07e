/**
 * dependsOn / readyWhen (child-ordering.ts) as renderCustomResource reports them (`waitsFor`, `readyWhen`
 * keyed by ObjectRef key), and renderResultForSnapshot's plain-JSON form of the same.
 */
import { ApiObject, App, Chart, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { z } from 'zod';
import { DEPENDS_ON_METADATA, READY_WHEN_METADATA, dependsOn, orderingOf, readyWhen } from '../../lib/operator/render/child-ordering.js';
import { ObjectRef } from '../../lib/operator/object-ref.js';
import { renderCustomResource } from '../../lib/operator/render/render-children.js';
import type { KubeResource } from '../../lib/operator/render/render-context.js';
import { STAND_IN_UID, renderForSnapshot, renderResultForSnapshot } from '../../lib/testing/render-snapshot.js';
import { ContextOperator, configMap, refCr, type ContextScript } from './fixtures/context-operators.js';

function operatorWith(script: ContextScript<never>, props = {}): ContextOperator {
  return new ContextOperator(new App(), props, script);
}

const key = (apiVersion: string, kind: string, name: string, namespace = 'team-a') => ObjectRef.of({ apiVersion, kind, metadata: { name, namespace } }).key();
const container = { image: 'postgres:16', portNumber: 5432 };

describe('dependsOn and readyWhen: construct metadata', () => {
  test('GIVEN dependsOn with dependencies THEN the child carries the metadata and a construct dependency; with none THEN nothing is recorded', () => {
    const app = new App();
    const scope = new Chart(app, 'root');
    const a = new ApiObject(scope, 'a', { apiVersion: 'v1', kind: 'ConfigMap' });
    const b = new ApiObject(scope, 'b', { apiVersion: 'v1', kind: 'ConfigMap' });
    dependsOn(a);
    expect(a.node.metadata).toEqual([]);
    dependsOn(a, b);
    expect(a.node.metadata.filter((m) => m.type === DEPENDS_ON_METADATA).map((m) => m.data)).toEqual([[b]]);
    expect(a.node.dependencies).toContain(b);
    const predicate = () => true;
    readyWhen(b, predicate);
    expect(b.node.metadata.find((m) => m.type === READY_WHEN_METADATA)?.data).toBe(predicate);
  });

  test('GIVEN readyWhen on a parent and on the ApiObject itself THEN the nearest wins; dependsOn entries above add up and never include the object itself', () => {
    const app = new App();
    const root = new Chart(app, 'root');
    const group = new Construct(root, 'group');
    const inner = new ApiObject(group, 'inner', { apiVersion: 'v1', kind: 'ConfigMap' });
    const sibling = new ApiObject(group, 'sibling', { apiVersion: 'v1', kind: 'ConfigMap' });
    const other = new ApiObject(root, 'other', { apiVersion: 'v1', kind: 'ConfigMap' });
    const near = () => true;
    const far = () => false;
    readyWhen(group, far);
    readyWhen(inner, near);
    dependsOn(group, group); // the group stands for inner and sibling: neither waits for itself
    dependsOn(inner, other);
    const ordering = orderingOf(inner, root);
    expect(ordering.readyWhen).toBe(near);
    expect(new Set(ordering.waitsFor)).toEqual(new Set([sibling, other]));
    expect(orderingOf(sibling, root)).toEqual({ waitsFor: [inner], readyWhen: far });
    // metadata on the root itself is not looked at
    readyWhen(root, near);
    expect(orderingOf(other, root)).toEqual({ waitsFor: [], readyWhen: undefined });
  });
});

describe('renderCustomResource: waitsFor and readyWhen', () => {
  test('GIVEN a Job that dependsOn a cdk8s-plus StatefulSet THEN it waits for the StatefulSet (its primary object), not its headless Service, keyed by ObjectRef key', () => {
    const output = renderCustomResource(
      operatorWith((_cr, scope) => {
        const db = new kplus.StatefulSet(scope, 'db', { containers: [container] });
        const migrate = new kplus.Job(scope, 'migrate', { containers: [{ image: 'migrate:1' }] });
        dependsOn(migrate, db);
      }),
      refCr(),
    );
    const children = output.children.map((c) => ObjectRef.of(c).key());
    expect(children).toEqual(expect.arrayContaining([key('apps/v1', 'StatefulSet', 'shop-db'), key('batch/v1', 'Job', 'shop-migrate')]));
    expect(output.children.some((c) => c.kind === 'Service')).toBe(true);
    expect([...output.waitsFor]).toEqual([[key('batch/v1', 'Job', 'shop-migrate'), [key('apps/v1', 'StatefulSet', 'shop-db')]]]);
    for (const deps of output.waitsFor.values()) for (const dep of deps) expect(children).toContain(dep);
  });

  test('GIVEN a cdk8s-plus StatefulSet that depends on its own headless Service (cdk8s-plus adds it) THEN nothing waits', () => {
    let implicit = false;
    const output = renderCustomResource(
      operatorWith((_cr, scope) => {
        const db = new kplus.StatefulSet(scope, 'db', { containers: [container] });
        implicit = db.node.findAll().some((c) => c.node.dependencies.length > 0);
      }),
      refCr(),
    );
    expect(implicit).toBe(true); // cdk8s-plus does add a construct dependency …
    expect(output.children.map((c) => c.kind).sort()).toEqual(['Service', 'StatefulSet']);
    expect(output.waitsFor.size).toBe(0); // … which does not make anything wait
  });

  test('GIVEN a plain ApiObject that dependsOn another ApiObject THEN waitsFor maps its key to the other one\'s; the dependency itself waits for nothing', () => {
    const output = renderCustomResource(
      operatorWith((_cr, scope) => {
        const secret = new ApiObject(scope, 'creds', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' } });
        const config = new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
        dependsOn(config, secret);
      }),
      refCr(),
    );
    expect(Object.fromEntries(output.waitsFor)).toEqual({ [key('v1', 'ConfigMap', 'shop-config')]: [key('v1', 'Secret', 'creds')] });
  });

  test('GIVEN a cdk8s-plus Deployment that dependsOn a cdk8s-plus Secret THEN the Deployment\'s ApiObject waits for the Secret', () => {
    const output = renderCustomResource(
      operatorWith((_cr, scope) => {
        const secret = new kplus.Secret(scope, 'creds', { stringData: { password: 'x' } });
        const web = new kplus.Deployment(scope, 'web', { containers: [{ image: 'web:1' }] });
        dependsOn(web, secret);
      }),
      refCr(),
    );
    expect(Object.fromEntries(output.waitsFor)).toEqual({ [key('apps/v1', 'Deployment', 'shop-web')]: [key('v1', 'Secret', 'shop-creds')] });
  });

  test('GIVEN readyWhen on a cdk8s-plus Deployment (the parent of its ApiObject) THEN readyWhen maps the Deployment\'s key to the predicate', () => {
    const predicate = (o: KubeResource) => (o.status?.readyReplicas ?? 0) >= 1;
    const output = renderCustomResource(
      operatorWith((_cr, scope) => {
        const web = new kplus.Deployment(scope, 'web', { containers: [{ image: 'web:1' }] });
        new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
        readyWhen(web, predicate);
      }),
      refCr(),
    );
    expect([...output.readyWhen.keys()]).toEqual([key('apps/v1', 'Deployment', 'shop-web')]);
    expect(output.readyWhen.get(key('apps/v1', 'Deployment', 'shop-web'))).toBe(predicate);
    expect(output.waitsFor.size).toBe(0);
  });

  test('GIVEN readyWhen on a construct holding two ApiObjects THEN both get the predicate', () => {
    const predicate = () => true;
    const output = renderCustomResource(
      operatorWith((_cr, scope) => {
        const group = new Construct(scope, 'pair');
        new ApiObject(group, 'a', { apiVersion: 'v1', kind: 'ConfigMap' });
        new ApiObject(group, 'b', { apiVersion: 'v1', kind: 'ConfigMap' });
        readyWhen(group, predicate);
      }),
      refCr(),
    );
    expect([...output.readyWhen.keys()].sort()).toEqual([key('v1', 'ConfigMap', 'shop-pair-a'), key('v1', 'ConfigMap', 'shop-pair-b')]);
  });

  test('GIVEN a cluster-scoped CR WHEN a namespaced child depends on another THEN keys carry the child namespaces', () => {
    const operator = operatorWith(
      (_cr, scope) => {
        const a = new ApiObject(scope, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'apps' } });
        const b = new ApiObject(scope, 'b', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'data' } });
        dependsOn(a, b);
      },
      { scope: 'Cluster' },
    );
    const cr = { ...refCr(), metadata: { name: 'shop', uid: refCr().metadata.uid } };
    const output = renderCustomResource(operator, cr);
    expect(Object.fromEntries(output.waitsFor)).toEqual({ [key('v1', 'ConfigMap', 'shop-a', 'apps')]: [key('v1', 'ConfigMap', 'shop-b', 'data')] });
  });
});

describe('renderResultForSnapshot', () => {
  const Status = z.object({ migrated: z.boolean().default(false) });
  const operator = new ContextOperator(
    new App(),
    { status: Status, related: { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' } } },
    (_cr, scope, context) => {
      const db = new kplus.StatefulSet(scope, 'db', { containers: [container] });
      const migrate = new kplus.Job(scope, 'migrate', { containers: [{ image: context.related.config[0]?.data?.image ?? 'migrate:1' }] });
      dependsOn(migrate, db);
      readyWhen(db, (sts) => (sts.status?.readyReplicas ?? 0) >= 1);
      return { status: {}, requeueAfter: Duration.minutes(1) };
    },
  );
  const cr = refCr({ configMapRef: { name: 'settings' } });
  const { uid: _uid, ...metadataWithoutUid } = cr.metadata;
  const crWithoutUid = { ...cr, metadata: metadataWithoutUid };

  test('GIVEN an operator with ordering, status and requeue WHEN snapshotted THEN everything is plain JSON with Kind namespace/name names', () => {
    const snapshot = renderResultForSnapshot(operator, crWithoutUid, { related: [configMap('settings', 'team-a', { image: 'migrate:2' })] });
    expect(snapshot.children.some((c) => c.kind === 'Service')).toBe(true);
    // the StatefulSet's primary object only: its headless Service neither is waited for nor gets the predicate
    expect(snapshot.waitsFor).toEqual({ 'Job team-a/shop-migrate': ['StatefulSet team-a/shop-db'] });
    expect(snapshot.readyWhen).toEqual(['StatefulSet team-a/shop-db']);
    expect(snapshot.status).toEqual({ migrated: false });
    expect(snapshot.requeueAfterMs).toBe(60_000);
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    for (const child of snapshot.children) expect(child.metadata.ownerReferences![0].uid).toBe(STAND_IN_UID);
    expect(snapshot.children).toEqual(renderForSnapshot(operator, crWithoutUid, { related: [configMap('settings', 'team-a', { image: 'migrate:2' })] }));
    const job = snapshot.children.find((c) => c.kind === 'Job') as unknown as { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(job.spec.template.spec.containers[0].image).toBe('migrate:2');
  });

  test('GIVEN render returns nothing and orders nothing WHEN snapshotted THEN waitsFor and readyWhen are empty and status/requeueAfterMs absent', () => {
    const plain = operatorWith((_cr, scope) => {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap' });
    });
    const snapshot = renderResultForSnapshot(plain, crWithoutUid);
    expect(Object.keys(snapshot).sort()).toEqual(['children', 'readyWhen', 'waitsFor']);
    expect(snapshot.waitsFor).toEqual({});
    expect(snapshot.readyWhen).toEqual([]);
  });

  test('GIVEN the required related object is not given WHEN snapshotted THEN ReferenceNotFound', () => {
    expect(() => renderResultForSnapshot(operator, crWithoutUid)).toThrow(expect.objectContaining({ reason: 'ReferenceNotFound' }));
  });
});

describe('ordering under a cluster-scoped CR', () => {
  test('GIVEN two children with the same kind and name in different namespaces THEN each keeps its own dependencies and predicate', () => {
    const operator = operatorWith(
      (_cr, scope) => {
        const secret = new ApiObject(scope, 's', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'apps' } });
        const first = new ApiObject(scope, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'apps' } });
        new ApiObject(scope, 'b', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'data' } });
        dependsOn(first, secret);
        readyWhen(first, () => true);
      },
      { scope: 'Cluster' },
    );
    const cr = { apiVersion: 'demo.example.com/v1', kind: 'Ref', metadata: { name: 'shop', uid: STAND_IN_UID }, spec: {} };
    const output = renderCustomResource(operator, cr);
    expect([...output.waitsFor]).toEqual([[key('v1', 'ConfigMap', 'x', 'apps'), [key('v1', 'Secret', 'creds', 'apps')]]]);
    expect([...output.readyWhen.keys()]).toEqual([key('v1', 'ConfigMap', 'x', 'apps')]);
  });
});
