/**
 * RBAC self-check at start-up: before any informer starts, ask the API server, with one
 * SelfSubjectAccessReview per permission (kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access),
 * whether this process may do everything the runtime will do. Missing permissions fail fast with a message
 * listing exactly the missing ones, worded like `kubectl auth can-i` questions
 * (`cannot patch deployments.apps in namespace "x"`), instead of informers that never sync.
 *
 * What the runtime uses, per operator ({@link requiredAccess}):
 * - the CR: get, list, watch (informer), patch, update (finalizer add/remove);
 * - its `status` subresource: patch (status writes);
 * - its `finalizers` subresource: update, only when the operator defines `finalize()`;
 * - each child kind: get, list, watch (informers), create + patch (server-side apply), delete (prune);
 * - each retired child kind (`retiredKinds`): get + delete (pruning what the inventory still lists);
 * - each related kind: get, list, watch, in its declared `scope.namespaces` when it has them;
 * - events.k8s.io events: create, patch (events.ts), in the CR's namespace (`default` for cluster-scoped CRs);
 * - with the storage-version migration (several versions, all namespaces watched): get on the CR's own
 *   CustomResourceDefinition and update on its `status`, by name (storage-version-migration.ts);
 * - with leader election, coordination.k8s.io leases: get, create, update in the lease namespace
 *   (what leader-election.ts sends);
 * - with sharding, coordination.k8s.io leases: list, create, update, delete in the ring's namespace
 *   (what sharding/membership.ts sends: the ring is listed, the member's own Lease created, renewed and
 *   deleted when it stops, a long-expired member's Lease deleted);
 * - with the secure metrics server's authorization (metrics-auth.ts): create on tokenreviews
 *   (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io), cluster-scoped.
 *
 * Scope: namespaced resources are checked in the watched namespace when the operator watches one, else at
 * the cluster scope (all namespaces); cluster-scoped resources at the cluster scope.
 */
import { SELF_SUBJECT_ACCESS_REVIEWS } from '../client/builtin-resources.js';
import type { KubeClient } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import { brandClass } from '../../operator/brand.js';
import { RuntimeError } from '../runtime-error.js';
import { CHILD_VERBS, CUSTOM_RESOURCE_VERBS, EVENT_VERBS, RELATED_VERBS, RETIRED_CHILD_VERBS } from '../../operator/manifests/rbac.js';
import { CRD_GROUP, CRD_READ_VERBS, CRD_STATUS_VERBS, migratesStoredVersions } from '../../operator/versions/storage-version-migration.js';

/** One permission, as a SelfSubjectAccessReview's `resourceAttributes`. */
export interface AccessRequirement {
  readonly verb: string;
  /** API group; '' for the core group. */
  readonly group: string;
  /** Plural resource, e.g. 'deployments'. */
  readonly resource: string;
  readonly subresource?: string;
  /** One object's name (a `resourceNames` grant); undefined for every object. */
  readonly name?: string;
  /** Namespace; undefined for the cluster scope (all namespaces, or a cluster-scoped resource). */
  readonly namespace?: string;
}

/** A permission the API server denied, with its answer. */
export interface MissingAccess extends AccessRequirement {
  /** The authorizer's reason, when it gave one (often empty for RBAC denials). */
  readonly reason?: string;
}

