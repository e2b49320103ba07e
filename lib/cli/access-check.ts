/**
 * Whether the kubeconfig's user may do what a command is about to do, asked of the API server before the
 * first write with one SelfSubjectAccessReview per (verb, resource, namespace, name): `deploy` stops and
 * lists every missing permission rather than failing half-way with some objects applied.
 *
 * What a review cannot tell: RBAC's escalation check (creating a role or binding that grants more than the
 * user holds needs `escalate` / `bind`, or holding those permissions), and admission (quota, policy).
 * Those still fail at the write, naming the object.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping
 */
import { SELF_SUBJECT_ACCESS_REVIEWS } from '../runtime/client/builtin-resources.js';
import type { KubeClient } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';

/** One permission: a verb on a resource, in a namespace (absent: cluster-wide), on one name (absent: any). */
export interface AccessRequest {
  /** `get`, `list`, `create`, `patch`, `delete` … */
  readonly verb: string;
  /** API group; '' for the core group. */
  readonly group: string;
  /** Plural resource name, e.g. `deployments`. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}

/** `create deployments.apps in namespace x`, `patch customresourcedefinitions.apiextensions.k8s.io memcacheds.cache.example.com (cluster-wide)`. */
export function accessLabel(request: AccessRequest): string {
  const resource = request.group === '' ? request.resource : `${request.resource}.${request.group}`;
  return `${request.verb} ${resource}${request.name ? ` ${request.name}` : ''}${request.namespace ? ` in namespace ${request.namespace}` : ' (cluster-wide)'}`;
}

/**
 * The requests the user may not do, in the order given, duplicates asked once. Reviews are sent 8 at a
 * time.
 * @throws what the review POST throws (e.g. a 403 when the user may not even create reviews, which every
 *   authenticated user may by the default `system:basic-user` role)
 */
export async function missingAccess(client: KubeClient, requests: readonly AccessRequest[]): Promise<AccessRequest[]> {
  const unique = [...new Map(requests.map((r) => [accessLabel(r), r])).values()];
  const allowed = new Map<AccessRequest, boolean>();
  for (let i = 0; i < unique.length; i += 8) {
    await Promise.all(
      unique.slice(i, i + 8).map(async (request) => {
        const review = await new ResourceClient(client).create<{ status?: { allowed?: boolean } }>(SELF_SUBJECT_ACCESS_REVIEWS, {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb: request.verb, group: request.group, resource: request.resource, namespace: request.namespace, name: request.name } },
        });
        allowed.set(request, review.status?.allowed === true);
      }),
    );
  }
  return unique.filter((r) => !allowed.get(r));
}
