/**
 * Inventory-based prune across operator versions, against the run's shared control plane (issue 9,
 * "Retired child kinds are never pruned"):
 * - version 1 of the `Shelf` operator renders a ConfigMap and a Secret and runs until the CR is Ready;
 * - version 2 (same name, field manager and CRD) renders only the Secret and declares
 *   `retiredKinds: [ConfigMap]`; it runs as a ServiceAccount bound to exactly v2's synthesized
 *   ClusterRole, so it neither watches nor may list ConfigMaps. It deletes the ConfigMap that v1 applied
 *   and drops it from `status.children`; the Secret is left untouched.
 * - a version 2 that forgets `retiredKinds` reports Stalled=True Forbidden naming the missing entry, and
 *   the ConfigMap stays in the inventory (no silent leak).
 * Waits are bounded by deadlines; nothing asserts elapsed time.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator, type CustomResource, type ChildKind } from '../../lib/operator/operator.js';
import type { PolicyRule } from '../../lib/operator/manifests/rbac.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { checkAccess, describeMissing, requiredAccess } from '../../lib/runtime/startup/rbac-self-check.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { createTestNamespace, serviceAccountUser, testKubeConfig } from '../support/cluster.js';
import { eventually as waitFor } from '../support/eventually.js';

const TEST_TIMEOUT_MS = 240_000;
const GROUP = 'retired.test.cdk8s.io';
const OPERATOR_NAME = 'shelf-operator';
const CONFIG_MAP: ChildKind = { apiVersion: 'v1', kind: 'ConfigMap' };

const ShelfSpec = z.object({ label: z.string().default('books') });

/** The Shelf operator at some version: v1 renders a ConfigMap and a Secret, v2 only the Secret. */
class ShelfOperator extends Operator<typeof ShelfSpec> {
  private readonly withConfigMap: boolean;
  constructor(scope: Construct, options: { withConfigMap: boolean; retiredKinds?: ChildKind[] }) {
    super(scope, OPERATOR_NAME, {
      name: OPERATOR_NAME,
      group: GROUP,
      version: 'v1',
      kind: 'Shelf',
      plural: 'shelves',
      spec: ShelfSpec,
      retiredKinds: options.retiredKinds,
      deployment: { image: 'registry.example.com/shelf-operator:2.0.0', module: 'shelf-operator.ts' },
      examples: [{ apiVersion: `${GROUP}/v1`, kind: 'Shelf', metadata: { name: 'example', namespace: 'default' }, spec: {} }],
    });
    this.withConfigMap = options.withConfigMap;
  }

  render(cr: CustomResource<z.output<typeof ShelfSpec>>, scope: Construct): void {
    const name = cr.metadata.name;
    if (this.withConfigMap) {
      new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-config` }, data: { label: cr.spec.label } });
    }
    new ApiObject(scope, 'secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${name}-secret` }, data: { label: Buffer.from(cr.spec.label).toString('base64') } });
  }
}

let admin: ApiClient;
let dir: string;
const clients: ApiClient[] = [];

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'retired-kinds-test' });
  dir = await mkdtemp(join(tmpdir(), 'retired-kinds-'));
  const file = join(dir, 'crd.json');
  await writeFile(file, JSON.stringify(new ShelfOperator(new App(), { withConfigMap: true }).customResourceDefinition.toJson()));
  await installCRDs(testKubeConfig(), [file], 60_000);
}, 120_000);

afterAll(async () => {
  for (const client of clients) client.close();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitFor(what, check, { timeoutMs });
}

const shelfPath = (ns: string, name = '') => `/apis/${GROUP}/v1/namespaces/${ns}/shelves${name ? `/${name}` : ''}`;
const configMapPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
const secretPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/secrets/${name}`;

interface ShelfStatus {
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  children?: { apiVersion: string; kind: string; name: string; namespace?: string }[];
}

async function shelfStatus(ns: string, name: string): Promise<{ generation?: number; status: ShelfStatus }> {
  const cr = await admin.request('GET', shelfPath(ns, name));
  return { generation: cr.metadata?.generation, status: (cr.status ?? {}) as ShelfStatus };
}

function condition(status: ShelfStatus, type: string) {
  return status.conditions?.find((c) => c.type === type);
}

const inventoryKinds = (status: ShelfStatus) => (status.children ?? []).map((c) => `${c.kind}/${c.name}`).sort();

/** Runs `operator` in a Manager watching `ns` until `until` holds, then stops it. */
async function runUntil(operator: Operator, ns: string, options: { impersonate?: { user: string; groups: string[] }; rbacSelfCheck?: boolean }, what: string, until: () => Promise<boolean>): Promise<void> {
  const manager = new Manager({
    kubeConfig: testKubeConfig(),
    operators: [operator],
    namespace: ns,
    impersonate: options.impersonate,
    rbacSelfCheck: options.rbacSelfCheck,
    logger: pino(pino.destination({ dest: join(dir, `${ns}.log`), sync: true })),
  });
  try {
    await manager.start();
    await eventually(what, async () => until());
  } finally {
    await manager.stop();
  }
}

/** v1 applies a Shelf's ConfigMap and Secret until it is Ready with both in its inventory. */
async function runVersion1(ns: string, name: string): Promise<void> {
  await admin.request('POST', shelfPath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Shelf', metadata: { name, namespace: ns }, spec: {} } });
  const v1 = new ShelfOperator(new App(), { withConfigMap: true });
  await runUntil(v1, ns, {}, 'v1 Ready with ConfigMap and Secret', async () => {
    const { generation, status } = await shelfStatus(ns, name);
    return status.observedGeneration === generation && condition(status, 'Ready')?.status === 'True' && inventoryKinds(status).length === 2;
  });
}

function clusterRoleRules(operator: Operator): PolicyRule[] {
  const role = operator.toJson().find((o: KubeObject) => o.kind === 'ClusterRole') as { rules: PolicyRule[] } | undefined;
  if (!role) throw new Error(`${operator.operatorName} synthesizes no ClusterRole`);
  return role.rules;
}

/** ServiceAccount `ns/shelf-operator` bound to a ClusterRole holding exactly `operator`'s synthesized rules; waits until the grants count. */
async function bindSynthesizedRole(operator: Operator, ns: string): Promise<{ user: string; groups: string[] }> {
  const apply = (path: string, body: KubeObject) =>
    admin.request('PATCH', path, { body, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'retired-kinds-test', force: true } });
  const roleName = `${ns}-${OPERATOR_NAME}`;
  await apply(`/api/v1/namespaces/${ns}/serviceaccounts/${OPERATOR_NAME}`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: OPERATOR_NAME, namespace: ns } });
  await apply(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${roleName}`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: roleName }, rules: clusterRoleRules(operator) });
  await apply(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${roleName}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: roleName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
    subjects: [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: ns }],
  });
  const impersonate = serviceAccountUser(ns, OPERATOR_NAME);
  const client = new ApiClient({ kubeConfig: testKubeConfig(), impersonate });
  clients.push(client);
  // The RBAC authorizer reads bindings from an informer: wait until everything the runtime uses is granted.
  const required = requiredAccess([operator], { namespace: ns });
  await eventually('synthesized RBAC in effect', async () => (await checkAccess(client, required)).length === 0, 30_000).catch(async (err) => {
    throw new Error(`${(err as Error).message}; missing: ${(await checkAccess(client, required)).map(describeMissing).join(', ')}`);
  });
  return impersonate;
}

