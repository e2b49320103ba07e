/**
 * The import boundaries, read from the sources with the TypeScript parser (test/support/module-specifiers.ts):
 * - the examples (operators/) use the SDK as a user's project does, through `cdk8s-operator-sdk` and
 *   `cdk8s-operator-sdk/testing`, never `../../lib/…` (STYLE.md rule 9);
 * - nothing under lib/runtime imports lib/cli (the CLI sits on the runtime, not the other way round);
 * - the pure entries, lib/index.ts (the construct side) and lib/testing/index.ts, reach neither
 *   lib/runtime nor @kubernetes/client-node, however indirectly, type-only imports included (they would
 *   pull those files into the CommonJS build) (STYLE.md rule 10);
 * - lib/ never imports its own package name (inside the repository that resolves to lib/ itself).
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
    ].join('\n');
    expect(moduleSpecifiersOf('x.ts', text)).toEqual([
      { specifier: 'a', line: 1, typeOnly: false },
      { specifier: 'b', line: 2, typeOnly: true },
      { specifier: 'c', line: 3, typeOnly: false },
      { specifier: 'd', line: 4, typeOnly: true },
      { specifier: 'e', line: 5, typeOnly: false },
      { specifier: 'f', line: 6, typeOnly: false },
      { specifier: 'g', line: 7, typeOnly: false },
      { specifier: 'h', line: 8, typeOnly: true },
      { specifier: 'i', line: 9, typeOnly: false },
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
