/**
 * What the runtime reads from a kubeconfig: where the API server is and how to authenticate to it.
 */
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The part of client-node's `KubeConfig` (1.4, `dist/config.d.ts`) that `Manager`,
 * `runOperators` and the API client use. A client-node `KubeConfig` is one (pass it as it is); so is
 * the object `cdk8s-operator run` loads without importing client-node's generated API
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
