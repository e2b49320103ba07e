/**
 * `cdk8s-operator dev` reloads on change (issue 21): run against the run's control plane
 * (`--kubeconfig`), on a fixture operator copied to a project of its own whose ConfigMap child takes its
 * labels from a second file. Editing that file reloads the operators: the new label reaches the child in
 * the API server and the printed diff names it. A syntax error then prints `file:line:col` and keeps the
 * previous version running: a deleted child is created again, with the labels of that version. A
 * reload whose CRD the API server refuses (the stored version v1 renamed v2) prints the server's words
 * and keeps the previous version running: a CR created after the refusal becomes Ready. A reload that
 * passes that check and whose process then crashes at start is told, and the previous version starts
 * again: a CR created after it gets its child, with that version's labels.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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

let admin: ApiClient;
const dirs: string[] = [];
const devs: ChildProcess[] = [];

/** A project of its own holding `fixture` and reload-labels.ts: an ESM package whose packages are this checkout's (cdk8s, zod …); the SDK's self-reference resolves through the checkout's tsconfig paths, as bin/cdk8s-operator.js sets them. */
async function project(fixture: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dev-reload-'));
  dirs.push(dir);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'reload-project', private: true, type: 'module' }));
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await copyFile(join(FIXTURES, fixture), join(dir, fixture));
  await copyFile(join(FIXTURES, 'reload-labels.ts'), join(dir, 'reload-labels.ts'));
  return dir;
}

/** `dev --module <dir>/<fixture>` against the run's control plane; `stderr()` is what it printed so far. */
function startDev(dir: string, fixture: string): { process: ChildProcess; stderr: () => string } {
  const args = [join(REPO, 'bin', 'cdk8s-operator.js'), 'dev', '--module', join(dir, fixture), '--kubeconfig', process.env[TEST_KUBECONFIG_ENV]!, '--log-level', 'warn'];
  const dev = spawn(process.execPath, args, { cwd: dir, env: commandEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  devs.push(dev);
  let stderr = '';
  dev.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return { process: dev, stderr: () => stderr };
}

beforeAll(() => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'dev-reload-test' });
});

afterAll(async () => {
  // dev removes what it created in the cluster when it ends (SIGTERM, as Ctrl-C).
  await Promise.all(devs.filter((dev) => dev.exitCode === null && dev.signalCode === null).map((dev) => {
    const exited = new Promise((resolve) => dev.once('exit', resolve));
    dev.kill('SIGTERM');
    return exited;
  }));
  admin?.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
}, 180_000);

const read = (path: string): Promise<KubeObject | undefined> =>
  admin.request('GET', path).then((o) => o as KubeObject, (err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));

const child = (): Promise<KubeObject | undefined> => read(CONFIG_MAP);
const labelsOf = async (): Promise<Record<string, string> | undefined> => (await child())?.metadata?.labels;

test('GIVEN dev running on a project WHEN a file the operator imports changes THEN the child gets the new label and the diff is printed; a syntax error prints file:line:col and the previous version keeps reconciling', async () => {
  const dir = await project('reload-operator.ts');
  const dev = startDev(dir, 'reload-operator.ts');
  const context = () => `\ndev's stderr:\n${dev.stderr()}`;

  await eventually('dev watches the module and the file it imports', async () => dev.stderr().includes('watching 2 file(s) for changes'), { ...WAIT, context });
  expect((await eventually('the first version labels the child', labelsOf, { ...WAIT, context })).tier).toBe('one');

  // An edit of the imported file: a new label.
  await writeFile(join(dir, 'reload-labels.ts'), "export const LABELS: Record<string, string> = { tier: 'one', color: 'blue' };\n");
  await eventually('the reloaded version labels the child color=blue', async () => (await labelsOf())?.color === 'blue', { ...WAIT, context });
  await eventually('the reload prints the child diff and its end', async () => /^reloaded in \d+\.\ds \(load [\d.]+s, stop [\d.]+s, start [\d.]+s, reconcile [\d.]+s\): 1 child changed$/m.test(dev.stderr()), { ...WAIT, context });
  expect(dev.stderr()).toMatch(/^reloading: reload-labels\.ts changed$/m);
  expect(dev.stderr()).toMatch(/^ {2}changed ConfigMap dev-reload\/sample-config:\n(?: {4}[+-].*\n)*? {4}\+ +color: blue$/m);

  // A syntax error: told with its file, line and column; the previous version stays.
  const failedBefore = dev.stderr().split('reload failed:').length;
  await writeFile(join(dir, 'reload-labels.ts'), "export const LABELS: Record<string, string> = { tier: 'one',\n  color: ;\n};\n");
  await eventually('the failed reload is told', async () => dev.stderr().split('reload failed:').length > failedBefore, { ...WAIT, context });
  expect(dev.stderr()).toContain(`reload failed: ${join(dir, 'reload-labels.ts')}:2:`);
  expect(dev.stderr()).toMatch(/^the previous version keeps running$/m);

  // It still reconciles: the child, deleted, is created again, with the labels of the running version.
  const deleted = (await child())?.metadata?.uid;
  await admin.request('DELETE', CONFIG_MAP);
  const recreated = await eventually('the previous version creates the child again', async () => {
    const now = await child();
    return now !== undefined && now.metadata?.uid !== deleted && now;
  }, { ...WAIT, context });
  expect(recreated.metadata?.labels?.color).toBe('blue');
  expect(dev.process.exitCode).toBeNull();
}, 600_000);

