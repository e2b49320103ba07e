/**
 * The runtime's writes of one object: server-side apply (the only way children and status are written,
 * KEP-555) and delete, with API errors turned into the reconcile's typed errors.
 */
import { ObjectRef } from '../../operator/object-ref.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { ConflictError, ReconcileError, forbiddenMessage } from '../errors.js';
import { ResourceClient } from '../client/resource-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { messageOf } from '../../error-text.js';

export interface ApplyOptions {
  /** The field manager: the operator's name, stable across versions. */
  readonly fieldManager: string;
  /** Apply to the `status` subresource. @default the object itself */
  readonly subresource?: 'status';
  /** Validate without persisting (`dryRun=All`). @default false */
  readonly dryRun?: boolean;
}

/**
 * Server-side applies `obj` (PATCH with `application/apply-patch+yaml`, `fieldManager`, `force=true`):
 * creates it when missing, sets exactly the fields in `obj`, and removes fields this manager set
 * before but `obj` leaves out. (A missing child is created with a POST first: adoption.ts, created-fields.ts.)
 *
 * Errors: 409 → {@link ConflictError} (retry quietly); 403 → {@link ReconcileError} `Forbidden` naming the
 * missing permission; any other API error → {@link ReconcileError} `ApplyFailed` with the server's message.
 * @returns the object as stored
 */
export async function applyObject(client: KubeClient, ref: ResourceRef, obj: KubeObject, options: ApplyOptions): Promise<KubeObject> {
  const namespace = ref.namespaced ? obj.metadata?.namespace : undefined;
  const name = obj.metadata?.name ?? '';
  const writer = new ResourceClient(client);
  const applyOptions = { fieldManager: options.fieldManager, force: true, dryRun: options.dryRun };
  try {
    return await (options.subresource === 'status' ? writer.applyStatus(ref, obj, applyOptions) : writer.apply(ref, obj, applyOptions));
  } catch (err) {
    throw describeWriteError(err, 'patch', ref, namespace, new ObjectRef({ group: ref.group, kind: obj.kind ?? '', namespace, name }).toString(), options.subresource);
  }
}

/**
 * Deletes one object with background propagation and a UID precondition, so an object recreated under
 * the same name in between is never deleted. A 404 counts as success.
 */
export async function deleteObject(client: KubeClient, ref: ResourceRef, obj: KubeObject): Promise<void> {
  const namespace = ref.namespaced ? obj.metadata?.namespace : undefined;
  const name = obj.metadata?.name ?? '';
  try {
    await new ResourceClient(client).delete(ref, namespace, name, { propagationPolicy: 'Background', uid: obj.metadata?.uid });
  } catch (err) {
    if (isApiError(err, 404)) return;
    throw describeWriteError(err, 'delete', ref, namespace, new ObjectRef({ group: ref.group, kind: obj.kind ?? '', namespace, name }).toString());
  }
}

/** Turns an API error of a write into a {@link ConflictError} or a {@link ReconcileError} naming the object. */
export function describeWriteError(err: unknown, verb: string, ref: ResourceRef, namespace: string | undefined, what: string, subresource?: string): Error {
  const resource = subresource ? `${ref.plural}/${subresource}` : ref.plural;
  if (isApiError(err, 409)) return new ConflictError(`${verb} ${what}: conflict: ${err.message}`, { cause: err });
  if (isApiError(err, 403)) {
    const serverMessage = typeof err.status?.message === 'string' ? err.status.message : err.message;
    // An apply that creates needs `create`, one that updates `patch`: the server's message says which.
    const deniedVerb = /cannot (\w+) resource/.exec(serverMessage)?.[1] ?? verb;
    return new ReconcileError('Forbidden', `${what}: ${forbiddenMessage(deniedVerb, ref.group, resource, namespace, serverMessage)}`, { cause: err });
  }
  if (isApiError(err)) {
    const serverMessage = typeof err.status?.message === 'string' ? err.status.message : err.message;
    return new ReconcileError(verb === 'delete' ? 'PruneFailed' : 'ApplyFailed', `${verb} ${what}: ${err.code} ${err.reason}: ${serverMessage}`, { cause: err });
  }
  const message = messageOf(err);
  return new ReconcileError(verb === 'delete' ? 'PruneFailed' : 'ApplyFailed', `${verb} ${what}: ${message}`, { cause: err });
}
