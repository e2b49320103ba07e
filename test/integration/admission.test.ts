/**
 * The memcached example's admission hooks under what production does to them, against a real API
 * server calling the in-process webhook server on loopback:
 * - a terminating object under a lowered policy loses its last finalizer (ome#846, opendatahub-operator#2242);
 * - ratcheting (KEP-4008): a label-only, an unrelated and a correcting update of an object that violates a
 *   tightened rule are admitted, a changed field that violates is denied (openyurt#2647, kubernetes#94060);
 * - a read in a hook that never answers: the client gets the hook's denial naming the read, not the API
 *   server's `context deadline exceeded` (rollout-operator#441).
 *
 * Own control plane: the webhook configurations hold for every Memcached, which other files create on
 * the shared one. The hooks' reads go through a TCP proxy of this test's, which can stop forwarding
 * (without closing) to make a read slow.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { serveWebhooksLocally, type LocalWebhooks } from '../../lib/testing/local-webhooks.js';
import { MEMCACHED_POLICY_CONFIGMAP, MemcachedOperator } from '../../operators/memcached/index.js';
import { eventually } from '../support/eventually.js';
import { kubectl as runKubectl } from '../support/kubectl.js';

const BETA = '/apis/cache.example.com/v1beta1';

/** A TCP proxy to `target` that can hold every byte, both ways, until released (a read that does not answer). */
class StallingProxy {
  private stalled = false;
  private readonly held: (() => void)[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        this.sockets.add(from);
        from.on('data', (chunk) => (this.stalled ? this.held.push(() => to.write(chunk)) : to.write(chunk)));
        from.on('close', () => (this.sockets.delete(from), to.destroy()));
        from.on('error', () => to.destroy());
      }
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  stall(): void {
    this.stalled = true;
  }

  release(): void {
    this.stalled = false;
    this.held.splice(0).forEach((send) => send());
  }

  async close(): Promise<void> {
    this.sockets.forEach((s) => s.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let plane: ControlPlane;
let admin: ApiClient;
let proxy: StallingProxy;
let local: LocalWebhooks;
let dir: string;

const kubectl = (args: string[], stdin?: string) => runKubectl(plane.kubeconfigPath, args, stdin);

const get = (path: string) => admin.request('GET', path).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
const memcachedPath = (ns: string, name = '') => `${BETA}/namespaces/${ns}/memcacheds${name ? `/${name}` : ''}`;
const merge = (path: string, body: unknown) => admin.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
const manifest = (ns: string, name: string, replicas: number, memoryMiB = 64) =>
  `apiVersion: cache.example.com/v1beta1\nkind: Memcached\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  replicas: ${replicas}\n  cache:\n    memoryMiB: ${memoryMiB}\n`;

async function namespaceWithPolicy(ns: string, maxReplicas: number): Promise<void> {
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
  await admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: MEMCACHED_POLICY_CONFIGMAP }, data: { maxReplicas: String(maxReplicas) } } });
}
const lowerPolicy = (ns: string, maxReplicas: number) => merge(`/api/v1/namespaces/${ns}/configmaps/${MEMCACHED_POLICY_CONFIGMAP}`, { data: { maxReplicas: String(maxReplicas) } });

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'admission-'));
  await namespaceWithPolicy('ratchet', 3);
  await namespaceWithPolicy('tightened', 5);

  // A release before a tightened schema: spec.cache.memoryMiB had no minimum (today's is 16). One object is stored with 8.
  const operator = new MemcachedOperator(new App());
  const crd = JSON.parse(JSON.stringify(operator.customResourceDefinition.toJson())) as { spec: { versions: { name: string; storage: boolean; schema: { openAPIV3Schema: any } }[]; conversion?: unknown } }; // eslint-disable-line @typescript-eslint/no-explicit-any
  crd.spec.versions = crd.spec.versions.filter((v) => v.name === 'v1beta1').map((v) => ({ ...v, storage: true }));
  delete crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.cache.properties.memoryMiB.minimum;
  delete crd.spec.conversion;
  const before = join(dir, 'before.json');
  await writeFile(before, JSON.stringify(crd));
  await installCRDs(plane.kubeConfig, [before]);
  await admin.request('POST', memcachedPath('tightened'), { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'small', namespace: 'tightened' }, spec: { replicas: 1, cache: { memoryMiB: 8 } } } });

  // The hooks read the cluster through the proxy.
  const server = new URL(plane.server);
  proxy = new StallingProxy({ host: server.hostname, port: Number(server.port) });
  await proxy.listen();
  const proxied = new KubeConfig();
  proxied.loadFromString((await readFile(plane.kubeconfigPath, 'utf8')).replace(plane.server, `https://${server.hostname}:${proxy.port}`));
  local = await serveWebhooksLocally({ kubeConfig: proxied, operators: [operator] });
  await local.install();
  // The API server picks up new webhook configurations asynchronously: wait on a dry run the hook denies.
  await eventually('the validating webhook denies', async () => (await kubectl(['apply', '--dry-run=server', '-f', '-'], manifest('ratchet', 'probe', 5))).stderr.includes('must be at most 3'));
}, 10 * 60_000);

