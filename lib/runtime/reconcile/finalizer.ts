/**
 * Finalizers (kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/) for operators that
 * define `finalize(cr)`.
 *
 * Expected flow, one step per reconcile:
 * 1. CR not being deleted and our finalizer missing → {@link addFinalizer}, then reconcile as usual.
 * 2. CR being deleted (deletionTimestamp set) and our finalizer present → run the hook; on success
 *    {@link removeFinalizer}; on failure keep the finalizer, report a condition, retry with backoff.
 * 3. CR being deleted without our finalizer → nothing to do (the API server deletes it; children go by GC).
 *
 * Guarantees: other finalizers are never touched. Both writes are JSON merge patches of
 * `metadata.finalizers` carrying the read `resourceVersion` as a precondition, so a concurrent change
 * of the list gives 409 (retried quietly) rather than a lost update.
 */
import { ObjectRef } from '../../operator/object-ref.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { describeWriteError } from './apply.js';
import { ResourceClient } from '../client/resource-client.js';
import type { ResourceRef } from '../client/resource-path.js';

/** Our finalizer's name: `operator.cdk8s.io/<operatorName>` (a qualified name, as the API server asks). */
export function finalizerName(operatorName: string): string {
  return `operator.cdk8s.io/${operatorName}`;
}

/** True when `cr` carries `name` in metadata.finalizers. */
export function hasFinalizer(cr: KubeObject, name: string): boolean {
  return (cr.metadata?.finalizers ?? []).includes(name);
}

/** Adds `name` to the end of metadata.finalizers. Errors: 409 → ConflictError; others → ReconcileError. */
export async function addFinalizer(client: KubeClient, ref: ResourceRef, cr: KubeObject, name: string): Promise<KubeObject> {
  return patchFinalizers(client, ref, cr, [...(cr.metadata?.finalizers ?? []), name]);
}

/** Removes every occurrence of `name` (and only it) from metadata.finalizers. A 404 (already gone) counts as success. */
export async function removeFinalizer(client: KubeClient, ref: ResourceRef, cr: KubeObject, name: string): Promise<KubeObject | undefined> {
  try {
    return await patchFinalizers(client, ref, cr, (cr.metadata?.finalizers ?? []).filter((f) => f !== name));
  } catch (err) {
    if (isApiError((err as Error).cause, 404)) return undefined;
    throw err;
  }
}

async function patchFinalizers(client: KubeClient, ref: ResourceRef, cr: KubeObject, finalizers: string[]): Promise<KubeObject> {
  const namespace = ref.namespaced ? cr.metadata?.namespace : undefined;
  const name = cr.metadata?.name ?? '';
  try {
    const patch = { metadata: { finalizers: finalizers.length > 0 ? finalizers : null, resourceVersion: cr.metadata?.resourceVersion } };
    return await new ResourceClient(client).patch(ref, namespace, name, { type: 'merge', body: patch });
  } catch (err) {
    throw describeWriteError(err, 'patch', ref, namespace, `${new ObjectRef({ group: ref.group, kind: cr.kind ?? '', namespace, name })} finalizers`);
  }
}
