/**
 * Adoption: what the reconciler does when a child's name is already taken by an object this CR did not
 * make. The child informers are label-selected (`app.kubernetes.io/managed-by`), so such an object is
 * not in the cache and the child looks missing; server-side apply with `force` would then take it over
 * without a word, and keep whatever else it held.
 *
 * Flow, only on the create path (a child absent from the cache that this reconciler has not applied):
 * 1. a create (POST, {@link ChildAdoption.apply}): the one write the API server refuses when the name is
 *    taken, so nothing is taken over by it; created → done, in one request (its fields are handed to
 *    server-side apply before the first changed render is applied: created-fields.ts);
 * 2. refused with 409 AlreadyExists → one GET of the name ({@link ChildAdoption.beforeCreate} does the
 *    same for `diff`): gone meanwhile → applied as usual;
 * 3. the object is ours (an ownerReference to the CR's uid, or our `operator.cdk8s.io/owner-uid` label:
 *    the cache has not caught up yet) → applied as usual;
 * 4. it is controlled by another owner (an ownerReference with `controller: true` to another uid) →
 *    refused whatever the policy ({@link AdoptionRefusedError}), as controller-runtime's
 *    `SetControllerReference` refuses with `AlreadyOwnedError`;
 * 5. it is not ours and adoption is not allowed (policy `refuse`, no {@link ADOPT_ANNOTATION}) →
 *    refused: the CR is `Stalled=True AdoptionRefused` naming the object, the object is not written;
 * 6. else it is adopted ({@link adoptObject}): the fields other managers set by create or update are
 *    handed to our field manager first ({@link takeOverManagedFields}, kubectl's client-side to
 *    server-side apply migration, client-go `util/csaupgrade`), so the apply that follows removes the
 *    fields render does not set, and sets our ownerReference and labels.
 *
 * A child in the cache that is controlled by another owner (e.g. another CR of this operator renders the
 * same name) is refused as in 4, with no request.
 *
 * Caveat: between a 409's GET answering 404 and the apply, an object created by someone else is still
 * taken over (server-side apply has no "must not exist" precondition); the window is one round trip, and
 * only after a create found the name taken.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/
 */
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { ReconcileError } from '../errors.js';
import { OWNER_UID_LABEL } from '../../operator/render/labels.js';
import { ObjectRef, type OwnerReference } from '../../operator/object-ref.js';
import type { AdoptionPolicy } from '../../operator/operator.js';
import { applyObject, describeWriteError } from './apply.js';
import { convertCreatedFields, hasCreatedFields } from './created-fields.js';
import { patchFieldsTakeOver } from './fields-take-over.js';
import { type FieldSet, type ManagedFieldsEntry, takeOverManagedFields, unionFieldSets } from './managed-fields.js';
import { isOwnedBy } from './ownership.js';

export { type FieldSet, type ManagedFieldsEntry, takeOverManagedFields, unionFieldSets };

export type { AdoptionPolicy };

/**
 * Annotation by which one existing object opts in to adoption whatever the policy; value: the operator's
 * name (its field manager), e.g. `kubectl annotate configmaps/web -n demo operator.cdk8s.io/adopt=app-operator`.
 * The adopting apply removes it (it is not rendered), like any other leftover field.
 */
export const ADOPT_ANNOTATION = 'operator.cdk8s.io/adopt';

/** The reason an object already under a child's name is not taken over. */
export class AdoptionRefusedError extends ReconcileError {
  constructor(
    /** The existing object, `Kind namespace/name`. */
    readonly object: string,
    message: string,
  ) {
    super('AdoptionRefused', message);
    this.name = 'AdoptionRefusedError';
  }
}

/** The ownerReference with `controller: true` to an owner other than `crUid`, if there is one. */
export function otherController(obj: KubeObject, crUid: string): OwnerReference | undefined {
  return (obj.metadata?.ownerReferences ?? []).find((ref) => ref.controller === true && ref.uid !== crUid);
}

