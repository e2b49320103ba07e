import { createHmac } from 'node:crypto';

/**
 * The key the example operators use when none is given: fine for `render`, snapshot tests and a local
 * cluster, and published in this repository, so never for a real database. In a cluster, the key comes
 * from a Secret mounted into the operator's pod and is read at the edge (the CLI), then passed to
 * `new DatabaseOperator(scope, id, { credentialsKey })`.
 */
export const DEV_CREDENTIALS_KEY = 'cdk8s-operator-sdk/database/dev-key (insecure, published)';

/**
 * Derives a Database's password from the operator's secret key and the CR's uid:
 * base64url(HMAC-SHA256(key, uid)), 43 characters, 256 bits.
 *
 * Pure and deterministic, so render() recomputes the same password on every reconcile and the Secret
 * never changes under a running database. A new CR (new uid) gets a new password; knowing a password
 * reveals nothing about the key or other databases' passwords.
 */
export function derivePassword(key: string, uid: string): string {
  if (key.length === 0) throw new Error('the credentials key is empty');
  return createHmac('sha256', key).update(uid).digest('base64url');
}
