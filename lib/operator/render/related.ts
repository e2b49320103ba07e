/**
 * Related objects: objects an operator reads but does not own (a Secret or ConfigMap a CR names, the
 * Pods of a workload). Declared on the operator (`OperatorProps.related`), resolved from the runtime's
 * cache into `context.related` for `render(cr, scope, context)`, and watched, so that a change to one of
 * them reconciles exactly the CRs that reference it (controller-runtime's `Watches` with an index from
 * the referenced object to the referencing CRs).
 *
 * A reference is a name (`{ name, namespace? }`), or a label selector (`{ selector, namespace? }`) for
 * every object of the kind whose labels match. Namespaced kinds default to the CR's namespace; a
 * cluster-scoped CR must give one.
 *
 * What the runtime caches of a related kind can be narrowed with `scope` (a label selector, a field
 * selector, namespaces): the list and watch then ask the API server for those objects only, so the
 * operator's memory follows the objects it can use rather than the cluster's size. An object outside the
 * scope is invisible: a reference to it by name is reported as not found (naming the scope).
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/field-selectors/
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes (list and watch)
 */
import type { CustomResource } from '../custom-resource.js';
import { resolveKind, type ChildKind, type ResolvedKind } from '../kinds.js';
import { dns1123LabelProblem } from '../schema/names.js';
import { fieldSelectorProblem, labelSelectorProblem } from '../schema/selector-syntax.js';
import type { KubeResource } from './render-context.js';

/** A reference by name. */
export interface NameReference {
  /** The referenced object's `metadata.name`. */
  readonly name: string;
  /** Its namespace (namespaced kinds only). @default the CR's namespace; a cluster-scoped CR must give one */
  readonly namespace?: string;
}

/**
 * A reference by label selector: every object of the kind whose labels include all of `selector`
 * (equality-based, like a Service's selector).
 */
export interface SelectorReference {
  /** Label key → value; an object matches when it carries every pair. */
  readonly selector: Readonly<Record<string, string>>;
  /** Where to look (namespaced kinds only). @default the CR's namespace; a cluster-scoped CR must give one */
  readonly namespace?: string;
}

/** One reference a `references` function returns: by name or by label selector. */
export type ObjectReferenceInput = NameReference | SelectorReference;

/**
 * Which objects of a related kind the runtime caches (controller-runtime's `cache.ByObject`): the
 * selectors are sent as the `labelSelector` and `fieldSelector` query parameters of the informer's list
 * and watch, and one informer is opened per namespace. Only objects in the scope exist for `render`, for
 * references by name (outside it: not found) and for change events. Informers are shared per (kind,
 * namespace, label selector, field selector), so declarations of one kind with the same scope share one
 * cache; narrower is cheaper (each cached object costs memory for the process's lifetime).
 *
 * @example
 * // only the Pods of this operator's workloads, not every Pod of the cluster
 * scope: { labelSelector: 'app.kubernetes.io/name=memcached' }
 * // Pods not finished, in two namespaces
 * scope: { fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed', namespaces: ['shop', 'blog'] }
 */
