/**
 * A serving certificate and its private key read from two PEM files in one directory, `tls.crt` and
 * `tls.key` (the keys of a `kubernetes.io/tls` Secret, as the kubelet mounts it; controller-runtime's
 * `CertName` and `KeyName`). Used for the webhook server's `--webhook-cert-dir` and the metrics server's
 * `--metrics-cert-path`; each turns a {@link KeyPairFileError} into its own error type.
 *
 * @see https://kubernetes.io/docs/concepts/configuration/secret/#tls-secrets
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type KeyObject, createPrivateKey, X509Certificate } from 'node:crypto';
import type { CertificateAndKey } from './x509.js';

/** The certificate's file name in the directory (a `kubernetes.io/tls` Secret's key). */
export const CERT_FILE = 'tls.crt';
/** The private key's file name in the directory. */
export const KEY_FILE = 'tls.key';

/**
 * A pair that cannot be served: `unreadable` (a file missing, a directory, no permission) or `invalid`
 * (not PEM, empty, or the key is not the certificate's). The message starts with the file's path.
 */
export class KeyPairFileError extends Error {
  constructor(readonly problem: 'unreadable' | 'invalid', readonly file: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyPairFileError';
  }
}

/**
 * Reads `dir/tls.crt` and `dir/tls.key` and checks that they parse and belong together (a pair caught
 * half-renewed, one file new and the other not, is refused).
 * @throws KeyPairFileError naming the file and why
 */
export async function readKeyPairFiles(dir: string): Promise<CertificateAndKey> {
  const certFile = join(dir, CERT_FILE);
  const keyFile = join(dir, KEY_FILE);
  const read = async (file: string) => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new KeyPairFileError('unreadable', file, `${file}: cannot be read: ${(err as Error).message}`, { cause: err });
    }
  };
  const certPem = await read(certFile);
  const keyPem = await read(keyFile);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new KeyPairFileError('invalid', certFile, `${certFile}: not a PEM certificate: ${(err as Error).message}`, { cause: err });
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new KeyPairFileError('invalid', keyFile, `${keyFile}: not a PEM private key: ${(err as Error).message}`, { cause: err });
  }
  if (!cert.checkPrivateKey(key)) throw new KeyPairFileError('invalid', keyFile, `${keyFile}: not the private key of ${certFile}`);
  return { certPem, keyPem };
}
