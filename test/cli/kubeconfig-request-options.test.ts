/**
 * The one kubeconfig loader (lib/cli/kubeconfig-loader.ts) with the runtime's credentials
 * (lib/runtime/client/client-credentials.ts) against client-node 1.4's `KubeConfig` (`loadFromFile`, then
 * `applyToHTTPSOptions`), on the same kubeconfig files: the same API server, context namespace, headers
 * (`Authorization`, `Impersonate-User`) and TLS options (CA, client certificate and key, server name,
 * verification) for a bearer token, `token-file`, basic auth, client certificates as files (relative to
 * the kubeconfig) and as data, an OIDC auth provider's id-token, an exec plugin, impersonation, and
 * contexts choosing among several clusters and users. client-node's basic auth (`opts.auth`) is compared
 * as the `Authorization: Basic` header it becomes on the wire (client-node's own `applyToFetchOptions`).
 *
 * Why ours and not client-node's everywhere: client-node's `KubeConfig` (`dist/config.js`) imports its
 * generated API (`dist/gen/index.js`), about 70 MB of RSS at start (bench/kubeconfig-import-memory.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { loadKubeConfig } from '../../lib/cli/kubeconfig-loader.js';
import { ClientCredentials } from '../../lib/runtime/client/client-credentials.js';
import { ManualClock } from '../../lib/runtime/clock.js';
import { createControlPlanePki, issueClientCertificate, type ClientCertificate, type ControlPlanePki } from '../../lib/testing/pki.js';

let dir: string;
let pki: ControlPlanePki;
let alice: ClientCertificate;
let runs = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-request-options-'));
  await mkdir(join(dir, 'pki'));
  pki = await createControlPlanePki(join(dir, 'pki'));
  alice = await issueClientCertificate(pki.dir, { commonName: 'alice' });
  await mkdir(join(dir, 'certs'));
  await writeFile(join(dir, 'certs', 'ca.crt'), pki.caCertPem);
  await writeFile(join(dir, 'certs', 'alice.crt'), alice.certPem);
  await writeFile(join(dir, 'certs', 'alice.key'), alice.keyPem);
  await writeFile(join(dir, 'token'), 'from-token-file');
  await writeFile(join(dir, 'token-with-newline'), 'from-token-file\n');
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** What a request to the API server carries. */
interface RequestShape {
  server?: string;
  namespace?: string;
  headers: Record<string, string>;
  tls: { ca?: string; cert?: string; key?: string; servername?: string; rejectUnauthorized?: boolean };
}

const text = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : Buffer.isBuffer(value) ? value.toString('utf8') : String(value));

function defined<T extends Record<string, unknown>>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/** client-node: loadFromFile, then applyToHTTPSOptions. */
async function viaClientNode(file: string): Promise<RequestShape> {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  const opts: https.RequestOptions = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
  if (opts.auth) headers.Authorization = 'Basic ' + Buffer.from(opts.auth).toString('base64');
  return {
    server: kc.getCurrentCluster()?.server,
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace,
    headers,
    tls: defined({ ca: text(opts.ca), cert: text(opts.cert), key: text(opts.key), servername: opts.servername, rejectUnauthorized: opts.rejectUnauthorized }),
  };
}

/** Ours: the loader, then the runtime's credentials as the API client asks them before a request. */
async function viaLoader(file: string): Promise<RequestShape> {
  const kc = await loadKubeConfig(file, {});
  const { headers, tls } = await new ClientCredentials(kc, { clock: new ManualClock() }).current();
  return {
    server: kc.getCurrentCluster()?.server,
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)])),
    tls: defined({ ca: text(tls.ca), cert: text(tls.cert), key: text(tls.key), servername: tls.servername, rejectUnauthorized: tls.rejectUnauthorized }),
  };
}

/** Writes `config` as YAML in a fresh subdirectory of `dir` (so relative paths resolve from there). */
async function kubeconfigFile(config: unknown): Promise<string> {
  const sub = join(dir, `run-${++runs}`);
  await mkdir(sub);
  const file = join(sub, 'config');
  await writeFile(file, stringify(config));
  return file;
}

/** One cluster, one user, one context `x` (namespace `team-a`), current. */
function single(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority': '../certs/ca.crt', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'team-a' } }],
    'current-context': 'x',
  };
}

/** An unsigned JWT that expires in an hour: client-node's OIDC provider sends an unexpired id-token as it is. */
function idToken(subject: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: subject, exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
}

const execCredential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec' } });