test('GIVEN dev running an operator with an admission webhook WHEN a file its hook imports changes THEN the API server calls the new version\'s hook', async () => {
  const dir = await project('reload-webhook-operator.ts');
  const dev = startDev(dir, 'reload-webhook-operator.ts');
  const context = () => `\ndev's stderr:\n${dev.stderr()}`;
  const collection = '/apis/reloadhook.example.com/v1/namespaces/dev-reload-hook/reloadedhooks';

  await eventually('dev watches the module and the file it imports', async () => dev.stderr().includes('watching 2 file(s) for changes'), { ...WAIT, context });
  const first = await eventually('the first version\'s hook labelled the sample', async () => (await read(`${collection}/sample`))?.metadata?.labels, { ...WAIT, context });
  expect(first.tier).toBe('one');
  const served = (dev.stderr().match(/^serving webhooks on (https:\/\/127\.0\.0\.1:\d+):/m) ?? [])[1];
  expect(served).toBeDefined();

  await writeFile(join(dir, 'reload-labels.ts'), "export const LABELS: Record<string, string> = { tier: 'two' };\n");
  await eventually('the reload ends', async () => /^reloaded in \d+\.\ds /m.test(dev.stderr()), { ...WAIT, context });
  // Served anew, by the new version, and the configuration points there.
  const servedAgain = [...dev.stderr().matchAll(/^serving webhooks on (https:\/\/127\.0\.0\.1:\d+):/gm)].map((m) => m[1]);
  expect(servedAgain.length).toBe(2);
  const created = (await admin.request('POST', collection, {
    body: { apiVersion: 'reloadhook.example.com/v1', kind: 'ReloadedHook', metadata: { name: 'after-reload' }, spec: {} },
  })) as KubeObject;
  expect(created.metadata?.labels?.tier).toBe('two');
  expect(dev.process.exitCode).toBeNull();
  await admin.request('DELETE', `${collection}/after-reload`); // while its operator runs to finalize it
}, 600_000);

