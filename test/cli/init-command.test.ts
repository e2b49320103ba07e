import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runInit, type InitOptions } from '../../lib/cli/init-command.js';
import { IMPORTS_MARKER, OPERATORS_MARKER } from '../../lib/cli/scaffold/operators-index.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'init-command-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function init(options: InitOptions, npmInstall?: (dir: string) => Promise<number>) {
  let stdout = '';
  let stderr = '';
  const code = await runInit({ install: false, ...options }, {
    writeStdout: (text) => (stdout += text),
    writeStderr: (text) => (stderr += text),
    cwd: root,
    npmInstall,
  });
  return { code, stdout, stderr };
}

const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('init', () => {
  test('GIVEN a new directory WHEN init THEN the whole project is written and the next steps printed', async () => {
    const result = await init({ dir: 'my-operators' });

    expect(result.code).toBe(0);
    for (const file of ['package.json', 'tsconfig.json', 'cdk8s.yaml', 'main.ts', 'operators/index.ts', 'operators/web-app/index.ts',
      'operators/web-app/sample.yaml', 'test/web-app.test.ts', 'test/integration.test.ts', 'jest.config.js', 'Dockerfile', '.dockerignore', '.gitignore', 'README.md']) {
      expect(existsSync(join(root, 'my-operators', file))).toBe(true);
    }
    expect(result.stdout).toContain('npm install');
    expect(result.stdout).toContain('npm run synth');
  });

  test('GIVEN a new project WHEN its files say how to synthesize THEN it is the synth script, which skips cdk8s-cli\'s upgrade check (a stack trace offline)', async () => {
    const result = await init({ dir: 'quiet' });

    expect(JSON.parse(read('quiet/package.json')).scripts.synth).toBe('cdk8s synth --check-upgrade=false');
    for (const file of ['cdk8s.yaml', 'main.ts', 'operators/index.ts', 'Dockerfile', 'README.md']) {
      const text = read(`quiet/${file}`);
      expect([file, /npx cdk8s synth(?! --check-upgrade=false)/.test(text)]).toEqual([file, false]);
    }
    expect(read('quiet/cdk8s.yaml')).toMatch(/^# `npm run synth` \(cdk8s synth --check-upgrade=false/);
    expect(result.stdout).not.toMatch(/npx cdk8s synth(?! --check-upgrade=false)/);
  });

  test('GIVEN defaults WHEN init THEN name from the directory, kind WebApp, group <name>.example.com, v1alpha1', async () => {
    await init({ dir: 'shop' });

    const operator = read('shop/operators/web-app/index.ts');
    expect(operator).toContain("kind: 'WebApp'");
    expect(operator).toContain("group: 'shop.example.com'");
    expect(operator).toContain("version: 'v1alpha1'");
    expect(operator).toContain("super(scope, 'web-app-operator'");
    expect(parse(read('shop/operators/web-app/sample.yaml'))).toEqual({
      apiVersion: 'shop.example.com/v1alpha1', kind: 'WebApp', metadata: { name: 'web-app-sample' },
      spec: { message: 'hello from web-app-sample', replicas: 1 },
    });
    expect(read('shop/operators/index.ts')).toContain("export const DEFAULT_IMAGE = 'shop:0.1.0';");
  });

  test('GIVEN flags WHEN init THEN package.json pins the SDK spec, its peers and the dev tools exactly', async () => {
    await init({ dir: 'p', name: 'fleet', kind: 'MemcachedCluster', group: 'cache.acme.io', version: 'v1beta1', sdkVersion: '0.2.0-rc.1' });

    const manifest = JSON.parse(read('p/package.json'));
    expect(manifest).toMatchObject({
      name: 'fleet',
      private: true,
      scripts: { synth: 'cdk8s synth --check-upgrade=false', test: 'jest', dev: 'cdk8s-operator dev --once --module operators/index.ts' },
      dependencies: { 'cdk8s-operator-sdk': '0.2.0-rc.1', cdk8s: '2.70.106', constructs: '10.8.1', zod: '4.6.7', 'cdk8s-plus-28': '2.5.6' },
      devDependencies: { 'cdk8s-cli': '2.207.60', typescript: '5.9.3', 'ts-node': '10.9.2', jest: '30.5.2', 'ts-jest': '29.4.15', '@types/jest': '30.0.0', '@types/node': '20.19.43' },
    });
    // the install scripts reviewed, as this repository reviewed its own (npm 11.16+ warns about the others)
    const own = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(manifest.allowScripts).toEqual(own.allowScripts);
    for (const spec of Object.values({ ...manifest.dependencies, ...manifest.devDependencies }).filter((s) => s !== '0.2.0-rc.1')) {
      expect(spec).toMatch(/^\d+\.\d+\.\d+$/);
    }
    const operator = read('p/operators/memcached-cluster/index.ts');
    expect(operator).toContain('export class MemcachedClusterOperator extends Operator<typeof MemcachedClusterSpec>');
    expect(operator).toContain("group: 'cache.acme.io'");
    expect(operator).toContain("version: 'v1beta1'");
    expect(read('p/test/memcached-cluster.test.ts')).toContain("import { MemcachedClusterOperator } from '../operators/memcached-cluster';");
  });

  test('GIVEN no --sdk-version WHEN init THEN the SDK is ^ this package\'s version', async () => {
    await init({ dir: 'p' });

    const own = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
    expect(JSON.parse(read('p/package.json')).dependencies['cdk8s-operator-sdk']).toBe(`^${own}`);
  });

  test('GIVEN the generated files WHEN read THEN the pieces agree: markers, module path, cdk8s app, image, uid', async () => {
    await init({ dir: 'p' });

    const index = read('p/operators/index.ts');
    expect(index).toContain(IMPORTS_MARKER);
    expect(index).toContain(OPERATORS_MARKER);
    // the Deployment runs operators/index.ts compiled by the Dockerfile's esbuild step, beside its source
    expect(index).toContain("module: 'operators/index.js'");
    expect(parse(read('p/cdk8s.yaml'))).toEqual({ language: 'typescript', app: 'npx ts-node main.ts', output: 'dist' });
    expect(read('p/main.ts')).toContain('addOperators(app, { image: process.env.OPERATOR_IMAGE || undefined });');
    const dockerfile = read('p/Dockerfile');
    expect(dockerfile).toContain('RUN npm ci --omit=dev');
    expect(dockerfile).toContain('WORKDIR /app');
    expect(dockerfile).toContain('USER 65532:65532');
    // the runtime stage's V8 flag (small semi-spaces: less RSS; benchmark.md "Memory at start")
    expect(dockerfile.split('\n').slice(dockerfile.split('\n').map((l) => l.startsWith('FROM ')).lastIndexOf(true))).toContain('ENV NODE_OPTIONS=--max-semi-space-size=2');
    expect(dockerfile).toContain('COPY operators ./operators');
    expect(dockerfile).toContain("RUN node_modules/.bin/esbuild 'operators/**/*.ts' --outdir=operators --outbase=operators --format=cjs");
    expect(dockerfile.indexOf('RUN node_modules/.bin/esbuild')).toBeGreaterThan(dockerfile.indexOf('COPY operators ./operators'));
    expect(JSON.parse(read('p/tsconfig.json')).compilerOptions.module).toBe('CommonJS');
    expect(read('p/.gitignore').split('\n')).toEqual(expect.arrayContaining(['node_modules/', 'dist/']));
  });

  test('GIVEN --sdk-version file:<tarball> WHEN init THEN the tarball is copied to vendor/, which package.json names and the Dockerfile copies', async () => {
    await writeFile(join(root, 'sdk-1.2.3.tgz'), 'tarball bytes');
    expect((await init({ dir: 'v', sdkVersion: 'file:sdk-1.2.3.tgz' })).code).toBe(0);
    expect(JSON.parse(read('v/package.json')).dependencies['cdk8s-operator-sdk']).toBe('file:vendor/sdk-1.2.3.tgz');
    expect(read('v/vendor/sdk-1.2.3.tgz')).toBe('tarball bytes');
    const dockerfile = read('v/Dockerfile');
    expect(dockerfile.indexOf('COPY vendor ./vendor')).toBeGreaterThan(-1);
    expect(dockerfile.indexOf('COPY vendor ./vendor')).toBeLessThan(dockerfile.indexOf('RUN npm ci'));

    const missing = await init({ dir: 'm', sdkVersion: 'file:nowhere.tgz' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--sdk-version "file:nowhere.tgz" names a tarball that does not exist (${join(root, 'nowhere.tgz')})`);
    expect(existsSync(join(root, 'm'))).toBe(false);

    await init({ dir: 'r', sdkVersion: '^0.1.0' });
    expect(read('r/Dockerfile')).not.toContain('vendor');
    expect(existsSync(join(root, 'r', 'vendor'))).toBe(false);
  });

  test('GIVEN install is on WHEN init THEN npm install runs in the project and a failure exits 1, files kept', async () => {
    const calls: string[] = [];
    const ok = await init({ dir: 'a', install: true }, async (dir) => (calls.push(dir), 0));
    expect(ok.code).toBe(0);
    expect(calls).toEqual([join(root, 'a')]);
    expect(ok.stdout).not.toContain('  npm install');

    const failed = await init({ dir: 'b', install: true }, async () => 1);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('npm install exited 1');
    expect(existsSync(join(root, 'b', 'package.json'))).toBe(true);
  });

  test.each([
    [{ kind: 'webApp' }, /--kind "webApp" must be CamelCase/],
    [{ kind: 'Web-App' }, /--kind "Web-App" must be CamelCase/],
    [{ kind: `A${'b'.repeat(60)}` }, /--kind "Ab+" is too long/],
    [{ group: 'example' }, /--group "example" must be a DNS subdomain with at least one dot/],
    [{ group: 'Example.COM' }, /--group "Example.COM" a lowercase RFC 1123 subdomain/],
    [{ version: '1' }, /--version "1" must look like v1, v1beta1 or v1alpha2/],
    [{ version: 'v1alpha' }, /--version "v1alpha" must look like/],
    [{ name: 'My_Project' }, /--name "My_Project" a lowercase RFC 1123 label/],
    [{ sdkVersion: ' ' }, /--sdk-version " " must not be empty/],
  ])('GIVEN %j WHEN init THEN exit 2 naming the flag and nothing is written', async (flags, message) => {
    const result = await init({ dir: 'x', ...flags });

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(existsSync(join(root, 'x'))).toBe(false);
  });

  test('GIVEN a directory name that is no DNS label and no --name WHEN init THEN exit 2 asking for --name', async () => {
    const result = await init({ dir: 'My Operators' });

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--name: the directory name "My Operators" can't name the project .*; pass --name/);
  });

  test('GIVEN a non-empty directory WHEN init THEN exit 1, nothing overwritten; with --force the files are replaced', async () => {
    await mkdir(join(root, 'p'));
    await writeFile(join(root, 'p', 'package.json'), '{"name":"mine"}');

    const refused = await init({ dir: 'p' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not empty (package.json): choose an empty directory, or pass --force');
    expect(await readFile(join(root, 'p', 'package.json'), 'utf8')).toBe('{"name":"mine"}');
    expect(existsSync(join(root, 'p', 'main.ts'))).toBe(false);

    const forced = await init({ dir: 'p', force: true });
    expect(forced.code).toBe(0);
    expect(JSON.parse(read('p/package.json')).name).toBe('p');
  });

  test('GIVEN a directory holding only .git WHEN init THEN it counts as empty', async () => {
    await mkdir(join(root, 'p', '.git'), { recursive: true });

    expect((await init({ dir: 'p' })).code).toBe(0);
  });

  test('GIVEN dir "." WHEN init THEN the project goes into the cwd and the next steps have no cd', async () => {
    const result = await init({ name: 'here' });

    expect(result.code).toBe(0);
    expect(existsSync(join(root, 'operators', 'web-app', 'index.ts'))).toBe(true);
    expect(result.stdout).not.toContain('cd ');
  });
});
