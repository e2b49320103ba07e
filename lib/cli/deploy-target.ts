/**
 * What `deploy` and `undeploy` share: the cluster they write to (the kubeconfig's current context, or
 * `--context`, loaded as `run` and `diff` load it: lib/cli/kubeconfig-loader.ts), named on stderr before
 * the first write; the operators' synthesized objects; and the objects an earlier `deploy` left, found by
 * the label it puts on every object it applies ({@link DEPLOYED_BY_LABEL}).
 */
import type { Operator } from '../operator/operator.js';
import type { ApiClient } from '../runtime/client/api-client.js';
import { type KubeClient, type KubeObject, isApiError } from '../runtime/client/kube-client.js';
import { listAll } from '../runtime/client/list-pages.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { type ResourceRef, resourcePath } from '../runtime/client/resource-path.js';
import type { AccessRequest } from './access-check.js';
import type { ApiResources } from '../runtime/client/api-resources.js';
import { DEPLOYED_BY_LABEL, type Manifest } from './deploy-plan.js';
import { useContext } from './kubeconfig-context.js';
import { loadKubeConfig } from './kubeconfig-loader.js';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { loadOperators } from './load-operators.js';
import { type OperatorManifests, synthesizeOperators } from './operator-manifests.js';
import type { ClusterFlags, OperatorsFlags } from './shared-flags.js';

/** The flags `deploy` and `undeploy` share. */
export interface TargetOptions extends ClusterFlags, OperatorsFlags {}

/** The kinds an Operator synthesizes, looked for by label when pruning and undeploying (besides the kinds synthesized now). */
export const DEPLOYABLE_KINDS: readonly { readonly apiVersion: string; readonly kind: string }[] = [
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration' },
  { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
  { apiVersion: 'cert-manager.io/v1', kind: 'Certificate' },
  { apiVersion: 'cert-manager.io/v1', kind: 'Issuer' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
];

/** Namespaces `undeploy` and pruning never delete, whatever their labels. */
export const PROTECTED_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The operators picked and synthesized. @throws what loading or synthesis throws */
export async function loadSynthesized(options: TargetOptions, cwd: string): Promise<OperatorManifests[]> {
  const set = await loadOperators({ modulePath: options.module, cwd });
  return synthesizeOperators(set, set.pick(options.operators));
}

/**
 * The kubeconfig with `--context` applied, and the line naming where the writes go
 * (`context NAME, cluster NAME (SERVER)`).
 * @throws Error naming the file, or the unknown context and the known ones
 */
export async function loadTarget(options: TargetOptions, env: NodeJS.ProcessEnv): Promise<{ kubeConfig: KubeConfigView; where: string }> {
  const kubeConfig = await loadKubeConfig(options.kubeconfig, env);
  if (options.context !== undefined) useContext(kubeConfig, options.context);
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error(`kubeconfig ${options.kubeconfig ?? '(KUBECONFIG or ~/.kube/config)'}: no current cluster (set current-context, or pass --context)`);
  return { kubeConfig, where: `context ${kubeConfig.getCurrentContext()}, cluster ${cluster.name} (${cluster.server})` };
}

/** An object in the cluster, with where it is served. */
export interface LiveObject {
  readonly ref: ResourceRef;
  readonly path: string;
  readonly object: Manifest;
}

/**
 * Reads, recording a 403 as a missing permission instead of failing (the command lists them all before
 * any write); what else it throws is thrown.
 */
export class PermissiveReader {
  readonly forbidden: AccessRequest[] = [];

  constructor(private readonly client: KubeClient) {}

  /** GET one object; undefined when absent (404) or forbidden (recorded as `request`). */
  async get(ref: ResourceRef, namespace: string | undefined, name: string, request: AccessRequest): Promise<KubeObject | undefined> {
    return new ResourceClient(this.client).getIfExists(ref, namespace, name).catch((err: unknown) => {
      if (isApiError(err, 403)) {
        this.forbidden.push(request);
        return undefined;
      }
      return Promise.reject(err);
    });
  }

  /** Every item of a LIST (following `continue`); empty when forbidden (recorded as `request`). */
  async list(path: string, query: Record<string, string>, request: AccessRequest): Promise<KubeObject[]> {
    try {
      return (await listAll(this.client, path, { query })).items;
    } catch (err) {
      if (isApiError(err, 403)) {
        this.forbidden.push(request);
        return [];
      }
      if (isApiError(err, 404)) return [];
      throw err;
    }
  }

}

/**
 * The objects labelled as `operator`'s deploy, of every kind in {@link DEPLOYABLE_KINDS} and `extraKinds`
 * that the server serves: cluster-scoped ones cluster-wide, namespaced ones in `namespaces` (those the
 * synthesized objects use: an object an older deploy left in a namespace none uses now is not found,
 * unless that namespace was deployed too and goes with it).
 */
export async function deployedObjects(
  reader: PermissiveReader,
  resources: ApiResources,
  operator: Operator,
  namespaces: readonly string[],
  extraKinds: readonly { apiVersion: string; kind: string }[] = [],
): Promise<LiveObject[]> {
  const kinds = [...new Map([...DEPLOYABLE_KINDS, ...extraKinds].map((k) => [`${k.apiVersion} ${k.kind}`, k])).values()];
  const found: LiveObject[] = [];
  const selector = { labelSelector: `${DEPLOYED_BY_LABEL}=${operator.operatorName}` };
  for (const { apiVersion, kind } of kinds) {
    const ref = await resources.find(apiVersion, kind);
    if (!ref) continue;
    for (const namespace of ref.namespaced ? namespaces : [undefined]) {
      const items = await reader.list(resourcePath(ref, namespace), selector, { verb: 'list', group: ref.group, resource: ref.plural, namespace });
      for (const item of items) {
        const object = { ...item, apiVersion, kind } as Manifest;
        found.push({ ref, path: resourcePath(ref, object.metadata.namespace, object.metadata.name), object });
      }
    }
  }
  return found;
}

/** The namespaces `objects` live in, and those they create, sorted. */
export function namespacesOf(objects: readonly Manifest[]): string[] {
  const names = new Set<string>();
  for (const o of objects) {
    if (o.metadata.namespace) names.add(o.metadata.namespace);
    if (o.kind === 'Namespace' && o.apiVersion === 'v1') names.add(o.metadata.name);
  }
  return [...names].sort();
}

/** Closes the client, ignoring its errors. */
export function closeQuietly(client: ApiClient | undefined): void {
  try {
    client?.close();
  } catch {
    // nothing to do
  }
}
