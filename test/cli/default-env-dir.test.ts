/** `env` and `dev`'s default state dir: one per project, under the XDG state home. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { defaultEnvDir } from '../../lib/cli/env-command.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'default-env-dir-'));
  for (const project of ['a/shop', 'b/shop']) {
    mkdirSync(join(root, project, 'operators', 'web'), { recursive: true });
    writeFileSync(join(root, project, 'package.json'), '{}');
  }
  mkdirSync(join(root, 'loose'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = { XDG_STATE_HOME: '/state' };

test('GIVEN two projects with the same folder name THEN each gets its own dir, named after it, under $XDG_STATE_HOME', () => {
  const a = defaultEnvDir(env, join(root, 'a/shop'));
  const b = defaultEnvDir(env, join(root, 'b/shop'));
  expect(a).toMatch(/^\/state\/cdk8s-operator-sdk\/env\/shop-[0-9a-f]{8}$/);
  expect(b).toMatch(/^\/state\/cdk8s-operator-sdk\/env\/shop-[0-9a-f]{8}$/);
  expect(a).not.toBe(b);
});

test('GIVEN a subdirectory of a project THEN the project dir (nearest package.json) decides', () => {
  expect(defaultEnvDir(env, join(root, 'a/shop/operators/web'))).toBe(defaultEnvDir(env, join(root, 'a/shop')));
});

test('GIVEN no package.json above THEN the working directory names it; without XDG_STATE_HOME, ~/.local/state', () => {
  const dir = defaultEnvDir({}, join(root, 'loose'));
  expect(basename(dir)).toMatch(/^loose-[0-9a-f]{8}$/);
  expect(dir).toContain(join('.local', 'state', 'cdk8s-operator-sdk', 'env'));
});
