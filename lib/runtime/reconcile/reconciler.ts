import type { ResolvedKind } from '../../operator/kinds.js';
import { RenderError } from '../../operator/errors.js';
import { hasBrand } from '../../operator/brand.js';
import { groupKindOf, kindKey } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { RelatedLookup, RenderInputs, RenderOutput } from '../../operator/render-children.js';
import type { KubeResource } from '../../operator/render-context.js';
import type { ApiClient, KubeObject } from '../client/api-client.js';
import { deleteObject } from './apply.js';
import { type AdoptionPolicy, ChildAdoption } from './adoption.js';
import { childReadiness } from './child-readiness.js';
import { type ApplyReason, DESIRED_HASH_ANNOTATION, decideApply, withDesiredHash } from './child-diff.js';
import { type Outcome, capMessage, nowRfc3339 } from './conditions.js';
import { ConflictError, ReconcileError, type ReconcileStep, TerminalError, isConflict } from '../errors.js';
import { apiErrorOf, isTerminalError, serverMessageOf } from '../error-chain.js';
import { failureMessage } from './failure-message.js';
import type { EventRecorder } from '../ops/events.js';
import type { FieldType } from './field-type.js';
import { addFinalizer, finalizerName, hasFinalizer, removeFinalizer } from './finalizer.js';
import { type Logger, errorFields, silentLogger } from '../logger.js';
import type { ControllerMetrics } from '../ops/metrics.js';
import { mapConcurrently } from './map-concurrently.js';
import { objectKey, splitKey } from '../cache/object-key.js';
import type { FieldTypeSource } from './openapi-field-types.js';
import { selectPrunable } from './prune.js';
import { inventoryEntryOf, pruneInventoryEntry, readInventory } from './inventory.js';
import type { ResourceRef } from '../client/resource-path.js';
import { type ChildStatus, StatusWriter, computeStatus } from './status-writer.js';

/**
 * What a reconcile asks of its controller: nothing (wait for the next change), or to run again after a
 * delay (kube-rs `Action::requeue`, controller-runtime `Result{RequeueAfter}`). Errors are thrown, not
 * returned; see the controller's error policy.
 */
/** Per-call context of {@link Reconciler.reconcile}. */
export interface ReconcileContext {
  /** Logger carrying this reconcile's fields (controller, namespace, name, reconcileID). @default the reconciler's */
  readonly logger?: Logger;
}

export interface ReconcileResult {
  /** Run this key again after this many milliseconds, even without a change. */
  readonly requeueAfterMs?: number;
}

/** The read side of a cache the reconciler needs (an {@link Informer} satisfies it). */
export interface CacheReader {
  get(namespace: string | undefined, name: string): KubeObject | undefined;
  byOwnerUid(uid: string): KubeObject[];
}

/** The parts of an operator the reconciler uses (lib/operator's `Operator` satisfies it). */
export interface ReconciledOperator {
  /** Field manager, managed-by label value, finalizer suffix, event reporter. */
  readonly operatorName: string;
  /** The CR's own kind. */
  readonly crd: ResolvedKind;
  /** Kinds an earlier version rendered; inventory entries of them are pruned by get + delete. @default none */
  readonly retiredKinds?: readonly ResolvedKind[];
  /** When defined, a finalizer is added and this runs once on deletion before it is removed. */
  finalize?(cr: never, context: { readonly signal: AbortSignal }): Promise<void>;
  /** An existing object under a child's name that this CR did not make: refused or adopted (adoption.ts). @default 'refuse' */
  readonly adoption?: AdoptionPolicy;
}

/** A child kind's cache and REST resource. */
export interface ChildCache {
  readonly kind: ResolvedKind;
  readonly cache: CacheReader;
}

