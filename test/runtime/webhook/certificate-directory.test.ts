/**
 * `--webhook-cert-dir` (lib/runtime/webhook/certificate-directory.ts): the files are read at the start (a
 * missing, non-PEM or mismatched file fails it, naming the file), a changed pair is picked up (by the
 * directory watch, and by the poll when no watch event comes) and served to new TLS connections, and a bad
 * pair at reload is logged at error while the old certificate stays served.
 */
import { mkdir, mkdtemp, rm, writeFile, rename, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { CertificateDirectory, readCertificateDirectory } from '../../../lib/runtime/webhook/certificate-directory.js';
import { OperatorMetrics } from '../../../lib/runtime/metrics/metrics.js';
import { WebhookCertificateError } from '../../../lib/runtime/webhook/serving-certificate.js';
import { startRunWebhooks, type RunWebhooks } from '../../../lib/runtime/webhook/webhook-runner.js';
import { createCertificateAuthority, issueServingCertificate, type CertificateAndKey } from '../../../lib/runtime/webhook/x509.js';
import { silentLogger, type Logger } from '../../../lib/runtime/logger.js';
import { MemcachedOperator } from '../../../operators/memcached/index.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { eventually } from '../../support/eventually.js';
import { App } from 'cdk8s';

const ca = createCertificateAuthority('cert-dir-test-ca', { notAfter: new Date(Date.now() + 86_400_000) });
const issue = () => issueServingCertificate(ca, ['127.0.0.1', 'localhost'], { notAfter: new Date(Date.now() + 86_400_000) });
const serial = (certPem: string) => new X509Certificate(certPem).serialNumber;
const dirs: string[] = [];

async function newDir(pair?: CertificateAndKey): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'webhook-cert-dir-'));
  dirs.push(dir);
  if (pair) await writePair(dir, pair);
  return dir;
}

/** Writes the pair as a replacement of each file (write beside, then rename), as an atomic update does. */
async function writePair(dir: string, pair: CertificateAndKey): Promise<void> {
  await writeFile(join(dir, '.tls.key.new'), pair.keyPem);
  await rename(join(dir, '.tls.key.new'), join(dir, 'tls.key'));
  await writeFile(join(dir, '.tls.crt.new'), pair.certPem);
  await rename(join(dir, '.tls.crt.new'), join(dir, 'tls.crt'));
}

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('reading the directory at the start', () => {
  test('GIVEN tls.crt and tls.key of one pair THEN both are read as they are', async () => {
    const pair = issue();
    const dir = await newDir(pair);
    await expect(readCertificateDirectory(dir)).resolves.toEqual(pair);
  });

  test('GIVEN no tls.crt THEN it fails CertificateFileUnreadable naming the file and the reason', async () => {
    const dir = await newDir();
    await writeFile(join(dir, 'tls.key'), issue().keyPem);
    const err = await readCertificateDirectory(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookCertificateError);
    expect(err).toMatchObject({ step: 'webhook-certificate', reason: 'CertificateFileUnreadable' });
    expect((err as Error).message).toBe(`webhook certificate: ${join(dir, 'tls.crt')}: cannot be read: ENOENT: no such file or directory, open '${join(dir, 'tls.crt')}'`);
  });

  test('GIVEN no tls.key THEN the error names tls.key', async () => {
    const dir = await newDir();
    await writeFile(join(dir, 'tls.crt'), issue().certPem);
    await expect(readCertificateDirectory(dir)).rejects.toMatchObject({ reason: 'CertificateFileUnreadable', message: expect.stringContaining(`${join(dir, 'tls.key')}: cannot be read: ENOENT`) });
  });

  test('GIVEN a tls.crt that is no certificate, a tls.key that is no key, or another pair\'s key THEN CertificateFileInvalid names the file and why', async () => {
    const pair = issue();
    const dir = await newDir();
    await writeFile(join(dir, 'tls.crt'), 'not a certificate');
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
    await expect(readCertificateDirectory(dir)).rejects.toMatchObject({ reason: 'CertificateFileInvalid', message: expect.stringContaining(`${join(dir, 'tls.crt')}: not a PEM certificate`) });
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), 'not a key');
    await expect(readCertificateDirectory(dir)).rejects.toMatchObject({ reason: 'CertificateFileInvalid', message: expect.stringContaining(`${join(dir, 'tls.key')}: not a PEM private key`) });
    await writeFile(join(dir, 'tls.key'), issue().keyPem);
    await expect(readCertificateDirectory(dir)).rejects.toMatchObject({ reason: 'CertificateFileInvalid', message: `webhook certificate: ${join(dir, 'tls.key')}: not the private key of ${join(dir, 'tls.crt')}` });
  });

  test('GIVEN a directory that does not exist THEN load() rejects naming tls.crt in it', async () => {
    const dir = join(tmpdir(), 'webhook-cert-dir-that-does-not-exist');
    await expect(new CertificateDirectory({ dir }).load()).rejects.toMatchObject({ reason: 'CertificateFileUnreadable', message: expect.stringContaining(join(dir, 'tls.crt')) });
  });
});

