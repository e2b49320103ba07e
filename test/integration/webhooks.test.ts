/**
 * Conversion and admission webhooks of the memcached example against a real API server, which calls
 * the in-process webhook server on loopback (the clientConfig rewritten to a url, as envtest does).
 *
 * Own control plane: the test replaces the shared memcached CRD with its pre-upgrade, single-version form.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { Registry } from 'prom-client';
import { Operator } from '../../lib/operator/operator.js';
import { CONVERSION_DATA_ANNOTATION } from '../../lib/operator/versions/conversion.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { ServingCertificate } from '../../lib/runtime/webhook/serving-certificate.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { serveWebhooksLocally, type LocalWebhooks } from '../../lib/testing/local-webhooks.js';
import { MEMCACHED_POLICY_CONFIGMAP, MemcachedOperator, MemcachedV1alpha1Spec } from '../../operators/memcached/index.js';
import { eventually } from '../support/eventually.js';
import { kubectl as runKubectl } from '../support/kubectl.js';

/** The memcached operator as released before v1beta1: v1alpha1 only, no webhooks. */
class MemcachedBeforeUpgrade extends Operator<typeof MemcachedV1alpha1Spec> {
  constructor(scope: Construct) {
    super(scope, 'memcached-before', { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached', shortNames: ['mc'], spec: MemcachedV1alpha1Spec, name: 'memcached-operator' });
  }
  render(): void {}
}

const ALPHA = '/apis/cache.example.com/v1alpha1';
const BETA = '/apis/cache.example.com/v1beta1';
const NS = 'webhooks';

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
let local: LocalWebhooks;
const registry = new Registry();

const kubectl = (args: string[], stdin?: string) => runKubectl(plane.kubeconfigPath, args, stdin);

const get = (path: string) => admin.request('GET', path).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'webhooks-'));
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });

  // Before the upgrade: v1alpha1 is the only (and storage) version; an object is created in it.
  const before = join(dir, 'before.json');
  await writeFile(before, JSON.stringify(new MemcachedBeforeUpgrade(new App()).customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [before]);
  await admin.request('POST', `${ALPHA}/namespaces/${NS}/memcacheds`, {
    body: { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'old', namespace: NS }, spec: { size: 2 } },
  });

  // The upgrade: v1beta1 hub and storage, v1alpha1 served and deprecated, webhooks served here.
  local = await serveWebhooksLocally({ kubeConfig: plane.kubeConfig, operators: [new MemcachedOperator(new App())], registry });
  await local.install();
}, 10 * 60_000);

afterAll(async () => {
  await local?.close();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN a v1alpha1 Memcached created before the upgrade WHEN read THEN it reads as v1beta1 and as v1alpha1, and kubectl gets memcacheds.v1alpha1 with the deprecation warning', async () => {
  const asBeta = await eventually('old Memcached readable as v1beta1', async () => (await get(`${BETA}/namespaces/${NS}/memcacheds/old`)) as KubeObject | undefined);
  expect(asBeta.spec).toEqual({ replicas: 2, cache: { memoryMiB: 64 } });
  const asAlpha = (await get(`${ALPHA}/namespaces/${NS}/memcacheds/old`))!;
  expect(asAlpha.spec).toEqual({ size: 2 });
  expect(asAlpha.metadata?.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeUndefined();

  const result = await kubectl(['get', 'memcacheds.v1alpha1.cache.example.com', '-n', NS, 'old', '-o', 'json']);
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ apiVersion: 'cache.example.com/v1alpha1', spec: { size: 2 } });
  expect(result.stderr).toContain('cache.example.com/v1alpha1 Memcached is deprecated; use cache.example.com/v1beta1');
  const table = await kubectl(['get', 'memcacheds.v1beta1.cache.example.com', '-n', NS]);
  expect(table.stdout).toMatch(/NAME\s+REPLICAS\s+READY\s+AGE\nold\s+2\s/);
});

