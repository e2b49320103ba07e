/**
 * Credentials rotated on disk while an ApiClient runs, against the run's shared control plane. The API
 * server says who it sees: a SelfSubjectReview
 * (kubernetes.io/docs/reference/access-authn-authz/authentication/#self-subject-review) answers with the
 * user of the request's certificate or token.
 *
 * - a kubeconfig with `client-certificate`/`client-key` files: rewritten from user A to user B, the next
 *   requests are B (on a new connection: the idle keep-alive one authenticated as A is not reused), while
 *   a watch opened as A keeps delivering events;
 * - in-cluster config (client-node's loadFromCluster over a temp dir laid out like
 *   /var/run/secrets/kubernetes.io/serviceaccount): the token file rewritten from ServiceAccount A's token
 *   to B's is read again after 50 s, and at once after a 401;
 * - the CA file: a bundle that doesn't hold the cluster's CA fails; rewritten with it, requests succeed;
 *   rewritten back, new requests fail again (no connection trusted under the old bundle is reused).
 *
 * Re-read intervals run on a ManualClock: the test moves time rather than sleeping.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { WatchEvent } from '../../lib/runtime/client/kube-client.js';
import { ManualClock } from '../../lib/runtime/clock.js';
import { createControlPlanePki, issueClientCertificate } from '../../lib/testing/pki.js';
import { TEST_KUBECONFIG_ENV, createTestNamespace, testKubeConfig } from '../support/cluster.js';

const TEST_TIMEOUT_MS = 120_000;

let admin: ApiClient;
let server: string;
let pkiDir: string;
let caPem: string;
let dir: string;
const clients: ApiClient[] = [];

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig() });
  server = admin.server;
  pkiDir = join(dirname(process.env[TEST_KUBECONFIG_ENV]!), 'pki');
  caPem = await readFile(join(pkiDir, 'ca.crt'), 'utf8');
  dir = await mkdtemp(join(tmpdir(), 'credential-rotation-'));
});

afterAll(async () => {
  for (const client of clients) client.close();
  admin?.close();
  await rm(dir, { recursive: true, force: true });
});

function track(client: ApiClient): ApiClient {
  clients.push(client);
  return client;
}

/** The user name the API server gives the client's credentials. */
async function whoAmI(client: ApiClient): Promise<string> {
  const review = await client.request<{ status?: { userInfo?: { username?: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return review.status?.userInfo?.username ?? '';
}

/** A kubeconfig file whose cluster and user point at credential files, loaded the way `cdk8s-operator run --kubeconfig` loads it. */
async function fileKubeConfig(files: { ca: string; cert: string; key: string }): Promise<KubeConfig> {
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: local\n  cluster:\n    server: ${server}\n    certificate-authority: ${files.ca}`,
    'users:',
    `- name: rotating\n  user:\n    client-certificate: ${files.cert}\n    client-key: ${files.key}`,
    'contexts:',
    '- name: local\n  context:\n    cluster: local\n    user: rotating',
    'current-context: local',
  ].join('\n');
  await writeFile(path, text);
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

test(
  'GIVEN client-certificate/client-key files rewritten from user A to user B THEN new requests are B while a watch opened as A carries on',
  async () => {
    const [a, b] = await Promise.all([
      issueClientCertificate(pkiDir, { commonName: 'rotation-a', organizations: ['system:masters'] }),
      issueClientCertificate(pkiDir, { commonName: 'rotation-b', organizations: ['system:masters'] }),
    ]);
    const files = { ca: join(dir, 'cert-test-ca.crt'), cert: join(dir, 'client.crt'), key: join(dir, 'client.key') };
    await Promise.all([writeFile(files.ca, caPem), writeFile(files.cert, a.certPem), writeFile(files.key, a.keyPem)]);
    const clock = new ManualClock();
    const client = track(new ApiClient({ kubeConfig: await fileKubeConfig(files), credentials: { clock } }));
    const namespace = await createTestNamespace('credential-rotation', admin);

    expect(await whoAmI(client)).toBe('rotation-a');
    const watching = new AbortController();
    // Selected by label: the namespace also holds kube-root-ca.crt, which the controller manager adds.
    const events = client.watch<{ metadata: { name: string } }>(`/api/v1/namespaces/${namespace}/configmaps`, { labelSelector: 'test=credential-rotation' }, watching.signal);
    const first = events.next(); // sends the watch request as A
    await createConfigMap(namespace, 'before-rotation');
    expect(((await first).value as WatchEvent<{ metadata: { name: string } }>).object.metadata.name).toBe('before-rotation');

    await Promise.all([writeFile(files.cert, b.certPem), writeFile(files.key, b.keyPem)]);
    clock.advance(1000);
    expect(await whoAmI(client)).toBe('rotation-b');
    expect(await whoAmI(client)).toBe('rotation-b');

    await createConfigMap(namespace, 'after-rotation');
    const next = await events.next();
    expect((next.value as WatchEvent<{ metadata: { name: string } }>).object.metadata.name).toBe('after-rotation');
    watching.abort();
    await events.return(undefined);
  },
  TEST_TIMEOUT_MS,
);

async function createConfigMap(namespace: string, name: string): Promise<void> {
  await admin.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { test: 'credential-rotation' } } },
  });
}

/** A token of ServiceAccount `namespace/name` from the TokenRequest API, as the kubelet projects it. */
async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  await admin.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  const request = await admin.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return request.status.token;
}

/**
 * client-node's in-cluster config over `prefix` (token, ca.crt and namespace under
 * prefix/var/run/secrets/kubernetes.io/serviceaccount), with KUBERNETES_SERVICE_HOST/PORT set for the call only.
 */
async function inClusterKubeConfig(prefix: string, token: string, namespace: string): Promise<{ kc: KubeConfig; tokenPath: string }> {
  const saDir = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
  await mkdir(saDir, { recursive: true });
  const tokenPath = join(saDir, 'token');
  await Promise.all([writeFile(tokenPath, token), writeFile(join(saDir, 'ca.crt'), caPem), writeFile(join(saDir, 'namespace'), namespace)]);
  const url = new URL(server);
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = url.hostname;
  process.env.KUBERNETES_SERVICE_PORT = url.port;
  try {
    const kc = new KubeConfig();
    kc.loadFromCluster(prefix);
    return { kc, tokenPath };
  } finally {
    restoreEnv('KUBERNETES_SERVICE_HOST', saved.host);
    restoreEnv('KUBERNETES_SERVICE_PORT', saved.port);
  }
}

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

test(
  'GIVEN in-cluster config whose token file is rotated from ServiceAccount A to B THEN requests are B once the token in hand is 50 s old',
  async () => {
    const namespace = await createTestNamespace('credential-rotation', admin);
    const [tokenA, tokenB] = await Promise.all([serviceAccountToken(namespace, 'sa-a'), serviceAccountToken(namespace, 'sa-b')]);
    const { kc, tokenPath } = await inClusterKubeConfig(join(dir, 'pod-1'), tokenA, namespace);
    const clock = new ManualClock();
    const client = track(new ApiClient({ kubeConfig: kc, credentials: { clock } }));

    expect(await whoAmI(client)).toBe(`system:serviceaccount:${namespace}:sa-a`);
    await writeFile(tokenPath, tokenB);
    clock.advance(49_000);
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${namespace}:sa-a`); // client-go's cache: read again after 50 s
    clock.advance(1000);
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${namespace}:sa-b`);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN in-cluster config whose token the API server rejects (401) THEN the next request reads the rotated token file at once',
  async () => {
    const namespace = await createTestNamespace('credential-rotation', admin);
    const tokenB = await serviceAccountToken(namespace, 'sa-b');
    const { kc, tokenPath } = await inClusterKubeConfig(join(dir, 'pod-2'), 'not-a-valid-token', namespace);
    const client = track(new ApiClient({ kubeConfig: kc, credentials: { clock: new ManualClock() } }));

    await expect(whoAmI(client)).rejects.toMatchObject({ code: 401 });
    await writeFile(tokenPath, tokenB);
    expect(await whoAmI(client)).toBe(`system:serviceaccount:${namespace}:sa-b`);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a certificate-authority file rewritten THEN new connections trust exactly the bundle on disk',
  async () => {
    const otherCaDir = join(dir, 'other-ca');
    await mkdir(otherCaDir);
    const otherCa = await createControlPlanePki(otherCaDir);
    const user = await issueClientCertificate(pkiDir, { commonName: 'rotation-ca' });
    const files = { ca: join(dir, 'ca-test-ca.crt'), cert: join(dir, 'ca-test.crt'), key: join(dir, 'ca-test.key') };
    await Promise.all([writeFile(files.ca, otherCa.caCertPem), writeFile(files.cert, user.certPem), writeFile(files.key, user.keyPem)]);
    const clock = new ManualClock();
    const client = track(new ApiClient({ kubeConfig: await fileKubeConfig(files), credentials: { clock } }));

    await expect(whoAmI(client)).rejects.toThrow(/certificate/i);
    await writeFile(files.ca, caPem);
    clock.advance(1000);
    expect(await whoAmI(client)).toBe('rotation-ca');
    expect(await whoAmI(client)).toBe('rotation-ca');

    await writeFile(files.ca, otherCa.caCertPem);
    clock.advance(1000);
    await expect(whoAmI(client)).rejects.toThrow(/certificate/i);
  },
  TEST_TIMEOUT_MS,
);
