/**
 * The certificates and keys of a local control plane: one CA, the kube-apiserver serving certificate,
 * the `admin` client certificate (group `system:masters`) and the service-account signing key pair.
 *
 * Keys are RSA 2048 made by Node's crypto (fast, native); certificates are signed with node-forge.
 * Everything is written as PEM files into one directory, mode 0600 for private keys.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';

/** Paths (absolute) and PEM contents of a control plane's PKI. */
export interface ControlPlanePki {
  /** Directory holding every file below. */
  readonly dir: string;
  readonly caCertPath: string;
  readonly caKeyPath: string;
  /** kube-apiserver serving certificate; SANs: 127.0.0.1, ::1, localhost, the `kubernetes` Service names and the first Service IP. */
  readonly servingCertPath: string;
  readonly servingKeyPath: string;
  /** Client certificate CN=admin, O=system:masters (cluster-admin through RBAC's system:masters binding). */
  readonly adminCertPath: string;
  readonly adminKeyPath: string;
  /** Service-account token signing key (private) and verification key (public). */
  readonly serviceAccountKeyPath: string;
  readonly serviceAccountPublicKeyPath: string;
  readonly caCertPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
}

/** Options of {@link createControlPlanePki}. */
export interface ControlPlanePkiOptions {
  /** Extra IP SANs of the serving certificate. @default none: 127.0.0.1 and ::1 are always there */
  readonly extraIpAddresses?: readonly string[];
  /**
   * First IP of the Service CIDR (the `kubernetes` Service's ClusterIP), an IP SAN of the serving certificate.
   * @default '10.0.0.1': the first address of the control plane's default Service CIDR `10.0.0.0/24`
   */
  readonly kubernetesServiceIp?: string;
  /** Validity of every certificate, in days. @default 365 days: a test control plane never lives that long */
  readonly validityDays?: number;
}

interface KeyPair {
  readonly privateKeyPem: string;
  readonly publicKeyPem: string;
}

function newRsaKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

interface CertificateRequest {
  readonly subject: forge.pki.CertificateField[];
  readonly keyPair: KeyPair;
  readonly extensions: object[];
  readonly validityDays: number;
  /** Issuer; absent for the self-signed CA. */
  readonly issuer?: { readonly cert: forge.pki.Certificate; readonly keyPem: string };
}

function signCertificate(request: CertificateRequest): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(request.keyPair.publicKeyPem);
  // Positive 128-bit serial: the leading byte is masked below 0x80 so DER does not read it as negative.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60 * 60 * 1000); // an hour back: tolerate clock skew
  cert.validity.notAfter = new Date(now + request.validityDays * 24 * 60 * 60 * 1000);
  cert.setSubject(request.subject);
  cert.setIssuer(request.issuer ? request.issuer.cert.subject.attributes : request.subject);
  cert.setExtensions(request.extensions);
  const signingKeyPem = request.issuer ? request.issuer.keyPem : request.keyPair.privateKeyPem;
  cert.sign(forge.pki.privateKeyFromPem(signingKeyPem), forge.md.sha256.create());
  return cert;
}

async function writePem(path: string, pem: string, mode: number): Promise<void> {
  await writeFile(path, pem, { mode });
}

/**
 * Creates a CA, the kube-apiserver serving certificate, the admin client certificate and the
 * service-account key pair, and writes them into `dir` (which must exist).
 *
 * Files: `ca.crt`, `ca.key`, `apiserver.crt`, `apiserver.key`, `admin.crt`, `admin.key`, `sa.key`, `sa.pub`.
 * Takes about 0.2–0.5 s (four RSA 2048 keys).
 *
 * @throws if a file cannot be written.
 */
