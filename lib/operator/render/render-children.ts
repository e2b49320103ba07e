/**
 * `renderChildren(operator, cr)`: the pure function from one custom resource to the plain manifests of
 * its desired children.
 *
 * Expected flow: validate the CR (defaults applied) → `operator.render(cr, chart)` in a fresh cdk8s
 * `App` + `Chart` (never `Testing.app()`, never a shared App: a shared App grows with every call) →
 * `chart.toJson()` → stamp and check every object → sort.
 *
 * Guarantees, for every returned manifest:
 * - namespaced kinds carry the CR's namespace; cluster-scoped kinds carry none;
 * - one controller ownerReference to the CR (apiVersion, kind, name, uid, controller, blockOwnerDeletion);
 * - labels {@link MANAGED_BY_LABEL} (operator name), {@link INSTANCE_LABEL} (CR name) and
 *   {@link OWNER_UID_LABEL} (CR uid), added to (and overriding) the child's own;
 * - a name valid for its kind (see `nameRuleFor` in names.ts);
 * - order by apiVersion, kind, namespace, name; object keys sorted. The same CR gives byte-identical
 *   JSON (no clock, randomness or network is involved).
 *
 * Names: the chart's id is the CR name, and an object created without `metadata.name` is named
 * `<cr name>-<construct ids below the chart>` (ids lowercased, `Default`/`Resource` dropped, no hash), e.g.
 * `new kplus.Service(scope, 'web')` under CR `shop` → `shop-web`. A generated name longer than the kind
 * allows is cut and suffixed with 8 hex digits of the construct path's sha256. For kinds whose names are
 * DNS-1035 labels (Service), a generated name that would not start with a letter (CR `2-pea`) is
 * prefixed with the lowercased kind: `service-2-pea-web`. Every generated name is valid for its kind.
 * Explicit names are checked, never changed.
 *
 * Errors (all {@link RenderError} with a `reason`, naming the CR and, for a child, its construct path):
 * `MissingUid`, `RenderFailed` (render() threw or cdk8s failed), `UnknownKind`, `InvalidChild` (other
 * namespace, cluster-scoped child under a namespaced CR, namespaced child of a cluster-scoped CR without
 * a namespace, invalid name, foreign controller reference, an invalid label key or value, annotations
 * over 256 KiB in total, or a duplicate or missing key in a list that server-side apply treats as a map
 * or set, e.g. `spec.template.spec.containers[0].env: duplicate entries for key name="LOG_LEVEL"`; see
 * keyed-lists.ts), `DuplicateChild`. An invalid CR throws
 * {@link CustomResourceValidationError} before render() runs.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
 */
import { createHash } from 'node:crypto';
import { ApiObject, App, Chart } from 'cdk8s';
import { sortedKeys } from '../../json-object.js';
import type { Construct } from 'constructs';
import { orderingOf, type ReadyPredicate } from './child-ordering.js';
import type { CustomResource } from '../custom-resource.js';
import { type MissingReference, RenderError, UnknownKindError, type ObjectReference } from '../errors.js';
import type { RelatedReads } from './related-reads.js';
import { ReferenceProblem, asCached, describeReference, notFoundReason, resolveReferences, resolveRelatedKinds, selectorMatches, type RelatedDeclaration, type ResolvedReference } from './related.js';
import { ObservedChildren, sortResources, type KubeResource, type RenderContext } from './render-context.js';
import type { OwnerReference } from '../object-ref.js';
export type { OwnerReference } from '../object-ref.js';
import { renderResultOf, type RenderResult } from './render-result.js';
import { parseApiVersion, resolveKind, type ChildKind, type ResolvedKind } from '../kinds.js';
import { keyedListProblems } from '../schema/keyed-lists.js';
import { childLabels } from './labels.js';
import { metadataProblems } from '../schema/metadata-limits.js';
import { ObjectRef } from '../object-ref.js';
import { dns1123LabelProblem, nameProblem, nameRuleFor } from '../schema/names.js';
import { formatFieldPath } from '../field-path.js';
import { messageOf as thrownText } from '../../error-text.js';

/**
 * Annotation bytes kept free for the runtime's `operator.cdk8s.io/desired-hash` annotation (31-byte key,
 * 64-hex value), so a child that passes render is not rejected for its annotations' size once applied.
 */
const RESERVED_ANNOTATION_BYTES = 128;

