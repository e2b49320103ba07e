/**
 * `cdk8s-operator diff` (runDiff, in process) against the real control plane, with the example Memcached
 * operator and a test-only Exposer whose render can produce a Service the API server refuses
 * (fixtures/diff-operators.ts). The Memcached's children are applied as the runtime applies them
 * (renderCustomResource, the desired-hash annotation, applyObject with the operator's field manager),
 * so the cluster holds what one reconcile would have left.
 *
 * Every diff is checked to write nothing: the API server's own count of non-dry-run writes
 * (`apiserver_request_total`) and the resourceVersion of every object in the namespace stay the same,
 * and every write the command sends is a dry run (the runtime's reconciler runs with `dryRun=All` on
 * each write, lib/cli/dry-run-writes.ts, over the dry-run-only client).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { type DiffOptions, runDiff } from '../../lib/cli/diff-command.js';
import { DryRunOnlyClient, DryRunOnlyError } from '../../lib/cli/dry-run-client.js';
import { DryRunWrites } from '../../lib/cli/dry-run-writes.js';
import { kindKey } from '../../lib/operator/kinds.js';
import { ObjectRef } from '../../lib/operator/object-ref.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';
import { MANAGED_BY_LABEL, OWNER_UID_LABEL } from '../../lib/operator/render/labels.js';
import { renderCustomResource } from '../../lib/operator/render/render-children.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { applyObject } from '../../lib/runtime/reconcile/apply.js';
import { withDesiredHash } from '../../lib/runtime/reconcile/child-diff.js';
import { Manager } from '../../lib/runtime/manager.js';
import { silentLogger } from '../../lib/runtime/logger.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { eventually } from '../support/eventually.js';
import { persistedWrites } from '../support/persisted-writes.js';
import { addOperators } from './fixtures/diff-operators.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'test/integration/fixtures/diff-operators.ts';
const MC = 'diff-mc';
const PORT = 'diff-port';
const RUN = 'diff-run';
const ADOPT = 'diff-adopt';
const [memcached, exposer] = addOperators(new App());

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
let crUid: string;

const memcachedPath = (name = 'demo') => resourcePath(memcached.crd, MC, name);

beforeAll(async () => {
  // No controllers, scheduler or kubelet: nothing but this test and the diff touches the objects.
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR, components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'diff-command-'));
  const files: string[] = [];
  for (const operator of [memcached, exposer]) {
    const file = join(dir, `${operator.operatorName}-crd.json`);
    await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
    files.push(file);
  }
  await installCRDs(plane.kubeConfig, files);
  for (const name of [MC, PORT, RUN, ADOPT]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });

  // A Memcached and the children one reconcile applies.
  const cr = await admin.request('POST', resourcePath(memcached.crd, MC), {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'demo', namespace: MC }, spec: { replicas: 1 } },
  });
  crUid = cr.metadata!.uid!;
  for (const child of renderCustomResource(memcached, cr as unknown as CustomResource).children.map(withDesiredHash)) {
    const kind = memcached.childKinds().find((k) => kindKey(k) === kindKey(ObjectRef.of(child)))!;
    await applyObject(admin, kind, child, { fieldManager: memcached.operatorName });
  }
  await admin.request('POST', resourcePath(exposer.crd, PORT), {
    body: { apiVersion: 'exposer.example.com/v1', kind: 'Exposer', metadata: { name: 'bad', namespace: PORT }, spec: { port: 70000 } },
  });
}, 10 * 60_000);

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface DiffRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The methods of the command's requests. */
  methods: string[];
  /** The command's requests. */
  records: RequestRecord[];
}

/** `namespace`'s objects of every kind the two operators use (CRs and children), by ObjectRef → resourceVersion. */
async function resourceVersions(namespace: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const kinds = [memcached.crd, exposer.crd, ...memcached.childKinds(), ...exposer.childKinds()];
  for (const kind of kinds) {
    const list = await admin.request<{ items: KubeObject[] }>('GET', resourcePath(kind, namespace));
    for (const item of list.items) out[`${kind.kind} ${item.metadata?.name}`] = item.metadata?.resourceVersion ?? '';
  }
  return out;
}

