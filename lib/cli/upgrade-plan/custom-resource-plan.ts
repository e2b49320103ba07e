/**
 * What the runtime's reconcile would do to one CR's children, found without writing: the one per-CR
 * step of `cdk8s-operator diff` (lib/cli/diff-command.ts) and `diff --all` (upgrade-plan.ts). It runs
 * the runtime's own {@link Reconciler} on the CR, so the steps, their order and every decision are
 * `run`'s; what differs is where it reads and how it writes:
 * - reads: instead of informer caches, its children as listed (one LIST per child kind, selected by
 *   `app.kubernetes.io/managed-by=<operator>` as the runtime's child informers are, in the CR's
 *   namespace; all namespaces for a cluster-scoped CR or kind: {@link ChildLists}), kept with only the
 *   operator's managedFields entries as the caches keep them; and its related objects (the operator's
 *   `related` declarations, resolved by `resolveReferences`: a GET per named object, a LIST per label
 *   selector; with a declared `scope`, a LIST the API server filters by it too, as the runtime's cache
 *   holds);
 * - writes: every one sent with `dryRun=All` ({@link DryRunWrites}): the API server validates and
 *   answers, persists nothing. The reconciler tells each child's decision (`onChildDecision`,
 *   lib/runtime/reconcile/child-decision.ts): created, updated or adopted (with the server's answer,
 *   shown as a unified diff from the live object), unchanged, pruned, refused. A child waiting for a
 *   `dependsOn` dependency is a note (this reconcile leaves it alone). Its status write is a dry run too
 *   and not reported, but for a refusal (a note). Its finalizer is not added (not a child change).
 * - A CR not in the cluster (from a `-f` file) owns nothing: prune is skipped (the reconciler's "caches
 *   not synced" path).
 *
 * Every request goes through the client it is given: the commands give the dry-run-only client.
 */
