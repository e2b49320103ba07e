/**
 * The inventory (status.children) and pruning from it, with a recording fake client: the decision
 * branches (not ours, gone, being deleted, 403 with and without retiredKinds, unknown kind, 409) and the
 * reconciler keeping what it could not prune in the inventory. The real API server flow (v1 → v2 of an
 * operator, under v2's synthesized RBAC) is test/integration/retired-kinds.test.ts.
 */
import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ConflictError, ReconcileError, TerminalError } from '../../../lib/runtime/errors.js';
import { ObjectRef } from '../../../lib/operator/object-ref.js';
import { nextInventory, pruneInventoryEntry, readInventory } from '../../../lib/runtime/reconcile/inventory.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

/** An API error as the server sends it (a Status object). */
function apiError(method: string, path: string, code: number, reason: string, message: string): ApiError {
  return new ApiError(method, path, code, reason, { kind: 'Status', code, reason, message }, message);
}

const OWNER = 'uid-1';
const MANAGER = 'widget-operator';
const CONFIG_MAP_PATH = '/api/v1/namespaces/ns/configmaps/w-config';
const configMapEntry = { apiVersion: 'v1', kind: 'ConfigMap', name: 'w-config', namespace: 'ns', ready: true };
const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };

function ownedConfigMap(extra: { labels?: Record<string, string>; managers?: string[]; deletionTimestamp?: string } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'w-config',
      namespace: 'ns',
      uid: 'cm-uid',
      labels: extra.labels ?? { 'app.kubernetes.io/managed-by': MANAGER, 'operator.cdk8s.io/owner-uid': OWNER },
      managedFields: (extra.managers ?? [MANAGER]).map((manager) => ({ manager, operation: 'Apply' })),
      ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}),
    },
  };
}

const forbidden = (verb: string) =>
  apiError(verb.toUpperCase(), CONFIG_MAP_PATH, 403, 'Forbidden', `configmaps "w-config" is forbidden: User "sa" cannot ${verb} resource "configmaps" in API group "" in the namespace "ns"`);