/** A plain manifest as sent to the API server. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** What renderChildren needs of an operator (the `Operator` construct implements it). */
export interface RenderableOperator {
  /** The operator's name: the {@link MANAGED_BY_LABEL} value on every child. */
  readonly operatorName: string;
  /** The CR's own kind: the ownerReferences' apiVersion and kind. */
  readonly crd: ResolvedKind;
  /** Declared child kinds, for kinds outside the built-in table. */
  readonly owns: readonly ChildKind[];
  /** Related kinds by key (see related.ts). @default none */
  readonly related?: Readonly<Record<string, RelatedDeclaration<never>>>;
  /** The same, resolved. @default resolved from `related` on each call */
  readonly relatedKinds?: Readonly<Record<string, ResolvedKind>>;
  /** zod schema of the operator's own status fields; validates what render returns as `status`. @default none */
  readonly statusSchema?: { safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } } };
  /** Offline validation, defaults applied (see `Operator.parseCustomResource`). @throws CustomResourceValidationError */
  parseCustomResource(obj: unknown): CustomResource<unknown>;
  /** Builds the children under `scope` (see `Operator.render`). */
  render(cr: CustomResource<unknown>, scope: Construct, context: RenderContext): void | RenderResult<unknown>;
}

/**
 * Finds related objects for {@link renderCustomResource}: the runtime reads its caches, offline helpers
 * a list of objects ({@link relatedLookupOf}).
 */
export interface RelatedLookup {
  /**
   * The object of `kind` named `name` (in `namespace` for namespaced kinds), or undefined. `related` is
   * the declaration's key: the runtime looks in that declaration's cache (its `scope`).
   */
  get(kind: ResolvedKind, namespace: string | undefined, name: string, related?: string): KubeResource | undefined;
  /** The objects of `kind` (in `namespace`, or all namespaces when undefined) whose labels match `selector`; `related` as for `get`. */
  select(kind: ResolvedKind, namespace: string | undefined, selector: Readonly<Record<string, string>>, related?: string): KubeResource[];
  /**
   * True when the objects come from the runtime's caches, already in the shape each declaration's
   * `scope` gives them (metadata only, `transform`). Otherwise render shapes them so (`asCached`), so a
   * snapshot test, `render` and `diff` hand render what the runtime would.
   * @default false
   */
  readonly cached?: boolean;
  /**
   * The runtime's, sharded: the lookup of one CR's reconcile, where the declarations whose objects are made
   * from the children (`scope.createdFromChildren`) are looked up in the CR's bucket only, the bucket its
   * children and their Pods carry (lib/runtime/reconcile/child-cache.ts). Other declarations as in this one.
   * @default absent: no buckets
   */
  inBucket?(bucket: number): RelatedLookup;
}

/** What a render is given besides the CR. */
export interface RenderInputs {
  /** This CR's children as they exist. @default none */
  readonly observed?: readonly KubeResource[];
  /** Where related objects are found. @default nothing exists */
  readonly related?: RelatedLookup;
  /**
   * Records which top-level fields render reads of the related objects, per declaration: render is
   * handed stand-ins of them (see related-reads.ts). The runtime passes one per operator. @default none
   * (render gets the objects themselves)
   */
  readonly relatedReads?: RelatedReads;
}

/** Everything one render produced, for the runtime. */
export interface RenderOutput {
  /** Stamped, sorted children (as {@link renderChildren} returns them). */
  readonly children: Manifest[];
  /** {@link ObjectRef.key} of a child → keys of the children it waits for (`dependsOn`); absent when it waits for none. */
  readonly waitsFor: ReadonlyMap<string, readonly string[]>;
  /** {@link ObjectRef.key} of a child → its `readyWhen` predicate, when it has one. */
  readonly readyWhen: ReadonlyMap<string, ReadyPredicate>;
  /** The operator's own status fields, validated by its status schema (defaults applied); absent when render returned none. */
  readonly status?: Record<string, unknown>;
  /** Reconcile again after this many milliseconds (capped, see render-result.ts); absent when not asked. */
  readonly requeueAfterMs?: number;
  /** The CR's references to related objects (the runtime indexes them). */
  readonly references: readonly ResolvedReference[];
  /**
   * Which inputs besides the CR's spec and metadata and the related objects render read: kept up to
   * date after render returns (a `readyWhen` predicate may read `context.observed` later). The runtime's
   * render memo counts only what was read among render's inputs. @default unknown, so all of it counts
   *   (a render function that returns bare children or builds its own output)
   */
  readonly inputsRead?: RenderInputsRead;
}

