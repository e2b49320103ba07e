/**
 * What the runtime's reconcile would do to one CR's children, found without writing: the one per-CR
 * step of `cdk8s-operator diff` (lib/cli/diff-command.ts) and `diff --all` (upgrade-plan.ts). Each CR,
 * as the reconciler does it (lib/runtime/reconcile/reconciler.ts):
 * 1. Its children in the cluster: one LIST per child kind, selected by `app.kubernetes.io/managed-by=<operator>`
 *    (the label the runtime's child informers select on), in the CR's namespace (all namespaces for a
 *    cluster-scoped CR or kind). Those owned by the CR are render's `context.observed`.
 * 2. Its related objects (the operator's `related` declarations, resolved by `resolveReferences`): a GET
 *    per named object, a LIST per label selector; with a declared `scope`, a LIST the API server filters
 *    by it too (what the runtime's cache holds). A missing required one stops this CR, as the runtime
 *    waits for it (`ReferenceNotFound`).
 * 3. `renderCustomResource` (the runtime's render), then the desired-hash annotation (`withDesiredHash`).
 * 4. Per child: the listed object of its name (what the runtime's cache holds), else a GET of the name
 *    (an object without our label, as the runtime finds it when its create answers 409); the adoption
 *    rules (`ChildAdoption`); then the reconciler's own
 *    decision, {@link decideApply} (hash, then containment): no apply → `unchanged`, without a request more;
 *    an apply → `applyObject` with `dryRun=All`, the operator's name as field manager and `force`, and the
 *    unified diff of the live object and the server's answer (an empty diff: `unchanged`).
 * 5. Prune: the listed children owned by the CR and managed by the operator that are no longer rendered
 *    (`selectPrunable`), and the inventory entries (`status.children`) of kinds the operator no longer
 *    watches that are still there and ours (`inventoryObjectToPrune`: a GET each).
 *
 * Every request goes through the client it is given: the commands give the dry-run-only client.
 */
import type { CustomResource } from '../../operator/custom-resource.js';
import { CustomResourceValidationError, RenderError } from '../../operator/errors.js';
import { kindKey, type ResolvedKind } from '../../operator/kinds.js';
import { MANAGED_BY_LABEL, toLabelValue } from '../../operator/labels.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { Operator } from '../../operator/operator.js';
import { resolveReferences, resolveRelatedKinds } from '../../operator/related.js';
import { relatedLookupOf, renderCustomResource, type RenderOutput } from '../../operator/render-children.js';
import type { KubeResource } from '../../operator/render-context.js';
import { STAND_IN_UID } from '../../operator/stand-in-uid.js';
import { type KubeClient, type KubeObject, isApiError, serverMessageOf } from '../../runtime/client/kube-client.js';
import { ResourceClient } from '../../runtime/client/resource-client.js';
import { withTypeMeta } from '../../runtime/client/type-meta.js';
import { ChildAdoption } from '../../runtime/reconcile/adoption.js';
import { applyObject } from '../../runtime/reconcile/apply.js';
import { decideApply, withDesiredHash } from '../../runtime/reconcile/child-diff.js';
import { inventoryObjectToPrune, readInventory } from '../../runtime/reconcile/inventory.js';
import { isOwnedBy } from '../../runtime/reconcile/ownership.js';
import { selectPrunable } from '../../runtime/reconcile/prune.js';
import { unifiedObjectDiff } from '../object-diff.js';

/** One custom resource to plan: the object to render (hub version), and the live one when it exists. */
export interface PlanTarget {
  readonly operator: Operator;
  /** The CR as it is rendered (hub version, namespace and uid set). */
  readonly cr: CustomResource;
  /** The CR in the cluster; undefined for a CR of a file that does not exist yet. */
  readonly live?: KubeObject;
}

/**
 * What the reconcile would do to one child: `create` (absent), `update` (an apply that changes it),
 * `adopt` (an update of an object the CR did not make, allowed by the operator's `adoption`), `prune`
 * (deleted), `unchanged` (no apply, or one the server answers with the live object).
 */
export type ChildAction = 'create' | 'update' | 'adopt' | 'prune' | 'unchanged';

/** One child's line of the plan. */
export interface ChildPlan {
  readonly apiVersion: string;
  readonly kind: string;
  /** @default cluster-scoped */
  readonly namespace?: string;
  readonly name: string;
  readonly action: ChildAction;
  /** The unified diff (`diff -u`, live → after), for every action but `unchanged`. */
  readonly diff?: string;
}

/** What one CR's plan found. */
export interface CustomResourcePlan {
  /** `Kind ns/name` of the CR. */
  readonly cr: string;
  /** Its children: the rendered ones in render order, then the pruned ones. */
  readonly children: readonly ChildPlan[];
  /** One message per refusal or failure (`<Kind> <ns>/<name>: <server message>`, or the CR's own). */
  readonly errors: readonly string[];
  /** What the runtime would do instead of applying (a CR being deleted is finalized). */
  readonly notes: readonly string[];
}