export interface RelatedCacheScope {
  /**
   * A label selector in Kubernetes' string syntax (`key=value`, `key!=value`, `key in (a,b)`,
   * `key notin (a,b)`, `key`, `!key`, comma-separated: all must hold), e.g.
   * `app.kubernetes.io/name=memcached`. Checked at construct time.
   * @default every object (no label selector). Reason: the runtime cannot know which labels the objects
   *   the CRs name carry; give one whenever they share a label, as a workload's Pods do.
   * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
   */
  readonly labelSelector?: string;
  /**
   * A field selector in Kubernetes' syntax (`field=value`, `field==value`, `field!=value`,
   * comma-separated), e.g. `status.phase=Running`. The syntax is checked at construct time; which fields
   * a kind supports (every kind: `metadata.name`, `metadata.namespace`) the API server decides when the
   * informer lists (an unsupported field fails the cache sync, naming the informer).
   * @default every object (no field selector). Reason: few fields are selectable, and they differ per kind.
   * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/field-selectors/
   */
  readonly fieldSelector?: string;
  /**
   * The namespaces cached (namespaced kinds only; each a DNS-1123 label; one informer each). The
   * synthesized RBAC grants the kind's get/list/watch by a Role in each of these namespaces (in the
   * operator's `deployment.watchNamespace`, by its own Role), not by a ClusterRole.
   * @default the operator's watch namespaces: the one it runs with (`run --namespace`, `Manager`'s
   *   `namespace`), else all. Reason: a CR references objects in its own namespace unless it says otherwise.
   */
  readonly namespaces?: readonly string[];
  /**
   * Cache only `apiVersion`, `kind` and `metadata` of these objects (`PartialObjectMetadata`: the API
   * server sends nothing else; controller-runtime's metadata-only watches). For a render that reads only
   * names, labels, annotations, ownerReferences or `deletionTimestamp` (a workload's Pods): it sees no
   * `spec`, `status` or `data`. Informers are shared per scope, so a declaration of the same kind that
   * needs whole objects gets its own cache. Measured in `npm run bench:related-cache`.
   * @default false: whole objects. Reason: most related reads (a ConfigMap's data, a Secret) need them.
   * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-metadata-only
   */
  readonly metadataOnly?: boolean;
  /**
   * Maps each object before it is cached (controller-runtime's `cache.TransformFunc`): return it without
   * the fields render never reads, to save memory. Keep `apiVersion`, `kind` and `metadata` (the cache's
   * keys and indexes); render, `changeMatters` and `diff` see what it returns. Must be pure. An exception
   * is logged at error level naming the object, which is then cached untransformed, and each CR that
   * references the object tells it: `Stalled=True` with reason `CacheTransformFailed` (its children still
   * applied) and a Warning Event, until a later version of the object transforms cleanly. Declarations share a
   * cache only when they pass the same function.
   * @default none: objects are cached whole (other managers' managedFields dropped)
   */
  readonly transform?: (object: KubeResource) => KubeResource;
  /**
   * These objects are made by the cluster from this operator's children (the Pods of its Deployments,
   * StatefulSets, DaemonSets, ReplicaSets; the Jobs and Pods of its CronJobs), so they carry the bucket
   * label the runtime puts on those children's templates (`operator.cdk8s.io/shard-bucket`). Sharded
   * (`run --sharding`), each replica then caches only the objects of the buckets it holds, like its
   * children's caches (one watch with `<labelSelector>,operator.cdk8s.io/shard-bucket in (…)`), and a
   * bucket that moves is listed alone; a CR's render and `status()` look only in its own bucket's cache
   * (that of its children), so they never see a matching object of another bucket, wherever it is held.
   * Unsharded it changes nothing. Objects not made from a child (a
   * ConfigMap the user writes, Pods of a workload the operator does not own) carry no bucket: do not set
   * it for them, or they are never seen while sharded. Not with `namespaces`: the objects are where the
   * children are.
   * @default false: every replica caches every object in the scope
   */
  readonly createdFromChildren?: boolean;
}

/**
 * A related object as the runtime's cache holds it under `scope`: metadata only when
 * {@link RelatedCacheScope.metadataOnly}, then `scope.transform` applied. `diff` reads the API server
 * directly and passes what it read through here, so render sees what it sees in the runtime.
 */
export function asCached(object: KubeResource, scope: RelatedCacheScope | undefined): KubeResource {
  let cached = scope?.metadataOnly ? ({ apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata } as KubeResource) : object;
  if (scope?.transform) cached = scope.transform(cached);
  return cached;
}

/**
 * How an operator reads one related kind.
 *
 * @example
 * // a ConfigMap named by spec.configMapRef.name, in the CR's namespace; optional
 * { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name', optional: true }
 * // the CR's Pods
 * { apiVersion: 'v1', kind: 'Pod', references: (cr) => [{ selector: { app: cr.metadata.name } }] }
 */
