/**
 * `cdk8s-operator deploy` / `undeploy` against the local control plane (kube-apiserver, controller
 * manager, scheduler, kwok: the operator's Deployment really rolls out, on a fake node), with the example
 * operators. The CLI runs as a child process for the deploy that goes through `--kubeconfig` and
 * `--context` (a kubeconfig whose current context reaches nothing); the other runs are in process
 * (`runDeploy` / `runUndeploy`) so their requests can be counted.
 *
 * Checked: `--dry-run` writes nothing (the API server's own count of persisted writes to the kinds a
 * deploy writes, every planned object still absent, only GETs and SelfSubjectAccessReviews sent) and
 * prints the plan in stage order; deploy makes the CRD Established and the Deployment Available; a second
 * deploy changes nothing (every object's resourceVersion and managedFields the same, no write but the
 * no-op applies); an object an older deploy labelled is pruned; a user with a narrow Role stops before
 * the first write, listing what it lacks; undeploy leaves nothing labelled (every kind listed) but the
 * CRD, and `--include-crds` removes the CRD after saying which custom resources go with it. An operator
 * with a `finalize` hook (the slow-finalizer fixture, run in this process as its pod would run: kwok runs
 * no container) and one of its CRs, with the runtime's finalizer, in the operator's own namespace:
 * `undeploy` refuses, listing the CR, and deletes nothing (the namespace is not Terminating);
 * `--delete-custom-resources` deletes the CR while the operator runs, waits until it is finalized and
 * gone, then removes the rest (the CRD stays).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { pino } from 'pino';
import { parse } from 'yaml';
import { runDeploy, type DeployOptions } from '../../lib/cli/deploy-command.js';
import { DEPLOYED_BY_LABEL, type Manifest, objectLabel } from '../../lib/cli/deploy-plan.js';
import { DEPLOYABLE_KINDS } from '../../lib/cli/deploy-target.js';
import { loadOperators } from '../../lib/cli/load-operators.js';
import { synthesizeOperators } from '../../lib/cli/operator-manifests.js';
import { runUndeploy, type UndeployOptions } from '../../lib/cli/undeploy-command.js';
import { ApiResources } from '../../lib/runtime/client/api-resources.js';
import { runOperators } from '../../lib/runtime/index.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { writeOtherContextKubeconfig, writeServiceAccountKubeconfig } from '../support/kubeconfig-files.js';
import { type CommandResult, commandEnv, runCommand } from '../support/run-command.js';
import { eventually } from '../support/eventually.js';
import { SlowFinalizerOperator } from './fixtures/slow-finalizer-operator.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'operators/index.ts';
const APP = 'app-operator';
const DATABASE = 'database-operator';

let plane: ControlPlane;
let admin: ApiClient;
let resources: ApiResources;
let dir: string;
let kubeconfig: string;
let appObjects: readonly Manifest[];
let databaseObjects: readonly Manifest[];

beforeAll(async () => {
  plane = await startControlPlane();
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  resources = new ApiResources(admin);
  dir = await mkdtemp(join(tmpdir(), 'deploy-command-'));
  // The plane's context, renamed `mine`, beside a current context `elsewhere` that reaches nothing.
  kubeconfig = await writeOtherContextKubeconfig(plane.kubeconfigPath, join(dir, 'kubeconfig.yaml'));
  const set = await loadOperators({ modulePath: MODULE, cwd: REPO });
  [{ objects: appObjects }, { objects: databaseObjects }] = synthesizeOperators(set, set.pick(`${APP},${DATABASE}`));
}, 10 * 60_000);

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  requests: RequestRecord[];
}

async function deploy(options: Partial<DeployOptions>): Promise<Run> {
  const run: Run = { code: -1, stdout: '', stderr: '', requests: [] };
  run.code = await runDeploy(
    { kubeconfig, context: 'mine', module: MODULE, timeoutMs: 240_000, ...options },
    { cwd: REPO, writeStdout: (t) => (run.stdout += t), writeStderr: (t) => (run.stderr += t), env: {}, onRequest: (r) => run.requests.push(r) },
  );
  return run;
}

async function undeploy(options: Partial<UndeployOptions>): Promise<Run> {
  const run: Run = { code: -1, stdout: '', stderr: '', requests: [] };
  run.code = await runUndeploy(
    { kubeconfig, context: 'mine', module: MODULE, timeoutMs: 240_000, ...options },
    { cwd: REPO, writeStdout: (t) => (run.stdout += t), writeStderr: (t) => (run.stderr += t), env: {}, onRequest: (r) => run.requests.push(r) },
  );
  return run;
}

const failed = (run: { code: number | null; stdout: string; stderr: string }) => `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;

async function pathOf(object: Manifest): Promise<string> {
  const ref = await resources.resourceOf(object.apiVersion, object.kind);
  return resourcePath(ref, ref.namespaced ? object.metadata.namespace : undefined, object.metadata.name);
}

const exists = async (object: Manifest) => admin.request('GET', await pathOf(object)).then(() => true, (err) => (isApiError(err, 404) ? false : Promise.reject(err)));

/**
 * The API server's count of persisted writes (not dry runs) to the main resource of the kinds a deploy
 * writes, but ServiceAccounts and ClusterRoles, which the controller manager writes on its own at start
 * (a `default` ServiceAccount per namespace, the aggregated ClusterRoles): those are checked absent instead.
 */
