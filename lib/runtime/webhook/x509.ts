/**
 * The X.509 material of a webhook server: a self-signed CA and serving certificates it signs. Keys are
 * RSA 2048 from Node's crypto; certificates are built with node-forge (their DER) and signed
 * (sha256WithRSAEncryption) by Node's crypto: forge's own RSA signature, in JavaScript, cost a `run` with
 * the default self-signed metrics certificate about 3 MB of RSS and 0.1–0.2 s of CPU at start
 * (docs/reference/benchmark.md, "Memory at start").
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#contacting-the-webhook (caBundle)
 */
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** node-forge's `pki.getTBSCertificate` (lib/x509.js), which its types leave out. */
interface ForgeTbs {
  getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1;
}

/** PEM certificate and private key. */
export interface CertificateAndKey {
  readonly certPem: string;
  readonly keyPem: string;
}

/** How long a certificate is valid. */
export interface Validity {
  /** @default now */
  readonly notBefore?: Date;
  readonly notAfter: Date;
}

/** A new RSA 2048 key pair, PEM (public SPKI, private PKCS#8). */
export function newKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/**
 * A certificate for `publicKeyPem`, signed (SHA-256) with `signingKeyPem`: by `issuer`, or self-signed
 * without it. Its serial is a random positive 128-bit number.
 */
export function signCertificate(options: {
  subject: forge.pki.CertificateField[];
  publicKeyPem: string;
  signingKeyPem: string;
  issuer?: forge.pki.Certificate;
  extensions: object[];
  validity: Validity;
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(options.publicKeyPem);
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f; // positive in DER
  cert.serialNumber = serial.toString('hex');
  // A minute back: tolerate clock skew between this process and the API server.
  cert.validity.notBefore = options.validity.notBefore ?? new Date(Date.now() - 60_000);
  cert.validity.notAfter = options.validity.notAfter;
  cert.setSubject(options.subject);
  cert.setIssuer(options.issuer ? options.issuer.subject.attributes : options.subject);
  cert.setExtensions(options.extensions);
  // What forge's cert.sign(key, sha256) does, with the signature from Node's crypto (PKCS#1 v1.5, SHA-256).
  cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.tbsCertificate = (forge.pki as unknown as ForgeTbs).getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, options.signingKeyPem).toString('binary');
  return cert;
}

/**
 * A new self-signed CA (`CN=<commonName>`, basicConstraints CA, keyCertSign).
 * @param validity e.g. `{ notAfter: new Date(Date.now() + 10 * 365 * 86400_000) }`
 */
export function createCertificateAuthority(commonName: string, validity: Validity): CertificateAndKey {
  const keys = newKeyPair();
  const cert = signCertificate({
    subject: [{ name: 'commonName', value: commonName }],
    publicKeyPem: keys.publicKeyPem,
    signingKeyPem: keys.privateKeyPem,
    validity,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ],
  });
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

/**
 * A serving certificate (new key, extKeyUsage serverAuth) for `hosts` (DNS names and IP addresses; the
 * first is the CN), signed by `ca`.
 * @throws Error when `hosts` is empty or the CA does not parse
 */
export function issueServingCertificate(ca: CertificateAndKey, hosts: readonly string[], validity: Validity): CertificateAndKey {
  if (hosts.length === 0) throw new Error('a serving certificate needs at least one DNS name or IP address');
  const keys = newKeyPair();
  const cert = signCertificate({
    subject: [{ name: 'commonName', value: hosts[0]!.slice(0, 64) }],
    publicKeyPem: keys.publicKeyPem,
    signingKeyPem: ca.keyPem,
    issuer: forge.pki.certificateFromPem(ca.certPem),
    validity,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: hosts.map((host) => (isIP(host) ? { type: 7, ip: host } : { type: 2, value: host })) },
    ],
  });
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

/** Validity window of a PEM certificate, and whether `issuerPem` signed it. */
export function certificateInfo(certPem: string, issuerPem?: string): { notBefore: Date; notAfter: Date; signedByIssuer: boolean; hosts: string[] } {
  const cert = new X509Certificate(certPem);
  const hosts = (cert.subjectAltName ?? '')
    .split(', ')
    .map((entry) => entry.replace(/^(DNS|IP Address):/, ''))
    .filter((entry) => entry !== '');
  return {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    signedByIssuer: issuerPem === undefined ? false : cert.checkIssued(new X509Certificate(issuerPem)) && cert.verify(new X509Certificate(issuerPem).publicKey),
    hosts,
  };
}
