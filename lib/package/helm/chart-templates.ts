/**
 * Helm templates from synthesized objects: each object an operator's chart synthesizes (CRDs aside,
 * they go to `crds/`) becomes one template file, its YAML as `cdk8s synth` writes it, with the knob
 * fields (operator-values.ts) replaced by `{{ toJson … }}` expressions over `$op`, the operator's values
 * (`index .Values.operators "<operatorName>"`), and `$ns`, the operator's namespace: `$op.namespace`, or
 * when that is "" (the default) the release's namespace (`.Release.Namespace`, what `helm install -n`
 * names). Every other substituted value's default is the synthesized value, so the chart at its default
 * values, installed into the synthesized namespace, renders the synthesized objects (the Namespace aside:
 * see `createNamespace`).
 *
 * What each knob reaches:
 * - `labels` / `annotations`: every object's `metadata` (added; the synthesized keys win);
 * - `namespace` (`$ns`): every `namespace` field holding the operator's namespace (RBAC subjects among
 *   them), the Namespace object's name, and strings naming it as `<ns>/…` or `….<ns>.svc…` (cert-manager's
 *   annotation, certificate DNS names). An operator whose code fixes its namespace (webhooks) fails the
 *   render, naming it, when `$ns` is another one;
 * - `createNamespace`: the Namespace object (wrapped in `if`, off by default: `helm install
 *   --create-namespace` makes it outside the release), annotated `helm.sh/resource-policy: keep` so that
 *   `helm uninstall` never deletes a namespace that holds users' objects;
 * - a chart of one operator also reads the top-level `image.*` (`--set image.repository=… --set
 *   image.tag=…`), each key set there winning over `operators.<name>.image.*`;
 * - `watchNamespace`: the operator's ClusterRole + ClusterRoleBinding when "", else a Role + RoleBinding
 *   in that namespace with the same rules, and `--namespace=<ns>` in the args;
 * - the Deployment: `replicas`, the operator container's `image` (repository, tag, digest),
 *   `imagePullPolicy`, `resources`, the `metrics` and `probes` container ports and their bind-address
 *   args, `--leader-elect` (`leaderElection`), `--log-level` (when not `info`), and the pod's
 *   `nodeSelector`, `tolerations`, `affinity` (emitted only when set);
 * - the metrics NetworkPolicy's port (`metrics.port`).
 *
 * Expressions are written as JSON flow values (`toJson`), valid YAML at any indentation.
 *
 * @see https://helm.sh/docs/chart_template_guide/function_list/
 * @see https://helm.sh/docs/howto/charts_tips_and_tricks/#tell-helm-not-to-uninstall-a-resource
 */
import type { Operator } from '../../operator/operator.js';
import { stringifyManifests } from '../../operator/manifests/manifest-yaml.js';
import type { OperatorValues } from './operator-values.js';

/** A JSON object as synthesized. */
export type Manifest = Record<string, any>;

/** One template file: its name under `templates/` and its text. */
export interface TemplateFile {
  readonly file: string;
  readonly text: string;
}

/** Placeholders in the serialized object, replaced by template text afterwards. */
class Placeholders {
  private readonly values: string[] = [];
  private readonly optional: { key: string; expr: string }[] = [];

  /** A scalar placeholder whose rendering is `{{ toJson EXPR }}`. */
  value(expr: string): string {
    this.values.push(expr);
    return `__HELM_VALUE_${this.values.length - 1}__`;
  }

  /** The template expression of `text`: the expression of a value placeholder, else a Go string literal. */
  expressionOf(text: string): string {
    const match = /^__HELM_VALUE_(\d+)__$/.exec(text);
    return match === null ? goString(text) : this.values[Number(match[1])];
  }

  /** A map key placeholder: `key: {{ toJson EXPR }}` only when EXPR is not empty. Returns the key to set (to null). */
  optionalKey(key: string, expr: string): string {
    this.optional.push({ key, expr });
    return `__HELM_OPTIONAL_${this.optional.length - 1}__`;
  }

  /** Replaces the placeholders in `yaml`; throws when one is left or lost. */
  apply(yaml: string): string {
    let text = yaml.replace(/__HELM_VALUE_(\d+)__/g, (_, i: string) => `{{ toJson ${this.values[Number(i)]} }}`);
    text = text.replace(/^( *)__HELM_OPTIONAL_(\d+)__: null$/gm, (_, indent: string, i: string) => {
      const { key, expr } = this.optional[Number(i)];
      return `${indent}{{- with ${expr} }}\n${indent}${key}: {{ toJson . }}\n${indent}{{- end }}`;
    });
    if (/__HELM_(VALUE|OPTIONAL)_/.test(text)) throw new Error(`a Helm placeholder was not replaced in:\n${text}`);
    return text;
  }
}