async function persistedDeployWrites(): Promise<number> {
  const plurals = ['customresourcedefinitions', 'namespaces', 'clusterrolebindings', 'roles', 'rolebindings', 'services', 'deployments', 'validatingwebhookconfigurations', 'mutatingwebhookconfigurations'];
  const res = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/metrics');
  let sum = 0;
  for (const line of String(res.body).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!/verb="(POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION|CREATE|UPDATE)"/.test(line)) continue;
    if (!line.includes('dry_run=""') || !line.includes('subresource=""')) continue;
    if (!plurals.some((p) => line.includes(`resource="${p}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Every object labelled as `operator`'s deploy, of every kind deploy knows, cluster-wide: `Kind ns/name` → resourceVersion + managedFields. */
async function labelled(operator: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const { apiVersion, kind } of DEPLOYABLE_KINDS) {
    const ref = await resources.find(apiVersion, kind);
    if (!ref) continue;
    const list = await admin.request<{ items: KubeObject[] }>('GET', resourcePath(ref), { query: { labelSelector: `${DEPLOYED_BY_LABEL}=${operator}` } });
    for (const item of list.items) {
      out.set(objectLabel({ kind, metadata: { name: item.metadata!.name!, namespace: item.metadata?.namespace } }), JSON.stringify([item.metadata?.resourceVersion, item.metadata?.managedFields]));
    }
  }
  return out;
}

const conditionOf = (object: KubeObject, type: string) => ((object.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).find((c) => c.type === type)?.status;

test('GIVEN nothing deployed WHEN deploy --dry-run THEN it prints the plan in stage order and writes nothing', async () => {
  const before = await persistedDeployWrites();
  const run = await deploy({ dryRun: true, operators: APP });
  if (run.code !== 0) throw new Error(failed(run));
  expect(await persistedDeployWrites()).toBe(before);
  for (const object of appObjects) expect({ object: objectLabel(object), exists: await exists(object) }).toEqual({ object: objectLabel(object), exists: false });
  // Only reads and SelfSubjectAccessReviews left the process.
  expect(run.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`).filter((r) => r !== 'POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).toEqual([]);
  // The plan: every synthesized object, to create, CRD first, Deployment after RBAC.
  for (const object of appObjects) expect(run.stdout).toContain(`create     ${objectLabel(object)}\n`);
  const at = (text: string) => run.stdout.indexOf(text);
  expect(at('CustomResourceDefinition apps.apps.example.com')).toBeLessThan(at('Namespace app-operator-system'));
  expect(at('Namespace app-operator-system')).toBeLessThan(at('ClusterRole app-operator\n'));
  expect(at('ClusterRoleBinding app-operator\n')).toBeLessThan(at('Deployment app-operator-system/app-operator'));
  expect(run.stdout).toMatch(/^app-operator:\n {2}1\. CustomResourceDefinitions, then wait until Established\n/);
  expect(run.stdout).toContain('  prune: nothing\n');
  expect(run.stderr).toContain('dry run: nothing was written');
}, 300_000);

test('GIVEN --kubeconfig and --context WHEN the CLI deploys THEN it names the cluster first, the CRD is Established and the Deployment Available', async () => {
  const result: CommandResult = await runCommand(
    process.execPath,
    ['bin/cdk8s-operator.js', 'deploy', '--kubeconfig', kubeconfig, '--context', 'mine', '--operators', APP, '--timeout', '240s'],
    { cwd: REPO, timeoutMs: 300_000, env: commandEnv({ KUBECONFIG: undefined, CDK8S_OPERATOR_TEST_KUBECONFIG: '' }) },
  );
  if (result.code !== 0) throw new Error(failed(result));
  const lines = result.stderr.split('\n');
  expect(lines[0]).toBe(`deploy to context mine, cluster ${parse(await readFile(plane.kubeconfigPath, 'utf8')).clusters[0].name} (${plane.server}): ${APP}`);
  const crd = await admin.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.apps.example.com');
  expect(conditionOf(crd, 'Established')).toBe('True');
  const deployment = await admin.request('GET', '/apis/apps/v1/namespaces/app-operator-system/deployments/app-operator');
  expect(conditionOf(deployment, 'Available')).toBe('True');
  expect(deployment.metadata?.labels?.[DEPLOYED_BY_LABEL]).toBe(APP);
  // Stage order in what it did: the CRD Established before the namespace, the rollout before the end.
  const index = (prefix: string) => lines.findIndex((l) => l.startsWith(prefix));
  expect(index('CustomResourceDefinition apps.apps.example.com: Established')).toBeLessThan(index('applied Namespace app-operator-system (created)'));
  expect(index('applied ClusterRoleBinding app-operator (created)')).toBeLessThan(index('applied Deployment app-operator-system/app-operator (created)'));
  expect(index('Deployment app-operator-system/app-operator: rolled out')).toBeGreaterThan(index('applied Deployment'));
  // kwok runs no process: /readyz cannot answer; said, and the Pod's Ready condition reported.
  expect(result.stderr).toMatch(/(note: Pod app-operator-system\/app-operator-\S+: Ready, but \/readyz is not reachable through the API server's pod proxy)|(\/readyz answered 200)/);
  for (const object of appObjects) expect(lines).toContain(`applied ${objectLabel(object)} (created)`);
}, 360_000);

test('GIVEN a deployed operator WHEN deploy runs again THEN nothing changes: every resourceVersion and managedFields the same', async () => {
  const before = await labelled(APP);
  expect(before.size).toBe(appObjects.length);
  const run = await deploy({ operators: APP });
  if (run.code !== 0) throw new Error(failed(run));
  expect(await labelled(APP)).toEqual(before);
  for (const object of appObjects) expect(run.stderr).toContain(`applied ${objectLabel(object)} (unchanged)\n`);
  const writes = run.requests.filter((r) => r.method !== 'GET' && !r.path.endsWith('/selfsubjectaccessreviews'));
  expect(writes.every((r) => r.method === 'PATCH')).toBe(true);
  expect(writes).toHaveLength(appObjects.length);
  // And the plan says so.
  const plan = await deploy({ operators: APP, dryRun: true });
  if (plan.code !== 0) throw new Error(failed(plan));
  for (const object of appObjects) expect(plan.stdout).toContain(`unchanged  ${objectLabel(object)}\n`);
}, 360_000);

test('GIVEN an object an older deploy labelled that is no longer synthesized WHEN deploy THEN the plan lists it and deploy prunes it', async () => {
  const stale = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'app-operator-old', namespace: 'app-operator-system', labels: { [DEPLOYED_BY_LABEL]: APP } }, rules: [] };
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/app-operator-system/roles', { body: stale });
  // Another operator's object is not this one's to prune.
  const other = { ...stale, metadata: { ...stale.metadata, name: 'not-app', labels: { [DEPLOYED_BY_LABEL]: 'someone-else' } } };
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/app-operator-system/roles', { body: other });
  const plan = await deploy({ operators: APP, dryRun: true });
  if (plan.code !== 0) throw new Error(failed(plan));
  expect(plan.stdout).toContain('  prune: delete Role app-operator-system/app-operator-old (no longer synthesized)\n');
  expect(plan.stdout).not.toContain('not-app');
  const run = await deploy({ operators: APP });
  if (run.code !== 0) throw new Error(failed(run));
  expect(run.stderr).toContain('pruned Role app-operator-system/app-operator-old (no longer synthesized)');
  expect(await exists(stale as Manifest)).toBe(false);
  expect(await exists(other as Manifest)).toBe(true);
  await admin.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/namespaces/app-operator-system/roles/not-app');
}, 360_000);

test('GIVEN a user with a narrow Role WHEN deploy THEN it stops before its first write, listing every missing permission', async () => {
  // A ServiceAccount that may read and create ServiceAccounts in one namespace only.
  const ns = 'deploy-narrow';
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
  await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'narrow' } } });
  await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'narrow' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list', 'create'] }] },
  });
  await admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'narrow' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'narrow' }, subjects: [{ kind: 'ServiceAccount', name: 'narrow', namespace: ns }] },
  });
  const narrow = await writeServiceAccountKubeconfig(admin, plane.kubeconfigPath, ns, 'narrow', join(dir, 'narrow.kubeconfig'));

  const before = await persistedDeployWrites();
  const run = await deploy({ operators: DATABASE, kubeconfig: narrow, context: undefined });
  expect(run.code).toBe(1);
  expect(await persistedDeployWrites()).toBe(before);
  expect(run.requests.filter((r) => r.method !== 'GET' && !r.path.endsWith('/selfsubjectaccessreviews'))).toEqual([]);
  for (const object of databaseObjects) expect(await exists(object)).toBe(false);
  expect(run.stderr).toMatch(/error: the user \S+ of context \S+, cluster \S+ \(https:\/\/127\.0\.0\.1:\d+\) lacks \d+ permission\(s\) this deploy needs; nothing was written:\n/);
  const lines = run.stderr.split('\n');
  for (const line of [
    '  create customresourcedefinitions.apiextensions.k8s.io (cluster-wide)',
    '  create namespaces (cluster-wide)',
    '  create clusterroles.rbac.authorization.k8s.io (cluster-wide)',
    '  create deployments.apps in namespace database-operator-system',
    '  create serviceaccounts in namespace database-operator-system',
    '  list pods in namespace database-operator-system',
    '  get customresourcedefinitions.apiextensions.k8s.io databases.databases.example.com (cluster-wide)',
  ]) expect(lines).toContain(line);
}, 300_000);

