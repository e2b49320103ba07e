/**
 * `cdk8s-operator run --webhook-cert-dir DIR` against a real API server, as an operator installed by OLM
 * runs: someone else (here the test, under OLM its catalog operator) issues a CA and a serving
 * certificate, puts `tls.crt` + `tls.key` in DIR (OLM mounts its Secret `<deployment>-service-cert` at
 * `/tmp/k8s-webhook-server/serving-certs`) and writes the CA into the webhook configurations' and the CRD
 * conversion's `caBundle`. The operator serves the files, picks up a rotated pair without a restart, and
 * writes no Secret and no caBundle.
 *
 * The API server calls a `url` on 127.0.0.1 (no kube-proxy on the local control plane), so the
 * certificate is issued for `127.0.0.1` and `localhost`, where OLM's is for the Service's names.
 * Own control plane: the memcached webhook configurations (failurePolicy: Fail) would refuse other files'
 * Memcached writes.
 */
import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { isApiError, type KubeObject } from '../../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { type CertificateAndKey, createCertificateAuthority, issueServingCertificate } from '../../lib/runtime/webhook/x509.js';
import { MEMCACHED_POLICY_CONFIGMAP, MemcachedOperator } from '../../operators/memcached/index.js';
import { killCliProcesses, startCli } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';

const NS = 'cert-dir';
const DAY_MS = 86_400_000;
const WEBHOOK_CONFIGURATIONS = [
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/memcached-operator-webhook',
  '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/memcached-operator-webhook',
];
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com';

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
let certDir: string;
let child: ChildProcess | undefined;
let output = (): string => '';
const ca = createCertificateAuthority('olm-stand-in-ca', { notAfter: new Date(Date.now() + 30 * DAY_MS) });
const issue = (): CertificateAndKey => issueServingCertificate(ca, ['127.0.0.1', 'localhost'], { notAfter: new Date(Date.now() + 30 * DAY_MS) });
const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

/** Replaces both files, each atomically (write beside, rename), as a Secret volume update lands. */
async function writePair(pair: CertificateAndKey): Promise<void> {
  for (const [name, text] of [['tls.key', pair.keyPem], ['tls.crt', pair.certPem]] as const) {
    await writeFile(join(certDir, `.${name}.new`), text);
    await rename(join(certDir, `.${name}.new`), join(certDir, name));
  }
}

/** The serial number of the certificate the webhook server presents to a new connection, verified against the CA. */
function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem }, () => {
      const serial = socket.getPeerX509Certificate()!.serialNumber;
      socket.end();
      resolve(serial);
    });
    socket.on('error', reject);
  });
}

/** Names (namespace/name) and resourceVersions of every Secret in the cluster. */
async function secrets(): Promise<string[]> {
  const list = await admin.request<{ items: KubeObject[] }>('GET', '/api/v1/secrets');
  return list.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}@${s.metadata?.resourceVersion}`).sort();
}

async function resourceVersions(): Promise<string[]> {
  return Promise.all(WEBHOOK_CONFIGURATIONS.map(async (path) => String((await admin.request('GET', path)).metadata?.resourceVersion)));
}

/** Creates a Memcached (v1beta1) through the admission webhooks; the API server's answer, or its refusal. */
async function createMemcached(name: string, replicas: number): Promise<KubeObject> {
  return admin.request('POST', `/apis/cache.example.com/v1beta1/namespaces/${NS}/memcacheds`, {
    body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NS }, spec: { replicas } },
  });
}

let webhookPort: number;
let secretsBefore: string[];
let versionsBefore: string[];

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'webhook-cert-dir-'));
  certDir = join(dir, 'serving-certs');
  await mkdir(certDir);
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
  // At most 3 replicas in this namespace: what the validating webhook enforces (a denial proves it was called).
  await admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: MEMCACHED_POLICY_CONFIGMAP, namespace: NS }, data: { maxReplicas: '3' } } });

  // What OLM does before the operator starts: the serving certificate in the directory, the CA in the caBundles.
  await writePair(issue());
  webhookPort = await freePort();
  const file = join(dir, 'memcached.json');
  const operator = new MemcachedOperator(new App());
  const objects = operator.node.findAll().filter((c) => 'kind' in c && ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes((c as { kind: string }).kind));
  await writeFile(file, objects.map((o) => JSON.stringify((o as unknown as { toJson(): unknown }).toJson())).join('\n---\n'));
  await installCRDs(plane.kubeConfig, [file], 60_000, { webhook: { url: `https://127.0.0.1:${webhookPort}`, caPem: ca.certPem } });
  secretsBefore = await secrets();
  versionsBefore = await resourceVersions();
}, 10 * 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await eventually('run stops', async () => child!.exitCode !== null, { timeoutMs: 60_000 }).catch(() => child!.kill('SIGKILL'));
  }
  await killCliProcesses();
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN a certificate directory with a missing key WHEN run starts THEN it exits 1 naming the file and the reason', async () => {
  const empty = join(dir, 'empty');
  await mkdir(empty);
  await writeFile(join(empty, 'tls.crt'), issue().certPem);
  const { child: failing, output: out } = startCli([
    'run', '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
    '--webhook-bind-address', `127.0.0.1:${await freePort()}`, '--webhook-cert-dir', empty,
    '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
  ]);
  const code = await eventually('run exits', async () => (failing.exitCode !== null ? failing.exitCode : undefined), { timeoutMs: 90_000, context: () => `\noutput:\n${out()}` });
  expect(code).toBe(1);
  const failure = out().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; err?: Record<string, string> }).find((l) => l.msg === 'operators failed');
  expect(failure).toMatchObject({ level: 50, err: { name: 'WebhookCertificateError', step: 'webhook-certificate', reason: 'CertificateFileUnreadable' } });
  expect(failure!.err!.message).toBe(`webhook certificate: ${join(empty, 'tls.key')}: cannot be read: ENOENT: no such file or directory, open '${join(empty, 'tls.key')}'`);
}, 120_000);

