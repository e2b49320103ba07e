import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ConflictError } from '../../../lib/runtime/errors.js';
import { silentLogger } from '../../../lib/runtime/logger.js';
import { ChildPruner, selectPrunable } from '../../../lib/runtime/reconcile/prune.js';
import { reconcileScope } from '../../../lib/runtime/reconcile/reconcile-scope.js';
import type { ChildStatus } from '../../../lib/runtime/reconcile/status-writer.js';
import { FakeKubeClient, type FakeCall } from '../../support/fake-kube-client.js';
import { MapCache } from '../../support/map-cache.js';

const uid = 'cr-uid';
function obj(kind: string, name: string, opts: { label?: boolean; ownerRef?: boolean; manager?: string; apiVersion?: string } = {}): KubeObject {
  return {
    apiVersion: opts.apiVersion ?? (kind === 'Deployment' || kind === 'ReplicaSet' ? 'apps/v1' : 'v1'),
    kind,
    metadata: {
      name,
      namespace: 'demo',
      uid: `${kind}-${name}`,
      labels: opts.label === false ? {} : { 'operator.cdk8s.io/owner-uid': uid },
      ownerReferences: opts.ownerRef ? [{ apiVersion: 'x/v1', kind: 'X', name: 'x', uid, controller: true }] : [],
      managedFields: opts.manager ? [{ manager: opts.manager, operation: 'Apply' }] : [],
    },
  };
}

describe('selectPrunable', () => {
  test('only owned, applied by us, and not desired', () => {
    const candidates = [
      obj('ConfigMap', 'keep', { manager: 'op' }),
      obj('ConfigMap', 'dropped', { manager: 'op' }),
      obj('Service', 'dropped-by-ref', { label: false, ownerRef: true, manager: 'op' }),
      obj('ReplicaSet', 'web-123', { label: false, ownerRef: false, manager: 'kube-controller-manager' }),
      obj('ConfigMap', 'not-ours', { manager: 'someone-else' }),
      obj('ConfigMap', 'other-owner', { label: false, manager: 'op' }),
    ];
    const desired = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: 'demo' } }];
    expect(selectPrunable(candidates, desired, uid, 'op').map((o) => o.metadata?.name)).toEqual(['dropped', 'dropped-by-ref']);
  });

  test('a desired child in another API version of the same group/kind is kept', () => {
    const candidates = [obj('HorizontalPodAutoscaler', 'h', { manager: 'op', apiVersion: 'autoscaling/v1' })];
    const desired = [{ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'demo' } }];
    expect(selectPrunable(candidates, desired, uid, 'op')).toEqual([]);
  });
});