test('GIVEN a deployed operator WHEN undeploy THEN nothing it applied is left but the CRD; --include-crds says what goes with the CRD and removes it', async () => {
  const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.apps.example.com';
  const set = await loadOperators({ modulePath: MODULE, cwd: REPO });
  const example = set.get(APP)!.examples[0] as unknown as KubeObject;
  await admin.request('POST', '/apis/apps.example.com/v1alpha1/namespaces/default/apps', { body: { ...example, metadata: { name: 'kept', namespace: 'default' } } });

  const run = await undeploy({ operators: APP });
  if (run.code !== 0) throw new Error(failed(run));
  expect(run.stderr).toContain('note: kept CustomResourceDefinition apps.apps.example.com and its 1 App object(s); --include-crds deletes them');
  expect([...(await labelled(APP)).keys()]).toEqual(['CustomResourceDefinition apps.apps.example.com']);
  for (const object of appObjects) expect({ object: objectLabel(object), exists: await exists(object) }).toEqual({ object: objectLabel(object), exists: object.kind === 'CustomResourceDefinition' });
  expect(run.stderr.indexOf('removed Deployment app-operator-system/app-operator')).toBeLessThan(run.stderr.indexOf('removed Namespace app-operator-system'));

  const all = await undeploy({ operators: APP, includeCrds: true });
  if (all.code !== 0) throw new Error(failed(all));
  expect(all.stderr).toContain('deleting CustomResourceDefinition apps.apps.example.com deletes its 1 App object(s): default/kept, and through their ownerReferences the children their operator made');
  expect(all.stderr.indexOf('deletes its 1 App')).toBeLessThan(all.stderr.indexOf('removed '));
  expect((await labelled(APP)).size).toBe(0);
  expect(await admin.request('GET', crdPath).then(() => true, (err) => (isApiError(err, 404) ? false : Promise.reject(err)))).toBe(false);
  // The cluster's own namespaces are untouched.
  for (const ns of ['default', 'kube-system']) await admin.request('GET', `/api/v1/namespaces/${ns}`);
}, 360_000);