export async function createControlPlanePki(dir: string, options: ControlPlanePkiOptions = {}): Promise<ControlPlanePki> {
  const validityDays = options.validityDays ?? 365;
  const kubernetesServiceIp = options.kubernetesServiceIp ?? '10.0.0.1';

  const caKeys = newRsaKeyPair();
  const caCert = signCertificate({
    subject: [{ name: 'commonName', value: 'cdk8s-operator-sdk-control-plane-ca' }],
    keyPair: caKeys,
    validityDays,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ],
  });
  const issuer = { cert: caCert, keyPem: caKeys.privateKeyPem };

  const servingKeys = newRsaKeyPair();
  const dnsNames = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
  const ips = ['127.0.0.1', '::1', kubernetesServiceIp, ...(options.extraIpAddresses ?? [])];
  const servingCert = signCertificate({
    subject: [{ name: 'commonName', value: 'kube-apiserver' }],
    keyPair: servingKeys,
    validityDays,
    issuer,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))] },
    ],
  });

  const adminKeys = newRsaKeyPair();
  const adminCert = signCertificate({
    subject: [
      { name: 'commonName', value: 'admin' },
      { name: 'organizationName', value: 'system:masters' },
    ],
    keyPair: adminKeys,
    validityDays,
    issuer,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });

  const serviceAccountKeys = newRsaKeyPair();

  const pki: ControlPlanePki = {
    dir,
    caCertPath: join(dir, 'ca.crt'),
    caKeyPath: join(dir, 'ca.key'),
    servingCertPath: join(dir, 'apiserver.crt'),
    servingKeyPath: join(dir, 'apiserver.key'),
    adminCertPath: join(dir, 'admin.crt'),
    adminKeyPath: join(dir, 'admin.key'),
    serviceAccountKeyPath: join(dir, 'sa.key'),
    serviceAccountPublicKeyPath: join(dir, 'sa.pub'),
    caCertPem: forge.pki.certificateToPem(caCert),
    adminCertPem: forge.pki.certificateToPem(adminCert),
    adminKeyPem: adminKeys.privateKeyPem,
  };
  await Promise.all([
    writePem(pki.caCertPath, pki.caCertPem, 0o644),
    writePem(pki.caKeyPath, caKeys.privateKeyPem, 0o600),
    writePem(pki.servingCertPath, forge.pki.certificateToPem(servingCert), 0o644),
    writePem(pki.servingKeyPath, servingKeys.privateKeyPem, 0o600),
    writePem(pki.adminCertPath, pki.adminCertPem, 0o644),
    writePem(pki.adminKeyPath, pki.adminKeyPem, 0o600),
    writePem(pki.serviceAccountKeyPath, serviceAccountKeys.privateKeyPem, 0o600),
    writePem(pki.serviceAccountPublicKeyPath, serviceAccountKeys.publicKeyPem, 0o644),
  ]);
  return pki;
}

/** PEM contents of a client certificate and its private key. */
export interface ClientCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Subject of {@link issueClientCertificate}: the API server reads CN as the user name and each O as a group. */
export interface ClientCertificateSubject {
  /** The user name (CN). */
  readonly commonName: string;
  /** The groups (one O each). @default none: the user is in `system:authenticated` only */
  readonly organizations?: readonly string[];
}

/**
 * Signs a new client certificate (new RSA 2048 key, extended key usage clientAuth) with the CA in
 * `pkiDir` (`ca.crt`, `ca.key`, as {@link createControlPlanePki} writes them). The API server
 * authenticates it as user `commonName` in groups `organizations`
 * (kubernetes.io/docs/reference/access-authn-authz/authentication/#x509-client-certificates).
 * Nothing is written to disk.
 *
 * @param validityDays how long the certificate is valid, in days; default 1: it serves one test run
 * @throws if the CA files can't be read or parsed.
 */
export async function issueClientCertificate(pkiDir: string, subject: ClientCertificateSubject, validityDays = 1): Promise<ClientCertificate> {
  const [caCertPem, caKeyPem] = await Promise.all([readFile(join(pkiDir, 'ca.crt'), 'utf8'), readFile(join(pkiDir, 'ca.key'), 'utf8')]);
  const keyPair = newRsaKeyPair();
  const cert = signCertificate({
    subject: [{ name: 'commonName', value: subject.commonName }, ...(subject.organizations ?? []).map((value) => ({ name: 'organizationName', value }))],
    keyPair,
    validityDays,
    issuer: { cert: forge.pki.certificateFromPem(caCertPem), keyPem: caKeyPem },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keyPair.privateKeyPem };
}
