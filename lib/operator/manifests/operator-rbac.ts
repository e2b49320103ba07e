/**
 * The operator's identity and permissions as a child construct of the `Operator` chart:
 * - its ServiceAccount (in the operator's namespace, named after the operator);
 * - a ClusterRole + ClusterRoleBinding with the operator's rules, or, with `watchNamespace`, a Role +
 *   RoleBinding in that namespace;
 * - for related kinds whose `scope.namespaces` names other namespaces, a `<operator>-related` Role +
 *   RoleBinding in each (get/list/watch on those kinds only, never cluster-wide);
 * - a `<operator>-leader-election` Role + RoleBinding for Leases in the operator's namespace.
 * The rules themselves are rbac.ts's (derived by the `Operator` at synth time).
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { ResolvedKind } from '../kinds.js';
import type { RelatedDeclaration } from '../render/related.js';
import { leaderElectionRules, relatedRules } from './rbac.js';

/** Props of an {@link OperatorRbac}. */
export interface OperatorRbacProps {
  /** The operator's name: ServiceAccount, (Cluster)Role and binding name; a DNS-1123 label. */
  readonly operatorName: string;
  /** The operator's namespace (its ServiceAccount's and Lease Role's). */
  readonly namespace: string;
  /** The operator's labels (labels.ts `operatorLabels`). */
  readonly labels: Record<string, string>;
  /** The operator's rules: `PolicyRule[]`, or a cdk8s `Lazy` that produces them at synth. */
  readonly rules: unknown;
  /** The one namespace the operator watches (a Role there instead of a ClusterRole). @default all namespaces */
  readonly watchNamespace?: string;
  /** The operator's related declarations, by key (`OperatorProps.related`). @default none */
  readonly related?: Readonly<Record<string, RelatedDeclaration<never>>>;
  /** Their kinds, resolved, by the same keys. @default none */
  readonly relatedKinds?: Readonly<Record<string, ResolvedKind>>;
  /** Whether the operator runs with `--sharding` (membership Leases need `delete`). @default false */
  readonly sharding?: boolean;
}

/** ServiceAccount, operator (Cluster)Role + binding, scoped related Roles, leader-election Role. */
export class OperatorRbac extends Construct {
  constructor(scope: Construct, id: string, props: OperatorRbacProps) {
    super(scope, id);
    const { operatorName: name, namespace, labels, rules } = props;
    const related = props.related ?? {};
    const relatedKinds = props.relatedKinds ?? {};

    new ApiObject(this, 'ServiceAccount', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace, labels },
    });

    const subjects = [{ kind: 'ServiceAccount', name, namespace }];
    if (props.watchNamespace === undefined) roleWithBinding(this, 'ClusterRole', 'ClusterRoleBinding', { name, labels, rules, subjects });
    else roleWithBinding(this, 'Role', 'RoleBinding', { name, namespace: props.watchNamespace, labels, rules, subjects });

    // A related kind whose scope names namespaces: get/list/watch by a Role in each (least privilege,
    // as the operator's own Role with watchNamespace), never cluster-wide.
    for (const relatedNamespace of scopedRelatedNamespaces(related)) {
      if (relatedNamespace === props.watchNamespace) continue;
      const kinds = Object.entries(relatedKinds).filter(([key]) => related[key].scope?.namespaces?.includes(relatedNamespace)).map(([, kind]) => kind);
      const relatedRole = `${name}-related`;
      roleWithBinding(this, `RelatedRole-${relatedNamespace}`, `RelatedRoleBinding-${relatedNamespace}`, {
        name: relatedRole, namespace: relatedNamespace, labels, rules: relatedRules(kinds), subjects,
      });
    }

    const leaderElection = `${name}-leader-election`;
    roleWithBinding(this, 'LeaderElectionRole', 'LeaderElectionRoleBinding', {
      name: leaderElection, namespace, labels, rules: leaderElectionRules(props.sharding ?? false), subjects,
    });
  }
}

/** The namespaces named by any related declaration's `scope.namespaces`, sorted, each once. */
function scopedRelatedNamespaces(related: Readonly<Record<string, RelatedDeclaration<never>>>): string[] {
  return [...new Set(Object.values(related).flatMap((declaration) => declaration.scope?.namespaces ?? []))].sort();
}

/** What {@link roleWithBinding} writes: a Role (with `namespace`) or ClusterRole (without), and its binding to `subjects`. */
export interface RoleWithBindingProps {
  /** The name of both objects. */
  readonly name: string;
  /** The Role's namespace; undefined for a ClusterRole and ClusterRoleBinding. */
  readonly namespace?: string;
  readonly labels: Record<string, string>;
  /** `PolicyRule[]`, or a cdk8s `Lazy` that produces them at synth. */
  readonly rules: unknown;
  readonly subjects: readonly { kind: string; name: string; namespace: string }[];
}

/**
 * Adds a Role + RoleBinding (or, without `namespace`, a ClusterRole + ClusterRoleBinding) of the same
 * name to `scope`, as construct ids `roleId` and `bindingId`.
 */
export function roleWithBinding(scope: Construct, roleId: string, bindingId: string, props: RoleWithBindingProps): void {
  const { name, namespace, labels, rules, subjects } = props;
  const kind = namespace === undefined ? 'ClusterRole' : 'Role';
  const metadata = namespace === undefined ? { name, labels } : { name, namespace, labels };
  new ApiObject(scope, roleId, { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata, rules });
  new ApiObject(scope, bindingId, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: `${kind}Binding`,
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
    subjects,
  });
}
