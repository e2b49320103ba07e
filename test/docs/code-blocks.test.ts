/**
 * Every fenced block of README.md and docs/**\/*.md is checked by its kind, so the docs cannot drift
 * from the code (issue 21):
 * - ```ts: a complete module, type-checked by tsc in a consumer project that has the SDK installed from
 *   its packed tarball (test/consumers/esm-lowest-peers), all blocks in one tsc run. Each page is its
 *   own folder; a block that names its file (`// operators/memcached/index.ts`) is written there, and the
 *   pages of one docs folder (the tutorial's steps) see the named files of the pages before them.
 * - ```sh: every `cdk8s-operator` command line is parsed by the real CLI (unknown subcommand, flag or
 *   value fails), and every `npm run X` names a script of this repository or of a project `init` makes.
 *   The tutorial's commands are also run, in order (test/integration/docs-tutorial.test.ts).
 * - ```yaml: parses; a document that is a Kubernetes object has apiVersion and kind.
 * - ```text: output, not checked, but the Dockerfile shown after a `cat Dockerfile` is the one init writes.
 * Any other kind of block fails, naming file:line.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { dockerfile, packageJson } from '../../lib/cli/scaffold/project-templates.js';
import { consumerProject } from '../support/consumer-project.js';
import { BLOCK_LANGUAGES, type DocBlock, allDocBlocks } from '../support/doc-blocks.js';
import { cliArguments, cliRefusal, simpleCommands } from '../support/doc-commands.js';
import { testRunDir } from '../support/once-per-run.js';
import { REPO_ROOT } from '../support/sdk-tarball.js';

const blocks = allDocBlocks(REPO_ROOT);
const where = (block: DocBlock, offset = 0): string => `${block.file}:${block.line + offset}`;

test('GIVEN the docs WHEN their blocks are listed THEN there are ts, sh and yaml blocks to check (the reader finds the docs)', () => {
  for (const lang of ['ts', 'sh', 'yaml']) expect(blocks.filter((block) => block.lang === lang).length).toBeGreaterThan(2);
});

test('GIVEN every fenced block WHEN its kind is read THEN it is ts, sh, yaml or text', () => {
  const others = blocks.filter((block) => !(BLOCK_LANGUAGES as readonly string[]).includes(block.lang));
  expect(others.map((block) => `${where(block)}: \`\`\`${block.lang || '(no language)'} is not one of ${BLOCK_LANGUAGES.join(', ')}`)).toEqual([]);
});

test('GIVEN every yaml block WHEN parsed THEN it is YAML, and each Kubernetes object in it has apiVersion and kind', () => {
  const problems: string[] = [];
  for (const block of blocks.filter((b) => b.lang === 'yaml')) {
    for (const doc of parseAllDocuments(block.body)) {
      for (const error of doc.errors) problems.push(`${where(block, (error.linePos?.[0]?.line ?? 0))}: ${error.message}`);
      const object = doc.toJS() as Record<string, unknown> | null;
      if (object && typeof object === 'object' && ('metadata' in object || 'spec' in object)) {
        if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') problems.push(`${where(block)}: a Kubernetes object without apiVersion and kind`);
      }
    }
  }
  expect(problems).toEqual([]);
});

test('GIVEN every sh block WHEN its cdk8s-operator commands are parsed by the CLI THEN each is accepted, and every npm run names a script', async () => {
  const repoScripts = Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts as object);
  const projectScripts = Object.keys(JSON.parse(packageJson({ name: 'x', sdkVersion: '^0.1.0', operator: undefined as never })).scripts as object);
  const scripts = new Set([...repoScripts, ...projectScripts]);
  const problems: string[] = [];
  let parsed = 0;
  for (const block of blocks.filter((b) => b.lang === 'sh')) {
    const lines = block.body.split('\n');
    for (let i = 0; i < lines.length; i++) {
      for (const words of simpleCommands(lines[i]!)) {
        const args = cliArguments(words);
        if (args) {
          parsed++;
          const refusal = await cliRefusal(args);
          if (refusal) problems.push(`${where(block, i + 1)}: \`cdk8s-operator ${args.join(' ')}\`: ${refusal}`);
        }
        if (words[0] === 'npm' && words[1] === 'run' && words[2] && !scripts.has(words[2])) {
          problems.push(`${where(block, i + 1)}: npm run ${words[2]}: no such script in package.json or in a project init makes`);
        }
      }
    }
  }
  expect(problems).toEqual([]);
  expect(parsed).toBeGreaterThan(5);
});

test('GIVEN a `cat Dockerfile` in the docs WHEN the text block after it is compared THEN it is the Dockerfile init writes for the tutorial\'s project', () => {
  const shown = blocks.flatMap((block, i) => (block.lang === 'sh' && block.body.trim() === 'cat Dockerfile' ? [blocks[i + 1]] : []));
  expect(shown.length).toBeGreaterThan(0);
  const written = dockerfile({
    name: 'memcached-operator', sdkVersion: 'file:vendor/cdk8s-operator-sdk-0.1.0.tgz', operator: undefined as never,
    vendoredSdk: { from: '/unused', path: 'vendor/cdk8s-operator-sdk-0.1.0.tgz' },
  });
  for (const block of shown) expect({ at: block && where(block), lang: block?.lang, body: `${block?.body}\n` }).toEqual({ at: block && where(block), lang: 'text', body: written });
});

describe('ts blocks', () => {
  let project: string;
  beforeAll(async () => {
    project = await consumerProject('esm-lowest-peers');
  }, 20 * 60_000);

  test('GIVEN every ts block WHEN type-checked in a consumer project with the packed SDK THEN tsc reports nothing', () => {
    const dir = join(testRunDir(), 'docs-ts-blocks');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    symlinkSync(join(project, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'preserve', moduleResolution: 'bundler', strict: true, noEmit: true,
        skipLibCheck: true, esModuleInterop: true, types: ['node', 'jest'],
      },
      include: ['pages/**/*.ts'],
    }));
    // file written -> the block it came from, to name file:line in tsc's errors
    const origin = new Map<string, DocBlock>();
    const pages = [...new Set(blocks.filter((b) => b.lang === 'ts').map((b) => b.file))];
    for (const page of pages) {
      const pageDir = posix.join('pages', page.replace(/\.md$/, ''));
      // the named files of the earlier pages of the same folder (the tutorial's steps), then this page's
      const earlier = blocks.filter((b) => b.lang === 'ts' && b.path && dirname(b.file) === dirname(page) && b.file < page);
      for (const block of [...earlier, ...blocks.filter((b) => b.lang === 'ts' && b.file === page)]) {
        const file = posix.join(pageDir, block.path ?? `block-L${block.line}.ts`);
        mkdirSync(join(dir, dirname(file)), { recursive: true });
        writeFileSync(join(dir, file), `${block.body}\n`);
        origin.set(file, block);
      }
    }
    const tsc = spawnSync(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.', '--pretty', 'false'], { cwd: dir, encoding: 'utf8' });
    const errors = `${tsc.stdout}${tsc.stderr}`.split('\n').filter((line) => line.trim() !== '').map((line) => {
      const at = /^(pages\/[^(]+)\((\d+),(\d+)\): (.*)$/.exec(line);
      const block = at && origin.get(at[1]!);
      return block ? `${block.file}:${block.line + Number(at![2])}:${at![3]}: ${at![4]}` : line;
    });
    expect(errors).toEqual([]);
    expect(tsc.status).toBe(0);
    expect(origin.size).toBeGreaterThan(3);
  }, 10 * 60_000);
});
