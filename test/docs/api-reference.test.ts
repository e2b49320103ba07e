/**
 * The API reference (issue 21): `npm run docs:api` runs TypeDoc (typedoc.json) over the package's public
 * entries (lib/index.ts, lib/testing/index.ts, lib/runtime/index.ts) into docs/api/ (git-ignored). Here it
 * runs into a directory of its own and must succeed, document the key symbols from their docstrings, and
 * warn only of the kind known to be harmless: a docstring that links to an internal symbol the reference
 * leaves out (`… was resolved but is not included in the documentation`). Any other warning (a link that
 * resolves to nothing, a malformed tag) fails, naming it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/sdk-tarball.js';

let out: string;
let result: ReturnType<typeof spawnSync>;

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'docs-api-'));
  const script = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts['docs:api'] as string;
  expect(script).toBe('typedoc --options typedoc.json');
  // The npm script's command, with the output directory moved out of the checkout.
  result = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'typedoc'), ['--options', 'typedoc.json', '--out', out, '--logLevel', 'Warn'],
    { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 64 * 1024 * 1024 });
}, 10 * 60_000);

afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

test('GIVEN the public entries WHEN npm run docs:api runs THEN it exits 0 with no error', () => {
  expect({ status: result.status, stderr: result.stderr }).toMatchObject({ status: 0 });
  expect(`${result.stdout}${result.stderr}`).not.toMatch(/\[error\]/);
});

test('GIVEN the generated reference WHEN read THEN Operator, renderForSnapshot and Manager are documented from their docstrings', () => {
  const page = (path: string) => readFileSync(join(out, path), 'utf8');
  // each page: the symbol's heading, then its docstring's first words
  expect(page('index/classes/Operator.md')).toMatch(/# Abstract Class: Operator[\s\S]*Base class of every operator/);
  expect(page('testing/functions/renderForSnapshot.md')).toMatch(/# Function: renderForSnapshot\(\)[\s\S]*after giving the CR a fixed uid/);
  expect(page('runtime/classes/Manager.md')).toMatch(/# Class: Manager[\s\S]*Runs one or many operators in one process/);
  for (const entry of ['index', 'testing', 'runtime']) expect(existsSync(join(out, entry, 'README.md'))).toBe(true);
});

test('GIVEN the run\'s warnings WHEN read THEN each is a link to an internal symbol left out of the reference', () => {
  const warnings = `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.includes('[warning]') && !/Found \d+ errors and \d+ warnings/.test(line));
  expect(warnings.filter((line) => !/was resolved but is not included in the documentation/.test(line))).toEqual([]);
});
