/**
 * The tutorial (docs/tutorial/*.md) as a reader follows it: in a fresh directory holding the packed
 * SDK, each page's blocks in order. A ```sh line is run with bash in the directory the lines before
 * it `cd`'d into, and must exit 0; a ```ts or ```yaml block that names its file on its first line is
 * written to that file. Nothing else is done to the project, so the tutorial is complete.
 *
 * Two changes to what a reader types, both for this test run: `dev` gets `--dir <this test's control
 * plane>`, and the environment is a user's (no jest settings, no CI). The control plane is the test's
 * own, not the run's shared one: the tutorial's samples live in `default` under init's and the
 * examples' names (`web-app-sample`, `memcached-sample`), which other tests' projects use there too, so
 * on a shared plane one test's children refused the other's (AdoptionRefused, seen in CI).
 */
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { readLogTail } from '../../lib/testing/component-process.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { type DocBlock, blocksOf } from '../support/doc-blocks.js';
import { cliArguments, simpleCommands } from '../support/doc-commands.js';
import { type CommandResult, commandEnv, runCommand } from '../support/run-command.js';
import { REPO_ROOT, sdkTarball } from '../support/sdk-tarball.js';

const PAGES = readdirSync(join(REPO_ROOT, 'docs', 'tutorial')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/tutorial/${name}`);

let root: string;
let cwd: string;
let plane: ControlPlane | undefined;
/** Every command run, in order, with its result. */
const ran: { line: string; result: CommandResult }[] = [];
/** The first failure: the pages after it are not followed (they build on it). */
let failedAt: string | undefined;

function userEnv(): NodeJS.ProcessEnv {
  const env = commandEnv({ CI: undefined, npm_config_update_notifier: 'false' });
  for (const key of Object.keys(env)) if (key.startsWith('CDK8S_OPERATOR_TEST_')) delete env[key];
  return env;
}

/** The line as this run types it: `dev` on this test's control plane. */
function forThisRun(line: string): string {
  const dev = simpleCommands(line).some((words) => cliArguments(words)?.[0] === 'dev');
  return dev ? `${line} --dir '${plane!.dir}'` : line;
}

async function follow(block: DocBlock): Promise<void> {
  if ((block.lang === 'ts' || block.lang === 'yaml') && block.path) {
    mkdirSync(dirname(join(cwd, block.path)), { recursive: true });
    writeFileSync(join(cwd, block.path), `${block.body}\n`);
    return;
  }
  if (block.lang !== 'sh') return;
  for (const [i, line] of block.body.split('\n').entries()) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const cd = /^cd\s+(\S+)$/.exec(line.trim());
    if (cd) {
      cwd = join(cwd, cd[1]!);
      continue;
    }
    const result = await runCommand('bash', ['-c', forThisRun(line)], { cwd, env: userEnv(), timeoutMs: 25 * 60_000 }); // npm install on a busy 2-core machine
    ran.push({ line, result });
    if (result.code !== 0) {
      throw new Error(`${block.file}:${block.line + i + 1}: \`${line}\` exited ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}${await controllerManagerTail()}`);
    }
  }
}

/**
 * The end of the control plane's kube-controller-manager log, for a failed command: whether it synced the
 * children a command waited for (a `dev --once` once waited 180 s for a Deployment's observedGeneration
 * in a loaded CI run, with nothing else to tell which side stalled).
 */
async function controllerManagerTail(): Promise<string> {
  const log = plane?.logPaths['kube-controller-manager'];
  const tail = log ? await readLogTail(log, 40) : '';
  return tail ? `\n--- last lines of ${log} ---\n${tail}` : '';
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'docs-tutorial-'));
  cwd = root;
  // "copy that file into the directory where you keep your projects"
  const tarball = await sdkTarball();
  copyFileSync(tarball, join(root, basename(tarball)));
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
}, 20 * 60_000);

afterAll(async () => {
  await plane?.stop();
  if (root) await rm(root, { recursive: true, force: true });
}, 5 * 60_000);

describe('the tutorial, followed in order', () => {
  test.each(PAGES)('GIVEN %s WHEN its commands run and its files are written THEN every command exits 0', async (page) => {
    if (failedAt) throw new Error(`not followed: ${failedAt} failed, and this page builds on it`);
    try {
      for (const block of blocksOf(REPO_ROOT, page)) await follow(block);
    } catch (error) {
      failedAt = page;
      throw error;
    }
  }, 60 * 60_000);

  test('GIVEN the tutorial followed WHEN its outputs are read THEN the Memcached became Ready twice and the v1alpha1 CR rendered through conversion', () => {
    const devs = ran.filter(({ line }) => /\bdev\b/.test(line));
    expect(devs).toHaveLength(2);
    for (const { result } of devs) expect(result.stdout).toMatch(/Memcached default\/memcached-sample\s+True\s+2\/2/);
    const old = ran.find(({ line }) => line.includes('old-memcached.yaml'));
    expect(old?.result.stdout).toMatch(/replicas: 2\n/);
    expect(old?.result.stdout).toContain('-m=64');
  });
});
