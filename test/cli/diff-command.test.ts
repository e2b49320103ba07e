// `cdk8s-operator diff`'s input side, without a cluster: every bad flag or input ends with exit 2 and one
// `error:` line before any request is sent (the kubeconfig names a server nothing listens on, so a request
// would fail differently); the --context switch; the server's message found through a cause chain.
// What the command does against a cluster is in test/integration/diff-command.test.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT_USAGE, type DiffOptions, runDiff, serverMessageOf } from '../../lib/cli/diff-command.js';
import { useContext } from '../../lib/cli/kubeconfig-context.js';
import { loadKubeConfig } from '../../lib/cli/kubeconfig-loader.js';
import type { RequestRecord } from '../../lib/runtime/client/api-client.js';
import { ApiError } from '../../lib/runtime/client/kube-client.js';
import { ReconcileError } from '../../lib/runtime/errors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'test/integration/fixtures/diff-operators.ts';
const tmp = mkdtempSync(join(tmpdir(), 'diff-command-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

// Two contexts on two servers on which nothing listens (port 1).
const KUBECONFIG = file('kubeconfig', `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: { server: 'https://127.0.0.1:1' }
- name: two
  cluster: { server: 'https://127.0.0.2:1' }
users:
- name: u
  user: { token: t }
contexts:
- name: first
  context: { cluster: one, user: u }
- name: second
  context: { cluster: two, user: u }
current-context: first
`);

const memcached = (spec: string) => `apiVersion: cache.example.com/v1beta1\nkind: Memcached\nmetadata:\n  name: demo\nspec:\n${spec}\n`;

interface Result { code: number; stdout: string; stderr: string; requests: RequestRecord[] }

async function diff(options: Partial<DiffOptions>): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const requests: RequestRecord[] = [];
  const code = await runDiff({ module: MODULE, kubeconfig: KUBECONFIG, ...options }, {
    cwd: root,
    readStdin: async () => '',
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
    env: {},
    onRequest: (record) => requests.push(record),
  });
  return { code, stdout, stderr, requests };
}

test.each([
  ['an unreadable file', () => ({ filename: [join(tmp, 'missing.yaml')] }), /^error: cannot read .*missing\.yaml: .*ENOENT/],
  ['a YAML syntax error', () => ({ filename: [file('bad.yaml', 'a: [\n')] }), /^error: .*bad\.yaml:\d+:\d+: invalid YAML/],
  ['no custom resource in the files', () => ({ filename: [file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n')] }), /^error: no custom resource in the input; known kinds: Memcached \(cache\.example\.com\/v1beta1\), Exposer/m],
  ['an invalid custom resource', () => ({ filename: [file('invalid.yaml', memcached('  replicas: 0'))] }), /^error: Memcached\/demo: spec\.replicas: .*>=1/m],
  ['an unknown operator', () => ({ operators: 'nope' }), /^error: unknown operator\(s\) nope; known: memcached-operator, exposer-operator$/m],
  ['an operators module that does not load', () => ({ module: 'test/integration/fixtures/missing.ts' }), /^error: .*missing\.ts/],
  ['an unreadable kubeconfig', () => ({ kubeconfig: join(tmp, 'no-kubeconfig') }), /^error: kubeconfig .*no-kubeconfig: ENOENT/],
  ['an unknown --context', () => ({ context: 'third' }), /^error: --context third: no such context in the kubeconfig; known: first, second$/m],
])('GIVEN %s THEN exit 2 with an error line, and no request was sent', async (_what, options, message) => {
  const result = await diff(options());
  expect(result.code).toBe(EXIT_USAGE);
  expect(result.stderr).toMatch(message);
  expect(result.stdout).toBe('');
  expect(result.requests).toEqual([]);
});

test('GIVEN -f with a document of another kind beside the CR THEN it is ignored with a note (and the CR is looked up in the cluster)', async () => {
  const result = await diff({ filename: [file('mixed.yaml', `${memcached('  replicas: 1')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n`)] });
  expect(result.stderr).toMatch(/^note: .*mixed\.yaml: document 2: ConfigMap \(v1\) is no custom resource of memcached-operator, exposer-operator; ignored$/m);
  // nothing listens: the CR's GET fails, which is a failure against the cluster (3), not bad input
  expect(result.code).toBe(3);
  expect(result.stderr).toMatch(/^error: Memcached default\/demo: cannot read it from the cluster: /m);
  expect(result.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /apis/cache.example.com/v1beta1/namespaces/default/memcacheds/demo']);
});

test('GIVEN --context second THEN the current cluster of the kubeconfig is the one of that context; an unknown context throws naming the known ones', async () => {
  const kubeConfig = await loadKubeConfig(KUBECONFIG, {});
  expect(kubeConfig.getCurrentCluster()?.server).toBe('https://127.0.0.1:1');
  useContext(kubeConfig, 'second');
  expect(kubeConfig.getCurrentCluster()?.server).toBe('https://127.0.0.2:1');
  expect(() => useContext(kubeConfig, 'third')).toThrow('--context third: no such context in the kubeconfig; known: first, second');
});

test('GIVEN a refused apply wrapped by the runtime THEN serverMessageOf gives the Status message the API server wrote; other errors their first line', () => {
  const status = { kind: 'Status', message: 'Service "x" is invalid: spec.ports[0].port: Invalid value: 70000' };
  const api = new ApiError('PATCH', '/api/v1/namespaces/d/services/x', 422, 'Invalid', status, status.message);
  expect(serverMessageOf(new ReconcileError('ApplyFailed', `patch Service d/x: 422 Invalid: ${status.message}`, { cause: api }))).toBe(status.message);
  expect(serverMessageOf(new ApiError('GET', '/x', 500, 'InternalError', undefined, 'boom'))).toBe('500 InternalError');
  expect(serverMessageOf(new Error('connect ECONNREFUSED 127.0.0.1:1\nmore'))).toBe('connect ECONNREFUSED 127.0.0.1:1');
});

/** `node bin/cdk8s-operator.js …`, as a user runs it. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'cdk8s-operator.js'), ...args], { cwd: root, env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Spawns the CLI, which compiles the sources with tsx: seconds on an idle machine, more on a busy one.
test('GIVEN the CLI WHEN diff gets an unknown flag THEN exit 2 (1 means differences); --help lists the flags and exit codes with 0', async () => {
  const bad = await cli(['diff', '--no-such-flag']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("unknown option '--no-such-flag'");
  const help = await cli(['diff', '--help']);
  expect(help.code).toBe(0);
  for (const flag of ['--filename', '--operators', '--module', '--namespace', '--kubeconfig', '--context']) expect(help.stdout).toContain(flag);
  expect(help.stdout).toContain('Exit codes: 0 nothing would change, 1 something would, 2 bad flags or input, 3');
}, 120_000);