/**
 * The children of the operators' kinds in the cluster, listed once per operator, kind and namespace
 * (label `app.kubernetes.io/managed-by=<operator>`, the runtime's child informers' selector). Shared by
 * the CRs of one plan; safe for concurrent callers (one LIST per key, however many ask).
 */
export class ChildLists {
  private readonly lists = new Map<string, Promise<KubeObject[]>>();

  constructor(private readonly client: KubeClient) {}

  /** @throws what the LIST throws */
  of(operator: Operator, kind: ResolvedKind, namespace: string | undefined): Promise<KubeObject[]> {
    const scope = kind.namespaced ? namespace : undefined;
    const key = `${operator.operatorName}|${kindKey(kind)}|${scope ?? ''}`;
    let list = this.lists.get(key);
    if (list === undefined) {
      const labelSelector = `${MANAGED_BY_LABEL}=${toLabelValue(operator.operatorName)}`;
      list = new ResourceClient(this.client).list(kind, scope, { labelSelector }).then(({ items }) => items.map((item) => withTypeMeta(item, kind.apiVersion, kind.kind)));
      this.lists.set(key, list);
    }
    return list;
  }
}

/**
 * Plans one CR: renders it as the runtime would, decides and dry-run applies every child and finds what
 * would be pruned (see the module doc). Never throws: failures are in `errors`.
 */
export async function planCustomResource(client: KubeClient, target: PlanTarget, children: ChildLists, pendingNamespaces: ReadonlySet<string> = new Set()): Promise<CustomResourcePlan> {
  const { operator, cr } = target;
  const who = ObjectRef.of(cr).toString();
  const planned: ChildPlan[] = [];
  const errors: string[] = [];
  const notes: string[] = [];
  const result = (): CustomResourcePlan => ({ cr: who, children: planned, errors, notes });
  if (target.live?.metadata?.deletionTimestamp) {
    notes.push('being deleted: the runtime finalizes it and applies nothing (its children go with it)');
    return result();
  }
  const uid = cr.metadata.uid ?? STAND_IN_UID;
  const fieldManager = operator.operatorName;
  const childKinds = operator.childKinds();
  const crNamespace = operator.crd.namespaced ? cr.metadata.namespace : undefined;
  const line = (object: KubeObject, action: ChildAction, diff?: string): ChildPlan => {
    const ref = ObjectRef.of(object);
    return { apiVersion: String(object.apiVersion), kind: ref.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name, action, ...(diff ? { diff } : {}) };
  };

  // 1. The children in the cluster (for context.observed and for prune).
  const listed = new Map<ResolvedKind, KubeObject[]>();
  try {
    for (const kind of childKinds) listed.set(kind, await children.of(operator, kind, crNamespace));
  } catch (error) {
    errors.push(`cannot list its children: ${serverMessageOf(error)}`);
    return result();
  }
  const byKey = new Map([...listed.values()].flat().map((child) => [ObjectRef.of(child).key(), child]));
  const observed = [...listed.values()].flat()
    .filter((child) => target.live !== undefined && isOwnedBy(child, uid))
    .map((child) => withOwnManagedFields(child, fieldManager) as unknown as KubeResource);

  // 2. The related objects it references; 3. render.
  let output: RenderOutput;
  try {
    const related = await fetchRelated(client, operator, cr);
    output = renderCustomResource(operator, cr, { observed, related: relatedLookupOf(related) });
  } catch (error) {
    if (error instanceof RenderError && error.reason === 'ReferenceNotFound') {
      errors.push(`${firstLine(error)} (the runtime waits for it: nothing is applied or pruned until it exists)`);
    } else {
      errors.push(error instanceof CustomResourceValidationError || error instanceof RenderError ? firstLine(error) : `cannot render: ${serverMessageOf(error)}`);
    }
    return result();
  }
  const desired = output.children.map(withDesiredHash);

  // 4. Each child: adoption rules, the reconciler's decision, then a dry-run server-side apply.
  const adoption = new ChildAdoption({ client, fieldManager, policy: operator.adoption });
  for (const child of desired) {
    const ref = ObjectRef.of(child);
    const kind = childKinds.find((k) => kindKey(k) === kindKey(ref));
    if (kind === undefined) {
      errors.push(`${ref}: kind ${child.kind} (${child.apiVersion}) is not among the operator's child kinds; declare it in \`owns\``);
      continue;
    }
    let live: KubeObject | undefined;
    let adopted = false;
    live = byKey.get(ref.key());
    if (live === undefined) {
      try {
        live = await new ResourceClient(client).get(kind, ref.namespace, ref.name);
      } catch (error) {
        if (!isApiError(error, 404)) {
          errors.push(`${ref}: ${serverMessageOf(error)}`);
          continue;
        }
      }
    }
    try {
      if (live !== undefined) {
        live = { ...live, apiVersion: live.apiVersion ?? child.apiVersion, kind: live.kind ?? child.kind };
        // The runtime's cache holds the objects with our label; any other object under the name goes through adoption.
        if (live.metadata?.labels?.[MANAGED_BY_LABEL] === toLabelValue(fieldManager)) adoption.refuseOtherController(live, cr as unknown as KubeObject);
        else adopted = adoption.decide(kind, live, cr as unknown as KubeObject) !== undefined;
      }
      if (decideApply(child, live).reason === undefined) {
        planned.push(line(child, 'unchanged'));
        continue;
      }
      const after = await applyObject(client, kind, child, { fieldManager, dryRun: true });
      const diff = unifiedObjectDiff({ name: ref.toString(), live, after });
      planned.push(line(child, diff === '' ? 'unchanged' : live === undefined ? 'create' : adopted ? 'adopt' : 'update', diff));
    } catch (error) {
      // applyObject names the object and keeps the API error as the cause.
      if ((isApiError(error, 404) || isApiError((error as Error).cause, 404)) && ref.namespace !== undefined && pendingNamespaces.has(ref.namespace)) {
        // Its namespace comes with the `-f` files: what the render says, unchecked by the server (kubernetes/kubectl#1331).
        planned.push(line(child, 'create', unifiedObjectDiff({ name: ref.toString(), live: undefined, after: child })));
        notes.push(`${ref}: not checked by the API server: its namespace ${ref.namespace} is created by the files`);
        continue;
      }
      errors.push(`${ref}: ${serverMessageOf(error)}`);
    }
  }

  // 5. Prune: only a CR in the cluster has children to prune.
  if (target.live === undefined) return result();
  for (const kind of childKinds) {
    for (const obj of selectPrunable(listed.get(kind) ?? [], desired, uid, fieldManager)) {
      planned.push(line(obj, 'prune', unifiedObjectDiff({ name: ObjectRef.of(obj).toString(), live: obj, after: undefined })));
    }
  }
  const wanted = new Set(desired.map((child) => ObjectRef.of(child).key()));
  const watched = new Set(childKinds.map((kind) => kindKey(kind)));
  for (const entry of readInventory(target.live)) {
    const ref = ObjectRef.fromEntry(entry);
    if (wanted.has(ref.key()) || watched.has(kindKey(ref))) continue;
    try {
      const found = await inventoryObjectToPrune(entry, { client, ownerUid: uid, fieldManager, retiredKinds: operator.retiredKinds });
      if (found === undefined) continue;
      const object = { ...found.object, apiVersion: found.object.apiVersion ?? entry.apiVersion, kind: found.object.kind ?? entry.kind };
      planned.push(line(object, 'prune', unifiedObjectDiff({ name: ref.toString(), live: object, after: undefined })));
    } catch (error) {
      errors.push(`${ref}: ${serverMessageOf(error)}`);
    }
  }
  return result();
}

