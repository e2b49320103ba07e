/**
 * ClientCredentials re-reads credential files the way client-go does: TLS files (client certificate,
 * key, CA) at most once per recheck interval, a token file when it is 50 s old or after a 401. Time is a
 * ManualClock; the files are real files in a temp dir.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ClientCredentials } from '../../../lib/runtime/client/client-credentials.js';
import { ManualClock } from '../../../lib/runtime/clock.js';
import { createControlPlanePki, issueClientCertificate, type ClientCertificate, type ControlPlanePki } from '../../../lib/testing/pki.js';

let dir: string;
let pki: ControlPlanePki;
let userA: ClientCertificate;
let userB: ClientCertificate;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'client-credentials-'));
  pki = await createControlPlanePki(dir);
  [userA, userB] = await Promise.all([
    issueClientCertificate(dir, { commonName: 'rotation-a' }),
    issueClientCertificate(dir, { commonName: 'rotation-b' }),
  ]);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let seq = 0;
/** A fresh file path in the temp dir. */
function path(name: string): string {
  return join(dir, `${++seq}-${name}`);
}

/** A KubeConfig whose user and cluster point at files, as `client-certificate`/`client-key`/`certificate-authority` do. */
function fileKubeConfig(files: { ca?: string; cert?: string; key?: string; token?: string }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false, ...(files.ca ? { caFile: files.ca } : {}) }],
    users: [
      {
        name: 'u',
        ...(files.cert ? { certFile: files.cert } : {}),
        ...(files.key ? { keyFile: files.key } : {}),
        ...(files.token ? { authProvider: { name: 'tokenFile', config: { tokenFile: files.token } } } : {}),
      },
    ],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

describe('client certificate and key files', () => {
  test('GIVEN the files are rewritten with user B THEN requests after the recheck interval present B, and the same object is returned until then', async () => {
    const cert = path('client.crt');
    const key = path('client.key');
    await Promise.all([writeFile(cert, userA.certPem), writeFile(key, userA.keyPem)]);
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ cert, key }), { clock, tlsFileRecheckMs: 1000 });

    const first = await credentials.current();
    expect(first.tls.cert?.toString()).toBe(userA.certPem);
    clock.advance(2000);
    expect((await credentials.current()).tls).toBe(first.tls); // re-read, unchanged: same material, same agent

    await Promise.all([writeFile(cert, userB.certPem), writeFile(key, userB.keyPem)]);
    clock.advance(999);
    expect((await credentials.current()).tls).toBe(first.tls);
    clock.advance(1);
    const rotated = await credentials.current();
    expect(rotated.tls).not.toBe(first.tls);
    expect(rotated.tls.cert?.toString()).toBe(userB.certPem);
    expect(rotated.tls.key?.toString()).toBe(userB.keyPem);
  });

  test('GIVEN the certificate is rewritten before the key THEN the mismatched pair is never used, and the new pair is once the key lands', async () => {
    const cert = path('client.crt');
    const key = path('client.key');
    await Promise.all([writeFile(cert, userA.certPem), writeFile(key, userA.keyPem)]);
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ cert, key }), { clock });
    const first = await credentials.current();

    await writeFile(cert, userB.certPem);
    clock.advance(1000);
    const halfway = await credentials.current();
    expect(halfway.tls).toBe(first.tls);
    expect(halfway.tls.key?.toString()).toBe(userA.keyPem);

    await writeFile(key, userB.keyPem);
    clock.advance(1000);
    expect((await credentials.current()).tls.cert?.toString()).toBe(userB.certPem);
  });

  test('GIVEN a key file deleted during rotation THEN the material last read stays in use', async () => {
    const cert = path('client.crt');
    const key = path('client.key');
    await Promise.all([writeFile(cert, userA.certPem), writeFile(key, userA.keyPem)]);
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ cert, key }), { clock });
    const first = await credentials.current();
    await rm(key);
    clock.advance(1000);
    expect((await credentials.current()).tls).toBe(first.tls);
  });

  test('GIVEN a missing key file at the first request THEN the error names the kubeconfig field and the path', async () => {
    const cert = path('client.crt');
    await writeFile(cert, userA.certPem);
    const key = path('missing.key');
    const credentials = new ClientCredentials(fileKubeConfig({ cert, key }), { clock: new ManualClock() });
    await expect(credentials.current()).rejects.toThrow(`user "u" client-key ${key}: ENOENT`);
  });

  test('GIVEN a certificate and a key that are not a pair at the first request THEN the error says so and names both files', async () => {
    const cert = path('client.crt');
    const key = path('client.key');
    await Promise.all([writeFile(cert, userA.certPem), writeFile(key, userB.keyPem)]);
    const credentials = new ClientCredentials(fileKubeConfig({ cert, key }), { clock: new ManualClock() });
    await expect(credentials.current()).rejects.toThrow(
      new RegExp(`client-certificate ${cert}, user "u" client-key ${key}: not a usable TLS client configuration`),
    );
  });
});