test('GIVEN a v1beta1-only field set WHEN a v1alpha1 client updates the object (PUT and kubectl apply) THEN the field is kept and the new size lands', async () => {
  await admin.request('PATCH', `${BETA}/namespaces/${NS}/memcacheds/old`, { body: { spec: { cache: { memoryMiB: 32 } } }, contentType: 'application/merge-patch+json' });
  const alpha = (await get(`${ALPHA}/namespaces/${NS}/memcacheds/old`))!;
  expect(JSON.parse(alpha.metadata!.annotations![CONVERSION_DATA_ANNOTATION]!)).toEqual({ spec: { cache: { memoryMiB: 32 }, replicas: 2 } });

  // An update as a v1alpha1 client makes it: read, change the field it knows, write back.
  await admin.request('PUT', `${ALPHA}/namespaces/${NS}/memcacheds/old`, { body: { ...alpha, spec: { size: 5 } } });
  expect((await get(`${BETA}/namespaces/${NS}/memcacheds/old`))!.spec).toEqual({ replicas: 5, cache: { memoryMiB: 32 } });

  const manifest = `apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: old\n  namespace: ${NS}\nspec:\n  size: 1\n`;
  const applied = await kubectl(['apply', '-f', '-'], manifest);
  expect(applied.stderr).not.toMatch(/error/i);
  expect(applied.code).toBe(0);
  const stored = (await get(`${BETA}/namespaces/${NS}/memcacheds/old`))!;
  expect(stored.spec).toEqual({ replicas: 1, cache: { memoryMiB: 32 } });
  expect(stored.metadata?.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeUndefined();
});

test('GIVEN a policy ConfigMap and a foreign Service WHEN kubectl applies a Memcached breaking both rules THEN it is denied, every field error is printed, and nothing is written', async () => {
  await admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: MEMCACHED_POLICY_CONFIGMAP }, data: { maxReplicas: '2' } } });
  await admin.request('POST', `/api/v1/namespaces/${NS}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'taken' }, spec: { ports: [{ port: 80 }] } } });
  const manifest = `apiVersion: cache.example.com/v1beta1\nkind: Memcached\nmetadata:\n  name: taken\n  namespace: ${NS}\nspec:\n  replicas: 5\n`;
  // The API server picks up new webhook configurations asynchronously: wait on a dry run, which writes nothing.
  await eventually('the validating webhook denies', async () => (await kubectl(['apply', '--dry-run=server', '-f', '-'], manifest)).code !== 0);

  const result = await kubectl(['apply', '-f', '-'], manifest);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain('The Memcached "taken" is invalid:');
  expect(result.stderr).toContain(`* spec.replicas: Invalid value: 5: must be at most 2 (ConfigMap ${NS}/${MEMCACHED_POLICY_CONFIGMAP}, maxReplicas)`);
  expect(result.stderr).toContain(`* metadata.name: Invalid value: "taken": Service ${NS}/taken already exists and is not managed by memcached-operator`);
  expect(await get(`${BETA}/namespaces/${NS}/memcacheds/taken`)).toBeUndefined();

  // A v1alpha1 request reaches the same hook (matchPolicy: Equivalent converts it to the hub).
  const alpha = await kubectl(['apply', '-f', '-'], manifest.replace('v1beta1', 'v1alpha1').replace('replicas: 5', 'size: 3'));
  expect(alpha.stderr).toContain('* spec.replicas: Invalid value: 3: must be at most 2');
});

test('GIVEN the mutating hook WHEN a Memcached is created THEN its label is in the stored object', async () => {
  const body = { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: 'labelled', namespace: NS }, spec: { replicas: 1 } };
  await eventually('the mutating webhook labels', async () => {
    const dry = await admin.request('POST', `${BETA}/namespaces/${NS}/memcacheds`, { body, query: { dryRun: 'All' } });
    return dry.metadata?.labels?.['app.kubernetes.io/name'] === 'memcached';
  });
  await admin.request('POST', `${BETA}/namespaces/${NS}/memcacheds`, { body });
  const stored = (await get(`${BETA}/namespaces/${NS}/memcacheds/labelled`))!;
  expect(stored.metadata?.labels).toEqual({ 'app.kubernetes.io/name': 'memcached' });
  expect(stored.spec).toEqual({ replicas: 1, cache: { memoryMiB: 64 } });
});

test('GIVEN the webhook server WHEN requests were served THEN controller_runtime_webhook_* metrics count them by path and code', async () => {
  const text = await registry.metrics();
  expect(text).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/convert",code="200"\} [1-9]/);
  expect(text).toMatch(/controller_runtime_webhook_requests_total\{webhook="\/validate-cache-example-com-v1beta1-memcached",code="200"\} [1-9]/);
  expect(text).toMatch(/controller_runtime_webhook_latency_seconds_count\{webhook="\/mutate-cache-example-com-v1beta1-memcached"\} [1-9]/);
});

/** The serving certificate a fresh TLS connection to the webhook server gets (PEM-less: its fingerprint). */
function servedFingerprint(caPem: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: local.server.port, ca: caPem, servername: 'localhost' }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

test('GIVEN self-managed certificates WHEN the serving certificate is rotated THEN the caBundle is in the CRD, the new certificate is served without restart, and no request fails', async () => {
  // The Secret, its CA in the CRD's caBundle, the certificate for loopback: what `run` does, pointed at this server.
  const certificates = new ServingCertificate({
    client: admin,
    mode: 'self-managed',
    namespace: NS,
    secretName: 'memcached-operator-webhook-tls',
    hosts: ['127.0.0.1', 'localhost'],
    caBundleTargets: { customResourceDefinitions: ['memcacheds.cache.example.com'], validatingWebhookConfigurations: ['memcached-operator-webhook'], mutatingWebhookConfigurations: ['memcached-operator-webhook'] },
    onCertificate: (certificate) => local.server.setCertificate(certificate),
  });
  const first = await certificates.load();
  local.server.setCertificate(first.serving);
  const crd = (await admin.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com')) as { spec: { conversion: { webhook: { clientConfig: { caBundle: string } } } } };
  expect(Buffer.from(crd.spec.conversion.webhook.clientConfig.caBundle, 'base64').toString()).toBe(first.caPem);
  // The API server rebuilds its webhook clients with the new caBundle asynchronously: settle on ten conversions in a row.
  await eventually('conversions with the self-managed CA', async () => {
    for (let i = 0; i < 10; i++) await admin.request('GET', `${ALPHA}/namespaces/${NS}/memcacheds`);
    return true;
  });

  const failures: string[] = [];
  let served = 0;
  const stop = new AbortController();
  const traffic = (async () => {
    while (!stop.signal.aborted) {
      try {
        await admin.request('GET', `${ALPHA}/namespaces/${NS}/memcacheds`); // every item through /convert
        served++;
      } catch (err) {
        failures.push((err as Error).message);
        await new Promise((r) => setTimeout(r, 50)); // failures are counted; don't spin on them
      }
    }
  })();
  try {
    const before = await servedFingerprint(first.caPem);
    await eventually('conversions before the rotation', async () => served >= 3);
    await certificates.rotate();
    const rotated = certificates.state().serving.certPem;
    expect(rotated).not.toBe(first.serving.certPem);
    expect(certificates.state().caPem).toBe(first.caPem); // same CA: the caBundle stays valid
    const after = await eventually('the rotated certificate served', async () => {
      const fingerprint = await servedFingerprint(first.caPem);
      return fingerprint !== before ? fingerprint : undefined;
    });
    const servedAtRotation = served;
    await eventually('conversions after the rotation', async () => served >= servedAtRotation + 3);
    expect(after).not.toBe(before);
  } finally {
    stop.abort();
    await traffic;
  }
  expect(failures).toEqual([]);
});

test('GIVEN a self-managed certificate with less than renewBefore left WHEN checked THEN it is renewed in the Secret with the same CA and handed to the server', async () => {
  const options = { client: admin, mode: 'self-managed' as const, namespace: NS, secretName: 'renewal-tls', hosts: ['127.0.0.1'], validityMs: 60 * 60_000 };
  const issued = await new ServingCertificate({ ...options, renewBeforeMs: 10 * 60_000 }).load(); // 1 h left, renew at 10 min: kept
  const handed: string[] = [];
  const due = new ServingCertificate({ ...options, renewBeforeMs: 2 * 60 * 60_000, onCertificate: (c) => handed.push(c.certPem) }); // renew at 2 h: due
  const renewed = await due.load();
  expect(renewed.serving.certPem).not.toBe(issued.serving.certPem);
  expect(renewed.caPem).toBe(issued.caPem);
  const secret = (await admin.request('GET', `/api/v1/namespaces/${NS}/secrets/renewal-tls`)) as { data: Record<string, string> };
  expect(Buffer.from(secret.data['tls.crt']!, 'base64').toString()).toBe(renewed.serving.certPem);
  // Another replica renews: this one picks the new certificate up at its next check.
  await new ServingCertificate({ ...options, renewBeforeMs: 10 * 60_000 }).rotate();
  await due.check();
  expect(handed).toHaveLength(1);
  expect(handed[0]).not.toBe(renewed.serving.certPem);
});

test('GIVEN cert-manager certificates WHEN cert-manager writes and then renews the Secret THEN the operator loads it and picks the renewal up', async () => {
  const write = async (method: 'POST' | 'PUT', cert: { certPem: string; keyPem: string }) => {
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const body = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'cm-tls', namespace: NS }, data: { 'tls.crt': b64(cert.certPem), 'tls.key': b64(cert.keyPem), 'ca.crt': b64(local.ca.certPem) } };
    await admin.request(method, method === 'POST' ? `/api/v1/namespaces/${NS}/secrets` : `/api/v1/namespaces/${NS}/secrets/cm-tls`, { body });
  };
  const first = local.issueCertificate();
  const handed: string[] = [];
  const certificates = new ServingCertificate({ client: admin, mode: 'cert-manager', namespace: NS, secretName: 'cm-tls', hosts: [], onCertificate: (c) => handed.push(c.certPem) });
  const loading = certificates.load(); // waits for the Secret
  await write('POST', first);
  const state = await loading;
  expect(state).toEqual({ serving: first, caPem: local.ca.certPem });
  const renewed = local.issueCertificate();
  await write('PUT', renewed);
  await certificates.check();
  expect(handed).toEqual([renewed.certPem]);
});

test('GIVEN the operator stopped WHEN a Memcached is written THEN failurePolicy Fail denies it with a clear message and nothing is written', async () => {
  await local.server.close();
  const result = await kubectl(['apply', '-f', '-'], `apiVersion: cache.example.com/v1beta1\nkind: Memcached\nmetadata:\n  name: while-down\n  namespace: ${NS}\nspec:\n  replicas: 1\n`);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(/failed calling webhook "(mutate|validate)\.memcacheds\.cache\.example\.com"/);
  expect(result.stderr).toMatch(/connection refused/);
  expect(await get(`${BETA}/namespaces/${NS}/memcacheds/while-down`)).toBeUndefined();
  // A v1alpha1 read needs /convert: it fails too, saying so, rather than returning a half-converted object.
  const read = await kubectl(['get', 'memcacheds.v1alpha1.cache.example.com', '-n', NS, 'old']);
  expect(read.code).not.toBe(0);
  expect(read.stderr).toMatch(/conversion webhook for cache.example.com\/v1beta1, Kind=Memcached failed/);
});