/** What {@link RenderOutput.inputsRead} records. */
export interface RenderInputsRead {
  /** render read `context.observed` (any of `of`, `get`, `list`, `all`). */
  observed: boolean;
  /** render read the CR's `status` (also by spreading or serialising the CR). */
  status: boolean;
  /**
   * The keys of `context.related` render read (a declaration it never looked at cannot change its
   * output). @default unknown: every declaration counts
   */
  related?: Set<string>;
}

/** A view of `related` whose getters add each key read to `read` (enumerable, so spreading it reads every key). */
export function recordingKeyReads<T>(related: Record<string, T>, read: Set<string>): Record<string, T> {
  const view: Record<string, T> = {};
  for (const key of Object.keys(related)) {
    Object.defineProperty(view, key, { enumerable: true, get: () => (read.add(key), related[key]) });
  }
  return view;
}

/** The related objects a CR's references resolve to, and the non-optional named ones that are missing. */
export interface FoundRelated {
  /** Declaration key → its objects, sorted by apiVersion, kind, namespace and name, without duplicates (every key of `declarations`). */
  readonly related: Record<string, KubeResource[]>;
  /** A line per missing non-optional named object: what it is, the field that names it, why it is not found. */
  readonly missing: string[];
  /** The same missing objects, as references (kind, namespace, name), in the same order. */
  readonly missingRefs: MissingReference[];
}

/**
 * Looks the objects `references` name or select up in `lookup`: what render is handed as
 * `context.related` (before the stand-ins of related-reads.ts). Pure: the same lookup contents give the
 * same objects in the same order.
 */
export function findRelated(
  declarations: Readonly<Record<string, RelatedDeclaration<never>>>,
  references: readonly ResolvedReference[],
  lookup: RelatedLookup | undefined,
): FoundRelated {
  const related: Record<string, KubeResource[]> = Object.fromEntries(Object.keys(declarations).map((key) => [key, []]));
  const missing: string[] = [];
  const missingRefs: MissingReference[] = [];
  for (const reference of references) {
    related[reference.related] ??= [];
    const scope = declarations[reference.related]?.scope;
    const shaped = (object: KubeResource) => (lookup?.cached ? object : asCached(object, scope));
    if (reference.selector) {
      related[reference.related].push(...(lookup?.select(reference.kind, reference.namespace, reference.selector, reference.related) ?? []).map(shaped));
      continue;
    }
    const found = lookup?.get(reference.kind, reference.namespace, reference.name ?? '', reference.related);
    if (found) related[reference.related].push(shaped(found));
    else if (!reference.optional) {
      missing.push(`${describeReference(reference)} (${reference.source}) ${notFoundReason(reference, declarations[reference.related]?.scope)}`);
      missingRefs.push({ apiVersion: reference.kind.apiVersion, kind: reference.kind.kind, namespace: reference.namespace, name: reference.name ?? '' });
    }
  }
  for (const key of Object.keys(related)) related[key] = dedupe(sortResources(related[key]));
  return { related, missing, missingRefs };
}

/** A {@link RelatedLookup} over a list of objects (offline rendering, tests). */
export function relatedLookupOf(objects: readonly KubeResource[]): RelatedLookup {
  const matches = (o: KubeResource, kind: ResolvedKind, namespace: string | undefined) =>
    o.kind === kind.kind && parseApiVersion(o.apiVersion).group === kind.group && (namespace === undefined || (o.metadata.namespace ?? undefined) === namespace);
  return {
    get: (kind, namespace, name) => objects.find((o) => matches(o, kind, namespace) && o.metadata.name === name),
    select: (kind, namespace, selector) => objects.filter((o) => matches(o, kind, namespace) && selectorMatches(selector, o.metadata.labels)),
  };
}

/** The chart render() builds into: its id is the CR name, and it names objects as documented above. */
class ChildChart extends Chart {
  constructor(
    scope: Construct,
    private readonly crName: string,
  ) {
    super(scope, crName);
  }