afterAll(async () => {
  proxy?.release();
  await local?.close();
  await proxy?.close();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN a terminating Memcached with a finalizer WHEN the policy is lowered below its replicas and the finalizer is removed THEN the removal is admitted and the object is gone', async () => {
  const ns = 'terminating';
  await namespaceWithPolicy(ns, 3);
  await admin.request('POST', memcachedPath(ns), { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'leaving', namespace: ns, finalizers: ['example.com/hold'] }, spec: { replicas: 3 } } });
  await lowerPolicy(ns, 1);
  // The lowered policy holds for an update that changes the spec.
  const edit = await kubectl(['apply', '-f', '-'], manifest(ns, 'leaving', 2));
  expect(edit.code).not.toBe(0);
  expect(edit.stderr).toContain('spec.replicas: Invalid value: 2: must be at most 1 (ConfigMap');

  await admin.request('DELETE', memcachedPath(ns, 'leaving'));
  expect((await get(memcachedPath(ns, 'leaving')))?.metadata?.deletionTimestamp).toBeDefined();
  const removed = await kubectl(['patch', 'memcacheds.cache.example.com', 'leaving', '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  expect(removed.stderr).toBe('');
  expect(removed.code).toBe(0);
  await eventually('the Memcached is gone', async () => (await get(memcachedPath(ns, 'leaving'))) === undefined);
});

test('GIVEN a Memcached over a lowered policy WHEN it is relabelled, edited elsewhere, edited to another violating value, and corrected THEN all but the violating edit are admitted', async () => {
  const ns = 'ratchet';
  await kubectl(['apply', '-f', '-'], manifest(ns, 'big', 3)).then((r) => expect(r.stderr).toBe(''));
  await lowerPolicy(ns, 1);

  const labelled = await kubectl(['label', 'memcacheds.cache.example.com', 'big', '-n', ns, 'team=cache']);
  expect(labelled.stderr).toBe('');
  expect(labelled.code).toBe(0);

  const unrelated = await kubectl(['apply', '-f', '-'], manifest(ns, 'big', 3, 32));
  expect(unrelated.code).toBe(0);
  expect(unrelated.stderr).toContain(`Warning: spec.replicas: Invalid value: 3: must be at most 1 (ConfigMap ${ns}/${MEMCACHED_POLICY_CONFIGMAP}, maxReplicas) (unchanged by this update, so allowed)`);
  expect((await get(memcachedPath(ns, 'big')))?.spec).toEqual({ replicas: 3, cache: { memoryMiB: 32 } });

  const worse = await kubectl(['apply', '-f', '-'], manifest(ns, 'big', 2, 32));
  expect(worse.code).not.toBe(0);
  expect(worse.stderr).toContain('The Memcached "big" is invalid:');
  expect(worse.stderr).toContain('spec.replicas: Invalid value: 2: must be at most 1 (ConfigMap');

  const corrected = await kubectl(['apply', '-f', '-'], manifest(ns, 'big', 1, 32));
  expect(corrected.stderr).toBe('');
  expect(corrected.code).toBe(0);
  expect((await get(memcachedPath(ns, 'big')))?.spec).toEqual({ replicas: 1, cache: { memoryMiB: 32 } });
});

test('GIVEN a Memcached stored before a schema tightened (memoryMiB 8 < today\'s 16) WHEN it is edited elsewhere or corrected THEN admitted; WHEN the field changes to another bad value THEN denied', async () => {
  const ns = 'tightened';
  expect((await get(memcachedPath(ns, 'small')))?.spec).toEqual({ replicas: 1, cache: { memoryMiB: 8 } });
  const unrelated = await kubectl(['apply', '-f', '-'], manifest(ns, 'small', 2, 8));
  expect(unrelated.code).toBe(0);
  expect(unrelated.stderr).toMatch(/Warning: spec\.cache\.memoryMiB: Too small.*\(unchanged by this update, so allowed\)/);

  const worse = await kubectl(['apply', '-f', '-'], manifest(ns, 'small', 2, 4));
  expect(worse.code).not.toBe(0);
  expect(worse.stderr).toMatch(/spec\.cache\.memoryMiB/);

  const corrected = await kubectl(['apply', '-f', '-'], manifest(ns, 'small', 2, 32));
  expect(corrected.stderr).toBe('');
  expect(corrected.code).toBe(0);
  expect((await get(memcachedPath(ns, 'small')))?.spec).toEqual({ replicas: 2, cache: { memoryMiB: 32 } });
});

test('GIVEN the policy read does not answer WHEN a Memcached is applied THEN kubectl gets the hook\'s Timeout denial naming the read, within the API server\'s timeout, and nothing is written', async () => {
  const ns = 'slow';
  await namespaceWithPolicy(ns, 3);
  proxy.stall();
  try {
    const result = await kubectl(['apply', '-f', '-'], manifest(ns, 'waiting', 1));
    expect(result.code).not.toBe(0);
    expect(result.stderr).not.toMatch(/context deadline exceeded|failed calling webhook/);
    expect(result.stderr).toContain(
      `admission webhook "validate.memcacheds.cache.example.com" denied the request: Memcached ${ns}/waiting: the validating hook of memcached-operator timed out: reading ConfigMap ${ns}/${MEMCACHED_POLICY_CONFIGMAP} did not finish within 9000 ms`,
    );
  } finally {
    proxy.release();
  }
  expect(await get(memcachedPath(ns, 'waiting'))).toBeUndefined();
  // With the reads answering again, the same apply is admitted.
  await eventually('admitted once reads answer', async () => (await kubectl(['apply', '-f', '-'], manifest(ns, 'waiting', 1))).code === 0);
});