import type { CustomResource } from '../../operator/custom-resource.js';
import { asCustomResource } from '../../operator/object-shape.js';
import { CustomResourceValidationError, RenderError } from '../../operator/errors.js';
import { kindKey, type ResolvedKind } from '../../operator/kinds.js';
import { MANAGED_BY_LABEL, toLabelValue } from '../../operator/render/labels.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { Operator } from '../../operator/operator.js';
import { resolveReferences, resolveRelatedKinds } from '../../operator/render/related.js';
import { relatedLookupOf, renderCustomResource } from '../../operator/render/render-children.js';
import { statusOfCustomResource } from '../../operator/render/custom-status.js';
import type { KubeResource } from '../../operator/render/render-context.js';
import { STAND_IN_UID } from '../../operator/render/stand-in-uid.js';
import { type KubeClient, type KubeObject, isApiError, serverMessageOf } from '../../runtime/client/kube-client.js';
import { ResourceClient } from '../../runtime/client/resource-client.js';
import { withTypeMeta } from '../../runtime/client/type-meta.js';
import { ReconcileError } from '../../runtime/errors.js';
import type { CacheReader, ChildCache } from '../../runtime/reconcile/child-cache.js';
import type { ChildDecision } from '../../runtime/reconcile/child-decision.js';
import { isOwnedBy } from '../../runtime/reconcile/ownership.js';
import { Reconciler } from '../../runtime/reconcile/reconciler.js';
import { DryRunWrites } from '../dry-run-writes.js';
import { unifiedObjectDiff } from '../object-diff.js';
import { firstLineOf } from '../../error-text.js';

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
 * Plans one CR: runs the runtime's reconciler on it with dry-run writes (see the module doc). Never
 * throws: failures are in `errors`.
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
  const fieldManager = operator.operatorName;
  const crNamespace = operator.crd.namespaced ? cr.metadata.namespace : undefined;
  const caches: ChildCache[] = [];
  let related: KubeResource[];
  try {
    for (const kind of operator.childKinds()) caches.push({ kind, cache: new ListedCache((await children.of(operator, kind, crNamespace)).map((child) => withOwnManagedFields(child, fieldManager))) });
  } catch (error) {
    errors.push(`cannot list its children: ${serverMessageOf(error)}`);
    return result();
  }
  try {
    related = await fetchRelated(client, operator, cr);
  } catch (error) {
    errors.push(`cannot render: ${serverMessageOf(error)}`);
    return result();
  }

  let order: string[] = [];
  let renderFailure: unknown;
  const decisions: ChildDecision[] = [];
  const object: KubeObject = { ...cr, metadata: { ...cr.metadata, uid: cr.metadata.uid ?? STAND_IN_UID } };
  const reconciler = new Reconciler({
    operator: { operatorName: fieldManager, crd: operator.crd, retiredKinds: operator.retiredKinds, adoption: operator.adoption, renderSkip: false },
    render: (rendered, inputs) => {
      try {
        const output = renderCustomResource(operator, asCustomResource(rendered), inputs);
        order = output.children.map((child) => ObjectRef.of(child).key());
        return output;
      } catch (error) {
        renderFailure = error;
        throw error;
      }
    },
    // The operator's status() hook, as `run` calls it: its fields go into the (dry-run) status write.
    status: (reconciled, inputs) => statusOfCustomResource(operator, asCustomResource(reconciled), inputs),
    related: relatedLookupOf(related),
    client: new DryRunWrites(client),
    crs: new ListedCache([object]),
    children: caches,
    cachesSynced: () => target.live !== undefined,
    onChildDecision: (_cr, decision) => decisions.push(decision),
  });
  try {
    await reconciler.reconcile(ObjectRef.cacheKeyOf(object));
  } catch (error) {
    if (renderFailure === undefined && !decisions.some((d) => d.action === 'failed')) {
      if (error instanceof ReconcileError && error.step === 'status' && error.reason !== 'StatusWriteFailed') errors.push(`status() failed: ${serverMessageOf(error)}`);
      else if (error instanceof ReconcileError && error.step === 'status') notes.push(`its status write (a dry run) was refused: ${serverMessageOf(error)}`);
      else errors.push(`cannot reconcile: ${serverMessageOf(error)}`);
    }
  }
  if (renderFailure !== undefined) {
    if (renderFailure instanceof RenderError && renderFailure.reason === 'ReferenceNotFound') {
      errors.push(`${firstLineOf(renderFailure)} (the runtime waits for it: nothing is applied or pruned until it exists)`);
    } else {
      errors.push(renderFailure instanceof CustomResourceValidationError || renderFailure instanceof RenderError ? firstLineOf(renderFailure) : `cannot render: ${serverMessageOf(renderFailure)}`);
    }
    return result();
  }

  const rank = (decision: ChildDecision) => (decision.action === 'prune' ? order.length : order.indexOf(ObjectRef.of(decision.object).key()));
  for (const decision of [...decisions].sort((a, b) => rank(a) - rank(b))) {
    const ref = ObjectRef.of(decision.object);
    const diff = (live: KubeObject | undefined, after: KubeObject | undefined) => unifiedObjectDiff({ name: ref.toString(), live, after });
    switch (decision.action) {
      case 'unchanged':
        planned.push(line(decision.object, 'unchanged'));
        break;
      case 'waiting':
        notes.push(`${ref}: waits for ${(decision.waitingFor ?? []).join(', ')} (dependsOn): the runtime applies it once they are ready`);
        break;
      case 'prune':
        planned.push(line(decision.object, 'prune', diff(decision.object, undefined)));
        break;
      case 'create':
      case 'update': {
        const text = diff(decision.live, decision.after);
        planned.push(line(decision.object, text === '' ? 'unchanged' : decision.live === undefined ? 'create' : decision.adopted ? 'adopt' : 'update', text));
        break;
      }
      case 'failed':
        if (isApiError(decision.error?.cause ?? decision.error, 404) && ref.namespace !== undefined && pendingNamespaces.has(ref.namespace)) {
          // Its namespace comes with the `-f` files: what the render says, unchecked by the server (kubernetes/kubectl#1331).
          planned.push(line(decision.object, 'create', diff(undefined, decision.object)));
          notes.push(`${ref}: not checked by the API server: its namespace ${ref.namespace} is created by the files`);
        } else {
          errors.push(`${ref}: ${serverMessageOf(decision.error)}`);
        }
    }
  }
  return result();
}

/** One child's line of the plan. */
function line(object: KubeObject, action: ChildAction, diff?: string): ChildPlan {
  const ref = ObjectRef.of(object);
  return { apiVersion: String(object.apiVersion), kind: ref.kind, ...(ref.namespace ? { namespace: ref.namespace } : {}), name: ref.name, action, ...(diff ? { diff } : {}) };
}

/** Listed objects as the reconciler reads its caches: by name, and by owner uid (ownerReference or owner-uid label). */
class ListedCache implements CacheReader {
  private readonly byKey: ReadonlyMap<string, KubeObject>;

  constructor(private readonly objects: readonly KubeObject[]) {
    this.byKey = new Map(objects.map((obj) => [ObjectRef.cacheKeyOf(obj), obj]));
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.byKey.get(namespace ? `${namespace}/${name}` : name);
  }

  byOwnerUid(uid: string): KubeObject[] {
    return this.objects.filter((obj) => isOwnedBy(obj, uid));
  }
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
