/**
 * The import boundaries, read from the sources with the TypeScript parser (test/support/module-specifiers.ts):
 * - the examples (operators/) use the SDK as a user's project does, through `cdk8s-operator-sdk` and
 *   `cdk8s-operator-sdk/testing`, never `../../lib/…` (STYLE.md rule 9);
 * - nothing under lib/runtime imports lib/cli (the CLI sits on the runtime, not the other way round);
 * - the pure entries, lib/index.ts (the construct side) and lib/testing/index.ts, reach neither
 *   lib/runtime nor @kubernetes/client-node, however indirectly, type-only imports included (they would
 *   pull those files into the CommonJS build) (STYLE.md rule 10);
 * - lib/ never imports its own package name (inside the repository that resolves to lib/ itself);
 * - what `cdk8s-operator run` loads at start (the static imports of lib/cli/run-command.ts, followed; not
 *   type-only ones, not `import()`) reaches none of {@link RUN_LOADS_ONLY_WHEN_ASKED}: the construct side's
 *   synthesis (the Operator class, the CRD generator, zod: the user's module loads its own copy), the
 *   webhook server, the validator's WebAssembly, the OpenTelemetry SDK, pino-pretty, the other commands.
 * Each rule is also run on a small made-up tree holding one forbidden import, so each can fail.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { moduleSpecifiersOf } from '../support/module-specifiers.js';

/** Repository-relative POSIX path → file text. */
type SourceTree = ReadonlyMap<string, string>;

interface Violation {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  readonly why: string;
}

const PACKAGE = 'cdk8s-operator-sdk';
/** The entries an example may import: the construct side and the render snapshots. */
const EXAMPLE_ENTRIES = [PACKAGE, `${PACKAGE}/testing`];
const PURE_ENTRIES = ['lib/index.ts', 'lib/testing/index.ts'];
const CLIENT_NODE = '@kubernetes/client-node';

const isPackage = (specifier: string) => specifier === PACKAGE || specifier.startsWith(`${PACKAGE}/`);
const isRelative = (specifier: string) => specifier.startsWith('./') || specifier.startsWith('../');
const under = (folder: string) => (file: string) => file.startsWith(`${folder}/`);

