/**
 * What the runtime reads from a kubeconfig: where the API server is and how to authenticate to it; and
 * the error of a kubeconfig that can't say it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { brandClass } from '../../operator/brand.js';
import { RuntimeError } from '../runtime-error.js';

/**
 * The part of client-node's `KubeConfig` (1.4, `dist/config.d.ts`) that `Manager`,
 * `runOperators` and the API client use. A client-node `KubeConfig` is one (pass it as it is); so is
 * the object the CLI's commands load without importing client-node's generated API
 * (lib/cli/kubeconfig-loader.ts).
 *
 * - `getCurrentCluster()`: the current context's cluster, or null. `server` is the API server's URL;
 *   `caFile` / `caData` (base64), `tlsServerName` and `skipTLSVerify` shape TLS. Relative `caFile` paths
 *   must already be absolute (client-node's `loadFromFile` makes them so).
 * - `getCurrentUser()`: the current context's user, or null. `certFile`/`certData`, `keyFile`/`keyData`,
 *   `token`, `username`/`password`, `impersonateUser`, and an `authProvider` named `tokenFile` with
 *   `config.tokenFile` (client-node's in-cluster user) are handled by the runtime itself, and their files
 *   re-read as they change (lib/runtime/client/client-credentials.ts).
 * - `applyToHTTPSOptions(opts)`: only called, before every request, for a user with an `exec` plugin,
 *   another `authProvider`, or when a client-node `KubeConfig` has custom authenticators
 *   (`addAuthenticator`); it fills in `opts.headers`, `opts.auth`, `opts.ca`/`cert`/`key`.
 *
 * @see https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
 */
export type KubeConfigSource = Pick<KubeConfig, 'getCurrentCluster' | 'getCurrentUser' | 'applyToHTTPSOptions'>;

/**
 * Why a kubeconfig can't be used:
 * - `NoCurrentCluster`: its current context names no cluster (or there is no current context);
 * - `NoKubeconfigFile`: `KUBECONFIG` is set but names no file;
 * - `InvalidKubeconfig`: a kubeconfig file can't be read, parsed or merged (the message names the file);
 * - `InClusterConfigUnreadable`: a file of the pod's service account can't be read.
 */
export type KubeConfigFailureReason = 'NoCurrentCluster' | 'NoKubeconfigFile' | 'InvalidKubeconfig' | 'InClusterConfigUnreadable';

/**
 * The kubeconfig can't be used: thrown by the API client (and so the `Manager` and `runOperators`) when it
 * has no current cluster, and by the CLI's kubeconfig loader (lib/cli/kubeconfig-loader.ts)
 * naming the file. Step `kubeconfig`; branded.
 * @see https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
 */
export class KubeConfigError extends RuntimeError {
  static {
    brandClass(this, 'KubeConfigError');
  }

  override readonly step = 'kubeconfig';
  constructor(
    override readonly reason: KubeConfigFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}
