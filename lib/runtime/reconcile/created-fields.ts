/**
 * The field ownership a create leaves behind, and its one-time conversion to server-side apply.
 *
 * The reconciler creates a missing child with a POST (adoption.ts): the only write the API server refuses
 * when the name is already taken (409 AlreadyExists), so an object that is not ours is never taken over
 * silently, and it costs one request where a lookup GET plus an apply cost two. The server records the
 * created fields (with their defaults) under our field manager with operation `Update`, not `Apply`.
 * Server-side apply keeps a field while any managedFields entry owns it, and entries are keyed by
 * manager *and* operation, so an apply that stops setting a field would leave it in place while that
 * `Update` entry owns it. Before the first apply that sends a changed render (the only apply that can
 * stop setting a field), the entry is therefore handed to our `Apply` entry, as kubectl's client-side to
 * server-side upgrade does (client-go `util/csaupgrade`), for our own manager only:
 * - from the cache, with no read: a JSON patch addressed by the entry's index in the stored list
 *   (remembered by the informer, cache/managed-fields-position.ts) and guarded by `test` operations on
 *   that entry's manager and operation;
 * - else (the index is unknown, the entries are not as expected, or the guarded patch was refused): one
 *   GET and a patch of the whole list guarded by the resourceVersion ({@link takeOverManagedFields}).
 *
 * Drift repairs and applies of an unchanged render need no conversion: they set every field the create
 * set. Requests: none on the create path, one (two on the fallback) on a created child's first changed
 * render, none after.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply
 */
import { managedFieldsPosition } from '../cache/managed-fields-position.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { describeWriteError } from './apply.js';
import { patchFieldsTakeOver } from './fields-take-over.js';
import { type ManagedFieldsEntry, unionFieldSets } from './managed-fields.js';

/** One operation of a JSON patch (RFC 6902). */
type JsonPatchOperation = { readonly op: 'test' | 'replace'; readonly path: string; readonly value: unknown } | { readonly op: 'remove'; readonly path: string };

const isMain = (entry: ManagedFieldsEntry): boolean => (entry.subresource ?? '') === '';

/** True when `obj` (as cached or as answered) has a main-resource `Update` entry of `fieldManager`: a create's (see the module docs). */
export function hasCreatedFields(obj: KubeObject | undefined, fieldManager: string): boolean {
  return ((obj?.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).some((entry) => entry.manager === fieldManager && entry.operation === 'Update' && isMain(entry));
}

/**
 * The guarded JSON patch that hands `cached`'s one `Update` entry of `fieldManager` to its `Apply`
 * entry: the operation replaced by `Apply` when there is no `Apply` entry; else its fields merged into
 * the `Apply` entry (same apiVersion) and the `Update` entry removed. Undefined when the entries' indices
 * in the stored list are unknown or the entries are not that simple case.
 */
export function createdFieldsPatch(cached: KubeObject, fieldManager: string): JsonPatchOperation[] | undefined {
  const ours = ((cached.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).filter((entry) => entry.manager === fieldManager && isMain(entry));
  const updates = ours.filter((entry) => entry.operation === 'Update');
  const applies = ours.filter((entry) => entry.operation === 'Apply');
  if (updates.length !== 1 || applies.length > 1) return undefined;
  const update = updates[0] as ManagedFieldsEntry;
  const at = managedFieldsPosition(update);
  if (at === undefined) return undefined;
  const guard = (index: number, operation: string): JsonPatchOperation[] => [
    { op: 'test', path: `/metadata/managedFields/${index}/manager`, value: fieldManager },
    { op: 'test', path: `/metadata/managedFields/${index}/operation`, value: operation },
  ];
  const apply = applies[0];
  if (!apply) return [...guard(at, 'Update'), { op: 'replace', path: `/metadata/managedFields/${at}/operation`, value: 'Apply' }];
  const applyAt = managedFieldsPosition(apply);
  if (applyAt === undefined || apply.apiVersion !== update.apiVersion) return undefined;
  return [
    ...guard(at, 'Update'),
    ...guard(applyAt, 'Apply'),
    { op: 'replace', path: `/metadata/managedFields/${applyAt}/fieldsV1`, value: unionFieldSets(apply.fieldsV1 ?? {}, update.fieldsV1 ?? {}) },
    { op: 'remove', path: `/metadata/managedFields/${at}` },
  ];
}

/**
 * Hands the fields our create left under an `Update` entry to our `Apply` entry (see the module docs):
 * the guarded patch from `known` (the cached child) when it can be built, else, or when the server
 * refuses it (a failed `test`: 422; 409), a GET and the whole list replaced under a resourceVersion
 * precondition. Nothing is sent when the stored object has no such entry.
 *
 * @returns the resourceVersion the conversion stored (the apply that follows stores the next one); undefined when nothing was written
 * @throws ConflictError (409 on the fallback: retried), ReconcileError `Forbidden` / `ApplyFailed` naming the child
 */
export async function convertCreatedFields(client: KubeClient, ref: ResourceRef, known: KubeObject, fieldManager: string): Promise<string | undefined> {
  const namespace = ref.namespaced ? known.metadata?.namespace : undefined;
  const name = known.metadata?.name ?? '';
  const what = `${ObjectRef.of(known).toString()} (handing the fields its create set to server-side apply)`;
  const objects = new ResourceClient(client);
  const guarded = createdFieldsPatch(known, fieldManager);
  if (guarded) {
    try {
      return (await objects.patch(ref, namespace, name, { type: 'json', body: guarded })).metadata?.resourceVersion;
    } catch (err) {
      if (!isApiError(err, 409, 422)) throw describeWriteError(err, 'patch', ref, namespace, what);
    }
  }
  try {
    return (await patchFieldsTakeOver(client, ref, await objects.get(ref, namespace, name), fieldManager, { from: [fieldManager] }))?.metadata?.resourceVersion;
  } catch (err) {
    if (isApiError(err, 404)) return undefined; // gone: the apply that follows creates it
    throw describeWriteError(err, 'patch', ref, namespace, what);
  }
}