/** Runs `diff` in process, checking that it wrote nothing (see the module doc). */
async function diff(options: Partial<DiffOptions>, namespace: string, stdin = ''): Promise<DiffRun> {
  const before = { writes: await persistedWrites(plane), versions: await resourceVersions(namespace) };
  let stdout = '';
  let stderr = '';
  const records: RequestRecord[] = [];
  const code = await runDiff({ module: MODULE, kubeconfig: plane.kubeconfigPath, ...options }, {
    cwd: root,
    readStdin: async () => stdin,
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
    onRequest: (record) => records.push(record),
  });
  expect({ writes: await persistedWrites(plane), versions: await resourceVersions(namespace) }).toEqual(before);
  const methods = records.map((r) => r.method);
  return { code, stdout, stderr, methods, records };
}

async function crFile(name: string, replicas: number): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `apiVersion: cache.example.com/v1beta1\nkind: Memcached\nmetadata:\n  name: demo\n  namespace: ${MC}\nspec:\n  replicas: ${replicas}\n`);
  return file;
}

test('GIVEN the children one reconcile left WHEN diff runs over the cluster, and with -f of the unchanged CR THEN exit 0 and no diff', async () => {
  const all = await diff({ namespace: MC }, MC);
  expect(all).toMatchObject({ code: 0, stdout: '' });
  expect(all.stderr).toBe('');
  // the reconciler's own decision (decideApply) finds both children unchanged: no write of a child is sent, as run sends none
  // (its status write, Ready and the inventory, is a dry-run PATCH of the CR's status subresource)
  expect(all.records.filter((r) => r.method !== 'GET' && !r.path.endsWith('/status'))).toEqual([]);

  const file = await diff({ filename: [await crFile('same.yaml', 1)] }, MC);
  expect(file).toMatchObject({ code: 0, stdout: '', stderr: '' });
}, 120_000);

test('GIVEN -f of the CR with spec.replicas changed THEN exit 1, the Deployment diff names the field (old and new line) and the new desired hash, and stderr lists the change', async () => {
  const result = await diff({ filename: [await crFile('replicas.yaml', 2)] }, MC);
  expect(result.code).toBe(1);
  expect(result.stdout).toContain(`--- Deployment ${MC}/demo (live)\n+++ Deployment ${MC}/demo (after apply)\n`);
  expect(result.stdout).toMatch(/^-  replicas: 1$/m);
  expect(result.stdout).toMatch(/^\+  replicas: 2$/m);
  expect(result.stdout).toMatch(/^-    operator\.cdk8s\.io\/desired-hash: \w+$/m);
  expect(result.stdout).not.toContain('resourceVersion');
  expect(result.stdout).not.toContain('managedFields');
  expect(result.stdout).not.toContain(`Service ${MC}/demo`); // the Service did not change
  expect(result.stderr).toBe(`Memcached ${MC}/demo: change Deployment ${MC}/demo\n`);
  // what the file says, not what the cluster holds
  expect((await admin.request('GET', resourcePath(memcached.childKinds().find((k) => k.kind === 'Deployment')!, MC, 'demo'))).spec).toMatchObject({ replicas: 1 });
}, 120_000);