/** A Go template string literal (JSON's escapes are Go's for these strings). */
function goString(value: string): string {
  return JSON.stringify(value);
}

/** `(dict "k" "v" …)` of a string map (values may be placeholders). */
function goDict(map: Record<string, string>, placeholders: Placeholders): string {
  const pairs = Object.entries(map).flatMap(([k, v]) => [goString(k), placeholders.expressionOf(v)]);
  return pairs.length === 0 ? '(dict)' : `(dict ${pairs.join(' ')})`;
}

/** The image reference from `$op.image`: `repository[:tag][@digest]`. */
const IMAGE_EXPR = '(printf "%s%s%s" $image.repository (ternary (printf ":%s" $image.tag) "" (ne $image.tag "")) (ternary (printf "@%s" $image.digest) "" (ne $image.digest "")))';

/** Whether `--leader-elect` is passed: `leaderElection` true, or auto and replicas > 1 (as synth decides). */
const LEADER_ELECT_EXPR = '(or (eq (toString $op.leaderElection) "true") (and (eq (toString $op.leaderElection) "auto") (gt (int $op.replicas) 1)))';

/**
 * The args expression: the synthesized args, with the bind-address ports from the values, `--leader-elect`
 * and `--namespace=` where synth puts them (after `--health-probe-bind-address`) when the values ask,
 * and `--log-level=` last when it is not `info`.
 */
function argsExpr(args: readonly string[]): string {
  const segments: string[] = [];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length > 0) segments.push(`(list ${run.join(' ')})`);
    run = [];
  };
  const conditional = (expr: string): void => {
    flush();
    segments.push(expr);
  };
  const leaderElect = `(ternary (list "--leader-elect") (list) ${LEADER_ELECT_EXPR})`;
  const watch = '(ternary (list (printf "--namespace=%s" $op.watchNamespace)) (list) (ne $op.watchNamespace ""))';
  const hasLeader = args.includes('--leader-elect');
  const hasWatch = args.some((arg) => arg.startsWith('--namespace='));
  for (const arg of args) {
    if (arg === '--leader-elect') conditional(leaderElect);
    else if (arg.startsWith('--namespace=')) conditional(watch);
    else if (arg.startsWith('--metrics-bind-address=:')) run.push('(printf "--metrics-bind-address=:%v" $op.metrics.port)');
    else if (arg.startsWith('--health-probe-bind-address=:')) {
      run.push('(printf "--health-probe-bind-address=:%v" $op.probes.port)');
      if (!hasLeader) conditional(leaderElect);
      if (!hasWatch) conditional(watch);
    } else run.push(goString(arg));
  }
  conditional('(ternary (list) (list (printf "--log-level=%s" $op.logLevel)) (eq $op.logLevel "info"))');
  return segments.length === 1 ? segments[0] : `(concat ${segments.join(' ')})`;
}

/** Options of {@link operatorTemplates}. */
export interface OperatorTemplateOptions {
  readonly operator: Operator;
  /** The operator's synthesized objects, CRDs included (they are skipped). */
  readonly objects: readonly Manifest[];
  /** The operator's default values (operator-values.ts). */
  readonly defaults: OperatorValues;
  /** Whether the chart holds this operator alone: then the top-level `image.*` values apply to it. @default false */
  readonly single?: boolean;
}

/** The annotation that makes `helm uninstall` leave an object (Helm's resource policy). */
export const HELM_KEEP_ANNOTATION = { 'helm.sh/resource-policy': 'keep' } as const;

/**
 * The template lines every file of an operator starts with: `$op` (its values), `$ns` (its namespace,
 * the release's unless set), a `fail` when its code fixes the namespace and `$ns` is another, and
 * `$image` (the top-level `image.*` over `$op.image` in a chart of one operator).
 */