test('GIVEN OLM\'s certificate in --webhook-cert-dir and its CA in the caBundles WHEN the API server calls the admission webhooks, before and after the files are rotated THEN they answer, the new certificate is served without a restart, and the operator writes no Secret and no caBundle', async () => {
  const probesPort = await freePort();
  ({ child, output } = startCli([
    'run', '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
    '--webhook-bind-address', `127.0.0.1:${webhookPort}`, '--webhook-cert-dir', certDir,
    '--metrics-bind-address', '0', '--health-probe-bind-address', `127.0.0.1:${probesPort}`,
  ]));
  const context = () => `\noutput:\n${output()}`;
  await eventually('run ready', async () => (await fetch(`http://127.0.0.1:${probesPort}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 120_000, context });

  // Admission through the webhooks, trusted by the CA in the caBundle: mutated (label) and validated (denial).
  const first = await createMemcached('first', 1);
  expect((first.metadata?.labels as Record<string, string>)['app.kubernetes.io/name']).toBe('memcached');
  const denied = await createMemcached('too-big', 5).then(() => undefined, (err: unknown) => err);
  expect(isApiError(denied)).toBe(true);
  expect((denied as Error).message).toContain('must be at most 3');
  expect(await servedSerial(webhookPort)).toBe(serialOf(await readFile(join(certDir, 'tls.crt'), 'utf8')));

  // Rotation, as OLM renews the Secret and the kubelet updates the mounted files: same CA, new pair.
  const rotated = issue();
  await writePair(rotated);
  await eventually('the rotated certificate served', async () => (await servedSerial(webhookPort)) === serialOf(rotated.certPem), { timeoutMs: 60_000, context });
  const second = await createMemcached('second', 2);
  expect((second.metadata?.labels as Record<string, string>)['app.kubernetes.io/name']).toBe('memcached');
  await expect(createMemcached('too-big-again', 9)).rejects.toThrow(/must be at most 3/);
  // A conversion through /convert with the new certificate: the objects read as v1alpha1.
  const old = await admin.request('GET', `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds/second`);
  expect((old.spec as { size?: number }).size).toBe(2);

  // Same process all along, and nothing written where the self-managed mode writes.
  expect(child.exitCode).toBeNull();
  expect(output()).toContain('webhook serving certificate reloaded');
  expect(await secrets()).toEqual(secretsBefore);
  await expect(admin.request('GET', '/api/v1/namespaces/memcached-operator-system/secrets/memcached-operator-webhook-tls')).rejects.toMatchObject({ code: 404 });
  expect(await resourceVersions()).toEqual(versionsBefore); // the webhook configurations were not written
  const caBundle = Buffer.from(ca.certPem).toString('base64');
  const crd = await admin.request('GET', CRD_PATH);
  expect((crd.spec as { conversion: { webhook: { clientConfig: { caBundle?: string } } } }).conversion.webhook.clientConfig.caBundle).toBe(caBundle);
}, 300_000);
