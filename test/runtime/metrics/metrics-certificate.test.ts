/**
 * `--metrics-cert-path`: the secure metrics server serves the files' certificate, a bad directory fails
 * the start naming the file, and a renewed pair (as the kubelet updates a mounted Secret) is served to new
 * connections without a restart.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { metricsCertificateDirectory, readMetricsCertificate } from '../../../lib/runtime/metrics/metrics-certificate.js';
import { OperatorMetrics } from '../../../lib/runtime/metrics/metrics.js';
import { type ProbesServer, startProbesServer } from '../../../lib/runtime/probes/probes-server.js';
import { createCertificateAuthority, issueServingCertificate } from '../../../lib/runtime/webhook/x509.js';
import { eventually } from '../../support/eventually.js';

let dir: string;
let server: ProbesServer | undefined;
const stop = new AbortController();
const ca = createCertificateAuthority('metrics-test-ca', { notAfter: new Date(Date.now() + 86_400_000) });
const issue = () => issueServingCertificate(ca, ['127.0.0.1'], { notAfter: new Date(Date.now() + 86_400_000) });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'metrics-cert-'));
});

afterAll(async () => {
  stop.abort();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The fingerprint of the certificate the server presents to a new connection. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: ca.certPem }, () => {
      const fingerprint = socket.getPeerX509Certificate()!.fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

test('GIVEN a directory without tls.key, with a key that is no key or another certificate\'s THEN reading it fails naming the file', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'metrics-cert-empty-'));
  try {
    await writeFile(join(empty, 'tls.crt'), issue().certPem);
    await expect(readMetricsCertificate(empty)).rejects.toMatchObject({ step: 'metrics-server', reason: 'CertificateUnreadable', message: expect.stringContaining(join(empty, 'tls.key')) });
    await writeFile(join(empty, 'tls.key'), 'not a key');
    await expect(readMetricsCertificate(empty)).rejects.toThrow(/tls\.key: not a PEM private key/);
    await writeFile(join(empty, 'tls.key'), issue().keyPem); // another pair's key
    await expect(readMetricsCertificate(empty)).rejects.toThrow(/tls\.key: not the private key of .*tls\.crt/);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});

test('GIVEN the files served WHEN they are replaced by a renewed pair THEN new connections get the new certificate', async () => {
  const first = issue();
  await writeFile(join(dir, 'tls.crt'), first.certPem);
  await writeFile(join(dir, 'tls.key'), first.keyPem);
  const certificate = await readMetricsCertificate(dir);
  const started = await startProbesServer({ metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0', registry: new OperatorMetrics({ defaultMetrics: false }).registry, metricsSecureServing: { certificate } });
  server = started;
  const files = metricsCertificateDirectory({ dir, onCertificate: (next) => started.setMetricsCertificate(next), checkIntervalMs: 50 });
  expect(await files.load()).toEqual(certificate);
  void files.run(stop.signal);
  expect(await servedFingerprint(started.metricsPort!)).toBe(new X509Certificate(first.certPem).fingerprint256);

  const renewed = issue();
  await writeFile(join(dir, 'tls.key'), renewed.keyPem);
  await writeFile(join(dir, 'tls.crt'), renewed.certPem);
  const expected = new X509Certificate(renewed.certPem).fingerprint256;
  await eventually('the renewed certificate served', async () => (await servedFingerprint(started.metricsPort!)) === expected, { timeoutMs: 30_000 });
});
