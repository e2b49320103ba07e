/**
 * The local control plane (lib/testing/control-plane.ts) against itself: real etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler and kwok. Each test works in its own namespace.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { isProcessGroupAlive, signalProcessGroup } from '../../lib/testing/component-process.js';
import { readControlPlaneState, type ControlPlaneState } from '../../lib/testing/control-plane-state.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { pinnedVersions } from '../../lib/testing/control-plane-release.js';

/** Cold builds of the binaries (tools/control-plane/build.sh) take 5–40 minutes; warm start is seconds. */
const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 90_000;

let plane: ControlPlane;
let objects: KubernetesObjectApi;
let state: ControlPlaneState;

beforeAll(async () => {
  plane = await startControlPlane({ log: (line) => process.env.CONTROL_PLANE_DEBUG && console.log(line) });
  objects = KubernetesObjectApi.makeApiClient(plane.kubeConfig);
  state = (await readControlPlaneState(plane.dir))!;
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await plane?.stop();
});

/** Polls `check` every 200 ms until it returns a value other than undefined. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (last error: ${String(lastError)})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let namespaceCounter = 0;
async function newNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${process.pid}-${++namespaceCounter}`;
  await objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: number }).code === 404;
}

test('GIVEN a started control plane WHEN /version is read THEN it reports the Kubernetes version kube/go.mod pins', async () => {
  const pinned = pinnedVersions().kubernetes;
  const response = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/version');
  expect(response.statusCode).toBe(200);
  const version = JSON.parse(response.body) as { gitVersion: string; major: string; minor: string };
  expect(version.gitVersion).toBe(pinned);
  expect(version.major).toBe('1');
  expect(version.minor).toBe(/^v1\.(\d+)\./.exec(pinned)![1]);
});

test('GIVEN kcm, scheduler and kwok WHEN a Deployment is applied THEN it becomes Available with ready Pods on the fake Node', async () => {
  const namespace = await newNamespace('deployment');
  const labels = { app: 'web' };
  await objects.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    },
  } as KubernetesObject);

  const status = await eventually('Deployment web Available', async () => {
    const got = (await objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace } })) as KubernetesObject & {
      status?: { readyReplicas?: number; conditions?: { type: string; status: string }[] };
    };
    const available = got.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    return available && got.status?.readyReplicas === 2 ? got.status : undefined;
  });
  expect(status.readyReplicas).toBe(2);

  const pods = JSON.parse((await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', `/api/v1/namespaces/${namespace}/pods`)).body) as {
    items: { spec: { nodeName: string }; status: { phase: string; podIP?: string } }[];
  };
  expect(pods.items).toHaveLength(2);
  for (const pod of pods.items) {
    expect(pod.spec.nodeName).toBe(plane.nodeName);
    expect(pod.status.phase).toBe('Running');
    expect(pod.status.podIP).toMatch(/^10\.244\./);
  }
}, TEST_TIMEOUT_MS);

test('GIVEN a ConfigMap owned by another WHEN the owner is deleted THEN the garbage collector deletes the child', async () => {
  const namespace = await newNamespace('gc');
  const owner = await objects.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace }, data: { a: '1' } } as KubernetesObject);
  await objects.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'child',
      namespace,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
    },
    data: { b: '2' },
  } as KubernetesObject);

  await objects.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace } }, undefined, undefined, undefined, undefined, 'Background');

  await eventually('child ConfigMap garbage-collected', async () => {
    try {
      await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'child', namespace } });
      return undefined;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  });
}, TEST_TIMEOUT_MS);

test('GIVEN a server-side apply with a field manager WHEN the object is read THEN managedFields has an Apply entry of that manager', async () => {
  const namespace = await newNamespace('ssa');
  const response = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'PATCH', `/api/v1/namespaces/${namespace}/configmaps/applied?fieldManager=control-plane-test&force=true`, { contentType: 'application/apply-patch+yaml', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace }, data: { key: 'value' } } });
  expect(response.statusCode).toBe(201);

  const got = await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace } });
  const entry = got.metadata?.managedFields?.find((f) => f.manager === 'control-plane-test');
  expect(entry?.operation).toBe('Apply');
  expect(JSON.stringify(entry?.fieldsV1)).toContain('f:key');

  // The typed client's SSA path works against it as well.
  await objects.patch(
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace }, data: { key: 'value', other: 'x' } } as KubernetesObject,
    undefined,
    undefined,
    'control-plane-test',
    true,
    PatchStrategy.ServerSideApply,
  );
  const again = (await objects.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace } })) as KubernetesObject & { data: Record<string, string> };
  expect(again.data).toEqual({ key: 'value', other: 'x' });
}, TEST_TIMEOUT_MS);

test('GIVEN a namespace with objects WHEN it is deleted THEN it finishes terminating (namespace controller)', async () => {
  const namespace = await newNamespace('nsdelete');
  await objects.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace } } as KubernetesObject);
  await objects.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await eventually('namespace gone', async () => {
    try {
      await objects.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      return undefined;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    }
  });
}, TEST_TIMEOUT_MS);

test('GIVEN a CRD file WHEN installCRDs runs THEN the CRD is Established, discoverable and a custom resource can be created', async () => {
  const namespace = await newNamespace('crd');
  const dir = await mkdtemp(join(tmpdir(), 'crd-'));
  try {
    const file = join(dir, 'crds.yaml');
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata: { name: ignored }',
        '---',
        'apiVersion: apiextensions.k8s.io/v1',
        'kind: CustomResourceDefinition',
        'metadata: { name: widgets.test.cdk8s-operator-sdk.io }',
        'spec:',
        '  group: test.cdk8s-operator-sdk.io',
        '  scope: Namespaced',
        '  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }',
        '  versions:',
        '  - name: v1alpha1',
        '    served: true',
        '    storage: true',
        '    subresources: { status: {} }',
        '    schema:',
        '      openAPIV3Schema:',
        '        type: object',
        '        properties:',
        '          spec: { type: object, x-kubernetes-preserve-unknown-fields: true }',
        '          status: { type: object, x-kubernetes-preserve-unknown-fields: true }',
        '',
      ].join('\n'),
    );
    await installCRDs(plane.kubeConfig, [file]);
    const created = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'POST', `/apis/test.cdk8s-operator-sdk.io/v1alpha1/namespaces/${namespace}/widgets`, { body: { apiVersion: 'test.cdk8s-operator-sdk.io/v1alpha1', kind: 'Widget', metadata: { name: 'w' }, spec: { free: { form: 1 } } } });
    expect(created.statusCode).toBe(201);
    expect((JSON.parse(created.body) as { spec: unknown }).spec).toEqual({ free: { form: 1 } });
    // The ConfigMap document was ignored.
    const ignored = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/api/v1/namespaces/default/configmaps/ignored');
    expect(ignored.statusCode).toBe(404);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, TEST_TIMEOUT_MS);

test('GIVEN a running control plane WHEN kube-apiserver is restarted THEN it serves again with the same data', async () => {
  const namespace = await newNamespace('restart');
  await plane.restartApiServer();
  const response = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', `/api/v1/namespaces/${namespace}`);
  expect(response.statusCode).toBe(200);
}, TEST_TIMEOUT_MS);

test('GIVEN a running control plane WHEN stop() resolves THEN none of its processes is left and its dir is gone', async () => {
  const pids = state.components.map((c) => c.pid);
  expect(state.components.map((c) => c.name).sort()).toEqual(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok']);
  // kube-apiserver was restarted: take its current pid from the state file too.
  const current = (await readControlPlaneState(plane.dir))!;
  pids.push(...current.components.map((c) => c.pid));

  await plane.stop();

  // stop() resolves once no process of any group runs; one that has just exited may still be a zombie
  // until it is reaped (a component by this process, Node's SIGCHLD handler, a turn of the event loop or
  // more later on a busy machine; a helper it started by PID 1): wait for the groups to be gone.
  expect(pids.filter((pid) => isProcessGroupAlive(pid))).toEqual([]);
  const groupExists = (pid: number) => signalProcessGroup(pid, 0); // the component and anything it started
  await eventually('every process group gone', async () => (pids.some(groupExists) ? undefined : true), 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; left: ${pids.filter(groupExists).join(', ')}`);
  });
  await expect(readControlPlaneState(plane.dir)).resolves.toBeUndefined();
}, TEST_TIMEOUT_MS);