const cases: [string, () => unknown, Partial<RequestShape>][] = [
  ['a bearer token and a CA file relative to the kubeconfig', () => single({ token: 't0k3n' }), { headers: { Authorization: 'Bearer t0k3n' } }],
  ['a token-file', () => single({ 'token-file': join(dir, 'token') }), { headers: { Authorization: 'Bearer from-token-file' } }],
  ['basic auth', () => single({ username: 'admin', password: 'pw' }), { headers: { Authorization: 'Basic ' + Buffer.from('admin:pw').toString('base64') } }],
  ['client certificate and key files', () => single({ 'client-certificate': '../certs/alice.crt', 'client-key': '../certs/alice.key' }), {}],
  [
    'client certificate, key and CA as data, a TLS server name',
    () => single(
      { 'client-certificate-data': Buffer.from(alice.certPem).toString('base64'), 'client-key-data': Buffer.from(alice.keyPem).toString('base64') },
      { 'certificate-authority': undefined, 'certificate-authority-data': Buffer.from(pki.caCertPem).toString('base64'), 'tls-server-name': 'kubernetes.default.svc' },
    ),
    { tls: { servername: 'kubernetes.default.svc' } },
  ],
  ['insecure-skip-tls-verify', () => single({ token: 't' }, { 'certificate-authority': undefined, 'insecure-skip-tls-verify': true }), { tls: { rejectUnauthorized: false } }],
  ['impersonation (as)', () => single({ token: 't', as: 'bob' }), { headers: { Authorization: 'Bearer t', 'Impersonate-User': 'bob' } }],
  ['an OIDC auth provider with an unexpired id-token', () => single({ 'auth-provider': { name: 'oidc', config: { 'id-token': idToken('carol'), 'client-id': 'k8s', 'idp-issuer-url': 'https://issuer.example' } } }), {}],
  [
    'an exec plugin',
    () => single({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', `process.stdout.write(${JSON.stringify(execCredential)})`] } }),
    { headers: { Authorization: 'Bearer from-exec' } },
  ],
  [
    'several contexts: the current one picks the second cluster, user and namespace',
    () => ({
      clusters: [
        { name: 'one', cluster: { server: 'https://one.example:6443' } },
        { name: 'two', cluster: { server: 'https://two.example:6443', 'certificate-authority': '../certs/ca.crt' } },
      ],
      users: [
        { name: 'u1', user: { token: 'one' } },
        { name: 'u2', user: { 'client-certificate': '../certs/alice.crt', 'client-key': '../certs/alice.key' } },
      ],
      contexts: [
        { name: 'a', context: { cluster: 'one', user: 'u1', namespace: 'ns-one' } },
        { name: 'b', context: { cluster: 'two', user: 'u2', namespace: 'ns-two' } },
        { name: 'c', context: { cluster: 'two', user: 'u1' } },
      ],
      'current-context': 'b',
    }),
    { server: 'https://two.example:6443', namespace: 'ns-two' },
  ],
];

test.each(cases)('GIVEN a kubeconfig with %s THEN the loader and client-node give the same server, namespace, headers and TLS options', async (_, config, expected) => {
  const file = await kubeconfigFile(config());
  const theirs = await viaClientNode(file);
  expect(await viaLoader(file)).toStrictEqual(theirs);
  // …and they say what the kubeconfig says (so the comparison is not of two empty answers).
  expect(theirs).toMatchObject(expected);
  expect(theirs.server).toMatch(/^https:\/\//);
});

test('GIVEN the certificate cases THEN both present the files\' PEMs', async () => {
  const file = await kubeconfigFile(single({ 'client-certificate': '../certs/alice.crt', 'client-key': '../certs/alice.key' }));
  const ours = await viaLoader(file);
  expect(ours.tls).toStrictEqual({ ca: pki.caCertPem, cert: alice.certPem, key: alice.keyPem });
  expect(ours.namespace).toBe('team-a');
  expect(ours.headers).toStrictEqual({});
});

test('GIVEN an OIDC id-token THEN both send it as the bearer token', async () => {
  const token = idToken('carol');
  const file = await kubeconfigFile(single({ 'auth-provider': { name: 'oidc', config: { 'id-token': token, 'client-id': 'k8s', 'idp-issuer-url': 'https://issuer.example' } } }));
  expect((await viaLoader(file)).headers).toStrictEqual({ Authorization: `Bearer ${token}` });
  expect((await viaClientNode(file)).headers).toStrictEqual({ Authorization: `Bearer ${token}` });
});

test('GIVEN a token-file ending in a newline THEN ours sends the token trimmed, as client-go does, where client-node would send the newline', async () => {
  // client-node's `newUsers` reads the file untrimmed into `token`; a header value with "\n" is refused by
  // Node's http when sent. client-go trims (transport.NewCachedFileTokenSource), and so do we.
  const file = await kubeconfigFile(single({ 'token-file': join(dir, 'token-with-newline') }));
  expect((await viaClientNode(file)).headers).toStrictEqual({ Authorization: 'Bearer from-token-file\n' });
  expect((await viaLoader(file)).headers).toStrictEqual({ Authorization: 'Bearer from-token-file' });
});
