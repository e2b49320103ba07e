/**
 * How long `cdk8s-operator dev` takes to reload (issue 21: "within a few seconds"), on the local
 * control plane. Prints one JSON object.
 *
 *   npm run bench:dev-reload -- [--reloads 5]
 *
 * One control plane; `dev --kubeconfig` on test/integration/fixtures/reload-operator.ts, copied to a
 * project of its own (as test/integration/dev-reload.test.ts does). Per reload, this process rewrites
 * reload-labels.ts with a new label value and measures, from the write, until the child ConfigMap has
 * that label in the API server (`toChildMs`), and reads dev's own `reloaded in Xs` line (`reportedMs`:
 * from the debounced batch to the diff printed). Reports each, their median and max, and the machine's
 * load average (the figures move with it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import type { KubeObject } from '../lib/runtime/client/kube-client.js';
import { startControlPlane } from '../lib/testing/control-plane.js';
import { benchOptions } from './bench-options.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const FIXTURES = join(REPO, 'test', 'integration', 'fixtures');
const CONFIG_MAP = '/api/v1/namespaces/dev-reload/configmaps/sample-config';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 300_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const reloads = benchOptions({ reloads: { type: 'string', default: '5' } }).number('reloads');
  const dir = await mkdtemp(join(tmpdir(), 'bench-dev-reload-'));
  const plane = await startControlPlane();
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  let dev: ChildProcess | undefined;
  try {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'bench-reload', private: true, type: 'module' }));
    await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
    await copyFile(join(FIXTURES, 'reload-operator.ts'), join(dir, 'reload-operator.ts'));
    await copyFile(join(FIXTURES, 'reload-labels.ts'), join(dir, 'reload-labels.ts'));
    const args = [join(REPO, 'bin', 'cdk8s-operator.js'), 'dev', '--module', join(dir, 'reload-operator.ts'), '--kubeconfig', plane.kubeconfigPath, '--log-level', 'warn'];
    dev = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    dev.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await until('dev watching', async () => stderr.includes('watching 2 file(s)'));
    await until('first child', () => admin.request('GET', CONFIG_MAP));
    const toChildMs: number[] = [];
    const reportedMs: number[] = [];
    const phases: string[] = [];
    for (let i = 1; i <= reloads; i++) {
      // The spare process dev keeps for the next reload has loaded the SDK by now on an idle machine;
      // give it the time it would have between two saves.
      await sleep(15_000);
      const done = stderr.split('reloaded in ').length;
      const t0 = Date.now();
      await writeFile(join(dir, 'reload-labels.ts'), `export const LABELS: Record<string, string> = { tier: 'one', round: '${i}' };\n`);
      await until(`label round=${i}`, async () => ((await admin.request('GET', CONFIG_MAP)) as KubeObject).metadata?.labels?.round === String(i));
      toChildMs.push(Date.now() - t0);
      await until('reloaded line', async () => stderr.split('reloaded in ').length > done);
      const reported = [...stderr.matchAll(/^reloaded in ([\d.]+)s \((.*)\)/gm)].at(-1)!;
      reportedMs.push(Math.round(Number(reported[1]) * 1000));
      phases.push(reported[2]);
    }
    console.log(JSON.stringify({ reloads, toChildMs, reportedMs, phases, medianToChildMs: median(toChildMs), maxToChildMs: Math.max(...toChildMs), medianReportedMs: median(reportedMs), loadAverage1m: Number(loadavg()[0].toFixed(1)), cores: cpus().length }));
  } finally {
    if (dev && dev.exitCode === null) {
      const exited = new Promise((r) => dev!.once('exit', r));
      dev.kill('SIGTERM');
      await exited;
    }
    admin.close();
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
