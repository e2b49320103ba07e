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
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 */
import type { CustomResource } from './custom-resource.js';
import { resolveKind, type ChildKind, type ResolvedKind } from './kinds.js';
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
   *
   * @default changes matter when a top-level field that render has read of this declaration's objects
   *   (`data`, `spec`, `metadata`, …, recorded since the process started; every field before the first
   *   render that was handed one) differs, `metadata` compared without `resourceVersion`, `managedFields`
   *   and `generation`. Reason: a change render cannot see cannot change its output, and a label or an
   *   annotation added to a ConfigMap that 2000 CRs read only the `data` of would otherwise queue 2000
   *   reconciles (crossplane-contrib/provider-helm#177).
   */
  readonly changeMatters?: (oldObject: KubeResource, newObject: KubeResource) => boolean;
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
