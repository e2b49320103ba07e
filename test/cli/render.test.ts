import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jest } from '@jest/globals';
import { parseAllDocuments } from 'yaml';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'cdk8s-operator.js');
const sample = (name: string) => join(root, 'operators', name, 'sample.yaml');
const fixture = (name: string) => join(root, 'test', 'cli', 'fixtures', name);

interface Result { code: number | null; stdout: string; stderr: string }

/** Runs `node bin/cdk8s-operator.js …` as a child process, like a user would. */
function cli(args: string[], options: { stdin?: string; cwd?: string } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env: { ...process.env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

function documents(yaml: string): Record<string, any>[] {
  return parseAllDocuments(yaml).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS();
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'render-test-'));
function file(name: string, content: string): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

// Each test spawns the CLI, which compiles the sources with tsx: seconds on an idle machine, minutes on an
// overloaded one. A guard against a hang, not a timing assertion.
jest.setTimeout(300_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('cdk8s-operator render', () => {
  test.concurrent.each([
    ['memcached', ['Deployment', 'Service']],
    ['app', ['ConfigMap', 'Deployment', 'Ingress', 'Service']],
    ['database', ['CronJob', 'PersistentVolumeClaim', 'PodDisruptionBudget', 'Secret', 'Service', 'StatefulSet']],
  ])('GIVEN the %s sample WHEN rendered THEN stdout is its children as YAML, exit 0', async (name, kinds) => {
    const result = await cli(['render', '-f', sample(name)]);
    // The examples return a status: one note line on stderr, never an error.
    expect(result.stderr).toMatch(/^(note: [^\n]* status \{[^\n]*\n)$/);
    expect(result.code).toBe(0);
    const objects = documents(result.stdout);
    expect(objects.map((o) => o.kind).sort()).toEqual(kinds);
    for (const object of objects) {
      expect(object.metadata.namespace).toBe('default');
      expect(object.metadata.ownerReferences).toEqual([expect.objectContaining({ controller: true, blockOwnerDeletion: true })]);
    }
  });

  test.concurrent('GIVEN the same file WHEN rendered twice THEN the output is identical (stand-in uid is deterministic)', async () => {
    const [first, second] = await Promise.all([cli(['render', '-f', sample('database')]), cli(['render', '-f', sample('database')])]);
    expect(second.stdout).toBe(first.stdout);
    const uids = new Set(documents(first.stdout).map((o) => o.metadata.ownerReferences[0].uid));
    expect(uids.size).toBe(1);
    expect([...uids][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  test.concurrent('GIVEN -f twice WHEN rendered THEN the children of both files come out, file by file', async () => {
    const result = await cli(['render', '-f', sample('memcached'), '-f', sample('app')]);
    expect(result.code).toBe(0);
    const owners = documents(result.stdout).map((o) => o.metadata.ownerReferences[0].kind);
    expect(owners).toEqual(['Memcached', 'Memcached', 'App', 'App', 'App', 'App']);
  });

  test.concurrent('GIVEN a value a YAML 1.1 reader would misread WHEN rendered THEN it is quoted', async () => {
    const result = await cli(['render', '-f', sample('app')]);
    expect(result.stdout).toContain('- name: FEATURE_X\n              value: "on"\n');
  });

  test.concurrent('GIVEN several CRs on stdin (-f -) WHEN rendered THEN their children come out CR by CR, each sorted by apiVersion, kind, name', async () => {
    const stdin = [sample('memcached'), sample('app')].map((p) => readFileSync(p, 'utf8')).join('---\n');
    const result = await cli(['render', '-f', '-'], { stdin });
    expect(result.code).toBe(0);
    expect(documents(result.stdout).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Deployment/memcached-sample', 'Service/memcached-sample',
      'Deployment/hello', 'Ingress/hello', 'ConfigMap/hello-config', 'Service/hello',
    ]);
  });

  test.concurrent('GIVEN -o json WHEN rendered THEN stdout is one v1 List of the children', async () => {
    const result = await cli(['render', '-f', sample('memcached'), '-o', 'json']);
    expect(result.code).toBe(0);
    const list = JSON.parse(result.stdout);
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map((o: { kind: string }) => o.kind)).toEqual(['Deployment', 'Service']);
  });

  test.concurrent('GIVEN a CR without a namespace and -n WHEN rendered THEN the children land in that namespace', async () => {
    const cr = 'apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: c\nspec:\n  size: 1\n';
    const result = await cli(['render', '-f', '-', '-n', 'team-a'], { stdin: cr });
    expect(result.code).toBe(0);
    expect(documents(result.stdout).map((o) => o.metadata.namespace)).toEqual(['team-a', 'team-a']);
  });

  test.concurrent('GIVEN invalid CRs among valid ones WHEN rendered THEN every bad field is named, exit 2, and stdout is empty', async () => {
    const bad = file('bad.yaml', [
      readFileSync(sample('memcached'), 'utf8'),
      'apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: too-big\nspec:\n  size: 101\n',
      'apiVersion: databases.example.com/v1alpha1\nkind: Database\nmetadata:\n  name: db\nspec:\n  version: 16\n  storageSize: lots\n',
    ].join('---\n'));
    const result = await cli(['render', '-f', bad]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'error: Memcached/too-big: spec.size: Too big: expected number to be <=100',
      'error: Database/db: spec.version: Invalid option: expected one of "15"|"16"',
      expect.stringMatching(/^error: Database\/db: spec\.storageSize: Invalid string: must match pattern /),
    ]);
  });

  test.concurrent('GIVEN a CR of a kind no operator handles WHEN rendered THEN one clear line, exit 1, empty stdout', async () => {
    const result = await cli(['render', '-f', '-'], { stdin: 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec: {}\n' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: no custom resource in the input \(no operator for kind Widget \(example\.com\/v1\)\); known kinds: Memcached \(cache\.example\.com\/v1beta1\), App .*\n$/);
  });

  test.concurrent('GIVEN YAML that does not parse WHEN rendered THEN one line with the position, exit 1, empty stdout', async () => {
    const result = await cli(['render', '-f', file('broken.yaml', 'apiVersion: v1\nkind: [Memcached\nmetadata: {}\n')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: .*broken\.yaml:\d+:\d+: invalid YAML: [^\n]+\n$/);
  });

  test.concurrent('GIVEN a missing file or a non-object document WHEN rendered THEN one line, exit 1', async () => {
    const missing = await cli(['render', '-f', join(tmp, 'nope.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: cannot read .*nope\.yaml: ENOENT[^\n]*\n$/);
    const list = await cli(['render', '-f', '-'], { stdin: '- a\n- b\n' });
    expect(list.code).toBe(1);
    expect(list.stderr).toBe('error: <stdin>: document 1 is not a Kubernetes object (apiVersion and kind are required)\n');
  });

  test.concurrent('GIVEN --module with a user operator (named or default export) WHEN rendered THEN its children come out', async () => {
    for (const module of ['echo-operator.ts', 'default-export.ts']) {
      const result = await cli(['render', '--module', `test/cli/fixtures/${module}`, '-f', fixture('echo.yaml')]);
      expect(result.stderr).toBe('note: Echo demo/hello: status {"url":"http://hello-service.demo.svc/","text":"hello, world"}\n');
      expect(result.code).toBe(0);
      expect(documents(result.stdout).map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['Deployment/demo/hello-server', 'Service/demo/hello-service']);
    }
  });

  test.concurrent('GIVEN the Render page Echo with textFrom WHEN rendered with and without its ConfigMap in -f THEN it answers the ConfigMap\'s text, or exits 1 naming the missing ConfigMap', async () => {
    const echo = 'apiVersion: demo.example.com/v1\nkind: Echo\nmetadata: { name: hello, namespace: demo }\nspec: { text: fallback, textFrom: { configMapName: greeting } }\n';
    const configMap = '---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: greeting, namespace: demo }\ndata: { text: from the ConfigMap }\n';
    const withIt = await cli(['render', '--module', 'test/cli/fixtures/echo-operator.ts', '-f', '-'], { stdin: echo + configMap });
    expect(withIt.code).toBe(0);
    const deployment = documents(withIt.stdout).find((o) => o.kind === 'Deployment');
    expect(JSON.stringify(deployment)).toContain('"-text=from the ConfigMap"');
    expect(withIt.stderr).toContain('"text":"from the ConfigMap"');
    const without = await cli(['render', '--module', 'test/cli/fixtures/echo-operator.ts', '-f', '-'], { stdin: echo });
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/^error: render Echo demo\/hello: ConfigMap demo\/greeting \(spec\.textFrom\.configMapName\) not found \(add it with -f\)\n$/);
  });

  test.concurrent('GIVEN --module without addOperators or --operator naming no operator WHEN rendered THEN one line, exit 1', async () => {
    const noAdd = await cli(['render', '--module', fixture('no-add-operators.ts'), '-f', fixture('echo.yaml')]);
    expect(noAdd.code).toBe(1);
    expect(noAdd.stderr).toMatch(/no-add-operators\.ts: the module must export `addOperators/);
    const unknown = await cli(['render', '--operator', 'nope', '-f', sample('memcached')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: no operator named nope; known: memcached-operator, app-operator, database-operator\n');
  });

  test.concurrent('GIVEN --operator naming the right operator WHEN rendered THEN it is used', async () => {
    const result = await cli(['render', '--operator', 'memcached-operator', '-f', sample('memcached')]);
    expect(result.code).toBe(0);
    expect(documents(result.stdout)).toHaveLength(2);
  });
});