export interface RelatedDeclaration<CR = CustomResource> extends ChildKind {
  /**
   * A dotted path into the CR whose value is the referenced object's name (e.g. `spec.configMapRef.name`;
   * an absent value means no reference), or a function from the validated CR (defaults applied) to its
   * references. Must be pure, like render.
   */
  readonly references: string | ((cr: CR) => readonly ObjectReferenceInput[]);
  /**
   * When false (the default), a named object that does not exist stops the reconcile before render:
   * `Ready=False` with reason `ReferenceNotFound` and a message naming it; nothing is applied or pruned,
   * and its creation triggers the next reconcile. When true, render sees it missing. Selector references
   * are never missing (they may match nothing). @default false
   */
  readonly optional?: boolean;
  /**
   * Whether an update of a related object (`oldObject` → `newObject`, both as cached: frozen, other
   * managers' managedFields dropped) reconciles the CRs that reference it both before and after the
   * update. Creations and deletions always do, and so does an update that changes which CRs reference the
   * object (a label change for a selector), for the CRs it adds or removes. Return true to reconcile on
   * every update (the behaviour before this option). Must be pure and cheap: it runs once per event.
   * When it throws, the change counts as one that matters, and each CR referencing the object tells it:
   * `Stalled=True` with reason `ChangeMattersFailed` (its children still applied), a Warning Event and
   * an error log line, until the next check of that object succeeds.
   *
   * @default changes matter when a top-level field that render has read of this declaration's objects
   *   (`data`, `spec`, `metadata`, …, recorded since the process started; every field before the first
   *   render that was handed one) differs, `metadata` compared without `resourceVersion`, `managedFields`
   *   and `generation`. Reason: a change render cannot see cannot change its output, and a label or an
   *   annotation added to a ConfigMap that 2000 CRs read only the `data` of would otherwise queue 2000
   *   reconciles (crossplane-contrib/provider-helm#177).
   */
  readonly changeMatters?: (oldObject: KubeResource, newObject: KubeResource) => boolean;
  /**
   * Which objects of the kind the runtime caches and watches; see {@link RelatedCacheScope}.
   * @default the kind's every object in the operator's watch namespaces. Reason: without knowing which
   *   objects the CRs name, nothing can be left out; narrow it whenever they share a label or a field.
   */
  readonly scope?: RelatedCacheScope;
}

/** One reference of one CR, resolved: kind, namespace and a name or selector. */
export interface ResolvedReference {
  /** The key of the declaration in `OperatorProps.related`. */
  readonly related: string;
  /** The declaration's kind, resolved. */
  readonly kind: ResolvedKind;
  /** The namespace looked in; absent for a cluster-scoped kind. */
  readonly namespace?: string;
  /** The name, for a reference by name (then `selector` is absent). */
  readonly name?: string;
  /** The label selector, for a reference by selector (then `name` is absent). */
  readonly selector?: Readonly<Record<string, string>>;
  /** The declaration's `optional`; always true for a selector (it may match nothing). */
  readonly optional: boolean;
  /** Where it came from, for messages: the path, or `related.<key>`. */
  readonly source: string;
}

/** A problem with a declaration or with the references a CR gives; `path` names the field. */
export class ReferenceProblem extends Error {
  constructor(readonly path: string, detail: string) {
    super(`${path}: ${detail}`);
  }
}

/**
 * Resolves the declarations' kinds (built-in table or the declaration's `plural`/`namespaced`).
 * @throws UnknownKindError naming the kind
 */
export function resolveRelatedKinds(declarations: Readonly<Record<string, RelatedDeclaration<never>>>): Record<string, ResolvedKind> {
  const out: Record<string, ResolvedKind> = {};
  for (const [key, declaration] of Object.entries(declarations)) out[key] = resolveKind(declaration);
  return out;
}

/**
 * The references `cr` makes through every declaration, in declaration order.
 *
 * @throws ReferenceProblem when a path holds something other than a non-empty string, a function
 *   returns something that is not a reference, a namespaced reference of a cluster-scoped CR has no
 *   namespace, or a cluster-scoped kind is given a namespace
 */
