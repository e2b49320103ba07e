/**
 * Which REST resource serves a kind, read from the API server's discovery (`GET /api/v1`,
 * `GET /apis/<group>/<version>`), for `deploy` and `undeploy`: they apply and delete whatever kinds the
 * operators synthesize, cert-manager's Issuer and Certificate included, which no built-in table knows.
 * One discovery request per group version, cached for the command's run.
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#discovery-api
 */
import type { KubeClient } from './kube-client.js';
import { isApiError } from './kube-client.js';
import type { ResourceRef } from './resource-path.js';

/** A kind the API server does not serve (its group version is unknown, or lists no such kind). */
export class KindNotServedError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`${kind} (${apiVersion}) is not served by this API server${apiVersion.startsWith('cert-manager.io/') ? ': install cert-manager first (webhook.certificates is cert-manager)' : ''}`);
    this.name = 'KindNotServedError';
  }
}

interface ApiResourceList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

/** Discovery, cached per group version. */
export class ApiResources {
  private readonly lists = new Map<string, Promise<ApiResourceList | undefined>>();

  constructor(private readonly client: KubeClient) {}

  /**
   * The resource of `kind` in `apiVersion` (`v1`, `apps/v1`).
   * @throws KindNotServedError when the server does not serve it; what discovery throws but a 404
   */
  async resourceOf(apiVersion: string, kind: string): Promise<ResourceRef> {
    const found = await this.find(apiVersion, kind);
    if (!found) throw new KindNotServedError(apiVersion, kind);
    return found;
  }

  /** As {@link resourceOf}, undefined when the kind is not served. */
  async find(apiVersion: string, kind: string): Promise<ResourceRef | undefined> {
    let list = this.lists.get(apiVersion);
    if (!list) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      list = this.client.request<ApiResourceList>('GET', path).catch((err: unknown) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
      this.lists.set(apiVersion, list);
    }
    const resource = (await list)?.resources?.find((r) => r.kind === kind && !r.name.includes('/'));
    if (!resource) return undefined;
    const slash = apiVersion.indexOf('/');
    return {
      group: slash < 0 ? '' : apiVersion.slice(0, slash),
      version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
      plural: resource.name,
      namespaced: resource.namespaced,
    };
  }

  /** Forgets what was read (after CRDs were installed, their kinds are served). */
  forget(): void {
    this.lists.clear();
  }
}
