/**
 * The error of the webhook serving certificate step, in a file of its own so that the certificate-file
 * readers the metrics server shares (certificate-directory.ts) do not load the Secret rotation and caBundle
 * injection of serving-certificate.ts, which `run` loads only when it serves webhooks.
 */
import { brandClass } from '../../operator/brand.js';
import type { ObjectReference } from '../../operator/errors.js';
import { RuntimeError, objectPrefix } from '../runtime-error.js';

/**
 * Why the certificate step failed:
 * - `SecretMissing`: the Secret to rotate does not exist;
 * - `SecretInvalid`: the Secret lacks `ca.crt` / `ca.key` (it is not a self-managed webhook Secret);
 * - `SecretFailed`: reading, creating or updating the Secret failed (`cause`: the API server's answer,
 *   e.g. 403 when the operator's Role lacks it);
 * - `CaBundleInjectionFailed`: the CA could not be written into a CRD's or webhook configuration's
 *   `caBundle` (`cause`: the API server's answer);
 * - `CertificateFileUnreadable`: `--webhook-cert-dir`'s `tls.crt` or `tls.key` can't be read (`cause`: the
 *   file system's error, e.g. ENOENT), see certificate-directory.ts;
 * - `CertificateFileInvalid`: one of those files is not a PEM certificate / private key, or the key is not
 *   the certificate's.
 */
export type WebhookCertificateFailureReason = 'SecretMissing' | 'SecretInvalid' | 'SecretFailed' | 'CaBundleInjectionFailed' | 'CertificateFileUnreadable' | 'CertificateFileInvalid';

/**
 * The webhook serving certificate could not be loaded, kept or trusted. The message names the object:
 * `webhook certificate: Secret ns/name: …` or `webhook certificate: CustomResourceDefinition x: caBundle
 * not written: …`, or, for `--webhook-cert-dir` (no object: `object` undefined), the file:
 * `webhook certificate: /dir/tls.key: …`. `startRunWebhooks` (and so `runOperators`) rejects with it at start-up; later, the
 * rotation loop logs it and tries again. Step `webhook-certificate`; branded.
 */
export class WebhookCertificateError extends RuntimeError {
  static {
    brandClass(this, 'WebhookCertificateError');
  }

  override readonly step = 'webhook-certificate';
  constructor(
    override readonly reason: WebhookCertificateFailureReason,
    object: ObjectReference | undefined,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`webhook certificate: ${objectPrefix(object)}${detail}`, { ...options, objectRef: object });
    this.name = 'WebhookCertificateError';
  }
}