export interface ReconcilerOptions {
  readonly operator: ReconciledOperator;
  /**
   * Renders a CR, given its observed children and a lookup of related objects: its desired children as
   * plain manifests, stamped (namespace, labels, ownerReference) and sorted, or the whole
   * {@link RenderOutput} (ordering, status, requeueAfter); throws when render or validation fails.
   * Usually `(cr, inputs) => renderCustomResource(operator, cr, inputs)`.
   */
  readonly render: (cr: KubeObject, inputs: RenderInputs) => KubeObject[] | RenderOutput;
  /** Where render finds related objects (the related kinds' caches). @default nothing exists */
  readonly related?: RelatedLookup;
  /**
   * The operator's own status fields (the keys of its status schema): kept as they are when a reconcile
   * writes status without a rendered status (render failed, or returned none). @default none
   */
  readonly statusFields?: readonly string[];
  readonly client: ApiClient;
  /** Cache of the CRs. */
  readonly crs: CacheReader;
  /** Caches of the child kinds the operator owns. */
  readonly children: readonly ChildCache[];
  /** True once every informer (CRs and children) has synced; prune waits for it. */
  readonly cachesSynced: () => boolean;
  /** @default no events */
  readonly events?: EventRecorder;
  /**
   * Aborted when this process must stop writing at once (lost lease, graceful-shutdown deadline); passed
   * to the operator's finalize hook. @default never aborted
   */
  readonly signal?: AbortSignal;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Wall clock for condition transition times. @default () => new Date() */
  readonly now?: () => Date;
  /**
   * `cdk8s_operator_applies_skipped_total` / `cdk8s_operator_children_pruned_total` /
   * `cdk8s_operator_status_write_errors_total`. @default none
   */
  readonly metrics?: Pick<ControllerMetrics, 'applySkipped' | 'childrenPruned'> & Partial<Pick<ControllerMetrics, 'statusWriteError'>>;
  /**
   * Field types of the child kinds, so the diff compares each field in the form the server stores it
   * ({@link decideApply}); usually an `OpenApiFieldTypes` on the API server. When it is missing or fails,
   * the diff compares scalars exactly and a re-serialised quantity costs one no-op apply.
   * @default none
   */
  readonly fieldTypes?: FieldTypeSource;
  /**
   * Server-side applies one reconcile sends at once, among the children of one dependency level
   * (children that don't wait for each other through `dependsOn`). 1 applies one child after the other.
   * @default 8
   */
  readonly applyConcurrency?: number;
}

/** What {@link Reconciler.applyChild} needs besides the child: the render and the levels handled so far. */
interface ChildScope {
  readonly cr: KubeObject;
  readonly output: RenderOutput;
  readonly byKey: ReadonlyMap<string, KubeObject>;
  readonly readyByKey: ReadonlyMap<string, boolean>;
  readonly logger: Logger;
  readonly log: Record<string, unknown>;
}

/** What happened to one desired child in one reconcile. */
interface ChildOutcome {
  readonly ready: boolean;
  /** Its status.children entry; none for a kind the operator has no cache of. */
  readonly status?: ChildStatus;
  /** describe() of the child, when it was applied. */
  readonly applied?: string;
  /** Why it isn't ready, for the Ready condition's message. */
  readonly waiting?: string;
  readonly failure?: Error;
  readonly conflict?: Error;
}

/** Counters of what one reconcile did, for logs and tests. */
export interface ReconcileStats {
  applied: number;
  pruned: number;
  statusWritten: boolean;
}

/**
 * Reconciles one CR by key: cache → (finalizer) → render → apply what differs → prune → status.
 *
 * Guarantees:
 * - Reads only the caches, but for one GET before a child's first apply when it is not in the cache
 *   (adoption.ts: is its name taken?); writes only: server-side apply of children that need it ({@link decideApply}),
 *   deletes of children to prune ({@link selectPrunable}, after every cache synced), the status subresource
 *   when it changed, our finalizer, and Events (recorded in the background: a reconcile never waits for one).
 * - Inventory: `status.children` lists the desired children plus every child still to prune. Entries of
 *   kinds no longer watched (an earlier version's kinds) are pruned by get + delete ({@link pruneInventoryEntry},
 *   after every cache synced), so pruning never depends on the running version still rendering or
 *   watching a kind; what could not be pruned stays listed for the next reconcile.
 * - Level-triggered and idempotent: a second run right after the first writes nothing (a short memory of
 *   its own writes covers the time until the cache shows them).
 *
 * Errors (thrown, for the controller's error policy):
 * - render fails → Stalled=True RenderFailed + Warning event, then {@link ReconcileError};
 * - an apply/prune is rejected → Stalled=True ApplyFailed/Forbidden/PruneFailed + event, then ReconcileError
 *   (other children are still applied);
 * - a child's name is taken by an object this CR did not make → Stalled=True AdoptionRefused + event, unless
 *   the operator's `adoption` allows it (adoption.ts), then ReconcileError (other children are still applied);
 * - 409 anywhere → {@link ConflictError}, no condition, no event;
 * - a child kind the operator does not own (no cache) → {@link TerminalError} after the status is written;
 * - finalize() fails → Stalled=True FinalizeFailed + event, then ReconcileError (finalizer kept);
 * - a `TerminalError` thrown by render or finalize stays in the thrown error's `cause` chain, where the
 *   controller finds it ({@link isTerminalError}) and does not requeue;
 * - the API server refuses a status write (not 409/404) → told at once: an error log line, a Warning
 *   event `StatusWriteFailed` with the server's message, `cdk8s_operator_status_write_errors_total` + 1,
 *   and one more write without the operator's own status fields and with Stalled=True (so the CR still
 *   shows why when only those fields were refused); then {@link ReconcileError} `StatusWriteFailed`, step
 *   `status`, retried with backoff: its cause (the CRD's schema, an admission policy, RBAC) lives outside
 *   the CR and can heal without any event of the CR.
 *
 * Condition messages and Event notes lead with the reason, name the CR once and fit 1024 UTF-8 bytes
 * ({@link failureMessage}).
 */