test('GIVEN dev running WHEN a reload renames the stored version THEN the API server\'s refusal is printed and the previous version keeps reconciling a CR created after it', async () => {
  // The reload fixture under a group, name and namespace of its own (the test above's dev still runs).
  const dir = await project('reload-operator.ts');
  const source = (await readFile(join(dir, 'reload-operator.ts'), 'utf8'))
    .replaceAll('reload.example.com', 'refuse.example.com')
    .replaceAll("'reloaded-operator'", "'refused-operator'")
    .replaceAll("namespace: 'dev-reload'", "namespace: 'dev-refuse'");
  await writeFile(join(dir, 'reload-operator.ts'), source);
  const dev = startDev(dir, 'reload-operator.ts');
  const context = () => `\ndev's stderr:\n${dev.stderr()}`;
  const crs = '/apis/refuse.example.com/v1/namespaces/dev-refuse/reloadeds';
  await eventually('dev watches the module and the file it imports', async () => dev.stderr().includes('watching 2 file(s) for changes'), { ...WAIT, context });
  await eventually('the sample is reconciled', async () => (await read('/api/v1/namespaces/dev-refuse/configmaps/sample-config')) !== undefined, { ...WAIT, context });

  // v1 holds the stored objects: a CRD without it is refused by the API server.
  await writeFile(join(dir, 'reload-operator.ts'), source.replaceAll("version: 'v1'", "version: 'v2'").replaceAll('refuse.example.com/v1', 'refuse.example.com/v2'));
  await eventually('the refused reload is told', async () => /^the previous version keeps running$/m.test(dev.stderr()), { ...WAIT, context });
  expect(dev.stderr()).toMatch(/^reload failed: CRD reloadeds\.refuse\.example\.com: the API server refused it \(422 Invalid\): .*status\.storedVersions\[0\]: Invalid value: "v1": (must appear in spec\.versions|missing from spec\.versions)/m);
  expect(dev.stderr()).not.toContain('no operators run until the next change');

  await admin.request('POST', crs, { body: { apiVersion: 'refuse.example.com/v1', kind: 'Reloaded', metadata: { name: 'after', namespace: 'dev-refuse' }, spec: { text: 'after' } } });
  await eventually('the previous version makes the new CR Ready', async () => {
    const cr = await read(`${crs}/after`);
    return ((cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  }, { ...WAIT, context });
  expect(dev.process.exitCode).toBeNull();
}, 600_000);

test('GIVEN dev running WHEN a reload passes the CRD check and then its process crashes at start THEN the failure is printed and the previous version starts again and reconciles a CR created after it', async () => {
  // The reload fixture under a group, name and namespace of its own.
  const dir = await project('reload-operator.ts');
  const source = (await readFile(join(dir, 'reload-operator.ts'), 'utf8'))
    .replaceAll('reload.example.com', 'crash.example.com')
    .replaceAll("'reloaded-operator'", "'crashed-operator'")
    .replaceAll("namespace: 'dev-reload'", "namespace: 'dev-crash'");
  await writeFile(join(dir, 'reload-operator.ts'), source);
  const dev = startDev(dir, 'reload-operator.ts');
  const context = () => `\ndev's stderr:\n${dev.stderr()}`;
  const crs = '/apis/crash.example.com/v1/namespaces/dev-crash/reloadeds';
  await eventually('dev watches the module and the file it imports', async () => dev.stderr().includes('watching 2 file(s) for changes'), { ...WAIT, context });
  await eventually('the sample is reconciled', async () => (await read('/api/v1/namespaces/dev-crash/configmaps/sample-config')) !== undefined, { ...WAIT, context });

  // The new version loads and its CRD is the same (the dry-run passes); its process throws when told to start.
  const crashing = `${source.replace("{ tier: 'one' }", "{ tier: 'two' }")}
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'start') throw new Error('crashed-operator throws at start');
});
`;
  await writeFile(join(dir, 'reload-operator.ts'), crashing);
  await eventually('the failed start is told', async () => /^the previous version keeps running \(started again\)$/m.test(dev.stderr()), { ...WAIT, context });
  expect(dev.stderr()).toMatch(/^reload failed: the new version did not start: the operators process exited \(code 1\)$/m);
  expect(dev.stderr()).not.toContain('no operators run until the next change');

  // The previous version reconciles: a CR created now gets its child, with that version's labels.
  await admin.request('POST', crs, { body: { apiVersion: 'crash.example.com/v1', kind: 'Reloaded', metadata: { name: 'after', namespace: 'dev-crash' }, spec: { text: 'after' } } });
  await eventually('the previous version makes the new CR Ready', async () => {
    const cr = await read(`${crs}/after`);
    return ((cr?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  }, { ...WAIT, context });
  const children = (await admin.request('GET', '/api/v1/namespaces/dev-crash/configmaps')) as { items: KubeObject[] };
  const ofAfter = children.items.filter((c) => c.metadata?.ownerReferences?.some((o) => o.name === 'after'));
  expect(ofAfter.length).toBe(1);
  expect(ofAfter[0].metadata?.labels?.tier).toBe('one');
  expect(dev.process.exitCode).toBeNull();
}, 600_000);
