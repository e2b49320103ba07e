/**
 * `cdk8s-operator diff --all` (runDiff in process), the upgrade plan, against the real control plane:
 * a Widget operator at release N with a few hundred CRs and the children one reconcile of release N
 * left, planned with the module of release N+1 (fixtures/upgrade-operators.ts), which changes a child,
 * drops one, adds one, tightens the schema and drops a version still in `status.storedVersions`.
 *
 * The plan must report exactly the expected entries, and write nothing: the API server's own count of
 * persisted writes (`apiserver_request_total`, dry runs and Leases left out) and the resourceVersion
 * of every object of the namespaces stay the same; every write the command sends is a dry run (the
 * runtime's reconciler with `dryRun=All` on each write, over the dry-run-only client).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { type DiffOptions, runDiff } from '../../lib/cli/diff-command.js';
import type { UpgradePlan } from '../../lib/cli/upgrade-plan/upgrade-plan.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';
import { kindKey } from '../../lib/operator/kinds.js';
import { ObjectRef } from '../../lib/operator/object-ref.js';
import { renderCustomResource } from '../../lib/operator/render/render-children.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { applyObject } from '../../lib/runtime/reconcile/apply.js';
import { withDesiredHash } from '../../lib/runtime/reconcile/child-diff.js';
import { mapConcurrently } from '../../lib/runtime/reconcile/map-concurrently.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { persistedWrites } from '../support/persisted-writes.js';
import { WidgetOperator } from './fixtures/upgrade-operators.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'test/integration/fixtures/upgrade-operators.ts';
const MAIN = 'upgrade-main';
const OTHER = 'upgrade-other';
const CRS = 240;
/** CRs whose `spec.size` release N+1 refuses (> 100). */
const TOO_BIG = new Set(['w-7', 'w-77', 'w-177']);
/** CRs of size 13 (`1 + i % 100`), which release N+1's CEL rule refuses: only the API server's own validation (lib/validator) sees it. */
const CEL_REFUSED = new Set(['w-12', 'w-112', 'w-212']);
const INVALID = TOO_BIG.size + CEL_REFUSED.size;
const releaseN = new WidgetOperator(new App(), 'N');
const CRD_NAME = 'widgets.upgrade.example.com';

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;

const objectsOf = (kind: string) => releaseN.node.findAll().map((c) => c as unknown as { kind?: string; toJson?: () => KubeObject })
  .filter((c) => c.kind === kind && typeof c.toJson === 'function').map((c) => c.toJson!());