describe('readInventory', () => {
  test('GIVEN status.children with malformed entries THEN only well-formed ones are read, ready defaulting to false', () => {
    const cr: KubeObject = {
      status: {
        children: [configMapEntry, { apiVersion: 'v1', kind: 'Secret', name: 's' }, { kind: 'Secret', name: 'x' }, 'junk', null, { apiVersion: 'v1', kind: 'Secret', name: '' }],
      },
    };
    expect(readInventory(cr)).toEqual([configMapEntry, { apiVersion: 'v1', kind: 'Secret', name: 's', ready: false }]);
    expect(readInventory({})).toEqual([]);
    expect(readInventory({ status: { children: 'x' } })).toEqual([]);
  });

  test('GIVEN an entry and the object it names THEN their identities agree across API versions of a group', () => {
    expect(ObjectRef.fromEntry({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', name: 'h', namespace: 'ns' }).key()).toBe(
      ObjectRef.of({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'ns' } }).key(),
    );
  });
});

describe('nextInventory', () => {
  const secret = { apiVersion: 'v1', kind: 'Secret', name: 'w-creds', namespace: 'ns', ready: true };
  const hpaV1 = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', name: 'w', namespace: 'ns', ready: false };
  const manifest = (entry: { apiVersion: string; kind: string; name: string; namespace?: string }): KubeObject => ({
    apiVersion: entry.apiVersion,
    kind: entry.kind,
    metadata: { name: entry.name, namespace: entry.namespace },
  });

  test('GIVEN applied children and children still to prune THEN both are listed, children first; an old entry of neither is dropped', () => {
    expect(nextInventory([secret], [configMapEntry], [configMapEntry, hpaV1], [manifest(secret)])).toEqual([secret, configMapEntry]);
  });

  test('GIVEN a desired child with no entry of its own this time (a kind without cache) THEN its previous entry is kept, once, whatever version it was stored in', () => {
    const desired = [manifest(secret), manifest({ ...hpaV1, apiVersion: 'autoscaling/v2' })];
    expect(nextInventory([secret], [], [hpaV1, secret], desired)).toEqual([secret, hpaV1]);
  });
});

describe('pruneInventoryEntry', () => {
  const options = (client: FakeKubeClient, retired = [configMapKind]) => ({ client, ownerUid: OWNER, fieldManager: MANAGER, retiredKinds: retired });

  test('GIVEN our object THEN it is deleted with a UID precondition and background propagation', async () => {
    const client = new FakeKubeClient();
    client.objects.set(CONFIG_MAP_PATH, ownedConfigMap());
    await expect(pruneInventoryEntry(configMapEntry, options(client))).resolves.toBe('pruned');
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual([`GET ${CONFIG_MAP_PATH}`, `DELETE ${CONFIG_MAP_PATH}`]);
    expect(client.calls[1].body).toMatchObject({ propagationPolicy: 'Background', preconditions: { uid: 'cm-uid' } });
  });

  test.each([
    ['owned by another CR', ownedConfigMap({ labels: { 'operator.cdk8s.io/owner-uid': 'other' } })],
    ['without our field manager', ownedConfigMap({ managers: ['kubectl'] })],
    ['already being deleted', ownedConfigMap({ deletionTimestamp: '2026-01-01T00:00:00Z' })],
    ['gone', undefined],
  ])('GIVEN the object is %s THEN it is only dropped from the inventory, never deleted', async (_what, obj) => {
    const client = new FakeKubeClient();
    if (obj) client.objects.set(CONFIG_MAP_PATH, obj);
    await expect(pruneInventoryEntry(configMapEntry, options(client))).resolves.toBe('dropped');
    expect(client.calls.filter((c) => c.method === 'DELETE')).toEqual([]);
  });

  test('GIVEN the kind is not in retiredKinds and get is forbidden THEN Forbidden names the verb and the retiredKinds entry to add', async () => {
    const client = new FakeKubeClient();
    client.fail = (call) => (call.method === 'GET' ? forbidden('get') : undefined);
    const err = await pruneInventoryEntry(configMapEntry, options(client, [])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as ReconcileError).reason).toBe('Forbidden');
    expect((err as Error).message).toContain('ConfigMap ns/w-config: forbidden: cannot get configmaps in namespace "ns"');
    expect((err as Error).message).toContain("add { apiVersion: 'v1', kind: 'ConfigMap' } to the operator's retiredKinds so its derived RBAC keeps get and delete on configmaps");
  });

  test('GIVEN the kind is in retiredKinds but delete is forbidden THEN Forbidden names delete, without the retiredKinds hint', async () => {
    const client = new FakeKubeClient();
    client.objects.set(CONFIG_MAP_PATH, ownedConfigMap());
    client.fail = (call) => (call.method === 'DELETE' ? forbidden('delete') : undefined);
    const err = await pruneInventoryEntry(configMapEntry, options(client)).catch((e: unknown) => e);
    expect((err as ReconcileError).reason).toBe('Forbidden');
    expect((err as Error).message).toContain('cannot delete configmaps in namespace "ns"');
    expect((err as Error).message).not.toContain('retiredKinds');
  });

  test('GIVEN the object was re-created between GET and DELETE (409 on the UID precondition) THEN ConflictError', async () => {
    const client = new FakeKubeClient();
    client.objects.set(CONFIG_MAP_PATH, ownedConfigMap());
    client.fail = (call) => (call.method === 'DELETE' ? apiError('DELETE', CONFIG_MAP_PATH, 409, 'Conflict', 'Precondition failed: UID in precondition: cm-uid, UID in object meta: new') : undefined);
    await expect(pruneInventoryEntry(configMapEntry, options(client))).rejects.toBeInstanceOf(ConflictError);
  });

  test('GIVEN a kind neither built in nor in retiredKinds THEN TerminalError naming the retiredKinds entry with plural and namespaced, and no request', async () => {
    const client = new FakeKubeClient();
    const entry = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', name: 'm', namespace: 'ns', ready: true };
    const err = await pruneInventoryEntry(entry, options(client, [])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TerminalError);
    expect((err as Error).message).toMatch(/add \{ apiVersion: 'monitoring\.coreos\.com\/v1', kind: 'ServiceMonitor', plural: …, namespaced: … \} to the operator's retiredKinds/);
    expect(client.calls).toEqual([]);
  });

  test('GIVEN a retired kind declared with another version THEN the declared REST resource is used', async () => {
    const client = new FakeKubeClient();
    const path = '/apis/policy/v1/namespaces/ns/poddisruptionbudgets/p';
    const cm = ownedConfigMap();
    client.objects.set(path, { ...cm, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { ...cm.metadata, name: 'p' } });
    const pdb = { apiVersion: 'policy/v1', group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true };
    await expect(pruneInventoryEntry({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', name: 'p', namespace: 'ns', ready: true }, options(client, [pdb]))).resolves.toBe('pruned');
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual([`GET ${path}`, `DELETE ${path}`]);
  });
});

describe('Reconciler with an inventory', () => {
  const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
  const secretKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
  const labels = { 'app.kubernetes.io/managed-by': MANAGER, 'operator.cdk8s.io/owner-uid': OWNER };
  const secretEntry = { apiVersion: 'v1', kind: 'Secret', name: 'w-secret', namespace: 'ns', ready: true };

  /** Version 2: renders only a Secret, watches only Secrets; the CR's inventory lists v1's ConfigMap too. */
  function setup(options: { retiredKinds?: (typeof configMapKind)[]; synced?: boolean } = {}) {
    return reconcilerHarness({
      operator: { operatorName: MANAGER, crd, retiredKinds: options.retiredKinds },
      render: () => [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'w-secret', namespace: 'ns', labels }, data: {} }],
      childKinds: [secretKind],
      crs: [
        {
          apiVersion: 'x.io/v1',
          kind: 'Widget',
          metadata: { name: 'w', namespace: 'ns', uid: OWNER, generation: 1, resourceVersion: '10' },
          spec: {},
          status: { observedGeneration: 1, children: [configMapEntry, secretEntry] },
        },
      ],
      synced: options.synced,
      events: false,
    });
  }

  test('GIVEN the inventory lists a ConfigMap of a retired kind THEN it is deleted and the status inventory lists only the Secret', async () => {
    const { client, reconcile, reconciler, statusWrites } = setup({ retiredKinds: [configMapKind] });
    client.objects.set(CONFIG_MAP_PATH, ownedConfigMap());
    await reconcile('ns/w');
    expect(client.calls.filter((c) => c.method === 'DELETE').map((c) => c.path)).toEqual([CONFIG_MAP_PATH]);
    expect(reconciler.lastStats.get('ns/w')?.pruned).toBe(1);
    expect(statusWrites().at(-1).children.map((c: { kind: string }) => c.kind)).toEqual(['Secret']);
  });

  test('GIVEN the prune is forbidden THEN Stalled=True Forbidden names the retiredKinds entry and the ConfigMap stays in the inventory', async () => {
    const { client, reconcile, statusWrites } = setup();
    client.fail = (call) => (call.path === CONFIG_MAP_PATH ? forbidden('get') : undefined);
    const err = await reconcile('ns/w').catch((e: unknown) => e);
    expect((err as ReconcileError).reason).toBe('Forbidden');
    const status = statusWrites().at(-1);
    const stalled = status.conditions.find((c: { type: string }) => c.type === 'Stalled');
    expect(stalled).toMatchObject({ status: 'True', reason: 'Forbidden' });
    expect(stalled.message).toContain("add { apiVersion: 'v1', kind: 'ConfigMap' } to the operator's retiredKinds");
    expect(status.children.map((c: { kind: string; name: string }) => `${c.kind}/${c.name}`)).toEqual(['ConfigMap/w-config', 'Secret/w-secret']);
  });

  test('GIVEN the caches have not synced THEN nothing is pruned and the inventory keeps the ConfigMap', async () => {
    const { client, reconcile, statusWrites } = setup({ retiredKinds: [configMapKind], synced: false });
    client.objects.set(CONFIG_MAP_PATH, ownedConfigMap());
    await reconcile('ns/w');
    expect(client.calls.filter((c) => c.method === 'DELETE' || c.path === CONFIG_MAP_PATH)).toEqual([]);
    expect(statusWrites().at(-1).children.map((c: { kind: string }) => c.kind)).toEqual(['ConfigMap', 'Secret']);
  });

  test('GIVEN the DELETE conflicts (re-created object) THEN ConflictError and no status write drops the entry', async () => {
    const { client, reconcile, statusWrites } = setup({ retiredKinds: [configMapKind] });
    client.objects.set(CONFIG_MAP_PATH, ownedConfigMap());
    client.fail = (call) => (call.method === 'DELETE' ? apiError('DELETE', CONFIG_MAP_PATH, 409, 'Conflict', 'Precondition failed') : undefined);
    await expect(reconcile('ns/w')).rejects.toBeInstanceOf(ConflictError);
    expect(statusWrites()).toEqual([]);
  });
});