describe('ChildPruner', () => {
  const OWNER = 'cr-uid';
  const MANAGER = 'op';
  const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
  const secretKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
  const cr: KubeObject = { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'demo', uid: OWNER } };
  const owned = (kind: string, name: string): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: { name, namespace: 'demo', uid: `${kind}-${name}`, labels: { 'operator.cdk8s.io/owner-uid': OWNER }, managedFields: [{ manager: MANAGER }] },
  });
  const entry = (kind: string, name: string) => ({ apiVersion: 'v1', kind, name, namespace: 'demo', ready: false });
  const desired = [owned('ConfigMap', 'keep')];

  function setup(options: { synced?: boolean; fail?: (call: FakeCall) => Error | undefined; pruneUncachedEntries?: boolean } = {}) {
    const client = new FakeKubeClient();
    client.fail = options.fail;
    const configMaps = new MapCache();
    configMaps.put(owned('ConfigMap', 'keep'));
    configMaps.put(owned('ConfigMap', 'old'));
    let synced = options.synced ?? true;
    const pruner = new ChildPruner({
      client,
      fieldManager: MANAGER,
      children: [{ kind: configMapKind, cache: configMaps }],
      cachesSynced: () => synced,
      retiredKinds: [secretKind],
      pruneUncachedEntries: options.pruneUncachedEntries,
    });
    const prune = (inventory: ChildStatus[] = []) => pruner.prune(reconcileScope(cr, silentLogger), desired, inventory);
    return { client, pruner, prune, sync: () => (synced = true) };
  }

  test('GIVEN the caches have not synced THEN nothing is deleted and every inventory entry not desired is retained', async () => {
    const { client, prune } = setup({ synced: false });
    const outcome = await prune([entry('ConfigMap', 'keep'), entry('ConfigMap', 'old'), entry('Secret', 'gone')]);
    expect(client.calls).toEqual([]);
    expect(outcome).toEqual({ pruned: [], retained: [entry('ConfigMap', 'old'), entry('Secret', 'gone')], failures: [] });
  });

  test('GIVEN a cached child no longer desired THEN it is deleted once; not again until forgotten (its delete event)', async () => {
    const { client, pruner, prune } = setup();
    const first = await prune();
    expect(first.pruned.map(String)).toEqual(['ConfigMap demo/old']);
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['DELETE /api/v1/namespaces/demo/configmaps/old']);
    expect(client.calls[0].body).toMatchObject({ preconditions: { uid: 'ConfigMap-old' } });
    expect((await prune()).pruned).toEqual([]);
    expect(client.calls).toHaveLength(1);
    pruner.forget(owned('ConfigMap', 'old'));
    expect((await prune()).pruned.map(String)).toEqual(['ConfigMap demo/old']);
    expect(client.calls).toHaveLength(2);
  });

  test('GIVEN inventory entries THEN one of a watched kind is left to the cache-based prune, one of an unwatched kind is got and deleted', async () => {
    const { client, prune } = setup();
    client.objects.set('/api/v1/namespaces/demo/secrets/creds', owned('Secret', 'creds'));
    const outcome = await prune([entry('ConfigMap', 'not-cached'), entry('Secret', 'creds')]);
    expect(outcome.pruned.map(String)).toEqual(['ConfigMap demo/old', 'Secret demo/creds']);
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'DELETE /api/v1/namespaces/demo/configmaps/old',
      'GET /api/v1/namespaces/demo/secrets/creds',
      'DELETE /api/v1/namespaces/demo/secrets/creds',
    ]);
  });

  test('GIVEN pruneUncachedEntries (sharded: the caches hold only bucket-labelled children) THEN an undesired entry of a watched kind the cache lacks is got and deleted when ours, dropped when gone, and a cached or desired one is not fetched', async () => {
    const { client, prune } = setup({ pruneUncachedEntries: true });
    // Made before sharding was turned on: no bucket label, so in no cache; still ours (owner-uid label, our field manager).
    client.objects.set('/api/v1/namespaces/demo/configmaps/unlabelled', owned('ConfigMap', 'unlabelled'));
    const outcome = await prune([entry('ConfigMap', 'keep'), entry('ConfigMap', 'old'), entry('ConfigMap', 'unlabelled'), entry('ConfigMap', 'gone')]);
    expect(outcome.pruned.map(String)).toEqual(['ConfigMap demo/old', 'ConfigMap demo/unlabelled']);
    expect(outcome.retained).toEqual([]);
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'DELETE /api/v1/namespaces/demo/configmaps/old',
      'GET /api/v1/namespaces/demo/configmaps/unlabelled',
      'DELETE /api/v1/namespaces/demo/configmaps/unlabelled',
      'GET /api/v1/namespaces/demo/configmaps/gone',
    ]);
    expect(client.calls[2]!.body).toMatchObject({ preconditions: { uid: 'ConfigMap-unlabelled' } });
  });

  test('GIVEN pruneUncachedEntries and an uncached object that is not ours THEN it is not deleted', async () => {
    const { client, prune } = setup({ pruneUncachedEntries: true });
    client.objects.set('/api/v1/namespaces/demo/configmaps/foreign', { ...owned('ConfigMap', 'foreign'), metadata: { name: 'foreign', namespace: 'demo', uid: 'f', labels: {}, managedFields: [{ manager: 'someone' }] } });
    const outcome = await prune([entry('ConfigMap', 'foreign')]);
    expect(outcome.pruned.map(String)).toEqual(['ConfigMap demo/old']);
    expect(client.calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual(['/api/v1/namespaces/demo/configmaps/old']);
  });

  test('GIVEN a delete answered 409 or 403 THEN it is the conflict or a failure, its entry retained, and the other deletes still go out', async () => {
    const refuse = (code: number, reason: string) => (call: FakeCall) =>
      call.method === 'DELETE' && call.path.endsWith('/old') ? new ApiError('DELETE', call.path, code, reason, { kind: 'Status', code, reason, message: reason }, reason) : undefined;
    const conflicting = setup({ fail: refuse(409, 'Conflict') });
    conflicting.client.objects.set('/api/v1/namespaces/demo/secrets/creds', owned('Secret', 'creds'));
    const conflict = await conflicting.prune([entry('Secret', 'creds')]);
    expect(conflict.conflict).toBeInstanceOf(ConflictError);
    expect(conflict.failures).toEqual([]);
    expect(conflict.retained).toEqual([entry('ConfigMap', 'old')]);
    expect(conflict.pruned.map(String)).toEqual(['Secret demo/creds']);

    const forbidden = await setup({ fail: refuse(403, 'Forbidden') }).prune();
    expect(forbidden.conflict).toBeUndefined();
    expect(forbidden.failures).toEqual([expect.objectContaining({ reason: 'Forbidden' })]);
    expect(forbidden.retained).toEqual([entry('ConfigMap', 'old')]);
  });
});
