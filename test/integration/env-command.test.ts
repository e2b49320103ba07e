/**
 * `cdk8s-operator env` as a user runs it, in child processes: `up` with sizing options, then one
 * component stopped and started again while the others keep running (what a user's own fault test of
 * their operator needs), then `down`. The control plane is the test's own (a fresh --dir).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { resolveControlPlaneBinaries } from '../../lib/testing/control-plane-binaries.js';
import { goBuildDirName, pinnedVersions, testedKubernetesMinors } from '../../lib/testing/control-plane-release.js';
import { readControlPlaneState, isComponentAlive } from '../../lib/testing/control-plane-state.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { freePort } from '../support/free-port.js';
import { type CommandResult, commandEnv, runCommand } from '../support/run-command.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;
let planeDir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'env-command-'));
  planeDir = join(dir, 'env');
});

afterAll(async () => {
  // Whatever the test did, nothing of its control plane is left running.
  if (planeDir && existsSync(planeDir)) await env(['down', '--dir', planeDir]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

function env(args: string[], overrides: Record<string, string | undefined> = {}): Promise<CommandResult> {
  return runCommand(process.execPath, ['bin/cdk8s-operator.js', 'env', ...args], { cwd: REPO, timeoutMs: 300_000, env: commandEnv(overrides) });
}

function expectExit(result: CommandResult, code: number): void {
  if (result.code !== code) throw new Error(`exit ${result.code}, expected ${code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
}

test('GIVEN env up with sizing options WHEN one component is stopped and started again THEN status tells, the others keep running, and the data survives', async () => {
  const up = ['up', '--dir', planeDir, '--fake-nodes', '2', '--pods-per-node', '30', '--service-cluster-ip-range', '10.0.0.0/16'];
  if (process.env.CDK8S_OPERATOR_TEST_BIN_DIR) up.push('--bin-dir', process.env.CDK8S_OPERATOR_TEST_BIN_DIR);
  const started = await env(up);
  expectExit(started, 0);
  expect(started.stdout).toBe(`export KUBECONFIG=${join(planeDir, 'kubeconfig')}\n`);

  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(join(planeDir, 'kubeconfig'));
  // Sizing: two fake Nodes of 30 Pods each, and a ClusterIP outside the default /24 is accepted.
  const nodes = JSON.parse((await ApiClient.sendOnce({ kubeConfig }, 'GET', '/api/v1/nodes')).body) as { items: { status: { capacity: { pods: string } } }[] };
  expect(nodes.items.map((n) => n.status.capacity.pods)).toEqual(['30', '30']);
  const service = await ApiClient.sendOnce({ kubeConfig }, 'POST', '/api/v1/namespaces/default/services', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'wide' }, spec: { clusterIP: '10.0.200.7', ports: [{ port: 80 }] } } });
  expect([service.statusCode, service.body.slice(0, 200)]).toEqual([201, expect.any(String)]);

  const before = (await readControlPlaneState(planeDir))!;
  const pidOf = (name: string) => before.components.find((c) => c.name === name)!.pid;

  // Stop kube-apiserver alone: status exits 1 and names it; etcd and the rest still run.
  expectExit(await env(['stop', 'kube-apiserver', '--dir', planeDir]), 0);
  const partly = await env(['status', '--dir', planeDir]);
  expectExit(partly, 1);
  expect(partly.stdout).toMatch(/^kube-apiserver\s+pid \d+\s+NOT RUNNING$/m);
  expect(partly.stdout).toMatch(/^etcd\s+pid \d+\s+running$/m);
  expect(partly.stdout).toContain('env start <component>` (kube-apiserver)');

  // Start it again: ready when the command returns, same port and data (the Service is still there).
  const restarted = await env(['start', 'kube-apiserver', '--dir', planeDir]);
  expectExit(restarted, 0);
  expect(restarted.stderr).toMatch(/started kube-apiserver \(pid \d+\)/);
  expectExit(await env(['status', '--dir', planeDir]), 0);
  const read = await ApiClient.sendOnce({ kubeConfig }, 'GET', '/api/v1/namespaces/default/services/wide');
  expect(read.statusCode).toBe(200);
  const after = (await readControlPlaneState(planeDir))!;
  expect(after.components.find((c) => c.name === 'kube-apiserver')!.pid).not.toBe(pidOf('kube-apiserver'));
  expect(after.components.find((c) => c.name === 'etcd')!.pid).toBe(pidOf('etcd'));

  // restart of etcd, and the errors a user can make.
  expectExit(await env(['restart', 'etcd', '--dir', planeDir]), 0);
  expect((await ApiClient.sendOnce({ kubeConfig }, 'GET', '/api/v1/namespaces/default/services/wide')).statusCode).toBe(200);
  const unknown = await env(['stop', 'kubelet', '--dir', planeDir]);
  expectExit(unknown, 1);
  expect(unknown.stderr).toMatch(/^error: control plane in .* has no component "kubelet" \(it has etcd, kube-apiserver, .*kwok\)\n$/);
  const twice = await env(['start', 'etcd', '--dir', planeDir]);
  expectExit(twice, 1);
  expect(twice.stderr).toMatch(/^error: etcd already runs \(pid \d+\)\n$/);

  const final = (await readControlPlaneState(planeDir))!;
  expectExit(await env(['down', '--dir', planeDir]), 0);
  expect(final.components.filter((c) => isComponentAlive(c)).map((c) => c.name)).toEqual([]);
  // A guard against a hang, not a timing assertion: a whole control plane and two restarts, on a busy 2-core machine.
}, 900_000);

test('GIVEN no go on PATH, no network and the binaries in the cache WHEN env up runs THEN it starts from the cache without a download; with an empty cache its error names the remedies', async () => {
  // The cache a user without Go has after an earlier build or download: the real binaries, symlinked
  // into this test's own cache dir as build.sh lays them out. Downloads go to a closed local port.
  const cacheRoot = join(dir, 'cache');
  const built = join(cacheRoot, 'bin', goBuildDirName(pinnedVersions()));
  await mkdir(built, { recursive: true });
  const real = await resolveControlPlaneBinaries({ log: () => undefined });
  for (const [key, name] of [['etcd', 'etcd'], ['kubeApiServer', 'kube-apiserver'], ['kubeControllerManager', 'kube-controller-manager'], ['kubeScheduler', 'kube-scheduler'], ['kwok', 'kwok']] as const) {
    await symlink(real[key], join(built, name));
  }
  const offline = {
    PATH: (process.env.PATH ?? '').split(':').filter((entry) => entry && !existsSync(join(entry, 'go'))).join(':'),
    CDK8S_OPERATOR_SDK_CACHE: cacheRoot,
    CDK8S_OPERATOR_SDK_BINARIES: undefined,
    CDK8S_OPERATOR_SDK_BINARIES_MIRROR: `http://127.0.0.1:${await freePort()}/`,
    KUBEBUILDER_ASSETS: undefined,
  };
  const offlineDir = join(dir, 'env-offline');

  try {
    const started = await env(['up', '--dir', offlineDir], offline);
    expectExit(started, 0);
    expect(started.stdout).toBe(`export KUBECONFIG=${join(offlineDir, 'kubeconfig')}\n`);
    expect(started.stderr).not.toContain('[control-plane download]');
    const state = (await readControlPlaneState(offlineDir))!;
    expect(state.components.map((c) => c.name)).toContain('kube-apiserver');
    expectExit(await env(['status', '--dir', offlineDir], offline), 0);
  } finally {
    await env(['down', '--dir', offlineDir], offline);
  }

  // The same, with nothing in the cache: a download is tried, fails, and the error says what to do.
  await rm(join(cacheRoot, 'bin'), { recursive: true, force: true });
  const failed = await env(['up', '--dir', join(dir, 'env-empty')], offline);
  expectExit(failed, 1);
  expect(failed.stderr).toMatch(/^error: cannot download the control plane binaries: GET http:\/\/127\.0\.0\.1:\d+\/\S+: fetch failed/m);
  for (const remedy of ['`--bin-dir DIR`', 'KUBEBUILDER_ASSETS=DIR', `put them in the cache, ${built}/`]) expect(failed.stderr).toContain(remedy);
}, 900_000);

test('GIVEN env up --kubernetes-version with the oldest tested minor WHEN it is ready THEN its API server reports the pinned patch of that minor; an untested minor is refused naming the tested ones', async () => {
  const oldest = testedKubernetesMinors().at(-1)!;
  const versions = pinnedVersions(oldest);
  expect(versions.kubernetes.startsWith(`v${oldest}.`)).toBe(true);
  const oldDir = join(dir, 'env-oldest');
  try {
    const started = await env(['up', '--dir', oldDir, '--kubernetes-version', oldest]);
    expectExit(started, 0);
    const state = (await readControlPlaneState(oldDir))!;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(state.kubeconfigPath);
    const version = JSON.parse((await ApiClient.sendOnce({ kubeConfig }, 'GET', '/version')).body) as { gitVersion: string };
    expect(version.gitVersion).toBe(versions.kubernetes);
  } finally {
    await env(['down', '--dir', oldDir]);
  }

  const refused = await env(['up', '--dir', join(dir, 'env-untested'), '--kubernetes-version', '1.30']);
  expectExit(refused, 1);
  expect(refused.stderr).toContain(`Kubernetes version "1.30" is not one the local control plane has; the tested minors are ${testedKubernetesMinors().join(', ')}`);
  expect(existsSync(join(dir, 'env-untested'))).toBe(false);
}, 1_800_000);