test('GIVEN a child of the CR no longer rendered (in the cache and in the inventory) THEN both are listed as pruned with their whole object removed, exit 1', async () => {
  const ownerReferences = [{ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', name: 'demo', uid: crUid, controller: true, blockOwnerDeletion: true }];
  const labels = { [MANAGED_BY_LABEL]: memcached.operatorName, [OWNER_UID_LABEL]: crUid };
  const service = memcached.childKinds().find((k) => k.kind === 'Service')!;
  // a Service an earlier render made (a watched kind: found by the label-selected list)
  await applyObject(admin, service, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'demo-old', namespace: MC, labels, ownerReferences },
    spec: { ports: [{ name: 'old', port: 1234 }] },
  }, { fieldManager: memcached.operatorName });
  // a ConfigMap an earlier version rendered (a kind no longer watched: found through status.children)
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', group: '', version: 'v1', plural: 'configmaps', namespaced: true };
  await applyObject(admin, configMap, {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo-retired', namespace: MC, labels, ownerReferences }, data: { a: 'b' },
  }, { fieldManager: memcached.operatorName });
  await admin.request('PATCH', `${memcachedPath()}/status`, {
    query: { fieldManager: memcached.operatorName, force: true },
    contentType: 'application/apply-patch+yaml',
    body: {
      apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'demo', namespace: MC },
      status: { children: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'demo', namespace: MC, ready: false },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'demo-retired', namespace: MC, ready: true },
      ] },
    },
  });

  const result = await diff({ namespace: MC }, MC);
  expect(result.code).toBe(1);
  expect(result.stderr.split('\n').filter(Boolean).sort()).toEqual([
    `Memcached ${MC}/demo: prune ConfigMap ${MC}/demo-retired`,
    `Memcached ${MC}/demo: prune Service ${MC}/demo-old`,
  ]);
  expect(result.stdout).toContain(`--- Service ${MC}/demo-old (live)\n+++ Service ${MC}/demo-old (pruned)\n`);
  expect(result.stdout).toMatch(/^-      port: 1234$/m);
  expect(result.stdout).toContain(`+++ ConfigMap ${MC}/demo-retired (pruned)\n`);
  expect(result.stdout).toMatch(/^-  a: b$/m);
  // still there
  await admin.request('GET', resourcePath(service, MC, 'demo-old'));
  await admin.request('GET', resourcePath(configMap, MC, 'demo-retired'));
}, 120_000);

test('GIVEN -f of a new Namespace and a Memcached in it THEN the Namespace (dry-run) and every child (from the render, noted as unchecked) are shown as created, exit 1, and nothing is written', async () => {
  const file = join(dir, 'with-namespace.yaml');
  await writeFile(file, 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: diff-new-ns\n---\napiVersion: cache.example.com/v1beta1\nkind: Memcached\nmetadata:\n  name: demo\n  namespace: diff-new-ns\nspec:\n  replicas: 1\n');
  const result = await diff({ filename: [file] }, 'diff-new-ns');
  expect(result.code === 1 ? '' : result.stderr).toBe(''); // stderr says why when it is not 1
  expect(result.code).toBe(1);
  expect(result.stderr).not.toContain('error:');
  expect(result.stdout).toContain('--- Namespace diff-new-ns (absent)\n+++ Namespace diff-new-ns (after apply)\n');
  expect(result.stdout).toMatch(/^\+ {4}kubernetes\.io\/metadata\.name: diff-new-ns$/m); // the API server's answer, not the file
  expect(result.stdout).toContain('--- Deployment diff-new-ns/demo (absent)\n+++ Deployment diff-new-ns/demo (after apply)\n');
  expect(result.stdout).toContain('--- Service diff-new-ns/demo (absent)\n');
  expect(result.stderr).toContain(`${file}: document 1: create Namespace diff-new-ns\n`);
  expect(result.stderr).toContain('Memcached diff-new-ns/demo: create Deployment diff-new-ns/demo\n');
  expect(result.stderr).toContain('note: Memcached diff-new-ns/demo: Deployment diff-new-ns/demo: not checked by the API server: its namespace diff-new-ns is created by the files\n');
  await expect(admin.request('GET', '/api/v1/namespaces/diff-new-ns')).rejects.toMatchObject({ code: 404 });
}, 120_000);

test('GIVEN a render whose Service the API server refuses THEN its refusal (the server message) is shown, the other child is listed as created, and exit 3', async () => {
  const result = await diff({ namespace: PORT, operators: 'exposer-operator' }, PORT);
  expect(result.code).toBe(3);
  const errors = result.stderr.split('\n').filter((line) => line.startsWith('error: '));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(new RegExp(`^error: Exposer ${PORT}/bad: Service ${PORT}/bad-headless: .*spec\\.ports\\[0\\]\\.port: Invalid value: 70000: must be between 1 and 65535`));
  expect(result.stderr).toContain(`Exposer ${PORT}/bad: create ConfigMap ${PORT}/bad-settings\n`);
  expect(result.stdout).toContain(`--- ConfigMap ${PORT}/bad-settings (absent)\n+++ ConfigMap ${PORT}/bad-settings (after apply)\n`);
  expect(result.stdout).toMatch(/^\+  port: "70000"$/m);
  await expect(admin.request('GET', `/api/v1/namespaces/${PORT}/configmaps/bad-settings`)).rejects.toMatchObject({ code: 404 });
}, 120_000);

test('GIVEN the dry-run-only client THEN a write without dryRun=All is refused before it is sent, and one with it reaches the server and persists nothing', async () => {
  const client = new DryRunOnlyClient(admin);
  const path = `/api/v1/namespaces/${PORT}/configmaps`;
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: PORT } };
  const writes = await persistedWrites(plane);
  await expect(client.request('POST', path, { body })).rejects.toBeInstanceOf(DryRunOnlyError);
  await expect(client.request('DELETE', `${path}/dry`)).rejects.toBeInstanceOf(DryRunOnlyError);
  // a DELETE with a body is read from the body alone by the API server: dryRun=All in the query is not enough
  const deleteOptions = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' };
  await expect(client.request('DELETE', `${path}/dry`, { body: deleteOptions, query: { dryRun: 'All' } })).rejects.toBeInstanceOf(DryRunOnlyError);
  const answer = await client.request<KubeObject>('POST', path, { body, query: { dryRun: 'All' } });
  expect(answer.metadata?.name).toBe('dry');
  expect(await persistedWrites(plane)).toBe(writes);
  await expect(admin.request('GET', `${path}/dry`)).rejects.toMatchObject({ code: 404 });
  // the count the other tests compare does see a real write
  await admin.request('POST', path, { body });
  expect(await persistedWrites(plane)).toBeGreaterThan(writes);
  // the dry-run writes the diff sends (lib/cli/dry-run-writes.ts) delete nothing, with DeleteOptions too
  const afterCreate = await persistedWrites(plane);
  await new DryRunWrites(client).request('DELETE', `${path}/dry`, { body: deleteOptions });
  expect(await persistedWrites(plane)).toBe(afterCreate);
  expect((await admin.request<KubeObject>('GET', `${path}/dry`)).metadata?.deletionTimestamp).toBeUndefined();
}, 60_000);

