/**
 * `cdk8s-operator dev --kubeconfig F --context C` against "your cluster": a control plane of its own,
 * reached through a kubeconfig whose current context points elsewhere (a server nothing listens on), so
 * a write to the context the user did not name would fail the run. dev prints the context before the
 * first write, installs the CRD, applies the app sample and the ConfigMap beside it, waits until it is
 * Ready, and on exit removes what it created (not the `default` namespace, which was there); `--keep`
 * leaves it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { isApiError } from '../../lib/runtime/client/kube-client.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { writeOtherContextKubeconfig } from '../support/kubeconfig-files.js';
import { type CommandResult, commandEnv, runCommand } from '../support/run-command.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/apps.apps.example.com';
const CONFIG_MAP = '/api/v1/namespaces/default/configmaps/hello-settings';
const APP = '/apis/apps.example.com/v1alpha1/namespaces/default/apps/hello';

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  plane = await startControlPlane();
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'dev-user-cluster-'));
  // The plane's context, renamed `mine`, beside a current context `elsewhere` that reaches nothing.
  kubeconfig = await writeOtherContextKubeconfig(plane.kubeconfigPath, join(dir, 'kubeconfig.yaml'));
}, 10 * 60_000);

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function dev(extra: string[]): Promise<CommandResult> {
  const args = ['bin/cdk8s-operator.js', 'dev', '--once', '--kubeconfig', kubeconfig, '--context', 'mine', '--operators', 'app-operator', '--timeout', '180s', ...extra];
  return runCommand(process.execPath, args, { cwd: REPO, timeoutMs: 300_000, env: commandEnv({ CDK8S_OPERATOR_TEST_KUBECONFIG: '' }) });
}

const exists = (path: string) => admin.request('GET', path).then(() => true, (err) => (isApiError(err, 404) ? false : Promise.reject(err)));

test('GIVEN --kubeconfig and --context WHEN dev --once THEN it says where it writes first, the sample becomes Ready, and what it created is removed on exit', async () => {
  const result = await dev([]);
  if (result.code !== 0) throw new Error(`exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  const lines = result.stderr.split('\n');
  const using = lines.findIndex((l) => l.startsWith(`using your cluster: context mine, cluster `) && l.includes(plane.server));
  expect(using).toBeGreaterThanOrEqual(0);
  expect(using).toBeLessThan(lines.findIndex((l) => l.startsWith('installed ')));
  expect(result.stdout).toMatch(/^App default\/hello\s{2,}True\s/m);
  // The ConfigMap beside the CR was applied before it.
  expect(lines.indexOf('applied ConfigMap default/hello-settings')).toBeLessThan(lines.indexOf('applied App default/hello'));
  for (const removed of ['App default/hello', 'ConfigMap default/hello-settings', 'CustomResourceDefinition apps.apps.example.com']) {
    expect(lines).toContain(`removed ${removed}`);
  }
  expect(lines.some((l) => l.includes('removed Namespace default'))).toBe(false);
  expect({ crd: await exists(CRD), configMap: await exists(CONFIG_MAP), defaultNamespace: await exists('/api/v1/namespaces/default') }).toEqual({ crd: false, configMap: false, defaultNamespace: true });
}, 360_000);

test('GIVEN --keep WHEN dev --once ends THEN the CRD, the sample and its ConfigMap stay', async () => {
  const result = await dev(['--keep']);
  if (result.code !== 0) throw new Error(`exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  expect(result.stderr).not.toContain('removed ');
  expect({ crd: await exists(CRD), configMap: await exists(CONFIG_MAP), app: await exists(APP) }).toEqual({ crd: true, configMap: true, app: true });
}, 360_000);

test('GIVEN --context naming no context WHEN dev runs THEN exit 1 naming the contexts there are, before any write', async () => {
  const result = await runCommand(process.execPath, ['bin/cdk8s-operator.js', 'dev', '--once', '--kubeconfig', kubeconfig, '--context', 'nope'], { cwd: REPO, timeoutMs: 120_000, env: commandEnv({ CDK8S_OPERATOR_TEST_KUBECONFIG: '' }) });
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('error: --context nope: no such context in the kubeconfig; known: mine, elsewhere');
}, 180_000);