function templateHeader(operator: Operator, single: boolean): string {
  const name = operator.operatorName;
  const lines = [
    `{{- $op := index .Values.operators ${goString(name)} }}`,
    '{{- $ns := $op.namespace | default .Release.Namespace }}',
  ];
  if (operator.webhook !== undefined) {
    const fixed = operator.operatorNamespace;
    const message = `${name}: its namespace is fixed to ${fixed} by its code (its webhook Secret and Service live there), not %s: install with -n ${fixed} (and --create-namespace), or set operators.${name}.namespace=${fixed}`;
    lines.push(`{{- if ne $ns ${goString(fixed)} }}{{- fail (printf ${goString(message)} $ns) }}{{- end }}`);
  }
  lines.push('{{- $image := $op.image }}');
  if (single) {
    lines.push('{{- with .Values.image }}{{- $image = dict "repository" (toString (.repository | default $op.image.repository)) "tag" (toString (.tag | default $op.image.tag)) "digest" (toString (.digest | default $op.image.digest)) "pullPolicy" (toString (.pullPolicy | default $op.image.pullPolicy)) }}{{- end }}');
  }
  return `${lines.join('\n')}\n`;
}

/** The template files of one operator's objects (every object but its CRDs). */
export function operatorTemplates(options: OperatorTemplateOptions): TemplateFile[] {
  const { operator, defaults } = options;
  const name = operator.operatorName;
  const ns = operator.operatorNamespace;
  const header = templateHeader(operator, options.single === true);
  const files: TemplateFile[] = [];
  const used = new Set<string>();
  const fileName = (object: Manifest, suffix = ''): string => {
    // The namespace only when it is another one than the operator's (e.g. a related Role's).
    const namespace: unknown = object.metadata?.namespace;
    const where = typeof namespace === 'string' && namespace !== ns && namespace !== WATCH_NAMESPACE ? `${namespace}-` : '';
    const base = `${name}/${String(object.kind).toLowerCase()}-${where}${object.metadata?.name ?? 'unnamed'}${suffix}`;
    let file = `${base}.yaml`;
    for (let i = 2; used.has(file); i++) file = `${base}-${i}.yaml`;
    used.add(file);
    return file;
  };
  const emit = (object: Manifest, condition?: string, file = fileName(object)): void => {
    const placeholders = new Placeholders();
    const templated = templateObject(object, placeholders, { name, ns, defaults });
    const body = placeholders.apply(stringifyManifests([templated]));
    const text = condition === undefined ? `${header}${body}` : `${header}{{- if ${condition} }}\n${body}{{- end }}\n`;
    files.push({ file, text });
  };

  const isOwnRbac = (object: Manifest): boolean => object.metadata?.name === name
    && (((object.kind === 'ClusterRole' || object.kind === 'ClusterRoleBinding') && object.metadata?.namespace === undefined)
      || ((object.kind === 'Role' || object.kind === 'RoleBinding') && operator.watchNamespace !== undefined && object.metadata?.namespace === operator.watchNamespace));

  let namespaceSeen = false;
  for (const object of options.objects) {
    if (object.kind === 'CustomResourceDefinition') continue;
    if (object.kind === 'Namespace' && object.metadata?.name === ns) {
      namespaceSeen = true;
      emit({ ...object, metadata: { ...object.metadata, annotations: { ...object.metadata?.annotations, ...HELM_KEEP_ANNOTATION } } }, '$op.createNamespace');
    } else if (isOwnRbac(object)) {
      // Both scopes: the synthesized one, and its counterpart, chosen by watchNamespace.
      const cluster = object.kind.startsWith('Cluster') ? object : toClusterScope(object);
      const namespaced = object.kind.startsWith('Cluster') ? toWatchScope(object) : { ...object, metadata: { ...object.metadata, namespace: WATCH_NAMESPACE } };
      emit(cluster, 'not $op.watchNamespace', fileName(cluster));
      emit(namespaced, '$op.watchNamespace', fileName(namespaced, '-watch'));
    } else {
      emit(object);
    }
  }
  if (!namespaceSeen) {
    // createNamespace: false in synth: the Namespace the operator would have emitted, off by default.
    emit({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns, labels: { ...operatorLabelsOf(options.objects, name), 'pod-security.kubernetes.io/enforce': 'restricted' }, annotations: { ...HELM_KEEP_ANNOTATION } },
    }, '$op.createNamespace');
  }
  return files;
}

/** The labels of the operator's Deployment (what every object of it carries). */
function operatorLabelsOf(objects: readonly Manifest[], name: string): Record<string, string> {
  return objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === name)?.metadata?.labels ?? {};
}

/** Marks the namespace of the operator's Role(Binding) in its watched namespace (`$op.watchNamespace`). */
const WATCH_NAMESPACE = '__HELM_WATCH_NAMESPACE__';

