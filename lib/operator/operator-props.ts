/**
 * An {@link OperatorProps} checked and completed: {@link resolveOperatorProps} validates every prop and
 * fills in its default, so the `Operator` constructor only builds its child constructs from the result.
 *
 * Checked here, in this order (the first problem throws): the spec/status are zod 4 schemas; kind, group
 * and version are valid names; plural, singular, shortNames and categories are DNS-1123 labels (plural ≠
 * singular); `crNameRule`; the operator name; `owns`; `renderSkip` and `adoption`; `retiredKinds`;
 * `related` (references, kinds, scopes); the objects beside the examples; `deployment` (namespace,
 * watchNamespace, replicas); `versions`; `retiredVersions`; `webhook`.
 */
import type { z } from 'zod';
import type { CustomResource } from './custom-resource.js';
import { OperatorConfigError, UnknownKindError } from './errors.js';
import { compareKinds, parseApiVersion, resolveKind, type ChildKind, type ResolvedKind } from './kinds.js';
import type { OperatorDeploymentProps } from './manifests/operator-deployment.js';
import { resolveWebhook, type ResolvedWebhook } from './manifests/operator-webhooks.js';
import type { AdoptionPolicy, OperatorProps } from './operator.js';
import type { RelatedDeclaration } from './render/related.js';
import { relatedScopeProblems } from './render/related.js';
import type { KubeResource } from './render/render-context.js';
import { DEFAULT_CR_NAME_RULE, crNameRuleProblem, type CrNameRule } from './schema/cr-name-rule.js';
import { apiGroupProblem, apiVersionProblem, dns1123LabelProblem, kindNameProblem } from './schema/names.js';
import { zodVersionProblem } from './schema/zod-version.js';
import { retiredVersionProblems, retiredVersionWarnings } from './versions/storage-version-migration.js';
import { resolveVersions, type ResolvedVersion } from './versions/versions.js';

/** What resolving needs besides the props: where the operator is, and what its class implements. */
export interface ResolveOperatorPropsOptions {
  /** The operator's construct path (`node.path`), named by every error. */
  readonly path: string;
  /** Whether the operator's class implements `validateAdmission` (a validating webhook is served). */
  readonly validateAdmission: boolean;
  /** Whether the operator's class implements `mutateAdmission` (a mutating webhook is served). */
  readonly mutateAdmission: boolean;
  /**
   * Told each synth warning (a retired version, see `retiredVersions`), in order, as soon as it is known:
   * before a later prop's problem throws. @default warnings are dropped
   */
  readonly onWarning?: (warning: string) => void;
}

/** The props with their defaults, checked; the `Operator` fields of the same names are these values. */
export interface ResolvedOperatorProps<Spec extends z.ZodType = z.ZodType, Status extends z.ZodType = z.ZodType> {
  /** `props.name`, or kebab-case(kind) + `-operator`. */
  readonly operatorName: string;
  /** The CR's own kind. */
  readonly crd: ResolvedKind;
  /** `spec.names` of the CRD: kind, listKind (`<kind>List`), plural, singular, shortNames, categories. */
  readonly names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[]; categories?: string[] };
  /** `spec.scope` of the CRD. @default 'Namespaced' */
  readonly scope: 'Namespaced' | 'Cluster';
  /** The examples of the operator's own kind (group and kind). */
  readonly examples: CustomResource<z.input<Spec>>[];
  /** The other objects of `examples`, each of a related kind; namespaced ones without a namespace get `default`. */
  readonly exampleRelated: KubeResource[];
  readonly owns: ChildKind[];
  /** Resolved, sorted by group, kind, version. */
  readonly retiredKinds: ResolvedKind[];
  readonly specSchema: Spec;
  readonly statusSchema?: Status;
  readonly crNameRule: CrNameRule;
  readonly related: Readonly<Record<string, RelatedDeclaration<never>>>;
  /** The related declarations' kinds, resolved, by the same keys. */
  readonly relatedKinds: Readonly<Record<string, ResolvedKind>>;
  /** `props.deployment`, or `{}`. */
  readonly deploymentProps: OperatorDeploymentProps;
  /** `deployment.namespace`, or `<operator name>-system`. */
  readonly operatorNamespace: string;
  readonly watchNamespace?: string;
  /** replicas > 1 without `deployment.sharding`. */
  readonly leaderElection: boolean;
  readonly sharding: boolean;
  /** The hub first, then the spokes. */
  readonly versions: readonly ResolvedVersion[];
  readonly retiredVersions: readonly string[];
  /** Undefined when the operator serves no webhook. */
  readonly webhook?: ResolvedWebhook;
  readonly adoption: AdoptionPolicy;
  readonly renderSkip: boolean;
}

