/**
 * Inside this repository `import … from 'cdk8s-operator-sdk'` (the examples, the README's fixture) means
 * the TypeScript sources of the package's entries, and loads the very modules the CLI runs from lib/:
 * one copy of each, so module-level state and `instanceof` never split (the Operator brand is not what
 * makes these pass). tsconfig.json `paths` say where each entry's source is; jest.config.js maps the
 * same (checked here under jest); bin/cdk8s-operator.js hands them to tsx (checked by running the CLI
 * under a module-load trace, from outside the checkout and from the files the Dockerfile copies).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pkg from 'cdk8s-operator-sdk';
import * as pkgTesting from 'cdk8s-operator-sdk/testing';
import * as lib from '../../lib/index.js';
import { Operator } from '../../lib/operator/operator.js';
import * as libTesting from '../../lib/testing/index.js';
import { AppOperator, DatabaseOperator, MemcachedOperator } from '../../operators/index.js';
import { commandEnv, runCommand } from '../support/run-command.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const trace = join(root, 'test', 'support', 'module-load-trace.mjs');

interface PackageJson { exports: Record<string, string | { import: string | { default: string } }> }

let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'self-reference-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

test('GIVEN package.json exports WHEN compared with tsconfig.json paths THEN each entry maps to the source of the module it exports compiled, and nothing else', () => {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } };
  const expected = Object.fromEntries(Object.entries(exports).filter(([subpath]) => subpath !== './package.json').map(([subpath, target]) => {
    const esm = typeof target === 'string' ? target : typeof target.import === 'string' ? target.import : target.import.default;
    const source = /^\.\/out\/esm\/(.+)\.js$/.exec(esm)?.[1];
    if (source === undefined) throw new Error(`exports[${subpath}]: ${esm} is not under ./out/esm/`);
    return [`cdk8s-operator-sdk${subpath.slice(1)}`, [`./lib/${source}.ts`]];
  }));
  expect(Object.keys(expected)).toHaveLength(4);
  expect(compilerOptions.paths).toEqual(expected);
});

test('GIVEN jest WHEN the package name and lib/ are imported THEN they are the same module instances', () => {
  expect(pkg).toBe(lib);
  expect(pkgTesting).toBe(libTesting);
  expect(pkg.Operator).toBe(Operator);
});

test('GIVEN jest WHEN operators/index.ts is loaded THEN its operators extend the very Operator class of lib/ (class identity, not the brand)', () => {
  for (const example of [MemcachedOperator, AppOperator, DatabaseOperator]) expect(Object.getPrototypeOf(example)).toBe(Operator);
});

/**
 * Runs `node --import module-load-trace.mjs <bin> render -f <sample>…` in `cwd` (the examples are the
 * default module); resolves to the exit, the output and the file paths of the ES modules loaded.
 */
async function tracedRender(bin: string, samples: string[], cwd: string, name: string) {
  const file = join(scratch, `${name}.trace`);
  writeFileSync(file, '');
  const result = await runCommand(process.execPath, ['--import', trace, bin, 'render', ...samples.flatMap((s) => ['-f', s])], {
    cwd,
    env: commandEnv({ MODULE_LOAD_TRACE: file }),
    timeoutMs: 2 * 60_000,
  });
  const loaded = readFileSync(file, 'utf8').split('\n').filter((url) => url.startsWith('file:')).map((url) => fileURLToPath(url.replace(/\?.*$/, '')));
  return { ...result, loaded };
}

/** What the trace must show for a checkout at `checkout`: the self-reference resolved to its lib/, every SDK module once, nothing compiled. */
function expectOneCopyFromSources(loaded: readonly string[], checkout: string) {
  const sdk = loaded.filter((path) => path.startsWith(join(checkout, 'lib')) || path.startsWith(join(checkout, 'out')));
  expect(sdk).toContain(join(checkout, 'lib', 'index.ts')); // only operators/ import the entry: the self-reference
  expect(sdk).toContain(join(checkout, 'lib', 'operator', 'operator.ts'));
  expect(loaded).toContain(join(checkout, 'operators', 'index.ts'));
  expect(sdk.filter((path) => !path.endsWith('.ts'))).toEqual([]);
  expect(sdk.filter((path, i) => sdk.indexOf(path) !== i)).toEqual([]);
}

const SAMPLES = ['memcached', 'app', 'database'].map((name) => join('operators', name, 'sample.yaml'));

test('GIVEN the CLI started outside the checkout WHEN it renders the examples THEN the package name resolved to lib/, one copy of each module, nothing from out/', async () => {
  const result = await tracedRender(join(root, 'bin', 'cdk8s-operator.js'), SAMPLES.map((s) => join(root, s)), scratch, 'outside');
  expect(result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('note: '))).toEqual([]);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('kind: StatefulSet');
  expectOneCopyFromSources(result.loaded, root);
});

test('GIVEN only what the Dockerfile\'s image holds WHEN its entrypoint renders the examples from its WORKDIR THEN the same', async () => {
  // The runtime stage's `COPY <src…> <dest>` lines (not --from), into a folder standing for /app; the
  // image's node_modules (the deps stage) stands in as this checkout's.
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8').split('\n');
  const runtimeStage = dockerfile.slice(dockerfile.map((line) => line.startsWith('FROM ')).lastIndexOf(true));
  const copied = runtimeStage.filter((line) => line.startsWith('COPY ') && !line.startsWith('COPY --from')).flatMap((line) => line.split(/\s+/).slice(1, -1));
  expect(copied).toEqual(['package.json', 'tsconfig.json', 'bin', 'lib', 'operators']);
  const app = join(scratch, 'app');
  for (const source of copied) cpSync(join(root, source), join(app, source), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(app, 'node_modules'));

  const result = await tracedRender('bin/cdk8s-operator.js', SAMPLES, app, 'image');
  expect(result.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('note: '))).toEqual([]);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('kind: StatefulSet');
  expectOneCopyFromSources(result.loaded, app);
});