beforeAll(async () => {
  // No controllers, scheduler or kubelet: nothing but this test and the plan touches the objects.
  plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'upgrade-plan-'));
  const crdFile = join(dir, 'crd.json');
  await writeFile(crdFile, JSON.stringify(releaseN.customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [crdFile]);
  // Objects were once stored in v1alpha1: storedVersions still holds it (the migration has not run).
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`;
  const crd = await admin.request<KubeObject>('GET', crdPath);
  await admin.request('PUT', `${crdPath}/status`, { body: { ...crd, status: { ...(crd.status as object), storedVersions: ['v1alpha1', 'v1'] } } });
  // Release N's ClusterRole, as deploy installed it.
  for (const role of objectsOf('ClusterRole')) await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role });
  for (const name of [MAIN, OTHER]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });

  // The CRs, and the children one reconcile of release N applies, 16 requests at once.
  const crs = [
    ...Array.from({ length: CRS }, (_, i) => ({ namespace: MAIN, name: `w-${i}`, size: TOO_BIG.has(`w-${i}`) ? 150 + i : 1 + (i % 100) })),
    ...[0, 1, 2].map((i) => ({ namespace: OTHER, name: `o-${i}`, size: 5 })),
  ];
  await mapConcurrently(crs, 16, async ({ namespace, name, size }) => {
    const cr = await admin.request<KubeObject>('POST', resourcePath(releaseN.crd, namespace), {
      body: { apiVersion: 'upgrade.example.com/v1', kind: 'Widget', metadata: { name, namespace }, spec: { size } },
    });
    for (const child of renderCustomResource(releaseN, cr as unknown as CustomResource).children.map(withDesiredHash)) {
      const kind = releaseN.childKinds().find((k) => kindKey(k) === kindKey(ObjectRef.of(child)))!;
      await applyObject(admin, kind, child, { fieldManager: releaseN.operatorName });
    }
  });
}, 15 * 60_000);

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Every Widget, ConfigMap and Secret of the test's namespaces, by `Kind ns/name` → resourceVersion. */
async function resourceVersions(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const namespace of [MAIN, OTHER]) {
    for (const [path, kind] of [[resourcePath(releaseN.crd, namespace), 'Widget'], [`/api/v1/namespaces/${namespace}/configmaps`, 'ConfigMap'], [`/api/v1/namespaces/${namespace}/secrets`, 'Secret']] as const) {
      const list = await admin.request<{ items: KubeObject[] }>('GET', path);
      for (const item of list.items) out[`${kind} ${namespace}/${item.metadata?.name}`] = item.metadata?.resourceVersion ?? '';
    }
  }
  return out;
}

/** Runs `diff --all` in process and checks that it wrote nothing (see the module doc). */
async function plan(options: Partial<DiffOptions>): Promise<{ code: number; stdout: string; stderr: string; records: RequestRecord[] }> {
  const before = { writes: await persistedWrites(plane), versions: await resourceVersions() };
  let stdout = '';
  let stderr = '';
  const records: RequestRecord[] = [];
  const code = await runDiff({ module: MODULE, kubeconfig: plane.kubeconfigPath, all: true, ...options }, {
    cwd: root,
    readStdin: async () => '',
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
    onRequest: (record) => records.push(record),
  });
  expect({ writes: await persistedWrites(plane), versions: await resourceVersions() }).toEqual(before);
  return { code, stdout, stderr, records };
}

test(`GIVEN ${CRS + 3} Widgets of release N WHEN diff --all -o json plans release N+1 THEN each CR's children, the invalid ones, the CRD and the RBAC are exactly as expected, exit 1, nothing written`, async () => {
  const result = await plan({ output: 'json' });
  expect({ code: result.code, errors: result.stderr.split('\n').filter((line) => line.startsWith('error')) }).toEqual({ code: 1, errors: [] });
  const json = JSON.parse(result.stdout) as UpgradePlan;
  expect(json.errors).toEqual([]);
  expect(json.customResources).toHaveLength(CRS + 3);
  for (const cr of json.customResources) {
    const name = `${cr.namespace}/${cr.name}`;
    if (TOO_BIG.has(cr.name)) {
      expect({ name, children: cr.children, invalid: cr.invalid.map((v) => v.field) }).toEqual({ name, children: [], invalid: ['spec.size'] });
      expect(cr.invalid[0]!.message).toMatch(/100/);
      continue;
    }
    if (CEL_REFUSED.has(cr.name)) {
      expect({ name, children: cr.children, invalid: cr.invalid.map((v) => v.field) }).toEqual({ name, children: [], invalid: ['spec'] });
      expect(cr.invalid[0]!.message).toMatch(/size 13 is reserved/);
      continue;
    }
    expect({ name, invalid: cr.invalid, errors: cr.errors, children: cr.children.map((c) => `${c.action} ${c.kind} ${c.namespace}/${c.name}`) }).toEqual({
      name, invalid: [], errors: [],
      children: [`update ConfigMap ${name}-config`, `create Secret ${name}-token`, `prune ConfigMap ${name}-extra`],
    });
    const config = cr.children.find((c) => c.kind === 'ConfigMap' && c.action === 'update')!;
    expect(config.diff).toMatch(/^\+  mode: v2$/m);
  }
  expect(json.summary).toEqual({
    customResources: CRS + 3, changed: CRS + 3 - INVALID, invalid: INVALID, failed: 0,
    children: { create: CRS + 3 - INVALID, update: CRS + 3 - INVALID, adopt: 0, prune: CRS + 3 - INVALID, unchanged: 0 },
  });
  expect(json.crd.customResourceDefinitions).toEqual([expect.objectContaining({
    name: CRD_NAME, installed: true, versionsDropped: [{ name: 'v1alpha1', stillStored: true }], servedAdded: [], servedRemoved: ['v1alpha1'],
    schemaChanged: ['v1'], storedVersions: ['v1alpha1', 'v1'], migration: expect.stringContaining('v1alpha1 still in status.storedVersions'),
  })]);
  const role = json.rbac.roles.find((r) => r.kind === 'ClusterRole' && r.name === 'widget-operator')!;
  expect(role.installed).toBe(true);
  expect(role.missing.map((m) => `${m.verb} ${m.resource}`).sort()).toEqual(expect.arrayContaining(['get secrets', 'list secrets', 'watch secrets', 'patch secrets']));
  expect(role.missing.every((m) => m.resource === 'secrets')).toBe(true);
  expect(result.stderr).toContain(`planned ${CRS + 3}/${CRS + 3} custom resources`);
  // the children listed once per kind and namespace serve as the runtime's cache: no GET of a ConfigMap
  // or Secret by name; the Secrets to create are created (a dry-run POST each), as run creates them
  expect(result.records.filter((r) => r.method === 'GET' && /\/(configmaps|secrets)\/[^/?]+$/.test(r.path))).toEqual([]);
  expect(result.records.filter((r) => r.method === 'POST' && /\/secrets$/.test(r.path))).toHaveLength(CRS + 3 - INVALID);
  expect(result.records.filter((r) => r.method === 'DELETE' && /\/configmaps\/[^/?]+-extra$/.test(r.path))).toHaveLength(CRS + 3 - INVALID);
}, 10 * 60_000);