/** The kind fields the check needs (lib/operator's ResolvedKind). */
export interface AccessKind {
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** What {@link requiredAccess} reads from an operator (lib/operator's `Operator` satisfies it). */
export interface AccessCheckedOperator {
  readonly crd: AccessKind;
  childKinds(): readonly AccessKind[];
  /** Kinds an earlier version rendered, pruned only. @default none */
  readonly retiredKinds?: readonly AccessKind[];
  /** Kinds the operator reads (`related`), by key. @default none */
  readonly relatedKinds?: Readonly<Record<string, AccessKind>>;
  /** The related declarations by the same keys: a declared `scope.namespaces` is checked there. @default none */
  readonly related?: Readonly<Record<string, { readonly scope?: { readonly namespaces?: readonly string[] } }>>;
  readonly watchNamespace?: string;
  readonly finalize?: unknown;
  /** Every version of the kind; more than one means the storage-version migration runs. @default one */
  readonly versions?: readonly unknown[];
}

export interface RequiredAccessOptions {
  /** The single namespace the manager watches. @default each operator's `watchNamespace`, else all namespaces */
  readonly namespace?: string;
  /** Namespace of the leader-election Lease; leases are checked only when set. @default no leader election */
  readonly leaderElectionNamespace?: string;
  /** Namespace of the sharding ring's member Leases ({@link SHARDING_LEASE_ACCESS_VERBS}). @default no sharding */
  readonly shardingNamespace?: string;
  /** The metrics server reviews scrapes (TokenReview, SubjectAccessReview). @default false */
  readonly metricsAuthorization?: boolean;
}

/** What the secure metrics server sends (metrics-auth.ts), as the synthesized ClusterRole grants it (lib/operator/manifests/rbac.ts). */
export const METRICS_AUTH_ACCESS: readonly AccessRequirement[] = [
  { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' },
  { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
];

/** What the runtime does with leases (a subset of what the synthesized Role grants). */
export const LEASE_ACCESS_VERBS = ['get', 'create', 'update'] as const;

/** What a sharded replica does with leases (sharding/membership.ts; the synthesized Role grants them with `sharding`). */
export const SHARDING_LEASE_ACCESS_VERBS = ['list', 'create', 'update', 'delete'] as const;

/**
 * Every permission the runtime will use for these operators, de-duplicated, in a deterministic order
 * (operators' order, then CR, status, finalizers, children, events; then leases, then the metrics reviews).
 */
export function requiredAccess(operators: readonly AccessCheckedOperator[], options: RequiredAccessOptions = {}): AccessRequirement[] {
  const out = new Map<string, AccessRequirement>();
  const add = (req: AccessRequirement) => {
    const key = [req.verb, req.group, req.resource, req.subresource ?? '', req.name ?? '', req.namespace ?? ''].join('\u0000');
    if (!out.has(key)) out.set(key, req);
  };
  for (const operator of operators) {
    const watched = options.namespace ?? operator.watchNamespace;
    const scope = (kind: AccessKind) => (kind.namespaced && watched ? { namespace: watched } : {});
    const cr = operator.crd;
    for (const verb of CUSTOM_RESOURCE_VERBS) add({ verb, group: cr.group, resource: cr.plural, ...scope(cr) });
    add({ verb: 'patch', group: cr.group, resource: cr.plural, subresource: 'status', ...scope(cr) });
    if (typeof operator.finalize === 'function') add({ verb: 'update', group: cr.group, resource: cr.plural, subresource: 'finalizers', ...scope(cr) });
    for (const child of operator.childKinds()) {
      for (const verb of CHILD_VERBS) add({ verb, group: child.group, resource: child.plural, ...scope(child) });
    }
    for (const retired of operator.retiredKinds ?? []) {
      for (const verb of RETIRED_CHILD_VERBS) add({ verb, group: retired.group, resource: retired.plural, ...scope(retired) });
    }
    for (const [key, related] of Object.entries(operator.relatedKinds ?? {})) {
      // A declared scope's namespaces are where its informers list and watch.
      const namespaces = related.namespaced ? operator.related?.[key]?.scope?.namespaces : undefined;
      const wheres = namespaces ? namespaces.map((namespace) => ({ namespace })) : [scope(related)];
      for (const where of wheres) for (const verb of RELATED_VERBS) add({ verb, group: related.group, resource: related.plural, ...where });
    }
    if (options.namespace === undefined && migratesStoredVersions(operator)) {
      const name = `${cr.plural}.${cr.group}`;
      for (const verb of CRD_READ_VERBS) add({ verb, group: CRD_GROUP, resource: 'customresourcedefinitions', name });
      for (const verb of CRD_STATUS_VERBS) add({ verb, group: CRD_GROUP, resource: 'customresourcedefinitions', subresource: 'status', name });
    }
    // Events go to the CR's namespace; for a cluster-scoped CR to `default` (events.ts).
    const eventNamespace = cr.namespaced ? watched : 'default';
    for (const verb of EVENT_VERBS) add({ verb, group: 'events.k8s.io', resource: 'events', ...(eventNamespace ? { namespace: eventNamespace } : {}) });
  }
  if (options.leaderElectionNamespace) {
    for (const verb of LEASE_ACCESS_VERBS) add({ verb, group: 'coordination.k8s.io', resource: 'leases', namespace: options.leaderElectionNamespace });
  }
  if (options.shardingNamespace) {
    for (const verb of SHARDING_LEASE_ACCESS_VERBS) add({ verb, group: 'coordination.k8s.io', resource: 'leases', namespace: options.shardingNamespace });
  }
  if (options.metricsAuthorization) METRICS_AUTH_ACCESS.forEach(add);
  return [...out.values()];
}

/**
 * `resource.group/subresource` as kubectl spells it (`deployments.apps`, `events`, `memcacheds.cache.example.com/status`).
 */
export function describeResource(req: AccessRequirement): string {
  return `${req.resource}${req.group ? `.${req.group}` : ''}${req.subresource ? `/${req.subresource}` : ''}`;
}

/** `cannot patch deployments.apps in namespace "x"` / `cannot list memcacheds.cache.example.com at the cluster scope`. */
export function describeMissing(req: AccessRequirement): string {
  if (req.name) return `cannot ${req.verb} ${describeResource(req)} ${JSON.stringify(req.name)}${req.namespace ? ` in namespace ${JSON.stringify(req.namespace)}` : ''}`;
  const where = req.namespace ? `in namespace ${JSON.stringify(req.namespace)}` : 'at the cluster scope';
  return `cannot ${req.verb} ${describeResource(req)} ${where}`;
}

/** Some permissions are missing; `missing` lists them and the message has one line each. Step `rbac-self-check`; branded. */
export class RbacSelfCheckError extends RuntimeError {
  static {
    brandClass(this, 'RbacSelfCheckError');
  }

  override readonly reason = 'MissingPermissions';
  override readonly step = 'rbac-self-check';
  constructor(
    readonly missing: readonly MissingAccess[],
    /** Who was checked, when known (e.g. `system:serviceaccount:ns:name`), for the message. */
    subject?: string,
  ) {
    super(
      `RBAC self-check: ${subject ? `${subject} lacks` : 'missing'} ${missing.length} permission${missing.length === 1 ? '' : 's'} the operator needs:\n` +
        missing.map((m) => `  - ${describeMissing(m)}${m.reason ? ` (${m.reason})` : ''}`).join('\n') +
        '\nGrant them in the operator\'s ClusterRole/Role (re-run `cdk8s synth` and apply its RBAC).',
    );
    this.name = 'RbacSelfCheckError';
  }
}

/**
 * A SelfSubjectAccessReview itself failed (not a denial): the check could not be made. `cause` is the
 * request's error (an ApiError, a refused connection, a `CredentialsError`). Step `rbac-self-check`; branded.
 */
export class AccessReviewError extends RuntimeError {
  static {
    brandClass(this, 'AccessReviewError');
  }

  override readonly reason = 'AccessReviewFailed';
  override readonly step = 'rbac-self-check';
  constructor(
    readonly requirement: AccessRequirement,
    options: { cause: unknown },
  ) {
    super(`RBAC self-check: could not ask whether the operator ${describeMissing(requirement).replace(/^cannot /, 'can ')}: ${String((options.cause as Error)?.message ?? options.cause)}`, options);
    this.name = 'AccessReviewError';
  }
}

export interface CheckAccessOptions {
  /** Reviews in flight at once. @default 8 */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
}

/**
 * Sends one SelfSubjectAccessReview (POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews) per
 * requirement, at most `concurrency` at a time, and resolves to the denied ones (in the requirements'
 * order; empty when everything is allowed).
 * @throws AccessReviewError when a review request fails (network, 5xx, or SSAR itself forbidden)
 */
export async function checkAccess(
  client: Pick<KubeClient, 'request'>,
  requirements: readonly AccessRequirement[],
  options: CheckAccessOptions = {},
): Promise<MissingAccess[]> {
  const results: (MissingAccess | undefined)[] = new Array(requirements.length);
  let next = 0;
  const worker = async () => {
    while (next < requirements.length) {
      const index = next++;
      const req = requirements[index]!;
      let review: { status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string } };
      try {
        const body = {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              verb: req.verb,
              group: req.group,
              resource: req.resource,
              ...(req.subresource ? { subresource: req.subresource } : {}),
              ...(req.name ? { name: req.name } : {}),
              ...(req.namespace ? { namespace: req.namespace } : {}),
            },
          },
        };
        review = await new ResourceClient(client).create(SELF_SUBJECT_ACCESS_REVIEWS, body, { signal: options.signal });
      } catch (cause) {
        throw new AccessReviewError(req, { cause });
      }
      if (review.status?.allowed !== true) {
        const reason = review.status?.reason || review.status?.evaluationError || undefined;
        results[index] = { ...req, ...(reason ? { reason } : {}) };
      }
    }
  };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 8, requirements.length));
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results.filter((r): r is MissingAccess => r !== undefined);
}

/**
 * {@link checkAccess}, then throws {@link RbacSelfCheckError} listing exactly the denied permissions.
 * `subject` only words the message.
 */
export async function assertAccess(
  client: Pick<KubeClient, 'request'>,
  requirements: readonly AccessRequirement[],
  options: CheckAccessOptions & { readonly subject?: string } = {},
): Promise<void> {
  const missing = await checkAccess(client, requirements, options);
  if (missing.length > 0) throw new RbacSelfCheckError(missing, options.subject);
}
