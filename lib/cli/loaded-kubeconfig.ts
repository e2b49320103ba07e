/**
 * A kubeconfig that lib/cli/kubeconfig-loader.ts loaded: its clusters, users and contexts in
 * client-node's shapes (`Cluster`, `User`, `Context` of `dist/config_types.d.ts`), looked up the way
 * client-node 1.4's `KubeConfig` looks them up, without importing client-node's main entry, whose
 * `dist/config.js` imports the whole generated API (78 MB and 0.9 s of CPU at start).
 *
 * Authentication that the runtime leaves to client-node (exec plugins, auth providers other than a
 * token file: see lib/runtime/client/client-credentials.ts) goes through {@link LoadedKubeConfig.applyToHTTPSOptions},
 * which imports client-node on its first call only.
 */
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node';

/** What a loaded kubeconfig offers: client-node's `KubeConfig` has all of it too. */
export type KubeConfigView = Pick<
  KubeConfig,
  | 'clusters'
  | 'users'
  | 'contexts'
  | 'currentContext'
  | 'getClusters'
  | 'getUsers'
  | 'getContexts'
  | 'getCurrentContext'
  | 'getContextObject'
  | 'getCluster'
  | 'getUser'
  | 'getCurrentCluster'
  | 'getCurrentUser'
  | 'applyToHTTPSOptions'
>;

/** The parts of a kubeconfig, as client-node's `KubeConfig.loadFromOptions` takes them. */
export interface KubeConfigParts {
  readonly clusters: Cluster[];
  readonly users: User[];
  readonly contexts: Context[];
  /** `current-context` as the YAML gave it (client-node does not check its type either). */
  readonly currentContext: string;
}

/**
 * Lookups as in client-node's `KubeConfig` (`dist/config.js`): by name, the first entry of that name
 * wins; `getCurrentCluster()` / `getCurrentUser()` are null when there is no current context or it
 * names no cluster / user. `users` may be replaced entry by entry before the first request (the token
 * file rewrite of lib/cli/kubeconfig-token-file.ts does).
 */
export class LoadedKubeConfig implements KubeConfigView {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext: string;
  private clientNode: Promise<KubeConfig> | undefined;

  constructor(parts: KubeConfigParts) {
    this.clusters = parts.clusters;
    this.users = parts.users;
    this.contexts = parts.contexts;
    this.currentContext = parts.currentContext;
  }

  getClusters(): Cluster[] {
    return this.clusters;
  }

  getUsers(): User[] {
    return this.users;
  }

  getContexts(): Context[] {
    return this.contexts;
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  getContextObject(name: string): Context | null {
    return byName(this.contexts, name);
  }

  getCluster(name: string): Cluster | null {
    return byName(this.clusters, name);
  }

  getUser(name: string): User | null {
    return byName(this.users, name);
  }

  getCurrentCluster(): Cluster | null {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getCluster(context.cluster) : null;
  }

  getCurrentUser(): User | null {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getUser(context.user) : null;
  }

  /**
   * client-node's `KubeConfig.applyToHTTPSOptions` on these clusters, users and contexts: the first call
   * imports `@kubernetes/client-node` and makes a `KubeConfig` with `loadFromOptions` (later calls reuse
   * it), so exec plugins, auth providers and their token caches behave exactly as in client-node.
   * @throws what client-node throws (a failing exec plugin, an `http:` server without `insecure-skip-tls-verify`)
   */
  async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    this.clientNode ??= import('@kubernetes/client-node').then(({ KubeConfig }) => {
      const kc = new KubeConfig();
      kc.loadFromOptions({ clusters: this.clusters, users: this.users, contexts: this.contexts, currentContext: this.currentContext });
      return kc;
    });
    await (await this.clientNode).applyToHTTPSOptions(opts);
  }
}

function byName<T extends { readonly name: string }>(list: readonly T[] | undefined, name: string): T | null {
  return list?.find((entry) => entry.name === name) ?? null;
}
