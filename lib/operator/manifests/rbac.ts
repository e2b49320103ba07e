/**
 * Least-privilege RBAC rules, derived (never hand-written) from the operator's kind and child kinds.
 *
 * - the CR: get, list, watch, patch, update;
 * - its `status` subresource: get, patch, update; its `finalizers` subresource: update;
 * - each child kind: get, list, watch, create, patch, delete;
 * - each retired child kind (rendered by an earlier version, no longer rendered): get, delete, so that
 *   the runtime can prune the objects its inventory (`status.children`) still lists;
 * - each related kind (objects the operator reads, `related`): get, list, watch; a related kind whose
 *   `scope.namespaces` is declared gets them by a Role in each of those namespaces ({@link relatedRules});
 * - events, in both `events.k8s.io` and the core group: create, patch;
 * - with the storage-version migration (an operator of several versions watching all namespaces, see
 *   storage-version-migration.ts): get on its own CustomResourceDefinition and update on that CRD's
 *   `status`, both restricted by `resourceNames` to the CRD's name (the CR verbs already hold the list
 *   and update the migration sends);
 * - leases (`coordination.k8s.io`) for leader election: get, list, watch, create, update, patch, granted
 *   by a separate Role in the operator's own namespace only.
 *
 * No wildcard is ever emitted. Rules are merged per API group (resources with the same verbs share a
 * rule) and ordered by group, then verbs, then resources, so the output is deterministic.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/
 */
import type { ResolvedKind } from '../kinds.js';
import { CRD_GROUP, CRD_READ_VERBS, CRD_STATUS_VERBS } from '../versions/storage-version-migration.js';

/** An RBAC PolicyRule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  /** API groups, `''` for the core group. */
  readonly apiGroups: string[];
  /** Resources (plurals), e.g. `deployments`, `memcacheds/status`. */
  readonly resources: string[];
  /** Only these objects; absent: every object of the resources. */
  readonly resourceNames?: string[];
  readonly verbs: string[];
}

/** Canonical verb order in emitted rules. */
const VERB_ORDER = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];

/** On the CR: the informer lists and watches; the finalizer is added and removed by a merge patch. */
export const CUSTOM_RESOURCE_VERBS = ['get', 'list', 'watch', 'patch', 'update'] as const;
/** On `<plural>/status`: the runtime writes status by server-side apply (patch). */
export const STATUS_VERBS = ['get', 'patch', 'update'] as const;
/**
 * On `<plural>/finalizers`: where the OwnerReferencesPermissionEnforcement admission plugin is on (e.g.
 * OpenShift), a child's ownerReference with `blockOwnerDeletion: true` needs update on the owner's
 * finalizers subresource.
 * @see https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#ownerreferencespermissionenforcement
 */
export const FINALIZER_VERBS = ['update'] as const;
/** On every child kind: informer (get/list/watch), server-side apply (create/patch; apply is a patch), prune (delete). */
export const CHILD_VERBS = ['get', 'list', 'watch', 'create', 'patch', 'delete'] as const;
/**
 * On every retired child kind (the operator's `retiredKinds`): the runtime reads one inventory entry by
 * name (get) and deletes it (delete). No list/watch: retired kinds are not cached.
 */
export const RETIRED_CHILD_VERBS = ['get', 'delete'] as const;
/** On every related kind (`OperatorProps.related`): the runtime caches it (list, watch) and reads it (get). */
export const RELATED_VERBS = ['get', 'list', 'watch'] as const;
/** On events: a new Event is created; a repeat is patched into its series. */
export const EVENT_VERBS = ['create', 'patch'] as const;
/** On leases, in the operator's namespace only: leader election (kubebuilder's scaffolded set; the runtime uses get, create, update). */
export const LEASE_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch'] as const;

/** One grant before merging. */
export interface Grant {
  readonly group: string;
  readonly resource: string;
  /** Restrict the grant to these object names. @default every object */
  readonly resourceNames?: readonly string[];
  readonly verbs: readonly string[];
}

/**
 * Merges grants into rules: verbs of the same (group, resource) are unioned, then resources of one group
 * with identical verbs share a rule. Deterministic order.
 *
 * @throws Error if a grant contains `*`
 */
