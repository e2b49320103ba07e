/**
 * `cdk8s-operator dev` reloads on change (issue 21): run against the run's control plane
 * (`--kubeconfig`), on a fixture operator copied to a project of its own whose ConfigMap child takes its
 * labels from a second file. Editing that file reloads the operators: the new label reaches the child in
 * the API server and the printed diff names it. A syntax error then prints `file:line:col` and keeps the
 * previous version running: a deleted child is created again, with the labels of that version.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { TEST_KUBECONFIG_ENV, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { commandEnv } from '../support/run-command.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = join(REPO, 'test', 'integration', 'fixtures');
const CONFIG_MAP = '/api/v1/namespaces/dev-reload/configmaps/sample-config';
const WAIT = { timeoutMs: 240_000 };

let dir: string;
let admin: ApiClient;
let dev: ChildProcess | undefined;
let stderr = '';
const context = () => `\ndev's stderr:\n${stderr}`;

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'dev-reload-test' });
  // A project of its own: an ESM package whose packages are this checkout's (cdk8s, zod …); the SDK's
  // self-reference resolves through the checkout's tsconfig paths, as bin/cdk8s-operator.js sets them.
  dir = await mkdtemp(join(tmpdir(), 'dev-reload-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'reload-project', private: true, type: 'module' }));
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await copyFile(join(FIXTURES, 'reload-operator.ts'), join(dir, 'reload-operator.ts'));
  await copyFile(join(FIXTURES, 'reload-labels.ts'), join(dir, 'reload-labels.ts'));
});

afterAll(async () => {
  if (dev && dev.exitCode === null && dev.signalCode === null) {
    const exited = new Promise((resolve) => dev!.once('exit', resolve));
    dev.kill('SIGTERM');
    await exited;
  }
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 180_000);

const child = async (): Promise<KubeObject | undefined> =>
  (await admin.request('GET', CONFIG_MAP).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)))) as KubeObject | undefined;
const labelsOf = async (): Promise<Record<string, string> | undefined> => (await child())?.metadata?.labels;

test('GIVEN dev running on a project WHEN a file the operator imports changes THEN the child gets the new label and the diff is printed; a syntax error prints file:line:col and the previous version keeps reconciling', async () => {
  const args = [join(REPO, 'bin', 'cdk8s-operator.js'), 'dev', '--module', join(dir, 'reload-operator.ts'), '--kubeconfig', process.env[TEST_KUBECONFIG_ENV]!, '--log-level', 'warn'];
  dev = spawn(process.execPath, args, { cwd: dir, env: commandEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  dev.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));

  await eventually('dev watches the module and the file it imports', async () => stderr.includes('watching 2 file(s) for changes'), { ...WAIT, context });
  expect((await eventually('the first version labels the child', labelsOf, { ...WAIT, context })).tier).toBe('one');

  // An edit of the imported file: a new label.
  await writeFile(join(dir, 'reload-labels.ts'), "export const LABELS: Record<string, string> = { tier: 'one', color: 'blue' };\n");
  await eventually('the reloaded version labels the child color=blue', async () => (await labelsOf())?.color === 'blue', { ...WAIT, context });
  await eventually('the reload prints the child diff and its end', async () => /^reloaded in \d+\.\ds: 1 child changed$/m.test(stderr), { ...WAIT, context });
  expect(stderr).toMatch(/^reloading: reload-labels\.ts changed$/m);
  expect(stderr).toMatch(/^ {2}changed ConfigMap dev-reload\/sample-config:\n(?: {4}[+-].*\n)*? {4}\+ +color: blue$/m);

  // A syntax error: told with its file, line and column; the previous version stays.
  const failedBefore = stderr.split('reload failed:').length;
  await writeFile(join(dir, 'reload-labels.ts'), "export const LABELS: Record<string, string> = { tier: 'one',\n  color: ;\n};\n");
  await eventually('the failed reload is told', async () => stderr.split('reload failed:').length > failedBefore, { ...WAIT, context });
  expect(stderr).toContain(`reload failed: ${join(dir, 'reload-labels.ts')}:2:`);
  expect(stderr).toMatch(/^the previous version keeps running$/m);

  // It still reconciles: the child, deleted, is created again, with the labels of the running version.
  const deleted = (await child())?.metadata?.uid;
  await admin.request('DELETE', CONFIG_MAP);
  const recreated = await eventually('the previous version creates the child again', async () => {
    const now = await child();
    return now !== undefined && now.metadata?.uid !== deleted && now;
  }, { ...WAIT, context });
  expect(recreated.metadata?.labels?.color).toBe('blue');
  expect(dev.exitCode).toBeNull();
}, 600_000);
