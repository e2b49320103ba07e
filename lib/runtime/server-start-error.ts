/**
 * The error of starting one of the operator's HTTP servers: `/metrics`, `/healthz` + `/readyz`, or the
 * HTTPS webhook server.
 */
import { brandClass } from '../operator/brand.js';
import { RuntimeError } from './runtime-error.js';

/** Which server: the step of the run that starts it. */
export type ServerStep = 'metrics-server' | 'probes-server' | 'webhook-server';

/**
 * Why it did not start:
 * - `InvalidBindAddress`: the address is not `host:port`, `:port` or `[ipv6]:port` (or `0` to disable);
 * - `ListenFailed`: the address can't be bound (`cause` is Node's error, e.g. EADDRINUSE, EACCES);
 * - `MissingRegistry`: `/metrics` asked for without a Prometheus registry;
 * - `PathConflict`: two operators serve the same webhook path (their kind, group and version clash);
 * - `CertificateUnreadable`: the secure metrics server's `--metrics-cert-path` files are missing or do not
 *   parse (metrics-certificate.ts).
 */
export type ServerStartFailureReason = 'InvalidBindAddress' | 'ListenFailed' | 'MissingRegistry' | 'PathConflict' | 'CertificateUnreadable';

const SERVER_NAMES: Record<ServerStep, string> = {
  'metrics-server': 'metrics server',
  'probes-server': 'health probe server',
  'webhook-server': 'webhook server',
};

/**
 * A server of the run did not start; nothing of it is left listening. The message leads with the server,
 * e.g. `metrics server: cannot listen on 127.0.0.1:8080: listen EADDRINUSE …` or
 * `webhook server: bind address "9443": expected host:port, :port or [ipv6]:port (or "0" to disable)`.
 * `runOperators` rejects with it (`cdk8s-operator run` exits 1). Branded.
 */
export class ServerStartError extends RuntimeError {
  static {
    brandClass(this, 'ServerStartError');
  }

  constructor(
    override readonly step: ServerStep,
    override readonly reason: ServerStartFailureReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${SERVER_NAMES[step]}: ${detail}`, options);
    this.name = 'ServerStartError';
  }
}
