/**
 * dependencyLevels: the order of a reconcile's applies when children wait for others (`dependsOn`).
 */
import { ObjectRef } from '../../../lib/operator/object-ref.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { dependencyLevels } from '../../../lib/runtime/reconcile/dependency-levels.js';

const child = (kind: string, name: string): KubeObject => ({ apiVersion: kind === 'StatefulSet' ? 'apps/v1' : 'v1', kind, metadata: { name, namespace: 'shop' } });
const key = (obj: KubeObject) => ObjectRef.of(obj).key();
const names = (levels: KubeObject[][]) => levels.map((level) => level.map((obj) => obj.metadata?.name));

const db = child('StatefulSet', 'db');
const config = child('ConfigMap', 'config');
const migrate = child('Job', 'migrate');
const web = child('Service', 'web');

describe('dependencyLevels', () => {
  test('GIVEN no child waits THEN one level in render order; GIVEN no children THEN no level', () => {
    expect(names(dependencyLevels([db, config, web], new Map()))).toEqual([['db', 'config', 'web']]);
    expect(dependencyLevels([], new Map())).toEqual([]);
    expect(dependencyLevels([], new Map([[key(migrate), [key(db)]]]))).toEqual([]);
  });

  test('GIVEN a chain THEN one level per link, render order kept within each level', () => {
    const waitsFor = new Map([
      [key(migrate), [key(db), key(config)]],
      [key(web), [key(migrate)]],
    ]);
    expect(names(dependencyLevels([web, migrate, db, config], waitsFor))).toEqual([['db', 'config'], ['migrate'], ['web']]);
  });

  test('GIVEN a child waiting for an object that is not among the desired children THEN that entry is ignored here', () => {
    const waitsFor = new Map([[key(migrate), [key(child('Secret', 'external'))]]]);
    expect(names(dependencyLevels([migrate, db], waitsFor))).toEqual([['migrate', 'db']]);
  });

  test('GIVEN a cycle THEN its members, and what waits for them, come last as one level', () => {
    const waitsFor = new Map([
      [key(db), [key(migrate)]],
      [key(migrate), [key(db)]],
      [key(web), [key(db)]],
    ]);
    expect(names(dependencyLevels([web, db, config, migrate], waitsFor))).toEqual([['config'], ['web', 'db', 'migrate']]);
  });
});