test('GIVEN a Memcached the runtime itself (a Manager) reconciled, and its status inventory written THEN diff finds nothing to change: exit 0', async () => {
  const manager = new Manager({ kubeConfig: plane.kubeConfig, operators: [memcached], namespace: RUN, events: false, logger: silentLogger });
  await manager.start();
  try {
    await admin.request('POST', resourcePath(memcached.crd, RUN), {
      body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'ran', namespace: RUN }, spec: { replicas: 2 } },
    });
    await eventually('the reconcile applied both children and wrote the inventory', async () => {
      const cr = await admin.request('GET', resourcePath(memcached.crd, RUN, 'ran'));
      const children = (cr.status as { children?: unknown[] } | undefined)?.children ?? [];
      return children.length === 2 ? children : undefined;
    }, { timeoutMs: 60_000 });
  } finally {
    await manager.stop();
  }
  const result = await diff({ namespace: RUN }, RUN);
  expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
}, 120_000);

test('GIVEN a child name taken by an object the CR did not make THEN the adoption refusal is shown for it and exit 3, as the runtime refuses it', async () => {
  await admin.request('POST', `/api/v1/namespaces/${ADOPT}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'taken-settings', namespace: ADOPT }, data: { mine: 'yes' } } });
  await admin.request('POST', resourcePath(exposer.crd, ADOPT), {
    body: { apiVersion: 'exposer.example.com/v1', kind: 'Exposer', metadata: { name: 'taken', namespace: ADOPT }, spec: { port: 80 } },
  });
  const result = await diff({ namespace: ADOPT, operators: 'exposer-operator' }, ADOPT);
  expect(result.code).toBe(3);
  expect(result.stderr).toMatch(new RegExp(`^error: Exposer ${ADOPT}/taken: ConfigMap ${ADOPT}/taken-settings: adoption refused: ConfigMap ${ADOPT}/taken-settings already exists and was not made by this Exposer`, 'm'));
  expect(result.stderr).toContain(`Exposer ${ADOPT}/taken: create Service ${ADOPT}/taken-headless\n`);
  expect(result.stdout).not.toContain('taken-settings');
}, 120_000);