export class Reconciler {
  readonly operatorName: string;
  private readonly options: ReconcilerOptions;
  private readonly logger: Logger;
  private readonly crRef: ResourceRef;
  private readonly childByKind = new Map<string, ChildCache>();
  private readonly statusWriter: StatusWriter;
  private readonly finalizer: string | undefined;
  /**
   * ObjectRef key → hash applied on top of which resourceVersion ('' when it did not exist). A create
   * also keeps the server's answer, the child's only state until the cache shows it; it is let go then.
   */
  private readonly applied = new Map<string, { baseResourceVersion: string; hash: string; created?: KubeObject }>();
  /** UIDs of children we asked to delete, until the cache drops them. */
  private readonly pruned = new Set<string>();
  /** CR uid → resourceVersion our finalizer was added on top of. */
  private readonly finalizerAdded = new Map<string, string>();
  /** CR uid → resourceVersion our finalizer was removed from (after finalize succeeded). */
  private readonly finalized = new Map<string, string>();
  /** Child kinds whose missing field types were logged. */
  private readonly fieldTypesWarned = new Set<string>();
  private readonly applyConcurrency: number;
  private readonly adoption: ChildAdoption;
  /** Stats of the last reconcile of each existing CR's key; see {@link lastStats}. */
  private readonly stats = new Map<string, ReconcileStats>();

  constructor(options: ReconcilerOptions) {
    this.options = options;
    this.operatorName = options.operator.operatorName;
    this.logger = options.logger ?? silentLogger;
    this.applyConcurrency = options.applyConcurrency ?? 8;
    this.crRef = options.operator.crd;
    for (const child of options.children) this.childByKind.set(kindKey(child.kind), child);
    this.statusWriter = new StatusWriter({ client: options.client, ref: this.crRef, fieldManager: this.operatorName });
    this.finalizer = typeof options.operator.finalize === 'function' ? finalizerName(this.operatorName) : undefined;
    this.adoption = new ChildAdoption({ client: options.client, fieldManager: this.operatorName, policy: options.operator.adoption });
  }

  /**
   * Test hook: what the last reconcile of each key did. An entry lives while its CR is in the cache
   * (removed by {@link forget}, and by a reconcile that finds the CR gone); at most
   * {@link MAX_STATS_ENTRIES} are kept, the least recently reconciled going first.
   * @internal
   */
  get lastStats(): ReadonlyMap<string, ReconcileStats> {
    return this.stats;
  }

