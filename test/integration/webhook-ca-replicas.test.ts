/**
 * Two replicas with self-managed webhook certificates, sharing the Secret `memcached-operator-webhook-tls`,
 * against a real API server that reaches them through a TCP proxy sending each connection to one replica
 * or the other (as a Service would). The Secret is deleted (a rotation by hand, a namespace restore):
 * one CA must win, both replicas serve certificates it signed, the CRD and the webhook configurations
 * hold it, and the caBundle is written a few times, not in a loop between the replicas (issue 37, case 1).
 *
 * Own control plane: the test installs the memcached CRD pointed at its proxy.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { App, ApiObject } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import type { CaBundleWriteMetrics } from '../../lib/runtime/webhook/ca-bundle-injector.js';
import { ServingCertificate } from '../../lib/runtime/webhook/serving-certificate.js';
import { type WebhookServer, startWebhookServer } from '../../lib/runtime/webhook/webhook-server.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { eventually } from '../support/eventually.js';

const NS = 'ca-replicas';
const SECRET = 'memcached-operator-webhook-tls';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com';
const CONFIGURATION_PATHS = [
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/memcached-operator-webhook',
  '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/memcached-operator-webhook',
];
const ALPHA = '/apis/cache.example.com/v1alpha1';
const BETA = '/apis/cache.example.com/v1beta1';

interface Replica {
  readonly name: string;
  readonly client: ApiClient;
  readonly certificate: ServingCertificate;
  server: WebhookServer;
  loop?: Promise<void>;
}

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
let proxy: net.Server;
/** The proxy's open connections (the API server keeps them alive), closed at the end. */
const proxied = new Set<net.Socket>();
const replicas: Replica[] = [];
const stop = new AbortController();
const writes = { written: 0, undone: 0 };
/** Every log line of both replicas, printed when a wait fails. */
const lines: string[] = [];
const replicaLogger = (name: string) => {
  const line = (level: string) => (fields: object, msg: string) => void lines.push(`${name} ${level} ${msg} ${JSON.stringify(fields)}`);
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
};
const logContext = () => `\nreplica logs:\n${lines.slice(-80).join('\n')}`;
const metrics: CaBundleWriteMetrics = { written: () => writes.written++, undone: () => writes.undone++ };

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'ca-replicas-'));
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  const operator = new MemcachedOperator(new App());

  // Replica a rotates (checks the Secret) every 300 ms; replica b only every 10 min: b learns of a new CA
  // from the Secret when it is about to write a caBundle, or not in this test.
  for (const [name, checkIntervalMs] of [['a', 300], ['b', 600_000]] as const) {
    const client = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: `replica-${name}` });
    const replica: Partial<Replica> = { name, client };
    const certificate = new ServingCertificate({
      client,
      mode: 'self-managed',
      namespace: NS,
      secretName: SECRET,
      hosts: ['127.0.0.1', 'localhost'],
      caBundleTargets: { customResourceDefinitions: ['memcacheds.cache.example.com'], validatingWebhookConfigurations: ['memcached-operator-webhook'], mutatingWebhookConfigurations: ['memcached-operator-webhook'] },
      checkIntervalMs,
      caBundleMetrics: metrics,
      onCertificate: (next) => replica.server?.setCertificate(next),
      logger: replicaLogger(name),
    });
    const state = await certificate.load(); // a creates the Secret (its targets are not installed yet), b reads it
    const server = await startWebhookServer({ operators: [operator], client, bindAddress: '127.0.0.1:0', certificate: state.serving });
    Object.assign(replica, { certificate, server });
    replicas.push(replica as Replica);
  }
  expect(replicas[1]!.certificate.state().caPem).toBe(replicas[0]!.certificate.state().caPem);

  // The API server reaches the replicas through a proxy that alternates between them, as a Service would.
  let next = 0;
  proxy = net.createServer((socket) => {
    const upstream = net.connect(replicas[next++ % replicas.length]!.server.port, '127.0.0.1');
    proxied.add(socket).add(upstream);
    socket.on('close', () => proxied.delete(socket));
    upstream.on('close', () => proxied.delete(upstream));
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const file = join(dir, 'memcached.json');
  const objects = operator.node
    .findAll()
    .filter((c): c is ApiObject => ApiObject.isApiObject(c))
    .filter((o) => ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes(o.kind))
    .map((o) => JSON.stringify(o.toJson()));
  await writeFile(file, objects.join('\n---\n'));
  await installCRDs(plane.kubeConfig, [file], 60_000, { webhook: { url: `https://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, caPem: replicas[0]!.certificate.state().caPem } });
  for (const replica of replicas) replica.loop = replica.certificate.run(stop.signal);
}, 10 * 60_000);

afterAll(async () => {
  stop.abort();
  for (const replica of replicas) {
    await replica.loop;
    await replica.server.close();
    replica.client.close();
  }
  for (const socket of proxied) socket.destroy();
  await new Promise((resolve) => proxy?.close(resolve));
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const caOf = (caBundle: string | undefined) => (caBundle === undefined ? undefined : Buffer.from(caBundle, 'base64').toString());

/** The CAs in the CRD's conversion clientConfig and in every webhook of both configurations. */
async function caBundles(): Promise<(string | undefined)[]> {
  const crd = (await admin.request('GET', CRD_PATH)) as { spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } } };
  const found = [caOf(crd.spec.conversion.webhook.clientConfig.caBundle)];
  for (const path of CONFIGURATION_PATHS) {
    const configuration = (await admin.request('GET', path)) as { webhooks: { clientConfig: { caBundle?: string } }[] };
    found.push(...configuration.webhooks.map((w) => caOf(w.clientConfig.caBundle)));
  }
  return found;
}

async function secretCa(): Promise<string | undefined> {
  try {
    const secret = (await admin.request('GET', `/api/v1/namespaces/${NS}/secrets/${SECRET}`)) as { data: Record<string, string> };
    return caOf(secret.data['ca.crt']);
  } catch (err) {
    if (isApiError(err, 404)) return undefined;
    throw err;
  }
}

/** Whether `replica`'s server completes a TLS handshake with `caPem` as the only trusted CA (its certificate is signed by it). */
function servesCertificateOf(replica: Replica, caPem: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port: replica.server.port, ca: caPem, servername: 'localhost' }, () => {
      resolve(true);
      socket.end();
    });
    socket.on('error', () => resolve(false));
  });
}

const generation = async () => ((await admin.request('GET', CRD_PATH)) as KubeObject).metadata!.generation!;

/** Ten conversions (a v1alpha1 list of an object stored as v1beta1) in a row and an admitted create: every connection the proxy makes reaches a replica the API server trusts. */
async function webhooksWork(name: string): Promise<boolean> {
  for (let i = 0; i < 10; i++) await admin.request('GET', `${ALPHA}/namespaces/${NS}/memcacheds`);
  const created = (await admin.request('POST', `${BETA}/namespaces/${NS}/memcacheds`, {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NS }, spec: { replicas: 1 } },
  })) as KubeObject;
  return created.metadata?.name === name;
}

test('GIVEN two replicas with self-managed certificates WHEN the webhook Secret is deleted THEN one CA wins: both serve certificates it signed, every caBundle holds it, the CRD is written a few times, and conversion and admission work', async () => {
  const firstCa = replicas[0]!.certificate.state().caPem;
  await eventually('the caBundles hold the first CA', async () => (await caBundles()).every((ca) => ca === firstCa));
  await eventually('conversion and admission before the Secret is deleted', () => webhooksWork('before'), { timeoutMs: 60_000 });
  const generationBefore = await generation();
  const writesBefore = writes.written;

  await admin.request('DELETE', `/api/v1/namespaces/${NS}/secrets/${SECRET}`);

  // One CA wins: the one a created anew, stored in the Secret, is the one every replica serves and every caBundle holds.
  const winner = await eventually('a new CA in the Secret, in every caBundle and served by both replicas', async () => {
    const ca = await secretCa();
    if (!ca || ca === firstCa) return undefined;
    if (!(await caBundles()).every((found) => found === ca)) return undefined;
    for (const replica of replicas) {
      if (replica.certificate.state().caPem !== ca) return undefined;
      if (!(await servesCertificateOf(replica, ca))) return undefined;
    }
    return ca;
  }, { timeoutMs: 60_000, context: logContext });
  // The API server rebuilds its webhook clients asynchronously: settle on ten conversions in a row and a create.
  await eventually('conversion and admission after the Secret was made anew', () => webhooksWork('after'), { timeoutMs: 60_000 });

  // Nothing was fought over: the winner is still everywhere, the CRD's spec was written once or twice
  // (not hundreds of times), and no write was undone.
  expect(await secretCa()).toBe(winner);
  expect((await caBundles()).every((found) => found === winner)).toBe(true);
  const grown = (await generation()) - generationBefore;
  expect(grown).toBeGreaterThanOrEqual(1);
  expect(grown).toBeLessThanOrEqual(3);
  expect(writes.written - writesBefore).toBeLessThanOrEqual(2 * 3); // at most each replica once per target
  expect(writes.undone).toBe(0);
}, 5 * 60_000);

test('GIVEN another writer that keeps removing the CRD caBundle WHEN it is undone again and again THEN it is put back each time, each undo is counted and told with the writer that undid it', async () => {
  const ca = await secretCa();
  expect(ca).toBeDefined();
  const undoneBefore = writes.undone;
  const crdCa = async () => (await caBundles())[0];
  // A GitOps tool re-applying the CRD without caBundle, three times, each right after the operator put it back.
  for (let round = 0; round < 3; round++) {
    await eventually(`caBundle put back (round ${round})`, async () => (await crdCa()) === ca, { timeoutMs: 60_000, context: logContext });
    await admin.request('PATCH', CRD_PATH, { body: [{ op: 'remove', path: '/spec/conversion/webhook/clientConfig/caBundle' }], contentType: 'application/json-patch+json' });
  }
  await eventually('caBundle put back after the last undo', async () => (await crdCa()) === ca, { timeoutMs: 60_000, context: logContext });
  // The second and third removals came within 30 s of a write: undone, counted, and told at warn.
  expect(writes.undone - undoneBefore).toBeGreaterThanOrEqual(2);
  const told = lines.filter((l) => l.includes(' warn the webhook caBundle written was undone by another writer'));
  expect(told.length).toBeGreaterThanOrEqual(2);
  expect(told[0]).toMatch(/"undoneBy":"[^"]+"/);
  expect(told[0]).toMatch(/"delayMs":\d+/);
}, 5 * 60_000);