/** The file a relative specifier names (`./x.js` is `./x.ts`, a folder its index.ts), or the bare path when none exists. */
function resolveRelative(tree: SourceTree, from: string, specifier: string): string {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  for (const candidate of [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}/index.ts`]) {
    if (tree.has(candidate)) return candidate;
  }
  return base;
}

/** The module specifiers of each file of `tree` that `select` picks, with the file they resolve to when relative. */
function importsOf(tree: SourceTree, select: (file: string) => boolean) {
  return [...tree].filter(([file]) => select(file)).flatMap(([file, text]) =>
    moduleSpecifiersOf(file, text).map((found) => ({ file, ...found, target: isRelative(found.specifier) ? resolveRelative(tree, file, found.specifier) : undefined })));
}

function examplesImportOnlyPublicEntries(tree: SourceTree): Violation[] {
  return importsOf(tree, under('operators')).flatMap(({ file, line, specifier, target }): Violation[] => {
    if (target !== undefined && under('lib')(target)) return [{ file, line, specifier, why: `reaches into ${target}; import from '${PACKAGE}' as a user does` }];
    if (isPackage(specifier) && !EXAMPLE_ENTRIES.includes(specifier)) return [{ file, line, specifier, why: `an example imports only ${EXAMPLE_ENTRIES.join(' and ')}` }];
    return [];
  });
}

function runtimeDoesNotImportCli(tree: SourceTree): Violation[] {
  return importsOf(tree, under('lib/runtime'))
    .filter(({ target }) => target !== undefined && under('lib/cli')(target))
    .map(({ file, line, specifier, target }) => ({ file, line, specifier, why: `the runtime imports the CLI (${target})` }));
}

/** Walks every relative import from each pure entry; reports each file of lib/runtime and each client-node import reached, with the chain. */
function pureEntriesReachNoRuntime(tree: SourceTree): Violation[] {
  const violations: Violation[] = [];
  for (const entry of PURE_ENTRIES) {
    const via = new Map<string, string>([[entry, entry]]);
    const queue = [entry];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const { line, specifier, target } of importsOf(tree, (f) => f === file)) {
        const chain = `${via.get(file)} → ${target ?? specifier}`;
        if (target !== undefined && under('lib/runtime')(target)) violations.push({ file, line, specifier, why: `${entry} reaches the runtime: ${chain}` });
        else if (specifier === CLIENT_NODE || specifier.startsWith(`${CLIENT_NODE}/`)) violations.push({ file, line, specifier, why: `${entry} reaches client-node: ${chain}` });
        else if (target !== undefined && tree.has(target) && !via.has(target)) {
          via.set(target, chain);
          queue.push(target);
        }
      }
    }
  }
  return violations;
}

/**
 * What `run` may load only behind the option that needs it (a dynamic `import()`), or never: files of
 * lib/ and packages. The user's operators module loads the construct side from its own copy of the SDK
 * (CommonJS in a project `init` generates), so the runtime's ESM copy of it would be loaded twice.
 */
const RUN_LOADS_ONLY_WHEN_ASKED: readonly string[] = [
  'lib/operator/operator.ts', 'lib/operator/schema/crd.ts', 'lib/operator/schema/validate.ts', 'lib/operator/schema/structural-schema.ts',
  'lib/operator/versions/conversion.ts', 'lib/operator/manifests/operator-deployment.ts', 'lib/operator/manifests/webhook-configurations.ts', 'zod',
  'lib/runtime/webhook/webhook-runner.ts', 'lib/runtime/webhook/webhook-server.ts', 'lib/runtime/webhook/serving-certificate.ts',
  'lib/validator/validator-instance.ts', 'lib/validator/validate-built-in-objects.ts',
  '@opentelemetry/sdk-trace-base', '@opentelemetry/resources', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/exporter-trace-otlp-proto',
  'pino-pretty', 'lib/cli/render-command.ts', 'lib/cli/dev-command.ts', 'lib/cli/init-command.ts', 'lib/cli/package-command.ts',
];
const RUN_ENTRY = 'lib/cli/run-command.ts';

/** Follows the static value imports from {@link RUN_ENTRY}; reports each of {@link RUN_LOADS_ONLY_WHEN_ASKED} reached, with the chain. */
function runLoadsOnlyWhatItUses(tree: SourceTree): Violation[] {
  const violations: Violation[] = [];
  const via = new Map<string, string>([[RUN_ENTRY, RUN_ENTRY]]);
  const queue = [RUN_ENTRY];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const { line, specifier, target, typeOnly, dynamic } of importsOf(tree, (f) => f === file)) {
      if (typeOnly || dynamic) continue;
      const reached = target ?? specifier;
      const chain = `${via.get(file)} → ${reached}`;
      if (RUN_LOADS_ONLY_WHEN_ASKED.includes(reached)) violations.push({ file, line, specifier, why: `run loads it at start: ${chain}` });
      else if (target !== undefined && tree.has(target) && !via.has(target)) {
        via.set(target, chain);
        queue.push(target);
      }
    }
  }
  return violations;
}

function libDoesNotImportItsOwnName(tree: SourceTree): Violation[] {
  return importsOf(tree, under('lib'))
    .filter(({ specifier }) => isPackage(specifier))
    .map(({ file, line, specifier }) => ({ file, line, specifier, why: 'lib/ imports its own package: a relative import of the module it means' }));
}

/** The .ts files under `folders` of the repository. */
function repositoryTree(folders: readonly string[]): SourceTree {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const tree = new Map<string, string>();
  for (const folder of folders) {
    for (const entry of readdirSync(`${root}/${folder}`, { recursive: true, encoding: 'utf8' })) {
      const file = posix.join(folder, entry.split('\\').join('/'));
      if (/\.(c|m)?ts$/.test(file)) tree.set(file, readFileSync(`${root}/${file}`, 'utf8'));
    }
  }
  return tree;
}

describe('import boundaries of this repository', () => {
  const tree = repositoryTree(['lib', 'operators']);

  test('GIVEN the sources WHEN read THEN the trees hold the examples and both pure entries (the checks below see something)', () => {
    expect(tree.has('operators/index.ts')).toBe(true);
    for (const entry of PURE_ENTRIES) expect(tree.has(entry)).toBe(true);
    expect([...tree.keys()].filter(under('lib/runtime')).length).toBeGreaterThan(20);
  });

  test('GIVEN operators/ WHEN its imports are read THEN none reaches into lib/, and the SDK comes only from its public construct-side entries', () => {
    expect(examplesImportOnlyPublicEntries(tree)).toEqual([]);
    expect(importsOf(tree, under('operators')).filter(({ specifier }) => specifier === PACKAGE).length).toBeGreaterThan(0);
  });

  test('GIVEN lib/runtime WHEN its imports are read THEN none reaches lib/cli', () => {
    expect(runtimeDoesNotImportCli(tree)).toEqual([]);
  });

  test('GIVEN the pure entries lib/index.ts and lib/testing/index.ts WHEN their imports are followed THEN they reach neither lib/runtime nor client-node', () => {
    expect(pureEntriesReachNoRuntime(tree)).toEqual([]);
  });

  test('GIVEN lib/ WHEN its imports are read THEN it never imports its own package name', () => {
    expect(libDoesNotImportItsOwnName(tree)).toEqual([]);
  });

  test('GIVEN lib/cli/run-command.ts WHEN its static imports are followed THEN run reaches nothing it loads only when asked (webhooks, tracing SDK, validator, synthesis, zod, pino-pretty, other commands)', () => {
    expect(tree.has(RUN_ENTRY)).toBe(true);
    expect(runLoadsOnlyWhatItUses(tree)).toEqual([]);
  });
});

describe('the checks, on a made-up tree with one forbidden import each', () => {
  const base: [string, string][] = [
    ['lib/index.ts', "export { Operator } from './operator/operator.js';\n"],
    ['lib/operator/operator.ts', "import type { Construct } from 'constructs';\nexport class Operator {}\n"],
    ['lib/testing/index.ts', "export { renderForSnapshot } from './render-snapshot.js';\n"],
    ['lib/testing/render-snapshot.ts', "import { Operator } from '../operator/operator.js';\nexport const renderForSnapshot = Operator;\n"],
    ['lib/runtime/manager.ts', "import { KubeConfig } from '@kubernetes/client-node';\nexport const m = KubeConfig;\n"],
    ['lib/cli/main.ts', "import { m } from '../runtime/manager.js';\n"],
    ['operators/index.ts', "import { Operator } from 'cdk8s-operator-sdk';\nimport { renderForSnapshot } from 'cdk8s-operator-sdk/testing';\n"],
  ];
  const tree = (...extra: [string, string][]): SourceTree => new Map([...base, ...extra]);

  test('GIVEN run reaching the webhook server statically two modules down THEN the chain is reported; behind import() or type-only it is not', () => {
    const run = (statement: string) => runLoadsOnlyWhatItUses(tree(
      ['lib/cli/run-command.ts', "import { runOperators } from '../runtime/run-operators.js';\n"],
      ['lib/runtime/run-operators.ts', `${statement}\nexport const runOperators = 1;\n`],
      ['lib/runtime/webhook/webhook-runner.ts', 'export const startRunWebhooks = 1;\n'],
    ));
    expect(run("import { startRunWebhooks } from './webhook/webhook-runner.js';")).toEqual([expect.objectContaining({
      file: 'lib/runtime/run-operators.ts', line: 1,
      why: 'run loads it at start: lib/cli/run-command.ts → lib/runtime/run-operators.ts → lib/runtime/webhook/webhook-runner.ts',
    })]);
    expect(run("const { startRunWebhooks } = await import('./webhook/webhook-runner.js');")).toEqual([]);
    expect(run("import { type startRunWebhooks } from './webhook/webhook-runner.js';")).toEqual([]);
    expect(run("import { z } from 'zod';")).toEqual([expect.objectContaining({ specifier: 'zod' })]);
  });

  test('GIVEN the allowed shape THEN no check reports anything', () => {
    const clean = tree();
    expect([...examplesImportOnlyPublicEntries(clean), ...runtimeDoesNotImportCli(clean), ...pureEntriesReachNoRuntime(clean), ...libDoesNotImportItsOwnName(clean)]).toEqual([]);
  });

  test.each([
    ['a relative import of lib/', "import { Operator } from '../../lib/operator/operator.js';", '../../lib/operator/operator.js'],
    ['a type-only import of lib/', "import type { Operator } from '../../lib/index.js';", '../../lib/index.js'],
    ['a re-export from lib/', "export * from '../../lib/index.js';", '../../lib/index.js'],
    ['a dynamic import of lib/', "const m = await import('../../lib/index.js');", '../../lib/index.js'],
    ['the runtime entry', "import { runOperators } from 'cdk8s-operator-sdk/runtime';", 'cdk8s-operator-sdk/runtime'],
  ])('GIVEN an example with %s THEN it is reported with its file, line and specifier', (_what, statement, specifier) => {
    const found = examplesImportOnlyPublicEntries(tree(['operators/app/index.ts', `import { z } from 'zod';\n${statement}\n`]));
    expect(found).toEqual([expect.objectContaining({ file: 'operators/app/index.ts', line: 2, specifier })]);
  });

  test('GIVEN the runtime importing the CLI THEN it is reported', () => {
    const found = runtimeDoesNotImportCli(tree(['lib/runtime/reconcile/x.ts', "import { main } from '../../cli/main.js';\n"]));
    expect(found).toEqual([expect.objectContaining({ file: 'lib/runtime/reconcile/x.ts', specifier: '../../cli/main.js' })]);
  });

  test('GIVEN the construct side importing the runtime two modules down THEN the chain from the entry is reported', () => {
    const found = pureEntriesReachNoRuntime(tree(
      ['lib/operator/operator.ts', "import { helper } from './helper.js';\nexport class Operator {}\n"],
      ['lib/operator/helper.ts', "import type { Manager } from '../runtime/manager.js';\nexport const helper = 1;\n"],
    ));
    expect(found.map((v) => v.why)).toEqual([
      'lib/index.ts reaches the runtime: lib/index.ts → lib/operator/operator.ts → lib/operator/helper.ts → lib/runtime/manager.ts',
      'lib/testing/index.ts reaches the runtime: lib/testing/index.ts → lib/testing/render-snapshot.ts → lib/operator/operator.ts → lib/operator/helper.ts → lib/runtime/manager.ts',
    ]);
  });

  test('GIVEN a testing helper importing client-node THEN it is reported', () => {
    const found = pureEntriesReachNoRuntime(tree(['lib/testing/render-snapshot.ts', "import type { KubeConfig } from '@kubernetes/client-node';\nexport const renderForSnapshot = 1;\n"]));
    expect(found).toEqual([expect.objectContaining({ file: 'lib/testing/render-snapshot.ts', specifier: '@kubernetes/client-node', why: expect.stringContaining('lib/testing/index.ts reaches client-node') })]);
  });

  test('GIVEN lib importing its own package name THEN it is reported', () => {
    expect(libDoesNotImportItsOwnName(tree(['lib/operator/x.ts', "import { Operator } from 'cdk8s-operator-sdk';\n"]))).toHaveLength(1);
  });
});

describe('moduleSpecifiersOf', () => {
  test('GIVEN every form a module is named in WHEN parsed THEN each is found with its line, type-only ones marked', () => {
    const text = [
      "import a from 'a';",
      "import type { B } from 'b';",
      "export { c } from 'c';",
      "export type { D } from 'd';",
      "import e = require('e');",
      "const f = await import('f');",
      "const g = require('g');",
      "type H = typeof import('h');",
      "import 'i';",
      "import { type J } from 'j';",
      "import { type K, k } from 'k';",
    ].join('\n');
    expect(moduleSpecifiersOf('x.ts', text)).toEqual([
      { specifier: 'a', line: 1, typeOnly: false, dynamic: false },
      { specifier: 'b', line: 2, typeOnly: true, dynamic: false },
      { specifier: 'c', line: 3, typeOnly: false, dynamic: false },
      { specifier: 'd', line: 4, typeOnly: true, dynamic: false },
      { specifier: 'e', line: 5, typeOnly: false, dynamic: false },
      { specifier: 'f', line: 6, typeOnly: false, dynamic: true },
      { specifier: 'g', line: 7, typeOnly: false, dynamic: true },
      { specifier: 'h', line: 8, typeOnly: true, dynamic: false },
      { specifier: 'i', line: 9, typeOnly: false, dynamic: false },
      { specifier: 'j', line: 10, typeOnly: true, dynamic: false },
      { specifier: 'k', line: 11, typeOnly: false, dynamic: false },
    ]);
  });

  test('GIVEN module-like text in comments, strings and templates WHEN parsed THEN none of it counts', () => {
    const text = [
      "// import { x } from '../../lib/index.js';",
      "/* export * from '../../lib/index.js'; */",
      "const s = \"import { y } from '../../lib/index.js'\";",
      'const t = `${"from"} \'../../lib/index.js\'`;',
      'const u = import(computedPath);',
    ].join('\n');
    expect(moduleSpecifiersOf('x.ts', text)).toEqual([]);
  });
});
