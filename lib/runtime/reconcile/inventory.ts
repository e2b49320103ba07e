/**
 * The inventory: what a CR's reconciles applied, kept in the CR's `status.children` (apiVersion, kind,
 * namespace, name), and pruning from it.
 *
 * Why: the cache-based prune ({@link selectPrunable}) only sees kinds the running version watches. When a
 * new version of an operator stops rendering a kind altogether, it neither watches that kind nor (by
 * derived RBAC) may list it, so the objects an earlier version applied would stay until the CR is
 * deleted. The inventory remembers them across versions; {@link pruneInventoryEntry} removes one by a
 * direct GET and DELETE, which needs only `get` and `delete` on the kind (the operator's `retiredKinds`).
 *
 * Guarantees of {@link pruneInventoryEntry}:
 * - deletes only an object owned by the CR (owner-uid label or ownerReference) AND carrying our field
 *   manager's managedFields entry: the same two tests as the cache-based prune;
 * - the DELETE carries a UID precondition, so an object re-created under the same name between the GET
 *   and the DELETE is never deleted (the server answers 409, which retries the reconcile);
 * - an entry whose object is gone, being deleted, or not ours is only dropped from the inventory.
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-uris (GET, DELETE)
 * @see https://kubernetes.io/docs/concepts/architecture/garbage-collection/#background-deletion
 */
import { lookupBuiltInKind, parseApiVersion, type ResolvedKind } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { deleteObject, describeWriteError } from './apply.js';
import { ConflictError, ReconcileError, TerminalError } from '../errors.js';
import { isManagedBy, isOwnedBy } from './ownership.js';
import { ResourceClient } from '../client/resource-client.js';
import type { ChildStatus } from './status-writer.js';

/**
 * The inventory entries of `cr`: its `status.children`, keeping only well-formed entries (string
 * apiVersion, kind and name). `ready` defaults to false. Never throws.
 *
 * The stored shape is `{ apiVersion, kind, name, namespace?, ready, waitingFor? }` (`ChildStatus`), as
 * every earlier version of the operator wrote it; it is read and written as is (an entry's identity is
 * `ObjectRef.fromEntry(entry)`, computed, never stored).
 */
