/**
 * The RBAC the new release needs that the installed roles lack: each rule of the new release's
 * ClusterRoles and Roles, expanded to (apiGroup, resource, verb, resourceNames), checked against the
 * installed role of the same name as the API server's RBAC authorizer matches a rule (`*` matches any
 * group, resource or verb; a rule without `resourceNames` covers every name). Pure: the caller reads
 * the installed roles. Aggregated ClusterRoles and bindings are not compared (the new release's
 * bindings name the same roles).
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/#role-and-clusterrole
 */

/** A PolicyRule, as much of it as matching needs. */
export interface PolicyRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

/** One permission the new release's role grants and the installed one does not. */
export interface MissingPermission {
  readonly apiGroup: string;
  readonly resource: string;
  readonly verb: string;
  /** @default every name */
  readonly resourceNames?: readonly string[];
}

/** One role of the new release (JSON: an entry of `rbac.roles` of `diff --all --output json`). */
export interface RoleComparison {
  /** `ClusterRole` or `Role`. */
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** False when the cluster has no role of that name (every permission is then missing). */
  readonly installed: boolean;
  readonly missing: readonly MissingPermission[];
}

const matches = (granted: readonly string[] | undefined, wanted: string) => (granted ?? []).some((g) => g === '*' || g === wanted);

/** Whether `rules` grant `permission` (the RBAC authorizer's rule matching). */
export function rulesAllow(rules: readonly PolicyRule[], permission: MissingPermission): boolean {
  return rules.some((rule) =>
    matches(rule.apiGroups, permission.apiGroup) && matches(rule.resources, permission.resource) && matches(rule.verbs, permission.verb)
    && (rule.resourceNames === undefined || rule.resourceNames.length === 0
      || (permission.resourceNames !== undefined && permission.resourceNames.every((name) => rule.resourceNames!.includes(name)))),
  );
}

/** What `next`'s rules grant that `installed` (undefined: absent) does not. Non-resource URLs are left out. */
export function compareRole(next: { readonly kind: string; readonly metadata: { readonly name: string; readonly namespace?: string }; readonly rules?: unknown }, installed: { rules?: readonly PolicyRule[] } | undefined): RoleComparison {
  const granted = installed?.rules ?? [];
  const missing: MissingPermission[] = [];
  for (const rule of (Array.isArray(next.rules) ? next.rules : []) as readonly PolicyRule[]) {
    for (const apiGroup of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) {
          const permission = { apiGroup, resource, verb, ...(rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {}) };
          if (!rulesAllow(granted, permission)) missing.push(permission);
        }
      }
    }
  }
  return { kind: next.kind, ...(next.metadata.namespace ? { namespace: next.metadata.namespace } : {}), name: next.metadata.name, installed: installed !== undefined, missing };
}
