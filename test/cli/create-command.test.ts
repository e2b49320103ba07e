import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCreateOperator, type CreateOperatorOptions } from '../../lib/cli/create-command.js';
import { runInit } from '../../lib/cli/init-command.js';
import { IMPORTS_MARKER, OPERATORS_MARKER } from '../../lib/cli/scaffold/operators-index.js';

let root: string;
let project: string;

const io = () => {
  const out = { stdout: '', stderr: '' };
  return { out, io: { writeStdout: (t: string) => (out.stdout += t), writeStderr: (t: string) => (out.stderr += t), cwd: root } };
};

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'create-command-'));
  project = join(root, 'shop');
  expect(await runInit({ dir: 'shop', install: false }, io().io)).toBe(0);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function create(options: CreateOperatorOptions) {
  const { out, io: createIo } = io();
  const code = await runCreateOperator({ dir: 'shop', ...options }, createIo);
  return { code, ...out };
}

const read = (path: string) => readFileSync(join(project, path), 'utf8');

describe('create operator', () => {
  test('GIVEN an init project WHEN create --kind Cache THEN its files are written and it is registered at both markers', async () => {
    const result = await create({ kind: 'Cache' });

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('created the Cache operator (shop.example.com/v1alpha1, cache-operator)');
    for (const file of ['operators/cache/index.ts', 'operators/cache/sample.yaml', 'test/cache.test.ts']) expect(existsSync(join(project, file))).toBe(true);
    const lines = read('operators/index.ts').split('\n');
    const at = (line: string) => lines.findIndex((l) => l.trim() === line);
    expect(at("import { CacheOperator } from './cache';")).toBe(at(IMPORTS_MARKER) - 1);
    expect(at("import { WebAppOperator } from './web-app';")).toBe(at(IMPORTS_MARKER) - 2);
    expect(lines[at(OPERATORS_MARKER) - 1]).toBe('    new CacheOperator(scope, { deployment }),');
    expect(lines[at(OPERATORS_MARKER) - 2]).toBe('    new WebAppOperator(scope, { deployment }),');
  });

  test('GIVEN --group and --version WHEN create THEN the operator uses them', async () => {
    expect((await create({ kind: 'Queue', group: 'messaging.acme.io', version: 'v2' })).code).toBe(0);

    expect(read('operators/queue/index.ts')).toContain("group: 'messaging.acme.io',\n      version: 'v2',\n      kind: 'Queue',");
    expect(read('operators/queue/sample.yaml')).toContain('apiVersion: messaging.acme.io/v2\nkind: Queue\n');
  });

  test('GIVEN two creates WHEN both succeed THEN the operators are registered in creation order', async () => {
    await create({ kind: 'Cache' });
    await create({ kind: 'Queue' });

    const source = read('operators/index.ts');
    expect(source.indexOf('new WebAppOperator')).toBeLessThan(source.indexOf('new CacheOperator'));
    expect(source.indexOf('new CacheOperator')).toBeLessThan(source.indexOf('new QueueOperator'));
  });

  test('GIVEN an existing kind WHEN create THEN exit 1 and nothing changes', async () => {
    const before = read('operators/index.ts');

    const result = await create({ kind: 'WebApp' });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('an operator for WebApp exists already: operators/web-app');
    expect(read('operators/index.ts')).toBe(before);
  });

  test('GIVEN a kind whose kebab-case clashes (HTTPRoute, HttpRoute) WHEN the second is created THEN it is refused', async () => {
    expect((await create({ kind: 'HTTPRoute' })).code).toBe(0);
    const result = await create({ kind: 'HttpRoute' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('operators/http-route');
  });

  test.each([IMPORTS_MARKER, OPERATORS_MARKER])('GIVEN operators/index.ts without %s WHEN create THEN exit 1 naming it, nothing written', async (marker) => {
    await writeFile(join(project, 'operators/index.ts'), read('operators/index.ts').replace(marker, ''));

    const result = await create({ kind: 'Cache' });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`operators/index.ts has no line \`${marker}\``);
    expect(existsSync(join(project, 'operators/cache'))).toBe(false);
    expect(existsSync(join(project, 'test/cache.test.ts'))).toBe(false);
  });

  test('GIVEN an invalid --kind WHEN create THEN exit 2 naming the flag', async () => {
    const result = await create({ kind: 'cache' });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--kind "cache" must be CamelCase');
  });

  test('GIVEN a directory without operators/index.ts WHEN create THEN exit 1 saying to run init', async () => {
    const result = await create({ kind: 'Cache', dir: '.' });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('has no operators/index.ts: run `cdk8s-operator init` first');
  });

  test('GIVEN package.json without a usable name and no --group WHEN create THEN exit 2 asking for --group', async () => {
    await writeFile(join(project, 'package.json'), '{"name":"@acme/shop"}');

    const result = await create({ kind: 'Cache' });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--group is required');
    expect(await readFile(join(project, 'operators/index.ts'), 'utf8')).not.toContain('Cache');
  });
});