export function resolveReferences(
  declarations: Readonly<Record<string, RelatedDeclaration<never>>>,
  kinds: Readonly<Record<string, ResolvedKind>>,
  cr: CustomResource,
): ResolvedReference[] {
  const out: ResolvedReference[] = [];
  for (const [key, declaration] of Object.entries(declarations)) {
    const kind = kinds[key];
    const optional = declaration.optional ?? false;
    let inputs: readonly ObjectReferenceInput[];
    let source: string;
    if (typeof declaration.references === 'string') {
      source = declaration.references;
      const value = readPath(cr, declaration.references);
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string' || value === '') throw new ReferenceProblem(source, `must name a ${kind.kind} (a non-empty string), got ${JSON.stringify(value)}`);
      inputs = [{ name: value }];
    } else {
      source = `related.${key}`;
      const returned: unknown = (declaration.references as (cr: CustomResource) => unknown)(cr);
      if (!Array.isArray(returned)) throw new ReferenceProblem(source, `references() must return an array of { name } or { selector }, got ${typeof returned}`);
      inputs = returned as ObjectReferenceInput[];
    }
    inputs.forEach((input, i) => {
      const where = typeof declaration.references === 'string' ? source : `${source}[${i}]`;
      const namespace = referenceNamespace(input, kind, cr, where);
      if ('selector' in input && input.selector !== undefined) {
        if (typeof input.selector !== 'object' || input.selector === null) throw new ReferenceProblem(where, 'selector must be an object of label key → value');
        for (const [k, v] of Object.entries(input.selector)) {
          if (typeof v !== 'string') throw new ReferenceProblem(`${where}.selector.${k}`, `must be a string, got ${JSON.stringify(v)}`);
        }
        out.push({ related: key, kind, namespace, selector: { ...input.selector }, optional: true, source: where });
      } else if ('name' in input && typeof input.name === 'string' && input.name !== '') {
        out.push({ related: key, kind, namespace, name: input.name, optional, source: where });
      } else {
        throw new ReferenceProblem(where, `must be { name } or { selector }, got ${JSON.stringify(input)}`);
      }
    });
  }
  return out;
}

/**
 * Problems of `related.<key>.scope`, each naming its field path: a selector that is not valid Kubernetes
 * syntax, `namespaces` that is not an array of DNS-1123 labels, or namespaces for a cluster-scoped kind.
 */
