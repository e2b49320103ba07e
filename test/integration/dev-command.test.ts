/**
 * `cdk8s-operator dev --once` as a user runs it: a child process with a fresh state dir, so it starts (and
 * then stops) a control plane of its own, installs the example operators' CRDs, runs them in-process and
 * waits until their samples are Ready.
 */
import { type CommandResult, commandEnv, runCommand } from '../support/run-command.js';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-once-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function run(args: string[], timeoutMs: number): Promise<CommandResult> {
  return runCommand(process.execPath, ['bin/cdk8s-operator.js', ...args], { cwd: REPO, timeoutMs, env: commandEnv({ CDK8S_OPERATOR_TEST_KUBECONFIG: '' }) });
}

test('GIVEN a fresh --dir WHEN dev --once THEN every example sample becomes Ready, the table lists them, exit 0 and the control plane it started is gone', async () => {
  const planeDir = join(dir, 'env');
  const args = ['dev', '--once', '--dir', planeDir, '--timeout', '180s'];
  if (process.env.CDK8S_OPERATOR_TEST_BIN_DIR) args.push('--bin-dir', process.env.CDK8S_OPERATOR_TEST_BIN_DIR);
  const result = await run(args, 300_000);
  if (result.code !== 0) throw new Error(`exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  expect(lines[0].split(/\s{2,}/)).toEqual(['CR', 'READY', 'CHILDREN', 'TIME TO READY']);
  const rows = lines.slice(1).map((l) => l.split(/\s{2,}/));
  expect(rows.map((r) => r[0]).sort()).toEqual(['App default/hello', 'Database default/orders', 'Memcached default/memcached-sample']);
  for (const row of rows) {
    expect(row[1]).toBe('True');
    const [ready, total] = row[2].split('/').map(Number);
    expect(total).toBeGreaterThan(0);
    expect(ready).toBe(total);
  }
  // memcached's webhooks were served in-process, and the API server converted its sample through /convert
  expect(result.stderr).toMatch(/serving webhooks on https:\/\/127\.0\.0\.1:\d+: \/convert, \/mutate-cache-example-com-v1beta1-memcached, \/validate-cache-example-com-v1beta1-memcached/);
  expect(result.stderr).toContain('Memcached default/memcached-sample: read as cache.example.com/v1alpha1');
  expect(result.stderr).toContain('stopping the control plane this command started');
  expect(existsSync(join(planeDir, 'control-plane.json'))).toBe(false);
}, 360_000);