export function mergeGrants(grants: readonly Grant[]): PolicyRule[] {
  const byResource = new Map<string, { group: string; resource: string; names: string; verbs: Set<string> }>();
  for (const grant of grants) {
    if (grant.group === '*' || grant.resource === '*' || grant.verbs.includes('*') || grant.resourceNames?.includes('*')) {
      throw new Error(`refusing a wildcard RBAC grant ${JSON.stringify(grant)}`);
    }
    const names = [...new Set(grant.resourceNames ?? [])].sort().join(',');
    const key = `${grant.group}\u0000${grant.resource}\u0000${names}`;
    const entry = byResource.get(key) ?? { group: grant.group, resource: grant.resource, names, verbs: new Set<string>() };
    grant.verbs.forEach((v) => entry.verbs.add(v));
    byResource.set(key, entry);
  }
  const byGroupVerbs = new Map<string, { group: string; verbs: string[]; names: string; resources: string[] }>();
  for (const entry of byResource.values()) {
    const verbs = sortVerbs([...entry.verbs]);
    const key = `${entry.group}\u0000${verbs.join(',')}\u0000${entry.names}`;
    const rule = byGroupVerbs.get(key) ?? { group: entry.group, verbs, names: entry.names, resources: [] };
    rule.resources.push(entry.resource);
    byGroupVerbs.set(key, rule);
  }
  return [...byGroupVerbs.values()]
    .map((r) => ({ group: r.group, verbs: r.verbs, names: r.names, resources: [...r.resources].sort() }))
    .sort((a, b) => cmp(a.group, b.group) || cmp(a.verbs.join(','), b.verbs.join(',')) || cmp(a.resources.join(','), b.resources.join(',')) || cmp(a.names, b.names))
    .map((r) => ({ apiGroups: [r.group], resources: r.resources, ...(r.names ? { resourceNames: r.names.split(',') } : {}), verbs: r.verbs }));
}

/**
 * The rules of the operator's ClusterRole (or Role, for an operator watching one namespace): the CR, its
 * subresources, every child kind, every retired child kind (get, delete), every related kind (get, list,
 * watch) and events; with `options.storageVersionMigration`, get on the CR's own CRD and update on its
 * `status`, by name. A kind both current and retired gets the union of the verbs.
 *
 * @param retired kinds earlier versions rendered (`retiredKinds`); default `[]`
 * @param related kinds the operator reads (`related`); default `[]`
 * @param options.storageVersionMigration whether the runtime migrates stored versions
 *   (storage-version-migration.ts); default false: no CRD rules
 */
export function deriveOperatorRules(
  customResource: ResolvedKind,
  children: readonly ResolvedKind[],
  retired: readonly ResolvedKind[] = [],
  related: readonly ResolvedKind[] = [],
  options: { readonly storageVersionMigration?: boolean } = {},
): PolicyRule[] {
  const crdName = [`${customResource.plural}.${customResource.group}`];
  const grants: Grant[] = [
    { group: customResource.group, resource: customResource.plural, verbs: CUSTOM_RESOURCE_VERBS },
    { group: customResource.group, resource: `${customResource.plural}/status`, verbs: STATUS_VERBS },
    { group: customResource.group, resource: `${customResource.plural}/finalizers`, verbs: FINALIZER_VERBS },
    { group: 'events.k8s.io', resource: 'events', verbs: EVENT_VERBS },
    { group: '', resource: 'events', verbs: EVENT_VERBS },
    ...children.map((child) => ({ group: child.group, resource: child.plural, verbs: CHILD_VERBS })),
    ...retired.map((kind) => ({ group: kind.group, resource: kind.plural, verbs: RETIRED_CHILD_VERBS })),
    ...related.map((kind) => ({ group: kind.group, resource: kind.plural, verbs: RELATED_VERBS })),
    ...(options.storageVersionMigration
      ? [
          { group: CRD_GROUP, resource: 'customresourcedefinitions', resourceNames: crdName, verbs: CRD_READ_VERBS },
          { group: CRD_GROUP, resource: 'customresourcedefinitions/status', resourceNames: crdName, verbs: CRD_STATUS_VERBS },
        ]
      : []),
  ];
  return mergeGrants(grants);
}

/**
 * The rules of a Role in a namespace named by a related declaration's `scope.namespaces`: get, list and
 * watch on each of those related kinds.
 */
export function relatedRules(kinds: readonly ResolvedKind[]): PolicyRule[] {
  return mergeGrants(kinds.map((kind) => ({ group: kind.group, resource: kind.plural, verbs: RELATED_VERBS })));
}

/** On leases, besides {@link LEASE_VERBS}, for a sharded Deployment: a replica deletes its own Lease when it stops. */
export const SHARDING_LEASE_VERBS = ['delete'] as const;

/** The rules of the leader-election Role in the operator's namespace (`sharding`: plus delete on leases). */
export function leaderElectionRules(sharding = false): PolicyRule[] {
  return mergeGrants([{ group: 'coordination.k8s.io', resource: 'leases', verbs: sharding ? [...LEASE_VERBS, ...SHARDING_LEASE_VERBS] : LEASE_VERBS }]);
}

function sortVerbs(verbs: string[]): string[] {
  const rank = (v: string) => {
    const i = VERB_ORDER.indexOf(v);
    return i < 0 ? VERB_ORDER.length : i;
  };
  return [...verbs].sort((a, b) => rank(a) - rank(b) || cmp(a, b));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