  /**
   * Reconciles the CR with `key` (`namespace/name` or `name`). `context.logger` carries this reconcile's
   * fields (controller, namespace, name, reconcileID); @default the reconciler's logger.
   */
  async reconcile(key: string, context: ReconcileContext = {}): Promise<ReconcileResult | void> {
    const { namespace, name } = splitKey(key);
    const cr = this.options.crs.get(namespace, name);
    const stats: ReconcileStats = { applied: 0, pruned: 0, statusWritten: false };
    this.stats.delete(key);
    if (!cr) return;
    this.stats.set(key, stats);
    if (this.stats.size > MAX_STATS_ENTRIES) this.stats.delete(this.stats.keys().next().value as string);
    const logger = context.logger ?? this.logger;
    const log = { operator: this.operatorName, key };

    if (cr.metadata?.deletionTimestamp) {
      await this.finalize(cr, stats, logger);
      return;
    }
    if (this.finalizer && !hasFinalizer(cr, this.finalizer) && this.finalizerAdded.get(cr.metadata?.uid ?? '') !== cr.metadata?.resourceVersion) {
      await addFinalizer(this.options.client, this.crRef, cr, this.finalizer);
      this.finalizerAdded.set(cr.metadata?.uid ?? '', cr.metadata?.resourceVersion ?? '');
      logger.debug(log, 'finalizer added');
    }

    let output: RenderOutput;
    try {
      output = toRenderOutput(this.options.render(cr, { observed: this.observedChildren(cr), related: this.options.related }));
    } catch (err) {
      const detail = errorMessage(err);
      const message = detail.includes(describe(cr)) ? detail : `render ${describe(cr)}: ${detail}`;
      if (err instanceof RenderError && err.reason === 'ReferenceNotFound') {
        // Not an error to retry: the missing object's creation reconciles this CR (related index).
        logger.info({ ...log, message }, 'waiting for a referenced object');
        const text = failureMessage('render', this.failedObject(cr), message);
        void this.options.events?.warning(cr, 'ReferenceNotFound', 'Render', text);
        stats.statusWritten = await this.writeStatusOrTell(cr, { kind: 'progressing', reason: 'ReferenceNotFound', message: text }, undefined, undefined, logger);
        return;
      }
      const reason = err instanceof RenderError && (err.reason === 'InvalidStatus' || err.reason === 'InvalidReference' || err.reason === 'InvalidResult') ? err.reason : 'RenderFailed';
      await this.fail(cr, stats, reason, 'Render', message, undefined, logger);
      // A TerminalError thrown by render() stays in the cause chain: the controller finds it there.
      throw new ReconcileError(reason, message, { cause: err, step: 'render' });
    }
    const desired = output.children.map(withDesiredHash);
    const byKey = new Map(desired.map((child) => [ObjectRef.of(child).key(), child]));

    const children: ChildStatus[] = [];
    const appliedNames: string[] = [];
    const prunedNames: string[] = [];
    const waiting: string[] = [];
    const failures: Error[] = [];
    /** The failures of prunes (the rest are of applies): the Warning event's action. */
    const pruneFailures = new Set<Error>();
    let conflict: Error | undefined;
    /** ObjectRef key → ready, for the children of the levels handled so far (see dependencyLevels). */
    const readyByKey = new Map<string, boolean>();
    // The children of one level don't wait for each other: their applies go out together (one round trip
    // per level instead of one per child); results are merged in level, then render, order.
    for (const level of dependencyLevels(desired, output.waitsFor)) {
      const outcomes = await mapConcurrently(level, this.applyConcurrency, (child) => this.applyChild(child, { cr, output, byKey, readyByKey, logger, log }));
      for (const [index, outcome] of outcomes.entries()) {
        readyByKey.set(ObjectRef.of(level[index] as KubeObject).key(), outcome.ready);
        if (outcome.status) children.push(outcome.status);
        if (outcome.applied) {
          stats.applied++;
          appliedNames.push(outcome.applied);
        }
        if (outcome.waiting) waiting.push(outcome.waiting);
        if (outcome.failure) failures.push(outcome.failure);
        if (outcome.conflict) conflict ??= outcome.conflict;
      }
    }

    // The inventory (status.children) keeps, besides the desired children, every child still to prune, so
    // that a later version (which may no longer watch its kind) can prune it; see inventory.ts.
    const inventory = readInventory(cr);
    const wanted = new Set(desired.map((child) => ObjectRef.of(child).key()));
    const retained: ChildStatus[] = [];
    if (this.options.cachesSynced()) {
      const uid = cr.metadata?.uid ?? '';
      for (const child of this.options.children) {
        for (const obj of selectPrunable(child.cache.byOwnerUid(uid), desired, uid, this.operatorName)) {
          const objUid = obj.metadata?.uid ?? '';
          if (this.pruned.has(objUid)) continue;
          try {
            await deleteObject(this.options.client, child.kind, obj);
            this.pruned.add(objUid);
            stats.pruned++;
            prunedNames.push(describe(obj));
            this.options.metrics?.childrenPruned();
            logger.info({ ...log, child: describe(obj) }, 'pruned child no longer rendered');
          } catch (err) {
            retained.push(inventoryEntryOf(obj));
            if (isConflict(err)) conflict ??= err as Error;
            else {
              failures.push(err as Error);
              pruneFailures.add(err as Error);
            }
          }
        }
      }
      // Entries of kinds no longer watched (no cache): get + delete each (needs `retiredKinds` RBAC).
      for (const entry of inventory) {
        if (wanted.has(ObjectRef.fromEntry(entry).key()) || this.childByKind.has(kindKey(groupKindOf(entry.apiVersion, entry.kind)))) continue;
        try {
          const result = await pruneInventoryEntry(entry, { client: this.options.client, ownerUid: uid, fieldManager: this.operatorName, retiredKinds: this.options.operator.retiredKinds });
          if (result === 'pruned') {
            stats.pruned++;
            prunedNames.push(ObjectRef.fromEntry(entry).toString());
            this.options.metrics?.childrenPruned();
            logger.info({ ...log, child: ObjectRef.fromEntry(entry).toString() }, 'pruned child of a kind no longer rendered');
          }
        } catch (err) {
          retained.push(entry);
          if (isConflict(err)) conflict ??= err as Error;
          else {
            failures.push(err as Error);
            pruneFailures.add(err as Error);
          }
        }
      }
    } else {
      // Nothing is pruned before the caches synced; keep what the inventory still lists.
      retained.push(...inventory.filter((entry) => !wanted.has(ObjectRef.fromEntry(entry).key())));
    }
    // A desired child left out of `children` (a kind without cache) keeps its inventory entry, if it had one.
    const listed = new Set([...children, ...retained].map((entry) => ObjectRef.fromEntry(entry).key()));
    const inventoried = [...children, ...retained, ...inventory.filter((entry) => wanted.has(ObjectRef.fromEntry(entry).key()) && !listed.has(ObjectRef.fromEntry(entry).key()))];

    // Written in the background, not awaited (as client-go's recorder does): an Event is not desired state,
    // and its POST was the slowest request of a first reconcile's last round trip (bench/PROFILE.md §9).
    // The recorder never rejects; it logs what it can't write, and Manager.stop() flushes it.
    if (stats.applied > 0) void this.options.events?.normal(cr, 'Applied', 'Apply', `applied ${appliedNames.join(', ')}`);
    if (prunedNames.length > 0) void this.options.events?.normal(cr, 'Pruned', 'Prune', `pruned ${prunedNames.join(', ')} (no longer rendered)`);

    if (failures.length > 0) {
      const first = failures[0];
      const reason = first instanceof ReconcileError ? first.reason : 'ApplyFailed';
      const message = failures.map((f) => f.message).join('; ');
      const pruning = pruneFailures.has(first as Error);
      await this.fail(cr, stats, reason, pruning ? 'Prune' : 'Apply', message, inventoried, logger);
      if (failures.every((f) => isTerminalError(f))) throw new TerminalError(message, { cause: first });
      // The thrown reason is the Stalled condition's, so the controller's `Reconciler error` line says the same.
      const thrownReason = reason === 'Forbidden' || reason === 'PruneFailed' || reason === 'AdoptionRefused' ? reason : 'ApplyFailed';
      throw new ReconcileError(thrownReason, message, { cause: first, step: pruning ? 'prune' : 'apply' });
    }
    if (conflict) {
      throw new ConflictError(conflict.message, { cause: conflict });
    }

    const outcome: Outcome =
      waiting.length === 0
        ? { kind: 'ready', message: `${children.length} ${children.length === 1 ? 'child' : 'children'} ready` }
        : { kind: 'progressing', reason: 'ChildrenNotReady', message: capMessage(waiting.join('; ')) };
    stats.statusWritten = await this.writeStatusOrTell(cr, outcome, inventoried, output.status, logger);
    if (stats.applied + stats.pruned > 0 || stats.statusWritten) {
      logger.debug({ ...log, ...stats, ready: waiting.length === 0 }, 'reconciled');
    }
    return output.requeueAfterMs === undefined ? undefined : { requeueAfterMs: output.requeueAfterMs };
  }