/**
 * The related objects `cr` references (the operator's `related` declarations): a GET per name (a 404
 * is no object), a LIST per label selector. Nothing when the references cannot be resolved: render then
 * says why. A declaration with a `scope` sees what the runtime's cache would hold: nothing in a
 * namespace outside `scope.namespaces`, and a LIST with its selectors added (a name as
 * `metadata.name=<name>` in the field selector), so the API server filters as it does for the informer.
 * @throws what a read throws, but a 404
 */
async function fetchRelated(client: KubeClient, operator: Operator, cr: CustomResource): Promise<KubeResource[]> {
  const declarations = operator.related ?? {};
  if (Object.keys(declarations).length === 0) return [];
  let references;
  try {
    references = resolveReferences(declarations, operator.relatedKinds ?? resolveRelatedKinds(declarations), operator.parseCustomResource(cr));
  } catch {
    return [];
  }
  const objects: KubeResource[] = [];
  for (const reference of references) {
    const withKind = (item: KubeObject) => ({ ...withTypeMeta(item, reference.kind.apiVersion, reference.kind.kind) }) as KubeResource;
    // A declared cache scope hides what the runtime would not cache: the server applies it here too.
    const scope = declarations[reference.related]?.scope;
    if (scope?.namespaces && reference.namespace !== undefined && !scope.namespaces.includes(reference.namespace)) continue;
    if (reference.name !== undefined && !scope) {
      try {
        objects.push(withKind(await new ResourceClient(client).get(reference.kind, reference.namespace, reference.name)));
      } catch (error) {
        if (!isApiError(error, 404)) throw error;
      }
      continue;
    }
    const labels = [Object.entries(reference.selector ?? {}).map(([key, value]) => `${key}=${value}`).join(','), scope?.labelSelector ?? ''];
    const fields = [reference.name !== undefined ? `metadata.name=${reference.name}` : '', scope?.fieldSelector ?? ''];
    const joined = (parts: string[]) => parts.filter((part) => part.trim() !== '').join(',') || undefined;
    objects.push(...(await new ResourceClient(client).list(reference.kind, reference.namespace, { labelSelector: joined(labels), fieldSelector: joined(fields) })).items.map(withKind));
  }
  return objects;
}

/** `obj` with only `fieldManager`'s managedFields entries, as the runtime's child caches keep it. */
function withOwnManagedFields(obj: KubeObject, fieldManager: string): KubeObject {
  const managedFields = (obj.metadata?.managedFields ?? []).filter((entry) => (entry as { manager?: string }).manager === fieldManager);
  return { ...obj, metadata: { ...obj.metadata, managedFields } };
}

/** The first line of an error's message. */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0];
}