export function relatedScopeProblems(key: string, scope: RelatedCacheScope | undefined, kind: ResolvedKind): string[] {
  if (scope === undefined) return [];
  const path = `related.${key}.scope`;
  if (scope === null || typeof scope !== 'object' || Array.isArray(scope)) return [`${path} must be an object { labelSelector?, fieldSelector?, namespaces?, metadataOnly?, transform? }`];
  const problems: string[] = [];
  const known = new Set(['labelSelector', 'fieldSelector', 'namespaces', 'metadataOnly', 'transform', 'createdFromChildren']);
  for (const field of Object.keys(scope)) if (!known.has(field)) problems.push(`${path}.${field} is not a scope field (labelSelector, fieldSelector, namespaces, metadataOnly, transform, createdFromChildren)`);
  const { metadataOnly, transform, createdFromChildren } = scope as { metadataOnly?: unknown; transform?: unknown; createdFromChildren?: unknown };
  if (metadataOnly !== undefined && typeof metadataOnly !== 'boolean') problems.push(`${path}.metadataOnly must be true or false, got ${JSON.stringify(metadataOnly)}`);
  if (createdFromChildren !== undefined && typeof createdFromChildren !== 'boolean') problems.push(`${path}.createdFromChildren must be true or false, got ${JSON.stringify(createdFromChildren)}`);
  if (createdFromChildren === true && scope.namespaces !== undefined) problems.push(`${path}.namespaces: objects createdFromChildren are where the children are; give one or the other`);
  if (transform !== undefined && typeof transform !== 'function') problems.push(`${path}.transform must be a function (object) => object, got ${typeof transform}`);
  for (const [field, check, what] of [
    ['labelSelector', labelSelectorProblem, 'label'],
    ['fieldSelector', fieldSelectorProblem, 'field'],
  ] as const) {
    const value: unknown = scope[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') problems.push(`${path}.${field} must be a ${what} selector string, got ${JSON.stringify(value)}`);
    else {
      const problem = check(value);
      if (problem !== undefined) problems.push(`${path}.${field} ${JSON.stringify(value)} is not a valid ${what} selector: ${problem}`);
    }
  }
  const namespaces: unknown = scope.namespaces;
  if (namespaces !== undefined) {
    if (!kind.namespaced) problems.push(`${path}.namespaces: ${kind.kind} is cluster-scoped; it has no namespaces`);
    else if (!Array.isArray(namespaces) || namespaces.length === 0) problems.push(`${path}.namespaces must be a non-empty array of namespace names (omit it for the operator's watch namespaces)`);
    else {
      namespaces.forEach((namespace: unknown, i) => {
        const problem = typeof namespace === 'string' ? dns1123LabelProblem(namespace) : 'must be a string';
        if (problem !== undefined) problems.push(`${path}.namespaces[${i}] ${JSON.stringify(namespace)} ${problem}`);
      });
      const duplicates = namespaces.filter((n, i) => namespaces.indexOf(n) !== i);
      if (duplicates.length > 0) problems.push(`${path}.namespaces lists ${JSON.stringify(duplicates[0])} twice`);
    }
  }
  return problems;
}

/** `labelSelector "a=b", fieldSelector "x=y", namespaces shop, blog`: a declared scope, for messages; '' when none. */
export function describeScope(scope: RelatedCacheScope | undefined): string {
  if (!scope) return '';
  return [
    scope.labelSelector ? `labelSelector ${JSON.stringify(scope.labelSelector)}` : '',
    scope.fieldSelector ? `fieldSelector ${JSON.stringify(scope.fieldSelector)}` : '',
    scope.namespaces ? `namespaces ${scope.namespaces.join(', ')}` : '',
  ].filter((part) => part !== '').join(', ');
}

/**
 * Why a named reference was not found, for the `ReferenceNotFound` message: `not found`, or, when the
 * declaration has a scope, that the object is outside it (its namespace is not cached) or may be (it may
 * not match the selectors: objects outside the scope are not cached, so the runtime cannot tell).
 */
export function notFoundReason(reference: ResolvedReference, scope: RelatedCacheScope | undefined): string {
  const declared = describeScope(scope);
  if (declared === '') return 'not found';
  const where = `related.${reference.related}.scope`;
  if (scope?.namespaces && reference.namespace !== undefined && !scope.namespaces.includes(reference.namespace)) {
    return `not visible: namespace ${reference.namespace} is outside ${where} (${declared})`;
  }
  return `not found, or outside ${where} (${declared}): objects that do not match it are not cached`;
}

/** True when every label of `selector` is on `labels`. An empty selector matches everything. */
export function selectorMatches(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/** `ConfigMap shop/settings`, `Pod shop/{app=web}` */
export function describeReference(ref: ResolvedReference): string {
  const where = ref.namespace ? `${ref.namespace}/` : '';
  const what = ref.name ?? `{${Object.entries(ref.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',')}}`;
  return `${ref.kind.kind} ${where}${what}`;
}

function referenceNamespace(input: ObjectReferenceInput, kind: ResolvedKind, cr: CustomResource, where: string): string | undefined {
  if (input === null || typeof input !== 'object') throw new ReferenceProblem(where, `must be { name } or { selector }, got ${JSON.stringify(input)}`);
  if (!kind.namespaced) {
    if (input.namespace !== undefined) throw new ReferenceProblem(where, `${kind.kind} is cluster-scoped; a reference to it has no namespace`);
    return undefined;
  }
  const namespace = input.namespace ?? cr.metadata.namespace;
  if (namespace === undefined) throw new ReferenceProblem(where, `a reference to the namespaced ${kind.kind} from a cluster-scoped custom resource must give a namespace`);
  return namespace;
}

function readPath(obj: unknown, path: string): unknown {
  let value: unknown = obj;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
