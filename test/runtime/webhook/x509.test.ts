/**
 * lib/runtime/webhook/x509.ts: the CA and serving certificates (built by node-forge, signed by Node's
 * crypto) are what OpenSSL accepts: each signature verifies, the serving certificate chains to its CA and
 * to no other, its names and validity are those asked for, and a TLS client trusting the CA completes a
 * handshake with it (and one trusting another CA does not).
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { certificateInfo, createCertificateAuthority, issueServingCertificate } from '../../../lib/runtime/webhook/x509.js';

const notAfter = new Date(Date.now() + 86_400_000);
const ca = createCertificateAuthority('x509-test-ca', { notAfter });
const serving = issueServingCertificate(ca, ['webhook.ns.svc', '127.0.0.1'], { notAfter });

test('THEN the CA is self-signed with sha256WithRSAEncryption, a CA, and valid until notAfter', () => {
  const cert = new X509Certificate(ca.certPem);
  expect(cert.subject).toBe('CN=x509-test-ca');
  expect(cert.issuer).toBe('CN=x509-test-ca');
  expect(cert.ca).toBe(true);
  expect(cert.verify(cert.publicKey)).toBe(true);
  expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
  expect(Math.abs(new Date(cert.validTo).getTime() - notAfter.getTime())).toBeLessThan(1000);
  // The signature algorithm as written in the DER: OID 1.2.840.113549.1.1.11 (sha256WithRSAEncryption).
  expect(cert.raw.includes(Buffer.from('06092a864886f70d01010b', 'hex'))).toBe(true);
});

test('THEN the serving certificate chains to its CA only, names its hosts and holds its own key', () => {
  const cert = new X509Certificate(serving.certPem);
  expect(cert.ca).toBe(false);
  expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
  expect(cert.verify(createPublicKey(ca.keyPem))).toBe(true);
  expect(cert.checkPrivateKey(createPrivateKey(serving.keyPem))).toBe(true);
  const other = createCertificateAuthority('another-ca', { notAfter });
  expect(cert.verify(new X509Certificate(other.certPem).publicKey)).toBe(false);
  expect(certificateInfo(serving.certPem, ca.certPem)).toMatchObject({ signedByIssuer: true, hosts: ['webhook.ns.svc', '127.0.0.1'] });
  expect(certificateInfo(serving.certPem, other.certPem).signedByIssuer).toBe(false);
});

test('THEN a TLS client trusting the CA completes a handshake to 127.0.0.1, and one trusting another CA is refused', async () => {
  const server = tls.createServer({ cert: serving.certPem, key: serving.keyPem }, (socket) => socket.end('ok'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const connect = (caPem: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca: caPem }, () => socket.once('data', (data) => resolve(String(data))));
      socket.on('error', reject);
    });
  try {
    await expect(connect(ca.certPem)).resolves.toBe('ok');
    await expect(connect(createCertificateAuthority('another-ca', { notAfter }).certPem)).rejects.toThrow(/self.signed|unable to verify|certificate/i);
  } finally {
    server.close();
  }
});