test('GIVEN -n of the other namespace WHEN diff --all prints text with --details THEN the summary table counts its 3 CRs and each CR lists its child changes with the diff', async () => {
  const result = await plan({ namespace: OTHER, details: true, concurrency: '2' });
  expect({ code: result.code, errors: result.stderr.split('\n').filter((line) => line.startsWith('error')) }).toEqual({ code: 1, errors: [] });
  expect(result.stdout).toMatch(/^ {2}custom resources +3$/m);
  expect(result.stdout).toMatch(/^ {2}children to prune +3$/m);
  expect(result.stdout).toContain(`CustomResourceDefinition ${CRD_NAME}: drops v1alpha1 (still in status.storedVersions: refused until migrated)`);
  expect(result.stdout).toContain(`Widget ${OTHER}/o-0:\n  update ConfigMap ${OTHER}/o-0-config\n  create Secret ${OTHER}/o-0-token\n  prune ConfigMap ${OTHER}/o-0-extra\n`);
  expect(result.stdout).not.toContain(`${MAIN}/`);
}, 10 * 60_000);

test('GIVEN --all with -f, or a bad --concurrency THEN exit 2 naming the flag, and no plan', async () => {
  const withFile = await plan({ filename: ['x.yaml'] });
  expect(withFile).toMatchObject({ code: 2, stdout: '' });
  expect(withFile.stderr).toContain('--all plans every live custom resource: it takes no -f');
  const bad = await plan({ concurrency: '0' });
  expect(bad).toMatchObject({ code: 2, stdout: '' });
  expect(bad.stderr).toContain('--concurrency');
}, 60_000);

test('GIVEN a module with an operator whose CRD the cluster lacks THEN exit 2 naming the CRD, and the plan of the other operator still printed', async () => {
  const result = await plan({ module: 'test/integration/fixtures/upgrade-operators-new-kind.ts', output: 'json', namespace: OTHER });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('error: CustomResourceDefinition gizmos.gizmo.upgrade.example.com: not installed in this cluster: no Gizmo to plan (deploy creates the CRD)\n');
  const json = JSON.parse(result.stdout) as UpgradePlan;
  expect(json.customResources.map((cr) => `${cr.kind} ${cr.namespace}/${cr.name}`)).toEqual([0, 1, 2].map((i) => `Widget ${OTHER}/o-${i}`));
  expect(json.crd.customResourceDefinitions.map((c) => [c.name, c.installed])).toEqual([[CRD_NAME, true], ['gizmos.gizmo.upgrade.example.com', false]]);
  expect(json.rbac.roles.find((r) => r.name === 'gizmo-operator')).toMatchObject({ installed: false });
}, 10 * 60_000);