test('GIVEN a webhook operator whose namespace exists already WHEN deploy THEN its webhook configurations come after the rollout and the namespace stays unlabelled; undeploy --include-crds leaves that namespace and nothing else', async () => {
  const MEMCACHED = 'memcached-operator';
  const NS = 'memcached-operator-system';
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const run = await deploy({ operators: MEMCACHED });
  if (run.code !== 0) throw new Error(failed(run));
  const lines = run.stderr.split('\n');
  expect(lines).toContain(`note: Namespace ${NS} existed before: applied without the ${DEPLOYED_BY_LABEL} label, so undeploy leaves it`);
  expect(run.stderr).toContain(`note: ${MEMCACHED}: webhook certificates are self-managed: the operator creates its CA and serving certificate in Secret ${NS}/${MEMCACHED}-webhook-tls`);
  const rolledOut = lines.findIndex((l) => l.startsWith(`Deployment ${NS}/${MEMCACHED}: rolled out`));
  expect(rolledOut).toBeGreaterThan(0);
  for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
    expect(lines.indexOf(`applied ${kind} ${MEMCACHED}-webhook (created)`)).toBeGreaterThan(rolledOut);
  }
  const namespace = await admin.request('GET', `/api/v1/namespaces/${NS}`);
  expect(namespace.metadata?.labels?.[DEPLOYED_BY_LABEL]).toBeUndefined();

  const gone = await undeploy({ operators: MEMCACHED, includeCrds: true });
  if (gone.code !== 0) throw new Error(failed(gone));
  expect((await labelled(MEMCACHED)).size).toBe(0);
  expect(gone.stderr).not.toContain(`removed Namespace ${NS}`);
  expect((await admin.request('GET', `/api/v1/namespaces/${NS}`)).metadata?.deletionTimestamp).toBeUndefined();
}, 360_000);