  override generateObjectName(apiObject: ApiObject): string {
    const ids = apiObject.node.scopes
      .slice(2)
      .map((c) => c.node.id)
      .filter((id) => !/^(default|resource)$/i.test(id))
      .map((id) =>
        id
          .toLowerCase()
          .replace(/[^a-z0-9-]+/g, '-')
          .replace(/-+/g, '-')
          .replace(/^-|-$/g, ''),
      )
      .filter((id, i, all) => id !== '' && id !== all[i - 1]);
    const { group } = parseApiVersion(apiObject.apiVersion);
    const rule = nameRuleFor({ group, kind: apiObject.kind });
    let name = [this.crName, ...ids].join('-');
    if (rule.format !== 'dns1123-subdomain') name = name.replace(/\./g, '-');
    // A DNS-1035 label (Service) starts with a letter; CR names may start with a digit.
    if (rule.format === 'dns1035-label' && !/^[a-z]/.test(name)) name = `${apiObject.kind.toLowerCase()}-${name}`;
    if (name.length > rule.maxLength) {
      const hash = createHash('sha256').update(`${this.crName}/${apiObject.node.path}`).digest('hex').slice(0, 8);
      name = `${name.slice(0, rule.maxLength - 9).replace(/[-.]+$/, '')}-${hash}`;
    }
    return name;
  }
}

/**
 * Renders the desired children of `cr`. Pure: no clock, randomness or network; the same CR gives
 * byte-identical JSON.
 *
 * @throws CustomResourceValidationError when the CR is invalid (before render() runs)
 * @throws RenderError otherwise (see the module doc for reasons)
 */
export function renderChildren(operator: RenderableOperator, cr: CustomResource, inputs: RenderInputs = {}): Manifest[] {
  return renderCustomResource(operator, cr, inputs).children;
}

/**
 * Renders `cr` with `inputs` (observed children, related objects): its children as
 * {@link renderChildren} returns them, plus the ordering between them, the operator's own status and a
 * requeue delay. Pure.
 *
 * Before render() runs, the CR's references to related objects are resolved; a missing named object
 * whose declaration is not `optional` throws `RenderError('ReferenceNotFound')` naming it and the field
 * that names it.
 *
 * @throws CustomResourceValidationError when the CR is invalid
 * @throws RenderError (reasons: those of renderChildren, plus `InvalidReference`, `ReferenceNotFound`,
 *   `InvalidStatus`, `InvalidResult`)
 */
