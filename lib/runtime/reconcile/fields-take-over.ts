/**
 * The write of a managedFields take-over ({@link takeOverManagedFields}) of one stored object: a JSON
 * patch replacing the whole list, with the object's resourceVersion as a precondition, so that a change
 * in between answers 409 instead of being overwritten (client-go csaupgrade's `UpgradeManagedFieldsPatch`
 * does the same). Used by adoption (every other manager's `Update` fields) and by created-fields.ts (our
 * own create's).
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply
 */
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { type ManagedFieldsEntry, takeOverManagedFields } from './managed-fields.js';

/**
 * Hands `stored`'s `Update` fields (of the `from` managers; @default every manager) to `fieldManager`'s
 * `Apply` entry on the server. Sends nothing when there is nothing to take over.
 *
 * @returns the object as stored after the patch; undefined when nothing was sent
 * @throws ApiError as the server answered (409 when `stored` changed since it was read)
 */
export async function patchFieldsTakeOver(client: KubeClient, ref: ResourceRef, stored: KubeObject, fieldManager: string, options: { readonly from?: readonly string[] } = {}): Promise<KubeObject | undefined> {
  const managedFields = takeOverManagedFields(stored.metadata?.managedFields as ManagedFieldsEntry[] | undefined, fieldManager, options);
  if (!managedFields) return undefined;
  const namespace = ref.namespaced ? stored.metadata?.namespace : undefined;
  return new ResourceClient(client).patch(ref, namespace, stored.metadata?.name ?? '', {
    type: 'json',
    body: [
      { op: 'replace', path: '/metadata/managedFields', value: managedFields },
      { op: 'replace', path: '/metadata/resourceVersion', value: stored.metadata?.resourceVersion },
    ],
  });
}