/**
 * Validates `props` and fills in their defaults (see each {@link OperatorProps} field). Pure but for
 * `options.onWarning`.
 * @throws OperatorConfigError naming `options.path` and the prop's path at the first problem, e.g.
 *   `deployment.replicas must be an integer >= 1, got 0`, in the order of the module docstring
 */
export function resolveOperatorProps<Spec extends z.ZodType, Status extends z.ZodType>(
  props: OperatorProps<Spec, Status>,
  options: ResolveOperatorPropsOptions,
): ResolvedOperatorProps<Spec, Status> {
  const fail = (detail: string): never => {
    throw new OperatorConfigError(options.path, detail);
  };

  for (const [field, schema] of [['spec', props.spec], ['status', props.status]] as const) {
    if (field === 'status' && schema === undefined) continue;
    const problem = zodVersionProblem(field, schema);
    if (problem !== undefined) fail(problem);
  }
  for (const [field, value, problem] of [
    ['kind', props.kind, kindNameProblem],
    ['group', props.group, apiGroupProblem],
    ['version', props.version, apiVersionProblem],
  ] as const) {
    const why = problem(value);
    if (why !== undefined) fail(`${field} ${JSON.stringify(value)} ${why}`);
  }
  const plural = props.plural ?? pluralize(props.kind.toLowerCase());
  const singular = props.singular ?? props.kind.toLowerCase();
  for (const [field, value] of [['plural', plural], ['singular', singular], ...(props.shortNames ?? []).map((s) => ['shortNames', s]), ...(props.categories ?? []).map((c) => ['categories', c])]) {
    if (dns1123LabelProblem(value)) fail(`${field} ${JSON.stringify(value)} must be a lowercase DNS-1123 label`);
  }
  if (plural === singular) fail(`plural and singular are both ${JSON.stringify(plural)}; set plural explicitly`);
  const crNameRule = props.crNameRule ?? DEFAULT_CR_NAME_RULE;
  const nameRuleProblem = crNameRuleProblem(crNameRule);
  if (nameRuleProblem !== undefined) fail(nameRuleProblem);

  const scope = props.scope ?? 'Namespaced';
  const operatorName = props.name ?? `${kebabCase(props.kind)}-operator`;
  if (dns1123LabelProblem(operatorName)) fail(`operator name ${JSON.stringify(operatorName)} must be a DNS-1123 label (≤ 63)`);
  const crd: ResolvedKind = {
    apiVersion: `${props.group}/${props.version}`,
    group: props.group,
    version: props.version,
    kind: props.kind,
    plural,
    namespaced: scope === 'Namespaced',
  };
  const ownKind = (o: KubeResource) => o?.kind === props.kind && typeof o.apiVersion === 'string' && parseApiVersion(o.apiVersion).group === props.group;
  const examples = (props.examples ?? []).filter((o) => ownKind(o as KubeResource)) as CustomResource<z.input<Spec>>[];
  const exampleObjects = (props.examples ?? []).map((o, i) => [o as KubeResource, i] as const).filter(([o]) => !ownKind(o));
  const owns = [...(props.owns ?? [])];
  for (const owned of owns) {
    try {
      resolveKind(owned);
    } catch (cause) {
      if (cause instanceof UnknownKindError) fail(`owns: ${cause.message}`);
      throw cause;
    }
  }
  const adoption = props.adoption ?? 'refuse';
  const renderSkip = props.renderSkip ?? true;
  if (typeof renderSkip !== 'boolean') fail(`renderSkip ${JSON.stringify(renderSkip)} must be true or false`);
  if (adoption !== 'refuse' && adoption !== 'adopt') fail(`adoption ${JSON.stringify(adoption)} must be 'refuse' or 'adopt'`);
  const retiredKinds = (props.retiredKinds ?? []).map((retired, i) => {
    let kind: ResolvedKind;
    try {
      kind = resolveKind(retired);
    } catch (cause) {
      if (cause instanceof UnknownKindError) return fail(`retiredKinds[${i}]: ${cause.message}`);
      throw cause;
    }
    if (owns.some((owned) => owned.kind === kind.kind && resolveKind(owned).group === kind.group)) {
      fail(`retiredKinds[${i}]: ${kind.kind} (${kind.apiVersion}) is also in owns; a kind is either owned or retired`);
    }
    return kind;
  }).sort(compareKinds);
  const related = { ...(props.related ?? {}) } as Record<string, RelatedDeclaration<never>>;
  const relatedKinds: Record<string, ResolvedKind> = {};
  for (const [key, declaration] of Object.entries(related)) {
    if (typeof declaration?.references !== 'string' && typeof declaration?.references !== 'function') {
      fail(`related.${key}.references must be a field path (e.g. 'spec.configMapRef.name') or a function from the CR to references`);
    }
    if (typeof declaration.references === 'string' && !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(declaration.references)) {
      fail(`related.${key}.references ${JSON.stringify(declaration.references)} must be a dotted field path, e.g. spec.configMapRef.name`);
    }
    try {
      relatedKinds[key] = resolveKind(declaration);
    } catch (cause) {
      if (cause instanceof UnknownKindError) fail(`related.${key}: ${cause.message}`);
      throw cause;
    }
    relatedScopeProblems(key, declaration.scope, relatedKinds[key]).forEach(fail);
  }
  const exampleRelated = exampleObjects.map(([object, i]) => {
    const kind = Object.values(relatedKinds).find((k) => k.kind === object?.kind && typeof object.apiVersion === 'string' && parseApiVersion(object.apiVersion).group === k.group);
    if (!kind) {
      const declared = Object.values(relatedKinds).map((k) => `${k.kind} (${k.apiVersion})`);
      return fail(`examples[${i}]: ${object?.kind} (${object?.apiVersion}) is neither a ${props.kind} (${props.group}) nor of a related kind${declared.length ? ` (${declared.join(', ')})` : ' (none is declared)'}; only objects render reads may stand beside the examples`);
    }
    if (typeof object.metadata?.name !== 'string' || object.metadata.name === '') fail(`examples[${i}]: ${object.kind} needs metadata.name`);
    return kind.namespaced && !object.metadata.namespace ? { ...object, metadata: { ...object.metadata, namespace: 'default' } } : object;
  });

  const deploymentProps = props.deployment ?? {};
  const operatorNamespace = deploymentProps.namespace ?? `${operatorName}-system`;
  if (dns1123LabelProblem(operatorNamespace)) fail(`deployment.namespace ${JSON.stringify(operatorNamespace)} must be a DNS-1123 label`);
  const watchNamespace = deploymentProps.watchNamespace;
  if (watchNamespace !== undefined) {
    if (dns1123LabelProblem(watchNamespace)) fail(`deployment.watchNamespace ${JSON.stringify(watchNamespace)} must be a DNS-1123 label`);
    if (!crd.namespaced) fail('deployment.watchNamespace requires a Namespaced kind');
  }
  const replicas = deploymentProps.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) fail(`deployment.replicas must be an integer >= 1, got ${replicas}`);
  const sharding = deploymentProps.sharding === true;

  const resolvedVersions = resolveVersions({ name: props.version, spec: props.spec, status: props.status, printerColumns: props.printerColumns }, props.versions ?? [], apiVersionProblem);
  resolvedVersions.problems.forEach(fail);
  const versions = resolvedVersions.versions;
  const retired = { group: props.group, kind: props.kind, plural, versions: versions.map((v) => v.name), retiredVersions: props.retiredVersions ?? [], watchNamespace };
  retiredVersionProblems(retired, apiVersionProblem).forEach(fail);
  for (const warning of retiredVersionWarnings(retired)) options.onWarning?.(warning);
  const webhook = resolveWebhook({
    props: props.webhook, crd, operatorName, namespace: operatorNamespace,
    conversion: versions.length > 1, validate: options.validateAdmission, mutate: options.mutateAdmission,
  });
  webhook.problems.forEach(fail);

  return {
    operatorName,
    crd,
    names: { kind: props.kind, listKind: `${props.kind}List`, plural, singular, shortNames: props.shortNames, categories: props.categories },
    scope,
    examples,
    exampleRelated,
    owns,
    retiredKinds,
    specSchema: props.spec,
    statusSchema: props.status,
    crNameRule,
    related,
    relatedKinds,
    deploymentProps,
    operatorNamespace,
    watchNamespace,
    leaderElection: replicas > 1 && !sharding,
    sharding,
    versions,
    retiredVersions: [...retired.retiredVersions],
    webhook: webhook.webhook,
    adoption,
    renderSkip,
  };
}

/** `MemcachedCluster` → `memcached-cluster`, `HTTPRoute` → `http-route`. */
export function kebabCase(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

/** English plural of a lowercase word: `policy` → `policies`, `ingress` → `ingresses`, `box` → `boxes`, `memcached` → `memcacheds`. */
export function pluralize(word: string): string {
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}