/** The field managers named in an object's managedFields, once each, most recent first. */
function managersOf(obj: KubeObject): string[] {
  return [...new Set(((obj.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).map((entry) => entry.manager).filter((m): m is string => !!m))];
}

/** `kubectl annotate` target for a kind: `configmaps/web`, `deployments.apps/web`. */
function kubectlTarget(ref: ResourceRef, name: string): string {
  return `${ref.plural}${ref.group ? `.${ref.group}` : ''}/${name}`;
}

export interface ChildAdoptionOptions {
  readonly client: KubeClient;
  /** Our field manager (the operator's name). */
  readonly fieldManager: string;
  /** @default 'refuse' */
  readonly policy?: AdoptionPolicy;
}

/** What {@link ChildAdoption.apply} did. */
export interface ChildApplyResult {
  /** The object as stored after the apply. */
  readonly stored: KubeObject;
  /**
   * The resourceVersions our own writes stored before `stored` in this apply (the created fields'
   * conversion; an adoption's managedFields take-over), oldest first: a cache that shows one of them has not caught up with `stored` yet.
   */
  readonly earlierWrites?: readonly string[];
  /** When an existing object was adopted: the field managers it had. */
  readonly adopted?: readonly string[];
  /**
   * True when the child was not cached, its create found the name taken, and the GET found it already ours (our ownerReference or
   * owner-uid label: the cache had not caught up, or it was made before sharding labelled children): the
   * apply updated it, it did not create it.
   */
  readonly existed?: boolean;
  /** True when a create (POST) made it. */
  readonly created?: boolean;
  /** What the GET after a create found under the name (with {@link existed} or {@link adopted}). */
  readonly found?: KubeObject;
  /** The name's GET after a create found it taken, in ms of wall time; undefined when none was sent. */
  readonly lookupMs?: number;
}

/** The adoption decision for a child about to be created (see the module docs for the flow). */
export class ChildAdoption {
  private readonly options: ChildAdoptionOptions;
  private readonly policy: AdoptionPolicy;

  constructor(options: ChildAdoptionOptions) {
    this.options = options;
    this.policy = options.policy ?? 'refuse';
  }

  /**
   * Writes `desired` (the reconciler's one write of a child), deciding first: a `cached` child
   * controlled by another owner is refused. Without a cached child and without an earlier write of ours
   * (`appliedBefore`) it is created ({@link create}: a taken name is then looked up and the object found
   * applied over (ours), adopted ({@link adoptObject}) or refused); otherwise it is server-side applied,
   * after the fields our create left under an `Update` entry are handed to server-side apply when the
   * render changed (`renderChanged`; created-fields.ts) — `known` is the child as last seen (the cache,
   * or our create's answer) for that.
   *
   * @throws AdoptionRefusedError, and what {@link applyObject} / {@link convertCreatedFields} / {@link beforeCreate} throw
   */
  async apply(
    ref: ResourceRef,
    desired: KubeObject,
    cr: KubeObject,
    state: { readonly cached?: KubeObject; readonly appliedBefore: boolean; readonly renderChanged?: boolean; readonly known?: KubeObject },
  ): Promise<ChildApplyResult> {
    if (state.cached) this.refuseOtherController(state.cached, cr);
    if (!state.cached && !state.appliedBefore) return this.create(ref, desired, cr);
    const known = state.cached ?? state.known;
    const converted = state.renderChanged && known && hasCreatedFields(known, this.options.fieldManager) ? await convertCreatedFields(this.options.client, ref, known, this.options.fieldManager) : undefined;
    const stored = await applyObject(this.options.client, ref, desired, { fieldManager: this.options.fieldManager });
    return { stored, ...(converted ? { earlierWrites: [converted] } : {}) };
  }

  /**
   * Creates `desired` (POST with our field manager and strict field validation, as an apply is strict):
   * created → done. A name already taken (409 AlreadyExists) is looked up ({@link lookUp}): gone
   * meanwhile or ours → server-side applied; else adopted or refused. `lookupMs` is that GET's time.
   *
   * @throws AdoptionRefusedError; ReconcileError `Forbidden` (no `create`) or `ApplyFailed` naming the child
   */
  private async create(ref: ResourceRef, desired: KubeObject, cr: KubeObject): Promise<ChildApplyResult> {
    const namespace = ref.namespaced ? desired.metadata?.namespace : undefined;
    try {
      const stored = await new ResourceClient(this.options.client).create(ref, desired, { fieldManager: this.options.fieldManager, fieldValidation: 'Strict' });
      return { stored: { ...stored, apiVersion: stored?.apiVersion ?? desired.apiVersion, kind: stored?.kind ?? desired.kind }, created: true };
    } catch (err) {
      if (!isApiError(err, 409) || err.reason !== 'AlreadyExists') throw describeWriteError(err, 'create', ref, namespace, ObjectRef.of(desired).toString());
    }
    const started = performance.now();
    const found = await this.lookUp(ref, desired, cr);
    const lookupMs = performance.now() - started;
    if (!found?.adopt) {
      return { stored: await applyObject(this.options.client, ref, desired, { fieldManager: this.options.fieldManager }), ...(found ? { existed: true, found: found.object } : {}), lookupMs };
    }
    return { ...(await adoptObject(this.options.client, ref, desired, found.object, this.options.fieldManager)), adopted: managersOf(found.object), found: found.object, lookupMs };
  }

  /**
   * One GET of `desired`'s name, before its first apply. Resolves with the existing object when it is to
   * be adopted ({@link adoptObject}), or undefined when the apply can go ahead as it is (nothing there,
   * or ours). The answer's managedFields are kept (the informers drop other managers' entries).
   *
   * @throws AdoptionRefusedError when the object is not ours and may not be adopted
   * @throws ReconcileError `Forbidden` (no `get`), `ApplyFailed` (any other failed GET), ConflictError (409)
   */
  async beforeCreate(ref: ResourceRef, desired: KubeObject, cr: KubeObject): Promise<KubeObject | undefined> {
    const found = await this.lookUp(ref, desired, cr);
    return found?.adopt ? found.object : undefined;
  }

  /** {@link beforeCreate}'s GET and decision: undefined when nothing is there, else the object and whether to adopt it. */
  private async lookUp(ref: ResourceRef, desired: KubeObject, cr: KubeObject): Promise<{ object: KubeObject; adopt: boolean } | undefined> {
    const namespace = ref.namespaced ? desired.metadata?.namespace : undefined;
    const name = desired.metadata?.name ?? '';
    let existing: KubeObject;
    try {
      existing = await new ResourceClient(this.options.client).get(ref, namespace, name);
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw describeWriteError(err, 'get', ref, namespace, ObjectRef.of(desired).toString());
    }
    existing = { ...existing, apiVersion: existing.apiVersion ?? desired.apiVersion, kind: existing.kind ?? desired.kind };
    return { object: existing, adopt: this.decide(ref, existing, cr) !== undefined };
  }

  /**
   * Refuses a child (cached or found) whose controller ownerReference names another owner, whatever the
   * policy: an object has one controller, and two CRs rendering one name would take it from each other.
   * @throws AdoptionRefusedError
   */
  refuseOtherController(existing: KubeObject, cr: KubeObject): void {
    const controller = otherController(existing, cr.metadata?.uid ?? '');
    if (!controller) return;
    const what = ObjectRef.of(existing).toString();
    throw new AdoptionRefusedError(
      what,
      `adoption refused: ${what} already exists and is controlled by ${controller.kind ?? 'an owner'} ${controller.name ?? ''} (uid ${controller.uid ?? ''}); an object has one controller: rename the child or delete the object`,
    );
  }

  /**
   * The decision for an object already under the child's name (from the GET or the cache): undefined when
   * it is ours, the object when it is to be adopted.
   * @throws AdoptionRefusedError otherwise
   */
  decide(ref: ResourceRef, existing: KubeObject, cr: KubeObject): KubeObject | undefined {
    const uid = cr.metadata?.uid ?? '';
    const what = ObjectRef.of(existing).toString();
    this.refuseOtherController(existing, cr);
    if (isOwnedBy(existing, uid)) return undefined;
    if (this.policy === 'adopt' || existing.metadata?.annotations?.[ADOPT_ANNOTATION] === this.options.fieldManager) return existing;
    const managers = managersOf(existing);
    const ns = existing.metadata?.namespace;
    throw new AdoptionRefusedError(
      what,
      `adoption refused: ${what} already exists and was not made by this ${cr.kind ?? 'CR'} (no ownerReference to it, no ${OWNER_UID_LABEL} label${managers.length > 0 ? `; set by ${managers.join(', ')}` : ''}); ` +
        `delete it, or let the operator adopt it: \`kubectl annotate ${kubectlTarget(ref, existing.metadata?.name ?? '')}${ns ? ` -n ${ns}` : ''} ${ADOPT_ANNOTATION}=${this.options.fieldManager}\`, or the operator's \`adoption: 'adopt'\``,
    );
  }
}

/**
 * Adopts `existing` as `desired`: a JSON patch hands the fields other managers set by create or update to
 * `fieldManager` ({@link takeOverManagedFields}; `/metadata/resourceVersion` is replaced too, so a change
 * in between fails with 409 rather than being overwritten, as csaupgrade's `UpgradeManagedFieldsPatch`
 * does), then the server-side apply of `desired` removes the fields it does not set and adds our
 * ownerReference and labels. An object without managedFields (its fields are then given to
 * `before-first-apply` by our first apply) gets a second take-over and apply.
 *
 * @returns the object as stored after the last apply, and the resourceVersions our writes before it
 *   stored (take-over patches, the first apply of an unmanaged object), oldest first
 * @throws ConflictError (409: retry), ReconcileError `Forbidden` / `ApplyFailed` naming the object
 */
export async function adoptObject(client: KubeClient, ref: ResourceRef, desired: KubeObject, existing: KubeObject, fieldManager: string): Promise<Pick<ChildApplyResult, 'stored' | 'earlierWrites'>> {
  const namespace = ref.namespaced ? desired.metadata?.namespace : undefined;
  const earlierWrites: string[] = [];
  const remember = (written: KubeObject | undefined): void => {
    const resourceVersion = written?.metadata?.resourceVersion;
    if (resourceVersion) earlierWrites.push(resourceVersion);
  };
  const takeOver = async (obj: KubeObject): Promise<void> => {
    try {
      remember(await patchFieldsTakeOver(client, ref, { ...obj, metadata: { ...obj.metadata, namespace, name: desired.metadata?.name } }, fieldManager));
    } catch (err) {
      throw describeWriteError(err, 'patch', ref, namespace, `${ObjectRef.of(desired).toString()} (taking over its managedFields to adopt it)`);
    }
  };
  const unmanaged = ((existing.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).length === 0;
  await takeOver(existing);
  let applied = await applyObject(client, ref, desired, { fieldManager });
  if (unmanaged) {
    remember(applied);
    await takeOver(applied);
    applied = await applyObject(client, ref, desired, { fieldManager });
  }
  return { stored: applied, ...(earlierWrites.length > 0 ? { earlierWrites } : {}) };
}