export function renderCustomResource(operator: RenderableOperator, cr: CustomResource, inputs: RenderInputs = {}): RenderOutput {
  const valid = operator.parseCustomResource(cr);
  const ref: ObjectReference = {
    apiVersion: valid.apiVersion,
    kind: valid.kind,
    namespace: valid.metadata.namespace,
    name: valid.metadata.name,
  };
  const uid = valid.metadata.uid;
  if (!uid) throw new RenderError('MissingUid', ref, 'metadata.uid is required to write ownerReferences (renderForSnapshot supplies a fixed fake uid)');

  const declarations = operator.related ?? {};
  let references: ResolvedReference[];
  try {
    references = resolveReferences(declarations, operator.relatedKinds ?? resolveRelatedKinds(declarations), valid);
  } catch (cause) {
    if (cause instanceof ReferenceProblem) throw new RenderError('InvalidReference', ref, cause.message, { cause });
    throw new RenderError('InvalidReference', ref, `related: ${messageOf(cause)}`, { cause });
  }
  const { related, missing, missingRefs } = findRelated(declarations, references, inputs.related);
  if (missing.length > 0) throw new RenderError('ReferenceNotFound', ref, missing.join('; '), { missing: missingRefs });
  const reads = inputs.relatedReads;
  if (reads) for (const key of Object.keys(related)) related[key] = related[key].map((object) => reads.track(key, object));
  const inputsRead: RenderInputsRead = { observed: false, status: false, related: new Set() };
  const observed = new ObservedChildren(sortResources(inputs.observed ?? []), () => (inputsRead.observed = true));
  const context: RenderContext = { observed, related: recordingKeyReads(related, inputsRead.related!) };
  recordStatusRead(valid, inputsRead);

  const app = new App();
  const chart = new ChildChart(app, valid.metadata.name);
  let returned: unknown;
  try {
    returned = operator.render(valid, chart, context);
  } catch (cause) {
    throw new RenderError('RenderFailed', ref, `render() threw: ${messageOf(cause)}`, { cause });
  }
  const result = renderResultOf(returned, operator.statusSchema, ref);
  let objects: Manifest[];
  try {
    objects = chart.toJson() as Manifest[];
  } catch (cause) {
    throw new RenderError('RenderFailed', ref, `cdk8s synthesis failed: ${messageOf(cause)}`, { cause });
  }

  // Which construct synthesized each object: by apiVersion, kind, namespace as rendered (before stamping)
  // and name (not an object identity: the stamped child's is its ObjectRef).
  const synthKey = (apiVersion: unknown, kind: unknown, namespace: unknown, name: unknown) => `${apiVersion}|${kind}|${namespace ?? ''}|${name}`;
  const apiObjects = new Map<string, ApiObject>();
  for (const construct of chart.node.findAll()) {
    if (ApiObject.isApiObject(construct)) {
      const key = synthKey(construct.apiVersion, construct.kind, construct.metadata.namespace, construct.name);
      apiObjects.set(key, construct);
    }
  }
  /** ObjectRef key of each stamped child, by the ApiObject it came from. */
  const stampedKeys = new Map<ApiObject, string>();

  const crNamespace = valid.metadata.namespace;
  const ownerReference: OwnerReference = {
    apiVersion: valid.apiVersion,
    kind: valid.kind,
    name: valid.metadata.name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  const labels = childLabels(operator.operatorName, { metadata: { name: valid.metadata.name, uid } });
  const seen = new Map<string, string>();
  const out: Manifest[] = [];

  for (const object of objects) {
    const name = object?.metadata?.name;
    const source = apiObjects.get(synthKey(object?.apiVersion, object?.kind, object?.metadata?.namespace, name));
    const path = source?.node.path ?? `${chart.node.id}/?`;
    const where = `${object?.kind ?? '<no kind>'} ${String(name)} at ${path}`;
    const invalid = (detail: string): RenderError => new RenderError('InvalidChild', ref, `${where}: ${detail}`);
    if (typeof object?.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof name !== 'string') {
      throw invalid('apiVersion, kind and metadata.name must be strings');
    }

    let kind: ResolvedKind;
    try {
      kind = resolveKind({ apiVersion: object.apiVersion, kind: object.kind }, operator.owns);
    } catch (cause) {
      if (cause instanceof UnknownKindError) throw new RenderError('UnknownKind', ref, `${where}: ${cause.message}`, { cause });
      throw cause;
    }

    const problem = nameProblem(name, nameRuleFor(kind));
    if (problem) throw invalid(`invalid name ${JSON.stringify(name)}: ${problem}`);

    const metadata = { ...object.metadata };
    if (kind.namespaced) {
      if (crNamespace !== undefined) {
        if (metadata.namespace !== undefined && metadata.namespace !== crNamespace) {
          throw invalid(`namespace ${JSON.stringify(metadata.namespace)} differs from the custom resource's ${JSON.stringify(crNamespace)}; an ownerReference cannot cross namespaces`);
        }
        metadata.namespace = crNamespace;
      } else if (metadata.namespace === undefined) {
        throw invalid(`a namespaced child of the cluster-scoped ${valid.kind} must set metadata.namespace`);
      } else {
        const nsProblem = dns1123LabelProblem(metadata.namespace);
        if (nsProblem) throw invalid(`invalid namespace ${JSON.stringify(metadata.namespace)}: ${nsProblem}`);
      }
    } else {
      if (crNamespace !== undefined) {
        throw invalid(`${kind.kind} is cluster-scoped and cannot be owned by the namespaced ${valid.kind}; render it from a cluster-scoped kind or manage it outside render()`);
      }
      delete metadata.namespace;
    }

    const existing = (metadata.ownerReferences ?? []).filter((o) => o.uid !== uid);
    if (existing.some((o) => o.controller)) throw invalid('already has a controller ownerReference; only the custom resource may control its children');
    metadata.ownerReferences = [ownerReference, ...existing].map((o) => ({ ...o }));
    metadata.labels = { ...metadata.labels, ...labels };

    const limits = [...metadataProblems(metadata, RESERVED_ANNOTATION_BYTES), ...keyedListProblems({ ...object, metadata }, object.apiVersion, object.kind)];
    if (limits.length) throw invalid(limits.join('; '));

    const key = ObjectRef.of({ apiVersion: object.apiVersion, kind: object.kind, metadata }).key();
    const previous = seen.get(key);
    if (previous !== undefined) throw new RenderError('DuplicateChild', ref, `${where}: same ${kind.kind} ${name} as ${previous}`);
    seen.set(key, path);

    out.push(sortKeys({ ...object, metadata }) as Manifest);
    if (source) stampedKeys.set(source, key);
  }

  // Ordering: keys of what each child waits for (dependencies are children of this render, stamped alike).
  const waitsFor = new Map<string, string[]>();
  const readyWhen = new Map<string, ReadyPredicate>();
  for (const [apiObject, key] of stampedKeys) {
    const ordering = orderingOf(apiObject, chart);
    const dependencies = ordering.waitsFor.map((o) => stampedKeys.get(o)).filter((k): k is string => k !== undefined);
    if (dependencies.length > 0) waitsFor.set(key, [...new Set(dependencies)].sort());
    if (ordering.readyWhen) readyWhen.set(key, ordering.readyWhen);
  }

  return {
    children: out.sort(compareManifests),
    waitsFor,
    readyWhen,
    ...(result.status === undefined ? {} : { status: result.status }),
    ...(result.requeueAfterMs === undefined ? {} : { requeueAfterMs: result.requeueAfterMs }),
    references,
    inputsRead,
  };
}

/**
 * Turns `cr.status` into a getter that records a read in `inputsRead.status` (enumerable when the CR has
 * a status, so spreading or serialising the CR reads it, as it should).
 */
function recordStatusRead(cr: CustomResource, inputsRead: RenderInputsRead): void {
  const status = cr.status;
  const own = Object.getOwnPropertyDescriptor(cr, 'status');
  if (!Object.isExtensible(cr) || (own && !own.configurable)) {
    inputsRead.status = true; // a frozen CR (an operator's own parseCustomResource): cannot tell, so it counts as read
    return;
  }
  Object.defineProperty(cr, 'status', {
    configurable: true,
    enumerable: status !== undefined,
    get: () => {
      inputsRead.status = true;
      return status;
    },
  });
}

function dedupe(objects: KubeResource[]): KubeResource[] {
  return objects.filter((o, i) => i === 0 || !ObjectRef.of(o).equals(ObjectRef.of(objects[i - 1])));
}

/** Orders manifests by apiVersion, kind, namespace, name. */
export function compareManifests(a: Manifest, b: Manifest): number {
  return (
    cmp(a.apiVersion, b.apiVersion) ||
    cmp(a.kind, b.kind) ||
    cmp(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    cmp(a.metadata.name, b.metadata.name)
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Keys a child's top level starts with, in this order (as kubectl prints them); the rest follow sorted. */
const TOP_KEYS = ['apiVersion', 'kind', 'metadata'];

/**
 * `value` with every object's keys sorted (a child's top level: {@link TOP_KEYS} first), arrays in their
 * order, and undefined values left out. A plain object or array already so (cdk8s' `toJson` sorts what it synthesizes) is
 * returned as it is, not copied: only what stamping added out of order is rebuilt.
 */
function sortKeys(value: unknown, top = true): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const sorted = sortKeys(value[i], false);
      if (sorted !== value[i]) (out ??= [...value])[i] = sorted;
    }
    return out ?? (Object.getPrototypeOf(value) === Array.prototype ? value : [...value]);
  }
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const sorted = sortedKeys(record);
  const ordered = top ? [...TOP_KEYS.filter((k) => k in record), ...sorted.filter((k) => !TOP_KEYS.includes(k))] : sorted;
  let same = Object.getPrototypeOf(record) === Object.prototype;
  const values: unknown[] = [];
  for (let i = 0; i < ordered.length; i++) {
    const key = ordered[i]!;
    const original = record[key];
    const next = original === undefined ? undefined : sortKeys(original, false);
    if (key !== keys[i] || next !== original) same = false;
    values.push(next);
  }
  if (same) return record;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < ordered.length; i++) if (values[i] !== undefined) out[ordered[i]!] = values[i];
  return out;
}

function messageOf(error: unknown): string {
  // A ZodError's message is its issues as raw JSON: say them as `path: reason` instead.
  const issues = (error as { issues?: unknown } | undefined)?.issues;
  if (error instanceof Error && Array.isArray(issues) && issues.length > 0 && issues.every((i) => typeof i?.message === 'string')) {
    return (issues as { path?: PropertyKey[]; message: string }[]).map((i) => (i.path?.length ? `${formatFieldPath('', i.path)}: ${i.message}` : i.message)).join('; ');
  }
  return thrownText(error);
}
