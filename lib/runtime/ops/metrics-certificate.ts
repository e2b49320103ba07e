/**
 * The certificate the secure `/metrics` server serves, from one of two sources (controller-runtime's
 * metrics server has the same two):
 * - **self-signed** (default): a CA and a serving certificate made in memory at start-up (x509.ts, RSA
 *   2048, valid {@link SELF_SIGNED_VALIDITY_MS}), for `localhost`, `127.0.0.1` and the metrics Service's
 *   names. A new pod makes a new one. Scrapers skip verification (Prometheus `tls_config.insecure_skip_verify`,
 *   as Kubebuilder's ServiceMonitor does) or use `--metrics-cert-path`.
 * - **files** (`--metrics-cert-path DIR`): `tls.crt` and `tls.key` in DIR, e.g. a mounted
 *   `kubernetes.io/tls` Secret that cert-manager keeps. Read at start-up (missing or unreadable files fail
 *   it, naming the file) and again every `checkIntervalMs`: a changed pair is served to new connections
 *   from then on (the kubelet updates a mounted Secret in place), a pair that does not load (or whose key
 *   is not the certificate's, e.g. caught half-written) is logged and the previous one kept.
 *
 * @see https://book.kubebuilder.io/reference/metrics.html#by-using-certmanager
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type KeyObject, createPrivateKey, X509Certificate } from 'node:crypto';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { type CertificateAndKey, createCertificateAuthority, issueServingCertificate } from '../webhook/x509.js';
import { ServerStartError } from './server-start-error.js';

/** One year, as controller-runtime's self-signed metrics certificate. */
export const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;
/** File names in `--metrics-cert-path` (a `kubernetes.io/tls` Secret's keys). */
export const METRICS_CERT_FILE = 'tls.crt';
export const METRICS_KEY_FILE = 'tls.key';

/** A new in-memory CA and a serving certificate it signs for `hosts` (plus `localhost` and `127.0.0.1`). */
export function selfSignedMetricsCertificate(hosts: readonly string[] = []): CertificateAndKey {
  const notAfter = new Date(Date.now() + SELF_SIGNED_VALIDITY_MS);
  const ca = createCertificateAuthority('cdk8s-operator-metrics-ca', { notAfter });
  return issueServingCertificate(ca, [...new Set(['localhost', '127.0.0.1', ...hosts])], { notAfter });
}

/**
 * Reads `tls.crt` and `tls.key` from `dir` and checks they parse.
 * @throws ServerStartError (step `metrics-server`, `CertificateUnreadable`) naming the file and why
 */
export async function readMetricsCertificate(dir: string): Promise<CertificateAndKey> {
  const read = async (name: string) => {
    const file = join(dir, name);
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new ServerStartError('metrics-server', 'CertificateUnreadable', `--metrics-cert-path: cannot read ${file}: ${(err as Error).message}`, { cause: err });
    }
  };
  const certPem = await read(METRICS_CERT_FILE);
  const keyPem = await read(METRICS_KEY_FILE);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new ServerStartError('metrics-server', 'CertificateUnreadable', `--metrics-cert-path: ${join(dir, METRICS_CERT_FILE)} is not a PEM certificate: ${(err as Error).message}`, { cause: err });
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new ServerStartError('metrics-server', 'CertificateUnreadable', `--metrics-cert-path: ${join(dir, METRICS_KEY_FILE)} is not a PEM private key: ${(err as Error).message}`, { cause: err });
  }
  // A pair caught half-updated (one file renewed, not yet the other) is refused, not served.
  if (!cert.checkPrivateKey(key)) {
    throw new ServerStartError('metrics-server', 'CertificateUnreadable', `--metrics-cert-path: ${join(dir, METRICS_KEY_FILE)} is not the key of ${join(dir, METRICS_CERT_FILE)}`);
  }
  return { certPem, keyPem };
}

export interface WatchMetricsCertificateOptions {
  readonly dir: string;
  /** The pair being served (from {@link readMetricsCertificate}). */
  readonly current: CertificateAndKey;
  /** Called with each changed pair that loads. */
  readonly onCertificate: (certificate: CertificateAndKey) => void;
  /** @default 10000 ms: controller-runtime's certwatcher polls every 10 s */
  readonly checkIntervalMs?: number;
  readonly logger?: Logger;
  readonly signal: AbortSignal;
}

/** Re-reads the files every `checkIntervalMs` until `signal` aborts; see the module doc. */
export function watchMetricsCertificate(options: WatchMetricsCertificateOptions): void {
  const logger = options.logger ?? silentLogger;
  let current = options.current;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    readMetricsCertificate(options.dir)
      .then((next) => {
        if (options.signal.aborted || (next.certPem === current.certPem && next.keyPem === current.keyPem)) return;
        options.onCertificate(next);
        current = next;
        logger.info({ dir: options.dir }, 'metrics serving certificate reloaded');
      })
      .catch((err: unknown) => logger.warn({ dir: options.dir, ...errorFields(err) }, 'could not reload the metrics serving certificate; serving the previous one'))
      .finally(() => (busy = false));
  }, options.checkIntervalMs ?? 10_000);
  timer.unref();
  options.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