export function readInventory(cr: KubeObject): ChildStatus[] {
  const children = (cr.status as { children?: unknown } | undefined)?.children;
  if (!Array.isArray(children)) return [];
  const out: ChildStatus[] = [];
  for (const entry of children as Record<string, unknown>[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { apiVersion, kind, name, namespace, ready } = entry;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string' || !apiVersion || !kind || !name) continue;
    out.push({ apiVersion, kind, name, ...(typeof namespace === 'string' && namespace ? { namespace } : {}), ready: ready === true });
  }
  return out;
}

/** The inventory entry of an object, not ready (for keeping a child whose prune failed in the inventory). */
export function inventoryEntryOf(obj: KubeObject): ChildStatus {
  const namespace = obj.metadata?.namespace;
  return { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '', name: obj.metadata?.name ?? '', ...(namespace ? { namespace } : {}), ready: false };
}

/**
 * The inventory a reconcile writes: the desired children's entries (`children`), every child still to
 * prune (`retained`: not pruned yet, or its prune failed), and the previous entry of a desired child
 * left out of `children` (a kind the operator has no cache of), so that nothing once applied is
 * forgotten before it is pruned.
 *
 * @param desired the desired children (render's), compared with entries by {@link ObjectRef.key}
 */
export function nextInventory(children: readonly ChildStatus[], retained: readonly ChildStatus[], previous: readonly ChildStatus[], desired: readonly KubeObject[]): ChildStatus[] {
  const wanted = new Set(desired.map((obj) => ObjectRef.of(obj).key()));
  const listed = new Set([...children, ...retained].map((entry) => ObjectRef.fromEntry(entry).key()));
  const kept = previous.filter((entry) => {
    const key = ObjectRef.fromEntry(entry).key();
    return wanted.has(key) && !listed.has(key);
  });
  return [...children, ...retained, ...kept];
}

/** What {@link pruneInventoryEntry} did. */
export type InventoryPruneResult =
  /** We deleted it. */
  | 'pruned'
  /** Nothing to delete: the object is gone, already being deleted, or no longer ours (owner or field manager). */
  | 'dropped';

export interface InventoryPruneOptions {
  readonly client: KubeClient;
  /** UID of the CR whose inventory lists the entry. */
  readonly ownerUid: string;
  /** The operator's field manager. */
  readonly fieldManager: string;
  /** The operator's `retiredKinds`: their REST resource wins over the recorded apiVersion. @default none */
  readonly retiredKinds?: readonly ResolvedKind[];
  /** Called with the object (as the GET read it, apiVersion and kind set) once its DELETE is answered. @default none */
  readonly onDeleted?: (object: KubeObject) => void;
}

/**
 * Prunes the object one inventory entry names, for a kind the operator no longer watches: GET it, check
 * it is ours ({@link inventoryObjectToPrune}), DELETE it with a UID precondition (background propagation).
 *
 * Errors: those of {@link inventoryObjectToPrune}, and for the DELETE:
 * - 403 → {@link ReconcileError} `Forbidden` naming the missing verb and, when the kind is not in
 *   `retiredKinds`, the `retiredKinds` entry to add;
 * - 409 (the object was re-created in between) → {@link ConflictError};
 * - any other API error → ReconcileError `PruneFailed`.
 */
export async function pruneInventoryEntry(entry: ChildStatus, options: InventoryPruneOptions): Promise<InventoryPruneResult> {
  const found = await inventoryObjectToPrune(entry, options);
  if (!found) return 'dropped';
  try {
    await deleteObject(options.client, found.kind, found.object);
  } catch (err) {
    throw withHint(err as Error, found.hint);
  }
  options.onDeleted?.({ ...found.object, apiVersion: found.object.apiVersion ?? entry.apiVersion, kind: found.object.kind ?? entry.kind });
  return 'pruned';
}

/** The object an inventory entry names, when it is to be pruned (see {@link inventoryObjectToPrune}). */
export interface InventoryObjectToPrune {
  /** The REST resource it was read from (and is deleted through). */
  readonly kind: ResolvedKind;
  /** The object as the GET returned it. */
  readonly object: KubeObject;
  /** What to add to a `Forbidden` message when the kind is not in `retiredKinds` ('' when it is). */
  readonly hint: string;
}

/**
 * The read half of {@link pruneInventoryEntry}: GETs the object one inventory entry names and says
 * whether it is to be pruned (owned by the CR, carrying our field manager, not being deleted). Only
 * GETs: `cdk8s-operator diff` lists what the runtime would prune with it.
 *
 * The REST resource comes from the matching `retiredKinds` entry (same group and kind), else from the
 * built-in kind table with the recorded apiVersion.
 *
 * @returns the object, or undefined when there is nothing to delete (gone, being deleted, not ours, or a
 *   namespaced kind recorded without namespace)
 * @throws TerminalError for a kind neither in `retiredKinds` nor in the built-in table, naming the
 *   `retiredKinds` entry (with plural and namespaced) to add
 * @throws ReconcileError `Forbidden` (403 on the GET, with the `retiredKinds` hint) or `PruneFailed`
 *   (another API error); ConflictError for a 409
 */
export async function inventoryObjectToPrune(entry: ChildStatus, options: InventoryPruneOptions): Promise<InventoryObjectToPrune | undefined> {
  const { group } = parseApiVersion(entry.apiVersion);
  const declared = (options.retiredKinds ?? []).find((k) => k.group === group && k.kind === entry.kind);
  const what = ObjectRef.fromEntry(entry).toString();
  const suggestion = `{ apiVersion: '${entry.apiVersion}', kind: '${entry.kind}' }`;
  const kind = declared ?? lookupBuiltInKind(entry.apiVersion, entry.kind);
  if (!kind) {
    throw new TerminalError(
      `prune ${what}: status.children lists it, but kind ${entry.kind} (${entry.apiVersion}) is neither rendered, owned nor in retiredKinds, ` +
        `and it is not a built-in kind: add { apiVersion: '${entry.apiVersion}', kind: '${entry.kind}', plural: …, namespaced: … } to the operator's retiredKinds`,
    );
  }
  const hint = declared
    ? ''
    : ` — ${entry.kind} (${entry.apiVersion}) was applied by an earlier version of this operator and is no longer rendered: ` +
      `add ${suggestion} to the operator's retiredKinds so its derived RBAC keeps get and delete on ${kind.plural}, then re-synthesize and apply the RBAC`;
  const namespace = kind.namespaced ? entry.namespace : undefined;
  if (kind.namespaced && !namespace) return undefined; // a namespaced kind recorded without namespace names nothing
  let obj: KubeObject;
  try {
    obj = await new ResourceClient(options.client).get(kind, namespace, entry.name);
  } catch (err) {
    if (isApiError(err, 404)) return undefined;
    throw withHint(describeWriteError(err, 'get', kind, namespace, what), hint);
  }
  if (obj.metadata?.deletionTimestamp) return undefined;
  if (!isOwnedBy(obj, options.ownerUid) || !isManagedBy(obj, options.fieldManager)) return undefined;
  return { kind, object: obj, hint };
}

function withHint(err: Error, hint: string): Error {
  if (!hint || !(err instanceof ReconcileError) || err.reason !== 'Forbidden') {
    if (err instanceof ReconcileError && err.reason === 'ApplyFailed') return new ReconcileError('PruneFailed', err.message, { cause: err.cause });
    return err instanceof ConflictError || err instanceof ReconcileError ? err : new ReconcileError('PruneFailed', err.message, { cause: err });
  }
  return new ReconcileError('Forbidden', `${err.message}${hint}`, { cause: err.cause });
}
