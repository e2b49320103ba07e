/**
 * startControlPlane's sizing options against the real components: `fakeNodes` and `podsPerNode` (how
 * many Pods kwok can run) and `serviceClusterIpRange` (how many ClusterIP Services fit). The benchmark
 * (bench/peers.ts) relies on them for thousands of custom resources.
 */
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';

const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 90_000;

let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane({ fakeNodes: 2, podsPerNode: 2, serviceClusterIpRange: '10.2.0.0/16' });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await plane?.stop();
});

async function get<T>(path: string): Promise<T> {
  const r = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', path);
  if (r.statusCode !== 200) throw new Error(`GET ${path}: HTTP ${r.statusCode} ${r.body}`);
  return JSON.parse(r.body) as T;
}

async function post(path: string, body: object): Promise<Record<string, any>> {
  const r = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'POST', path, { body });
  if (r.statusCode !== 201) throw new Error(`POST ${path}: HTTP ${r.statusCode} ${r.body}`);
  return JSON.parse(r.body) as Record<string, any>;
}

/** Polls `check` every 200 ms until it returns a value other than undefined. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('GIVEN fakeNodes 2 and podsPerNode 2 WHEN the plane has started THEN two Ready fake Nodes each allow 2 Pods', async () => {
  expect(plane.nodeNames).toEqual(['kwok-node-0', 'kwok-node-1']);
  expect(plane.nodeName).toBe('kwok-node-0');
  const nodes = await get<{ items: { metadata: { name: string }; status: { allocatable: { pods: string }; conditions?: { type: string; status: string }[] } }[] }>('/api/v1/nodes');
  const byName = new Map(nodes.items.map((n) => [n.metadata.name, n]));
  for (const name of plane.nodeNames) {
    const node = byName.get(name);
    expect(node?.status.allocatable.pods).toBe('2');
    expect(node?.status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  }
}, TEST_TIMEOUT_MS);

test('GIVEN 2 nodes of 2 Pods WHEN a Deployment of 4 replicas is created THEN all 4 run, 2 on each node', async () => {
  await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sizing' } });
  const labels = { app: 'wide' };
  await post('/apis/apps/v1/namespaces/sizing/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'wide' },
    spec: { replicas: 4, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
  });
  const pods = await eventually('4 Running pods', async () => {
    const list = await get<{ items: { spec: { nodeName?: string }; status: { phase: string } }[] }>('/api/v1/namespaces/sizing/pods');
    const running = list.items.filter((p) => p.status.phase === 'Running');
    return running.length === 4 ? running : undefined;
  });
  const perNode = new Map<string, number>();
  for (const pod of pods) perNode.set(pod.spec.nodeName!, (perNode.get(pod.spec.nodeName!) ?? 0) + 1);
  expect(Object.fromEntries(perNode)).toEqual({ 'kwok-node-0': 2, 'kwok-node-1': 2 });
}, TEST_TIMEOUT_MS);

test('GIVEN serviceClusterIpRange 10.2.0.0/16 WHEN a ClusterIP Service is created THEN its IP is in that range', async () => {
  const svc = await post('/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'in-range' },
    spec: { ports: [{ port: 80 }], selector: { app: 'x' } },
  });
  expect(svc.spec.clusterIP).toMatch(/^10\.2\.\d+\.\d+$/);
  // the default range is a /24 of 10.0.0.0: the kubernetes Service moved too
  const kubernetes = await get<{ spec: { clusterIP: string } }>('/api/v1/namespaces/default/services/kubernetes');
  expect(kubernetes.spec.clusterIP).toBe('10.2.0.1');
}, TEST_TIMEOUT_MS);

test('GIVEN fakeNodes 0 WHEN startControlPlane is called THEN it refuses before starting anything', async () => {
  await expect(startControlPlane({ fakeNodes: 0 })).rejects.toThrow('fakeNodes must be an integer >= 1, got 0');
});