test(
  'GIVEN v1 applied a ConfigMap WHEN v2 stops rendering it and declares retiredKinds: [ConfigMap] THEN v2, under exactly its synthesized RBAC, deletes it and drops it from the inventory; the Secret is untouched',
  async () => {
    const ns = await createTestNamespace('retired-kinds', admin);
    await runVersion1(ns, 'shelf');
    const configMap = await admin.request('GET', configMapPath(ns, 'shelf-config'));
    const secretBefore = await admin.request('GET', secretPath(ns, 'shelf-secret'));
    expect(configMap.metadata?.managedFields?.some((e) => (e as { manager?: string }).manager === OPERATOR_NAME)).toBe(true);

    const v2 = new ShelfOperator(new App(), { withConfigMap: false, retiredKinds: [CONFIG_MAP] });
    // v2's derived RBAC: get + delete on configmaps (prune by name), no list/watch (ConfigMaps are not watched).
    const rules = clusterRoleRules(v2);
    const configMapRules = rules.filter((r) => r.apiGroups.includes('') && r.resources.includes('configmaps'));
    expect(configMapRules).toEqual([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'delete'] }]);
    expect(v2.childKinds().map((k) => k.kind)).toEqual(['Secret']);

    const impersonate = await bindSynthesizedRole(v2, ns);
    await runUntil(v2, ns, { impersonate, rbacSelfCheck: true }, 'v2 pruned the ConfigMap and is Ready', async () => {
      const gone = await admin.request('GET', configMapPath(ns, 'shelf-config')).then(
        () => false,
        (err) => (isApiError(err, 404) ? true : Promise.reject(err)),
      );
      const { generation, status } = await shelfStatus(ns, 'shelf');
      return gone && status.observedGeneration === generation && condition(status, 'Ready')?.status === 'True' && inventoryKinds(status).join() === 'Secret/shelf-secret';
    });

    const { status } = await shelfStatus(ns, 'shelf');
    expect(status.children).toEqual([{ apiVersion: 'v1', kind: 'Secret', name: 'shelf-secret', namespace: ns, ready: true }]);
    const secretAfter = await admin.request('GET', secretPath(ns, 'shelf-secret'));
    expect(secretAfter.metadata?.uid).toBe(secretBefore.metadata?.uid);
    expect(secretAfter.metadata?.resourceVersion).toBe(secretBefore.metadata?.resourceVersion);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN v1 applied a ConfigMap WHEN v2 stops rendering it but forgets retiredKinds THEN the CR is Stalled=True Forbidden naming the retiredKinds entry, and the ConfigMap stays in the inventory',
  async () => {
    const ns = await createTestNamespace('retired-kinds', admin);
    await runVersion1(ns, 'shelf');
    const v2 = new ShelfOperator(new App(), { withConfigMap: false });
    expect(clusterRoleRules(v2).some((r) => r.resources.includes('configmaps'))).toBe(false);

    const impersonate = await bindSynthesizedRole(v2, ns);
    let stalled: { status: string; reason?: string; message?: string } | undefined;
    await runUntil(v2, ns, { impersonate }, 'v2 reports Stalled=True Forbidden', async () => {
      const { generation, status } = await shelfStatus(ns, 'shelf');
      stalled = condition(status, 'Stalled');
      return status.observedGeneration === generation && stalled?.status === 'True';
    });

    expect(stalled?.reason).toBe('Forbidden');
    expect(stalled?.message).toContain(`ConfigMap ${ns}/shelf-config`);
    expect(stalled?.message).toContain("add { apiVersion: 'v1', kind: 'ConfigMap' } to the operator's retiredKinds");
    const { status } = await shelfStatus(ns, 'shelf');
    expect(inventoryKinds(status)).toEqual(['ConfigMap/shelf-config', 'Secret/shelf-secret']);
    await expect(admin.request('GET', configMapPath(ns, 'shelf-config'))).resolves.toMatchObject({ metadata: { name: 'shelf-config' } });
  },
  TEST_TIMEOUT_MS,
);