/** The ClusterRole(Binding) counterpart of the operator's Role(Binding) in its watched namespace. */
function toClusterScope(object: Manifest): Manifest {
  const { namespace: _, ...metadata } = object.metadata;
  const copy: Manifest = { ...structuredClone(object), kind: `Cluster${object.kind}`, metadata };
  if (copy.roleRef) copy.roleRef = { ...copy.roleRef, kind: 'ClusterRole' };
  return copy;
}

/** The Role(Binding) counterpart, in the watched namespace, of the operator's ClusterRole(Binding). */
function toWatchScope(object: Manifest): Manifest {
  const copy: Manifest = { ...structuredClone(object), kind: object.kind.replace(/^Cluster/, '') };
  const { labels, annotations, ...rest } = copy.metadata;
  copy.metadata = { ...rest, namespace: WATCH_NAMESPACE, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
  if (copy.roleRef) copy.roleRef = { ...copy.roleRef, kind: 'Role' };
  return copy;
}

/** The object with knob fields replaced by placeholders. */
function templateObject(object: Manifest, placeholders: Placeholders, context: { name: string; ns: string; defaults: OperatorValues }): Manifest {
  const { name, ns } = context;
  const copy: Manifest = structuredClone(object);

  // namespace: fields, the Namespace's name, and strings naming it (walks first, before other placeholders).
  const nsToken = new RegExp(`(^|[./])${ns.replace(/[-.]/g, '\\$&')}(?=$|[./])`, 'g');
  const walk = (value: unknown, key: string | undefined, path: string): unknown => {
    if (typeof value === 'string') {
      if (value === WATCH_NAMESPACE) return placeholders.value('$op.watchNamespace');
      if (value === ns && (key === 'namespace' || (path === '.metadata.name' && copy.kind === 'Namespace'))) return placeholders.value('$ns');
      if (value !== ns && (value.startsWith(`${ns}/`) || value.includes(`.${ns}.svc`))) {
        const format = value.replace(/%/g, '%%').replace(nsToken, '$1%[1]s');
        return placeholders.value(`(printf ${goString(format)} $ns)`);
      }
      return value;
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, undefined, `${path}[${i}]`));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k, `${path}.${k}`)]));
    }
    return value;
  };
  const result = walk(copy, undefined, '') as Manifest;

  // labels and annotations of the object itself.
  const metadata = result.metadata ?? (result.metadata = {});
  metadata.labels = metadata.labels === undefined
    ? undefined
    : placeholders.value(`(merge ${goDict(metadata.labels, placeholders)} $op.labels)`);
  if (metadata.labels === undefined) {
    delete metadata.labels;
    metadata[placeholders.optionalKey('labels', '$op.labels')] = null;
  }
  if (metadata.annotations === undefined) {
    metadata[placeholders.optionalKey('annotations', '$op.annotations')] = null;
  } else {
    metadata.annotations = placeholders.value(`(merge ${goDict(metadata.annotations, placeholders)} $op.annotations)`);
  }

  if (result.kind === 'Deployment' && object.metadata?.name === name) templateDeployment(result, placeholders);
  if (result.kind === 'NetworkPolicy' && Array.isArray(result.spec?.ingress)) {
    for (const rule of result.spec.ingress) {
      for (const port of rule.ports ?? []) {
        if (port.port === context.defaults.metrics.port) port.port = placeholders.value('$op.metrics.port');
      }
    }
  }
  return result;
}

/** The Deployment's knobs: replicas, the operator container, the pod's scheduling fields. */
function templateDeployment(deployment: Manifest, placeholders: Placeholders): void {
  deployment.spec.replicas = placeholders.value('$op.replicas');
  const pod = deployment.spec.template.spec;
  const container = pod.containers.find((c: { name?: string }) => c.name === 'operator');
  container.image = placeholders.value(IMAGE_EXPR);
  container.imagePullPolicy = placeholders.value('$image.pullPolicy');
  container.resources = placeholders.value('$op.resources');
  container.args = placeholders.value(argsExpr(container.args));
  for (const port of container.ports ?? []) {
    if (port.name === 'metrics') port.containerPort = placeholders.value('$op.metrics.port');
    if (port.name === 'probes') port.containerPort = placeholders.value('$op.probes.port');
  }
  for (const key of ['nodeSelector', 'tolerations', 'affinity'] as const) {
    if (pod[key] === undefined) pod[placeholders.optionalKey(key, `$op.${key}`)] = null;
  }
}