  /**
   * One desired child whose dependencies were handled: skipped while a dependency is not ready, else
   * applied when {@link decideApply} finds a difference. Never throws: a rejected apply is its outcome.
   */
  private async applyChild(child: KubeObject, scope: ChildScope): Promise<ChildOutcome> {
    const { cr, output, byKey, readyByKey, logger, log } = scope;
    const key = ObjectRef.of(child).key();
    const cache = this.childByKind.get(kindKey(ObjectRef.of(child)));
    const childName = child.metadata?.name ?? '';
    const childNamespace = child.metadata?.namespace;
    if (!cache) {
      return { ready: false, failure: new TerminalError(`${describe(child)}: kind ${child.kind} (${child.apiVersion}) is not among the operator's child kinds; declare it in \`owns\``) };
    }
    const identity = { apiVersion: child.apiVersion ?? '', kind: child.kind ?? '', name: childName, ...(childNamespace ? { namespace: childNamespace } : {}) };
    const actual = cache.cache.get(childNamespace, childName);
    if (actual) this.cacheCaughtUp(child);
    const blockers = (output.waitsFor.get(key) ?? []).filter((dependency) => readyByKey.get(dependency) !== true);
    if (blockers.length > 0) {
      // dependsOn: neither created nor updated until every dependency is ready; never pruned meanwhile.
      const names = blockers.map((dependency) => (byKey.has(dependency) ? describe(byKey.get(dependency) as KubeObject) : dependency));
      const readiness = this.readinessOf(child, actual, output);
      return {
        ready: false,
        waiting: `${describe(child)} waits for ${names.join(', ')}`,
        status: { ...identity, ready: actual !== undefined && readiness.ready, waitingFor: names },
      };
    }
    let current = actual;
    let applied: string | undefined;
    let failure: Error | undefined;
    let conflict: Error | undefined;
    const decision = decideApply(child, actual, actual ? await this.fieldTypesOf(child, logger) : undefined);
    const recent = decision.reason ? this.justApplied(child, actual) : undefined;
    if (!decision.reason || recent) this.options.metrics?.applySkipped();
    if (recent) current = recent;
    else if (decision.reason) {
      try {
        // adoption.ts: a child about to be created is looked up first (one GET, on this path only).
        const result = await this.adoption.apply(cache.kind, child, cr, { cached: actual, appliedBefore: this.applied.has(ObjectRef.of(child).key()) });
        current = result.stored;
        if (result.adopted) {
          logger.info({ ...log, child: describe(child), managers: result.adopted }, 'adopted existing object');
          void this.options.events?.normal(cr, 'Adopted', 'Apply', `adopted ${describe(child)} (it existed; fields set by ${result.adopted.join(', ') || 'nobody'} taken over)`);
        }
        applied = describe(child);
        this.applied.set(ObjectRef.of(child).key(), {
          baseResourceVersion: actual?.metadata?.resourceVersion ?? '',
          hash: child.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] ?? '',
          ...(actual ? {} : { created: current }),
        });
        logger.info({ ...log, child: describe(child), reason: decision.reason, path: decision.path }, applyMessage(decision.reason));
      } catch (err) {
        if (isConflict(err)) conflict = err as Error;
        else failure = err as Error;
      }
    }
    const readiness = this.readinessOf(child, current, output);
    return {
      ready: readiness.ready,
      status: { ...identity, ready: readiness.ready },
      ...(!readiness.ready && readiness.message ? { waiting: readiness.message } : {}),
      ...(applied ? { applied } : {}),
      ...(failure ? { failure } : {}),
      ...(conflict ? { conflict } : {}),
    };
  }

  /** This CR's children in the caches (any owned kind), as render's `context.observed`. */
  private observedChildren(cr: KubeObject): KubeResource[] {
    const uid = cr.metadata?.uid;
    if (!uid) return [];
    const out: KubeResource[] = [];
    for (const child of this.options.children) out.push(...(child.cache.byOwnerUid(uid) as KubeResource[]));
    return out;
  }

  /** A child's readiness: its `readyWhen` predicate when it has one, else the built-in rules. */
  private readinessOf(child: KubeObject, current: KubeObject | undefined, output: RenderOutput): { ready: boolean; message?: string } {
    const predicate = output.readyWhen.get(ObjectRef.of(child).key());
    if (!predicate) return childReadiness(current, describe(child));
    if (!current) return { ready: false, message: `${describe(child)}: not found` };
    try {
      return predicate(current as KubeResource) ? { ready: true } : { ready: false, message: `${describe(child)}: readyWhen not met` };
    } catch (err) {
      return { ready: false, message: `${describe(child)}: readyWhen threw: ${errorMessage(err)}` };
    }
  }

  /** The child kind's field types; undefined (logged once per kind) when they cannot be read. */
  private async fieldTypesOf(child: KubeObject, logger: Logger): Promise<FieldType | undefined> {
    const source = this.options.fieldTypes;
    if (!source) return undefined;
    const kind = `${child.apiVersion ?? ''} ${child.kind ?? ''}`;
    try {
      return await source.forKind(child.apiVersion ?? '', child.kind ?? '');
    } catch (err) {
      if (!this.fieldTypesWarned.has(kind)) {
        this.fieldTypesWarned.add(kind);
        logger.warn({ operator: this.operatorName, kind, ...errorFields(err) }, 'no field types for the child diff; comparing scalars exactly');
      }
      return undefined;
    }
  }

  /** Drops what the reconciler remembers about a CR (call when it is deleted from the cache). */
  forget(cr: KubeObject): void {
    const uid = cr.metadata?.uid ?? '';
    this.statusWriter.forget(uid);
    this.finalizerAdded.delete(uid);
    this.finalized.delete(uid);
    this.options.events?.forget(uid);
    this.stats.delete(objectKey(cr));
    for (const child of this.options.children) {
      for (const obj of child.cache.byOwnerUid(uid)) {
        this.applied.delete(ObjectRef.of(obj).key());
        this.pruned.delete(obj.metadata?.uid ?? '');
      }
    }
  }

  /** Forgets a child we applied or pruned (call on its delete event). */
  forgetChild(obj: KubeObject): void {
    this.pruned.delete(obj.metadata?.uid ?? '');
    this.applied.delete(ObjectRef.of(obj).key());
  }

  /**
   * The server's answer when we already applied this exact desired object on top of the cached state
   * (the cache hasn't caught up yet); also stops a hot loop should the diff ever disagree with the server,
   * since a no-op apply leaves the resourceVersion unchanged.
   */
  private justApplied(desired: KubeObject, actual: KubeObject | undefined): KubeObject | undefined {
    const memo = this.applied.get(ObjectRef.of(desired).key());
    const fresh =
      memo !== undefined &&
      memo.hash === desired.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] &&
      memo.baseResourceVersion === (actual?.metadata?.resourceVersion ?? '');
    return fresh ? (actual ?? memo.created) : undefined;
  }

  /** The cache shows `desired`: the answer to its create is no longer needed (one copy of each child is enough). */
  private cacheCaughtUp(desired: KubeObject): void {
    const memo = this.applied.get(ObjectRef.of(desired).key());
    if (memo?.created) delete memo.created;
  }

  private async finalize(cr: KubeObject, stats: ReconcileStats, logger: Logger): Promise<void> {
    if (!this.finalizer || !hasFinalizer(cr, this.finalizer)) return;
    // Already finalized; the cache still shows the version from before our finalizer was removed.
    if (this.finalized.get(cr.metadata?.uid ?? '') === cr.metadata?.resourceVersion) return;
    const log = { operator: this.operatorName, cr: describe(cr) };
    try {
      const signal = this.options.signal ?? new AbortController().signal;
      await (this.options.operator.finalize as (cr: KubeObject, context: { signal: AbortSignal }) => Promise<void>).call(this.options.operator, cr, { signal });
    } catch (err) {
      const message = `finalize ${describe(cr)}: ${errorMessage(err)}`;
      await this.fail(cr, stats, 'FinalizeFailed', 'Finalize', message, undefined, logger);
      // A TerminalError thrown by finalize() stays in the cause chain: the controller finds it there.
      throw new ReconcileError('FinalizeFailed', message, { cause: err, step: 'finalize' });
    }
    await removeFinalizer(this.options.client, this.crRef, cr, this.finalizer);
    this.finalized.set(cr.metadata?.uid ?? '', cr.metadata?.resourceVersion ?? '');
    logger.info(log, 'finalized; finalizer removed');
    void this.options.events?.normal(cr, 'Finalized', 'Finalize', `finalizer ${this.finalizer} ran; removed it`);
  }

  /**
   * Stalled=True with `reason` and a Warning event, both with {@link failureMessage}'s text; a refused
   * status write is told by {@link writeStatusOrTell}, not thrown. The error line is the controller's
   * (`Reconciler error`), once per failed reconcile; this one is at debug.
   */
  private async fail(
    cr: KubeObject,
    stats: ReconcileStats,
    reason: string,
    action: 'Render' | 'Apply' | 'Prune' | 'Finalize',
    message: string,
    children: ChildStatus[] | undefined,
    logger: Logger,
  ): Promise<void> {
    const step = action.toLowerCase() as ReconcileStep;
    logger.debug({ operator: this.operatorName, cr: describe(cr), step, reason, message }, 'reconcile step failed');
    const text = failureMessage(step, this.failedObject(cr), message);
    void this.options.events?.warning(cr, reason, action, text);
    try {
      stats.statusWritten = await this.writeStatusOrTell(cr, { kind: 'stalled', reason, message: text }, children, undefined, logger);
    } catch {
      // Told already (or a 409, retried with the reconcile's own error).
    }
  }

  /**
   * {@link writeStatus}, and when the API server refuses it (anything but 409, which is thrown as is, and
   * 404, which the writer takes as "deleted"): an error log line, a Warning event `StatusWriteFailed`
   * naming the server's message, `cdk8s_operator_status_write_errors_total` + 1, then one more write
   * without the operator's own status fields and with Stalled=True (the outcome's own reason when it was
   * stalled already, else `StatusWriteFailed`); when that is refused too, it is counted and logged.
   *
   * @throws ConflictError on 409; ReconcileError `StatusWriteFailed` (step `status`) when refused
   */
  private async writeStatusOrTell(cr: KubeObject, outcome: Outcome, children: ChildStatus[] | undefined, custom: Record<string, unknown> | undefined, logger: Logger): Promise<boolean> {
    try {
      return await this.writeStatus(cr, outcome, children, custom);
    } catch (err) {
      if (isConflict(err)) throw err;
      const api = apiErrorOf(err);
      const serverMessage = api ? serverMessageOf(api) : errorMessage(err);
      const refused = `status write refused${api ? ` (${api.code} ${api.reason})` : ''}: ${serverMessage}`;
      const message = `status ${describe(cr)}: ${refused}`;
      const fields = { operator: this.operatorName, cr: describe(cr), step: 'status', code: api?.code, serverMessage };
      this.options.metrics?.statusWriteError?.();
      logger.error({ ...fields, ...errorFields(err) }, 'status write refused');
      const text = failureMessage('status', this.failedObject(cr), refused);
      void this.options.events?.warning(cr, 'StatusWriteFailed', 'Status', text);
      const minimal: Outcome = outcome.kind === 'stalled' ? outcome : { kind: 'stalled', reason: 'StatusWriteFailed', message: text };
      try {
        await this.writeStatus(cr, minimal, children, {}, []);
      } catch (again) {
        if (!isConflict(again)) {
          this.options.metrics?.statusWriteError?.();
          logger.error({ ...fields, ...errorFields(again) }, 'status write refused again without the operator\'s own status fields; the CR shows no condition');
        }
      }
      throw new ReconcileError('StatusWriteFailed', message, { cause: err, step: 'status' });
    }
  }

  /** The CR as {@link failureMessage} names it. */
  private failedObject(cr: KubeObject): { reference: string; name: string } {
    return { reference: describe(cr), name: cr.metadata?.name ?? '' };
  }

  /**
   * `custom`: the operator's own status fields as rendered; undefined keeps the existing values of its
   * status fields (they are re-sent, so server-side apply keeps them ours).
   */
  private writeStatus(cr: KubeObject, outcome: Outcome, children: ChildStatus[] | undefined, custom?: Record<string, unknown>, ownFields?: readonly string[]): Promise<boolean> {
    const now = nowRfc3339(this.options.now?.() ?? new Date());
    const fields = ownFields ?? this.options.statusFields ?? [];
    const existing = (cr.status ?? {}) as Record<string, unknown>;
    const own = custom ?? Object.fromEntries(fields.filter((f) => existing[f] !== undefined).map((f) => [f, existing[f]]));
    return this.statusWriter.write(cr, computeStatus(cr, outcome, children, now, own), fields);
  }
}