test('GIVEN an operator whose webhook certificates come from cert-manager WHEN deploy to a cluster without cert-manager THEN it stops before its first write, saying so', async () => {
  for (const dryRun of [true, false]) {
    const run = await deploy({ module: 'test/integration/fixtures/cert-manager-operator.ts', operators: undefined, dryRun });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: Issuer (cert-manager.io/v1) is not served by this API server: install cert-manager first (webhook.certificates is cert-manager)\n');
    expect(run.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  }
  expect(await admin.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/guardeds.guarded.example.com').then(() => true, (err) => (isApiError(err, 404) ? false : Promise.reject(err)))).toBe(false);
}, 120_000);

test('GIVEN an operator with a finalize hook and its CR in the operator namespace WHEN undeploy THEN it refuses, listing the CR, and deletes nothing; --delete-custom-resources finalizes and removes the CR first, then the rest', async () => {
  const SLOW_MODULE = 'test/integration/fixtures/slow-finalizer-operator.ts';
  const NS = 'slow-operator-system';
  const crPath = `/apis/slow.example.com/v1/namespaces/${NS}/slows/kept`;
  const deploymentPath = `/apis/apps/v1/namespaces/${NS}/deployments/slow-operator`;
  const deployed = await deploy({ module: SLOW_MODULE, operators: undefined });
  if (deployed.code !== 0) throw new Error(failed(deployed));
  // The operator as its pod would run it (kwok starts no container), with the deploy's own namespace.
  const stop = new AbortController();
  const running = runOperators({
    kubeConfig: plane.kubeConfig,
    operators: [new SlowFinalizerOperator(new App())],
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
    signal: stop.signal,
    stopOnSignals: [],
    logger: pino({ level: 'warn' }),
  });
  try {
    await admin.request('POST', `/apis/slow.example.com/v1/namespaces/${NS}/slows`, { body: { apiVersion: 'slow.example.com/v1', kind: 'Slow', metadata: { name: 'kept', namespace: NS }, spec: {} } });
    const finalizers = await eventually('the CR carries the runtime finalizer', async () => {
      const cr = await admin.request('GET', crPath);
      return (cr.metadata?.finalizers ?? []).length > 0 && cr.metadata!.finalizers!;
    });

    const refused = await undeploy({ module: SLOW_MODULE, operators: undefined });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('still carry finalizers, which only the running operator removes');
    expect(refused.stderr).toContain(`  Slow ${NS}/kept (finalizers: ${finalizers.join(', ')})`);
    expect(refused.stderr).toContain('--delete-custom-resources');
    expect(refused.stderr).not.toContain('removed ');
    expect(refused.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    expect((await admin.request('GET', `/api/v1/namespaces/${NS}`)).metadata?.deletionTimestamp).toBeUndefined();
    expect((await admin.request('GET', deploymentPath)).metadata?.deletionTimestamp).toBeUndefined();

    const removed = await undeploy({ module: SLOW_MODULE, operators: undefined, deleteCustomResources: true });
    if (removed.code !== 0) throw new Error(failed(removed));
    expect(removed.stderr).toContain(`note: kept CustomResourceDefinition slows.slow.example.com; deleting its 1 Slow object(s) first: ${NS}/kept, while the operator runs to finalize them`);
    expect(removed.stderr.indexOf('removed 1 custom resource(s)')).toBeGreaterThan(0);
    expect(removed.stderr.indexOf('removed 1 custom resource(s)')).toBeLessThan(removed.stderr.indexOf(`removed Deployment ${NS}/slow-operator`));
    expect(removed.stderr.indexOf(`removed Deployment ${NS}/slow-operator`)).toBeLessThan(removed.stderr.indexOf(`removed Namespace ${NS}`));
    expect([...(await labelled('slow-operator')).keys()]).toEqual(['CustomResourceDefinition slows.slow.example.com']);
    for (const path of [crPath, deploymentPath, `/api/v1/namespaces/${NS}`]) {
      expect({ path, exists: await admin.request('GET', path).then(() => true, (err) => (isApiError(err, 404) ? false : Promise.reject(err))) }).toEqual({ path, exists: false });
    }
  } finally {
    stop.abort();
    await running.catch(() => undefined);
  }
}, 360_000);
