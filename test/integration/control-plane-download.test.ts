/**
 * The control plane starts from downloaded binaries: a local mirror (test/support/release-mirror.ts)
 * serves the real executables this machine has (the Go-built set, or whatever resolves), packed as the
 * publishers pack them (an envtest tar.gz, bare dl.k8s.io and kwok files, with their digests); the
 * downloader installs them into a fresh cache (CDK8S_OPERATOR_SDK_CACHE = a temp dir) and the control
 * plane runs from that dir: every component's executable is the downloaded one, and the API server
 * answers.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { resolveControlPlaneBinaries, type ControlPlaneBinaries } from '../../lib/testing/control-plane-binaries.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { readControlPlaneState } from '../../lib/testing/control-plane-state.js';
import { pinnedVersions } from '../../lib/testing/control-plane-release.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { startReleaseMirror, type ReleaseMirror } from '../support/release-mirror.js';

/** Packing ~360 MB into the mirror, downloading and extracting it, on a busy 2-core machine. */
const SETUP_TIMEOUT_MS = 10 * 60_000;

let real: ControlPlaneBinaries;
let mirror: ReleaseMirror;
let cacheRoot: string;
let downloaded: ControlPlaneBinaries;
let plane: ControlPlane;
const lines: string[] = [];

beforeAll(async () => {
  // The executables this machine already has (jest.config.js built or found them).
  real = await resolveControlPlaneBinaries();
  mirror = await startReleaseMirror({
    etcd: { path: real.etcd },
    'kube-apiserver': { path: real.kubeApiServer },
    'kube-controller-manager': { path: real.kubeControllerManager },
    'kube-scheduler': { path: real.kubeScheduler },
    kwok: { path: real.kwok },
  });
  cacheRoot = await mkdtemp(join(tmpdir(), 'cp-download-cache-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBEBUILDER_ASSETS: '',
    CDK8S_OPERATOR_SDK_CACHE: cacheRoot,
    CDK8S_OPERATOR_SDK_BINARIES: 'download',
    CDK8S_OPERATOR_SDK_BINARIES_MIRROR: mirror.url,
  };
  downloaded = await resolveControlPlaneBinaries({ env, log: (line) => lines.push(line) });
  plane = await startControlPlane({ binDir: dirname(downloaded.etcd) });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await plane?.stop();
  await mirror?.close();
  if (cacheRoot) await rm(cacheRoot, { recursive: true, force: true });
}, 120_000);

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

test('GIVEN a mirror of the real binaries WHEN resolved with CDK8S_OPERATOR_SDK_BINARIES=download THEN the five land in the temp cache, byte for byte, with progress lines', async () => {
  const dir = join(cacheRoot, 'bin', mirror.release.dirName);
  const keys = ['etcd', 'kubeApiServer', 'kubeControllerManager', 'kubeScheduler', 'kwok'] as const;
  for (const key of keys) {
    expect(dirname(downloaded[key])).toBe(dir);
    expect(await sha256Of(downloaded[key])).toBe(await sha256Of(real[key]));
  }
  // A ~100 MB file reports its tenths on the way.
  const apiServer = lines.filter((line) => line.startsWith(`[control-plane download] envtest ${pinnedVersions().kubernetes}: `));
  expect(apiServer.filter((line) => /: \d+\/\d+ bytes \(/.test(line)).length).toBeGreaterThanOrEqual(2);
  expect(apiServer.at(-1)).toMatch(/100%\), sha512 verified/);
});

test('GIVEN the downloaded binaries WHEN the control plane starts from them THEN every component runs the downloaded executable and the API server answers', async () => {
  const state = (await readControlPlaneState(plane.dir))!;
  const dir = join(cacheRoot, 'bin', mirror.release.dirName);
  // Sorted: the controller manager and the scheduler start side by side, in either order.
  expect(state.components.map((component) => [component.name, dirname(component.command)]).sort()).toEqual(
    ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'].map((name) => [name, dir]),
  );

  const version = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/version');
  expect(version.statusCode).toBe(200);
  expect((JSON.parse(version.body) as { gitVersion: string }).gitVersion).toBe(pinnedVersions().kubernetes);

  const nodes = JSON.parse((await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/api/v1/nodes')).body) as {
    items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[];
  };
  expect(nodes.items.map((node) => [node.metadata.name, node.status.conditions.find((c) => c.type === 'Ready')?.status])).toEqual([['kwok-node-0', 'True']]);
});
