import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localImportGraph } from '../../lib/cli/import-graph.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'import-graph-'));
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await mkdir(join(dir, 'lib'));
  await writeFile(join(dir, 'op.ts'), [
    "import { z } from 'zod';",
    "import type { Construct } from 'constructs';",
    "import { helper } from './lib/helper.js';",
    "export { other } from './lib/other.ts';",
    'export const s = z.string();',
    'export function addOperators(scope: Construct) { return helper(scope); }',
  ].join('\n'));
  await writeFile(join(dir, 'lib', 'helper.ts'), "import { deep } from './deep.js';\nexport const helper = (x: unknown) => [deep, x];\n");
  await writeFile(join(dir, 'lib', 'deep.ts'), 'export const deep = 1;\n');
  await writeFile(join(dir, 'lib', 'other.ts'), 'export const other = 2;\n');
  await writeFile(join(dir, 'lib', 'unused.ts'), 'export const unused = 3;\n');
  await writeFile(join(dir, 'broken.ts'), "import './lib/deep.js';\nexport const x = { a: ; };\n");
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN a module importing local files (.js specifiers of .ts files, re-exports, nested) and packages THEN the local files and itself, sorted; no packages, nothing unimported', async () => {
  expect(await localImportGraph(join(dir, 'op.ts'))).toEqual([
    join(dir, 'lib', 'deep.ts'),
    join(dir, 'lib', 'helper.ts'),
    join(dir, 'lib', 'other.ts'),
    join(dir, 'op.ts'),
  ]);
});

test('GIVEN a module with a syntax error THEN an Error with file:line:col', async () => {
  await expect(localImportGraph(join(dir, 'broken.ts'))).rejects.toThrow(new RegExp(`^${join(dir, 'broken.ts')}:2:\\d+: `));
});