/** A render's output, also when the render function returned bare children. */
function toRenderOutput(rendered: KubeObject[] | RenderOutput): RenderOutput {
  if (!Array.isArray(rendered)) return rendered;
  return { children: rendered as RenderOutput['children'], waitsFor: new Map(), readyWhen: new Map(), references: [] };
}

/**
 * The desired children in dependency levels: level 0 waits for nothing among them, each later level only
 * for children of earlier levels (`waitsFor` entries naming no desired child are ignored here, and
 * reported by the child). Render order is kept within a level. Members of a cycle, and whatever waits
 * for them, come last as one level; each then waits for a dependency that is not ready yet, and reports it.
 */
function dependencyLevels(children: readonly KubeObject[], waitsFor: ReadonlyMap<string, readonly string[]>): KubeObject[][] {
  if (waitsFor.size === 0) return children.length > 0 ? [[...children]] : [];
  const keys = new Set(children.map((child) => ObjectRef.of(child).key()));
  const done = new Set<string>();
  const levels: KubeObject[][] = [];
  let rest = [...children];
  while (rest.length > 0) {
    const level = rest.filter((child) => (waitsFor.get(ObjectRef.of(child).key()) ?? []).every((dependency) => done.has(dependency) || !keys.has(dependency)));
    if (level.length === 0) {
      levels.push(rest);
      break;
    }
    for (const child of level) done.add(ObjectRef.of(child).key());
    levels.push(level);
    rest = rest.filter((child) => !done.has(ObjectRef.of(child).key()));
  }
  return levels;
}

/** Most {@link Reconciler.lastStats} entries kept. */
const MAX_STATS_ENTRIES = 1024;

/** `Kind namespace/name` of an object, for messages, Events and logs. */
function describe(obj: KubeObject): string {
  return ObjectRef.of(obj).toString();
}

/**
 * An error's message, with its cause's when the message does not include it. Not for the SDK's own
 * errors (their message is complete; a validation error's cause is zod's, whose message is raw JSON).
 */
function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (hasBrand(err, 'OperatorError') || err instanceof ReconcileError) return err.message;
  const cause = err.cause instanceof Error && !err.message.includes(err.cause.message) ? `: ${err.cause.message}` : '';
  return err.message + cause;
}

function applyMessage(reason: ApplyReason): string {
  switch (reason) {
    case 'missing':
      return 'created child';
    case 'render-changed':
      return 'updated child (render changed)';
    case 'drift':
      return 'reverted drift on child';
  }
}
