/**
 * The order in which `cdk8s-operator deploy` applies an operator's synthesized objects, and the plan it
 * prints (`--dry-run`). Pure: no I/O; lib/cli/deploy-command.ts reads the cluster and applies.
 *
 * Stages, in order (each object goes to the first stage whose kinds it matches):
 * 1. `crds`: CustomResourceDefinitions, then wait until each is Established (a CR or a webhook
 *    configuration naming the kind is refused before);
 * 2. `namespaces`: Namespaces (everything after lives in one);
 * 3. `rbac`: ServiceAccounts, ClusterRoles, Roles, then their bindings (a binding's roleRef names a role);
 * 4. `certificates`: the webhook certificates: cert-manager's Issuer and Certificate (`webhook.certificates:
 *    'cert-manager'`), and Secrets. Self-managed certificates (the default) have nothing to apply: the
 *    operator creates its Secret `<operator>-webhook-tls` and writes `caBundle` itself;
 * 5. `services`: Services, NetworkPolicies and every other kind not named here (ConfigMaps …);
 * 6. `workloads`: the operator's Deployment (its Secret and ServiceAccount exist by now), then wait for
 *    its rollout, its Pods Ready and `/readyz`;
 * 7. `webhooks`: Validating/MutatingWebhookConfigurations, last: the API server calls a webhook as soon as
 *    its configuration exists, so it is created once the Deployment that serves it is ready.
 *
 * Within a stage, objects keep their synthesized order (the Operator construct's own dependency order).
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#create-a-customresourcedefinition (Established)
 */

/** Label on every object `deploy` applies; value: the operator's name. `undeploy` and pruning select on it. */
export const DEPLOYED_BY_LABEL = 'operator.cdk8s.io/deployed-by';

/** Field manager of `deploy`'s server-side applies. */
export const DEPLOY_FIELD_MANAGER = 'cdk8s-operator-deploy';

/** The stages of a deploy, in order (see the module doc). */
export const DEPLOY_STAGES = ['crds', 'namespaces', 'rbac', 'certificates', 'services', 'workloads', 'webhooks'] as const;
export type DeployStage = (typeof DEPLOY_STAGES)[number];

/** A stage's heading in the plan. */
export const STAGE_TITLES: Record<DeployStage, string> = {
  crds: 'CustomResourceDefinitions, then wait until Established',
  namespaces: 'Namespaces',
  rbac: 'RBAC: ServiceAccounts, roles, bindings',
  certificates: 'webhook certificates',
  services: 'Services, NetworkPolicies, other configuration',
  workloads: "the operator's Deployment, then wait for its rollout, its Pods Ready and /readyz",
  webhooks: 'webhook configurations (once the Deployment that serves them is ready)',
};

/** A synthesized object, as much of it as ordering needs. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

const RBAC_ORDER = ['ServiceAccount', 'ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding'];

/** The stage an object is applied in (see the module doc). */
export function deployStage(object: Pick<Manifest, 'apiVersion' | 'kind'>): DeployStage {
  const group = object.apiVersion.includes('/') ? object.apiVersion.slice(0, object.apiVersion.indexOf('/')) : '';
  if (object.kind === 'CustomResourceDefinition' && group === 'apiextensions.k8s.io') return 'crds';
  if (object.kind === 'Namespace' && group === '') return 'namespaces';
  if ((group === '' && object.kind === 'ServiceAccount') || group === 'rbac.authorization.k8s.io') return 'rbac';
  if (group === 'cert-manager.io' || (group === '' && object.kind === 'Secret')) return 'certificates';
  if (group === 'apps' && object.kind === 'Deployment') return 'workloads';
  if (group === 'admissionregistration.k8s.io') return 'webhooks';
  return 'services';
}

/** One operator's objects, grouped by stage in deploy order; empty stages left out. */
export function orderForDeploy<T extends Pick<Manifest, 'apiVersion' | 'kind'>>(objects: readonly T[]): { stage: DeployStage; objects: T[] }[] {
  const rank = (o: T) => {
    const i = RBAC_ORDER.indexOf(o.kind);
    return i < 0 ? RBAC_ORDER.length : i;
  };
  return DEPLOY_STAGES.map((stage) => {
    const inStage = objects.filter((o) => deployStage(o) === stage);
    // Array.prototype.sort is stable: synthesized order is kept within a kind.
    return { stage, objects: stage === 'rbac' ? [...inStage].sort((a, b) => rank(a) - rank(b)) : inStage };
  }).filter((s) => s.objects.length > 0);
}

/** The order `undeploy` deletes in: the reverse of the deploy order (webhook configurations first, CRDs last). */
export function orderForUndeploy<T extends Pick<Manifest, 'apiVersion' | 'kind'>>(objects: readonly T[]): T[] {
  return orderForDeploy(objects).reverse().flatMap((s) => [...s.objects].reverse());
}

/** `Kind namespace/name` (`Kind name` when cluster-scoped), as every line names an object. */
export function objectLabel(object: Pick<Manifest, 'kind' | 'metadata'>): string {
  return `${object.kind} ${object.metadata.namespace ? object.metadata.namespace + '/' : ''}${object.metadata.name}`;
}

/** What applying an object would do: `create` (absent), `change` (the dry-run apply changes it), `unchanged`. */
export type PlannedAction = 'create' | 'change' | 'unchanged';

/** One operator's plan: its objects by stage with their actions, and what a deploy would prune. */
export interface OperatorPlan {
  readonly operatorName: string;
  readonly stages: readonly { readonly stage: DeployStage; readonly objects: readonly { readonly label: string; readonly action: PlannedAction }[] }[];
  /** `Kind namespace/name` of objects labelled as this operator's deploy that are no longer synthesized. */
  readonly prune: readonly string[];
  /** CRDs labelled as this operator's deploy that are no longer synthesized: kept (deleting one deletes its CRs). */
  readonly keptCrds: readonly string[];
  /** Lines printed after the stages as `note: …` (e.g. how self-managed webhook certificates are made). @default none */
  readonly notes?: readonly string[];
}

/**
 * The plan as text: one block per operator, its stages numbered in order, one line per object
 * (`create|change|unchanged Kind ns/name`), then the prunes. For example:
 * ```text
 * app-operator:
 *   1. CustomResourceDefinitions, then wait until Established
 *        create     CustomResourceDefinition apps.apps.example.com
 *   …
 *   prune: nothing
 * ```
 */
export function formatPlan(plans: readonly OperatorPlan[]): string {
  const lines: string[] = [];
  for (const plan of plans) {
    lines.push(`${plan.operatorName}:`);
    plan.stages.forEach((s, i) => {
      lines.push(`  ${i + 1}. ${STAGE_TITLES[s.stage]}`);
      for (const o of s.objects) lines.push(`       ${o.action.padEnd(10)} ${o.label}`);
    });
    if (plan.prune.length === 0) lines.push('  prune: nothing');
    for (const label of plan.prune) lines.push(`  prune: delete ${label} (no longer synthesized)`);
    for (const note of plan.notes ?? []) lines.push(`  note: ${note}`);
    for (const label of plan.keptCrds) lines.push(`  note: ${label} is no longer synthesized; kept (deleting it deletes its custom resources): undeploy --include-crds, or delete it yourself`);
  }
  return lines.join('\n') + '\n';
}