describe('reloading', () => {
  function recording(): { logger: Logger; errors: { fields: any; msg: string }[] } {
    const errors: { fields: any; msg: string }[] = [];
    return { errors, logger: { ...silentLogger, error: (fields: object, msg: string) => void errors.push({ fields, msg }) } };
  }

  test('GIVEN a running directory WHEN the files are replaced by a new pair THEN onCertificate gets it (poll far away: the directory watch brings it)', async () => {
    const first = issue();
    const dir = await newDir(first);
    const seen: CertificateAndKey[] = [];
    const certs = new CertificateDirectory({ dir, onCertificate: (c) => seen.push(c), checkIntervalMs: 3_600_000 });
    await expect(certs.load()).resolves.toEqual(first);
    const stop = new AbortController();
    const running = certs.run(stop.signal);
    try {
      const second = issue();
      await writePair(dir, second);
      await eventually('the new pair handed on', async () => seen.at(-1)?.certPem === second.certPem, { timeoutMs: 30_000 });
      expect(certs.certificate()).toEqual(second);
      expect(seen.every((c) => c.certPem === second.certPem)).toBe(true);
    } finally {
      stop.abort();
      await running;
    }
  });

  test('GIVEN a mounted Secret\'s layout (files linked through ..data) WHEN the kubelet swaps ..data to a new version THEN the new pair is handed on (the directory watch brings it)', async () => {
    // The kubelet's atomic writer: ..<version>/tls.*, ..data -> ..<version>, tls.* -> ..data/tls.*; an update
    // writes a new version directory and renames a new ..data link over the old one.
    const dir = await newDir();
    const version = async (name: string, pair: CertificateAndKey) => {
      await mkdir(join(dir, name));
      await writeFile(join(dir, name, 'tls.crt'), pair.certPem);
      await writeFile(join(dir, name, 'tls.key'), pair.keyPem);
      await symlink(name, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    const first = issue();
    await version('..v1', first);
    await symlink('..data/tls.crt', join(dir, 'tls.crt'));
    await symlink('..data/tls.key', join(dir, 'tls.key'));
    const seen: CertificateAndKey[] = [];
    const certs = new CertificateDirectory({ dir, onCertificate: (c) => seen.push(c), checkIntervalMs: 3_600_000 });
    await expect(certs.load()).resolves.toEqual(first);
    const stop = new AbortController();
    const running = certs.run(stop.signal);
    try {
      const second = issue();
      await version('..v2', second);
      await eventually('the swapped pair handed on', async () => seen.at(-1)?.certPem === second.certPem, { timeoutMs: 30_000 });
      expect(seen).toEqual([second]);
    } finally {
      stop.abort();
      await running;
    }
  });

  test('GIVEN no watch event (check() as the poll calls it) WHEN unchanged THEN nothing is handed on; WHEN changed THEN the new pair is', async () => {
    const first = issue();
    const dir = await newDir(first);
    const seen: CertificateAndKey[] = [];
    const certs = new CertificateDirectory({ dir, onCertificate: (c) => seen.push(c) });
    await certs.load();
    await certs.check();
    expect(seen).toEqual([]);
    const second = issue();
    await writePair(dir, second);
    await certs.check();
    expect(seen).toEqual([second]);
  });

  test('GIVEN a served pair WHEN the key is replaced by another pair\'s, then the files vanish THEN each is logged at error with the reason and file, and the old pair is kept', async () => {
    const first = issue();
    const dir = await newDir(first);
    const seen: CertificateAndKey[] = [];
    const { logger, errors } = recording();
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const certs = new CertificateDirectory({ dir, onCertificate: (c) => seen.push(c), logger, metrics: metrics.certificateRead });
    await certs.load();
    await writeFile(join(dir, 'tls.key'), issue().keyPem);
    await certs.check();
    await rm(join(dir, 'tls.crt'));
    await certs.check();
    expect(seen).toEqual([]);
    expect(certs.certificate()).toEqual(first);
    expect(errors.map((e) => e.msg)).toEqual([
      'could not reload the webhook serving certificate; serving the previous one',
      'could not reload the webhook serving certificate; serving the previous one',
    ]);
    expect(errors[0]!.fields).toMatchObject({ dir, err: { name: 'WebhookCertificateError', step: 'webhook-certificate', reason: 'CertificateFileInvalid', message: expect.stringContaining('not the private key of') } });
    expect(errors[1]!.fields).toMatchObject({ err: { reason: 'CertificateFileUnreadable', message: expect.stringContaining(`${join(dir, 'tls.crt')}: cannot be read`) } });
    // Fixed again: served again.
    const third = issue();
    await writePair(dir, third);
    await certs.check();
    expect(seen).toEqual([third]);
    // controller-runtime's certwatcher counters: 4 reads (the load and 3 checks), 2 of them failed.
    const scraped = await metrics.registry.metrics();
    expect(scraped).toMatch(/^certwatcher_read_certificate_total 4$/m);
    expect(scraped).toMatch(/^certwatcher_read_certificate_errors_total 2$/m);
  });
});

describe('the webhook server with certDir', () => {
  let webhooks: RunWebhooks | undefined;
  const stop = new AbortController();
  afterAll(async () => {
    stop.abort();
    await webhooks?.close();
  });

  /** The serial of the certificate a new TLS connection is served. */
  function servedSerial(port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem }, () => {
        const value = socket.getPeerX509Certificate()!.serialNumber;
        socket.end();
        resolve(value);
      });
      socket.on('error', reject);
    });
  }

  test('GIVEN an operator with webhooks and certDir THEN the files\' certificate is served (no request reaches the API server: no Secret, no caBundle), and a rotated pair is served without a restart', async () => {
    const operator = new MemcachedOperator(new App()); // conversion and admission webhooks, self-managed certificates
    const client = new FakeKubeClient();
    const first = issue();
    const dir = await newDir(first);
    webhooks = await startRunWebhooks({ operators: [operator], client, bindAddress: '127.0.0.1:0', certDir: dir, checkIntervalMs: 200, logger: silentLogger, signal: stop.signal });
    expect(webhooks).toBeDefined();
    const port = webhooks!.server.port;
    expect(await servedSerial(port)).toBe(serial(first.certPem));
    const second = issue();
    await writePair(dir, second);
    await eventually('the rotated certificate served', async () => (await servedSerial(port)) === serial(second.certPem), { timeoutMs: 30_000 });
    expect(client.calls).toEqual([]); // no Secret read or written, no caBundle patched
  });
});
