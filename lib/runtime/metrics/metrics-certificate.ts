/**
 * The certificate the secure `/metrics` server serves, from one of two sources (controller-runtime's
 * metrics server has the same two):
 * - **self-signed** (default): a CA and a serving certificate made in memory at start-up (x509.ts, RSA
 *   2048, valid {@link SELF_SIGNED_VALIDITY_MS}), for `localhost`, `127.0.0.1` and the metrics Service's
 *   names. A new pod makes a new one. Scrapers skip verification (Prometheus `tls_config.insecure_skip_verify`,
 *   as Kubebuilder's ServiceMonitor does) or use `--metrics-cert-path`.
 * - **files** (`--metrics-cert-path DIR`): `tls.crt` and `tls.key` in DIR, e.g. a mounted
 *   `kubernetes.io/tls` Secret that cert-manager keeps. Read at start-up (missing or unreadable files fail
 *   it, naming the file) and again on every change `fs.watch` reports and every `checkIntervalMs`, as
 *   the webhook server's `--webhook-cert-dir` (webhook/certificate-directory.ts): a changed pair is
 *   served to new connections from then on (the kubelet updates a mounted Secret in place), a pair that
 *   does not load (or whose key is not the certificate's, e.g. caught half-written) is logged at error and
 *   the previous one kept.
 *
 * @see https://book.kubebuilder.io/reference/metrics.html#by-using-certmanager
 */
import type { Logger } from '../logger.js';
import { CertificateDirectory, type CertificateReadMetrics } from '../webhook/certificate-directory.js';
import { KeyPairFileError, readKeyPairFiles } from '../webhook/key-pair-files.js';
import type { CertificateAndKey } from '../webhook/x509.js';
import { ServerStartError } from '../server-start-error.js';

/** One year, as controller-runtime's self-signed metrics certificate. */
export const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * A new in-memory CA and a serving certificate it signs for `hosts` (plus `localhost` and `127.0.0.1`).
 * x509.ts (and node-forge, 2.5 MB of RSS) is loaded here, on first use: a `run` serving metrics over plain
 * HTTP or from `--metrics-cert-path` never loads it.
 */
export async function selfSignedMetricsCertificate(hosts: readonly string[] = []): Promise<CertificateAndKey> {
  const { createCertificateAuthority, issueServingCertificate } = await import('../webhook/x509.js');
  const notAfter = new Date(Date.now() + SELF_SIGNED_VALIDITY_MS);
  const ca = createCertificateAuthority('cdk8s-operator-metrics-ca', { notAfter });
  return issueServingCertificate(ca, [...new Set(['localhost', '127.0.0.1', ...hosts])], { notAfter });
}

/**
 * Reads `tls.crt` and `tls.key` from `dir` and checks they parse and belong together.
 * @throws ServerStartError (step `metrics-server`, `CertificateUnreadable`) naming the file and why
 */
export async function readMetricsCertificate(dir: string): Promise<CertificateAndKey> {
  try {
    return await readKeyPairFiles(dir);
  } catch (err) {
    if (!(err instanceof KeyPairFileError)) throw err;
    throw new ServerStartError('metrics-server', 'CertificateUnreadable', `--metrics-cert-path: ${err.message}`, { cause: err.cause ?? err });
  }
}

/**
 * The files' pair kept up to date (see the module doc): a {@link CertificateDirectory} reading with
 * {@link readMetricsCertificate}; `onCertificate` gets each changed pair that loads.
 */
export function metricsCertificateDirectory(options: { dir: string; onCertificate: (certificate: CertificateAndKey) => void; checkIntervalMs?: number; logger?: Logger; metrics?: CertificateReadMetrics }): CertificateDirectory {
  return new CertificateDirectory({ ...options, read: readMetricsCertificate, subject: 'metrics serving certificate' });
}