describe('CA file', () => {
  test('GIVEN the CA bundle is rewritten THEN requests after the recheck interval trust the new bundle', async () => {
    const ca = path('ca.crt');
    await writeFile(ca, pki.caCertPem);
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ ca }), { clock, tlsFileRecheckMs: 5000 });
    const first = await credentials.current();
    expect(first.tls.ca?.toString()).toBe(pki.caCertPem);

    const bundle = pki.caCertPem + userB.certPem; // old CA plus another certificate, as during a CA rotation
    await writeFile(ca, bundle);
    clock.advance(4999);
    expect((await credentials.current()).tls).toBe(first.tls);
    clock.advance(1);
    expect((await credentials.current()).tls.ca?.toString()).toBe(bundle);
  });

  test('GIVEN the CA file is emptied THEN the bundle last read stays in use (client-go skips an empty CA file too)', async () => {
    const ca = path('ca.crt');
    await writeFile(ca, pki.caCertPem);
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ ca }), { clock });
    const first = await credentials.current();
    await writeFile(ca, '');
    clock.advance(1000);
    expect((await credentials.current()).tls).toBe(first.tls);
  });
});

describe('token file', () => {
  test('GIVEN a rotated token file THEN it is read again once the token in hand is 50 s old, trimmed of its newline', async () => {
    const token = path('token');
    await writeFile(token, 'token-a\n');
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ token }), { clock });
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-a');

    await writeFile(token, 'token-b\n');
    clock.advance(49_999);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-a');
    clock.advance(1);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-b');
  });

  test('GIVEN a 401 to a request with the token in hand THEN the next request reads the file again at once', async () => {
    const token = path('token');
    await writeFile(token, 'token-a');
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ token }), { clock });
    const sent = await credentials.current();
    await writeFile(token, 'token-b');
    credentials.rejected(sent);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-b');
  });

  test('GIVEN a 401 to a request sent with a token that was replaced since THEN the newer token is kept (no extra read)', async () => {
    const token = path('token');
    await writeFile(token, 'token-a');
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ token }), { clock });
    const old = await credentials.current();
    await writeFile(token, 'token-b');
    clock.advance(50_000);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-b');
    await writeFile(token, 'token-c');
    credentials.rejected(old);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-b');
  });

  test('GIVEN the token file is empty or gone at a re-read THEN the token in hand is kept', async () => {
    const token = path('token');
    await writeFile(token, 'token-a');
    const clock = new ManualClock();
    const credentials = new ClientCredentials(fileKubeConfig({ token }), { clock });
    await credentials.current();
    await writeFile(token, '  \n');
    clock.advance(50_000);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-a');
    await rm(token);
    clock.advance(50_000);
    expect((await credentials.current()).headers.Authorization).toBe('Bearer token-a');
  });

  test('GIVEN an empty token file at the first request THEN the error names the user and the path', async () => {
    const token = path('token');
    await writeFile(token, '\n');
    const credentials = new ClientCredentials(fileKubeConfig({ token }), { clock: new ManualClock() });
    await expect(credentials.current()).rejects.toThrow(`user "u" tokenFile ${token}: token file ${token} is empty`);
  });

  test('GIVEN a static token and a token file THEN the static token wins, as in client-go', async () => {
    const token = path('token');
    await writeFile(token, 'from-file');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u', token: 'static', authProvider: { name: 'tokenFile', config: { tokenFile: token } } }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const credentials = new ClientCredentials(kc, { clock: new ManualClock() });
    expect((await credentials.current()).headers.Authorization).toBe('Bearer static');
  });
});

describe('authentication left to client-node', () => {
  test('GIVEN a client-node KubeConfig with a custom authenticator THEN every request asks it, through applyToHTTPSOptions', async () => {
    const kc = new KubeConfig();
    let asked = 0;
    kc.addAuthenticator({
      isAuthProvider: (user) => user.authProvider?.name === 'custom',
      applyAuthentication: async (_user, opts) => {
        opts.headers = { ...opts.headers, Authorization: `Bearer custom-${++asked}` };
      },
    });
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u', authProvider: { name: 'custom', config: {} } }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const credentials = new ClientCredentials(kc, { clock: new ManualClock() });
    expect((await credentials.current()).headers.Authorization).toBe('Bearer custom-1');
    expect((await credentials.current()).headers.Authorization).toBe('Bearer custom-2');
  });
});
