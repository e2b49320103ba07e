/**
 * The certificates and keys of a local control plane: one CA, the kube-apiserver serving certificate,
 * the `admin` client certificate (group `system:masters`) and the service-account signing key pair.
 *
 * Keys are RSA 2048 made by Node's crypto (fast, native); certificates are signed with node-forge.
 * Everything is written as PEM files into one directory, mode 0600 for private keys.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';
import { createCertificateAuthority, newKeyPair, signCertificate, type Validity } from '../runtime/webhook/x509.js';

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

/** From an hour back (tolerating clock skew) for `validityDays` days. */
function validityOf(validityDays: number): Validity {
  const now = Date.now();
  return { notBefore: new Date(now - 60 * 60 * 1000), notAfter: new Date(now + validityDays * 24 * 60 * 60 * 1000) };
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

  const validity = validityOf(validityDays);
  const ca = createCertificateAuthority('cdk8s-operator-sdk-control-plane-ca', validity);
  const issuer = { issuer: forge.pki.certificateFromPem(ca.certPem), signingKeyPem: ca.keyPem, validity };

  const servingKeys = newKeyPair();
  const dnsNames = ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
  const ips = ['127.0.0.1', '::1', kubernetesServiceIp, ...(options.extraIpAddresses ?? [])];
  const servingCert = signCertificate({
    subject: [{ name: 'commonName', value: 'kube-apiserver' }],
    publicKeyPem: servingKeys.publicKeyPem,
    ...issuer,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))] },
    ],
  });

  const adminKeys = newKeyPair();
  const adminCert = signCertificate({
    subject: [
      { name: 'commonName', value: 'admin' },
      { name: 'organizationName', value: 'system:masters' },
    ],
    publicKeyPem: adminKeys.publicKeyPem,
    ...issuer,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });

  const serviceAccountKeys = newKeyPair();

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
    caCertPem: ca.certPem,
    adminCertPem: forge.pki.certificateToPem(adminCert),
    adminKeyPem: adminKeys.privateKeyPem,
  };
  await Promise.all([
    writePem(pki.caCertPath, pki.caCertPem, 0o644),
    writePem(pki.caKeyPath, ca.keyPem, 0o600),
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
  const keyPair = newKeyPair();
  const cert = signCertificate({
    subject: [{ name: 'commonName', value: subject.commonName }, ...(subject.organizations ?? []).map((value) => ({ name: 'organizationName', value }))],
    publicKeyPem: keyPair.publicKeyPem,
    signingKeyPem: caKeyPem,
    issuer: forge.pki.certificateFromPem(caCertPem),
    validity: validityOf(validityDays),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keyPair.privateKeyPem };
}
