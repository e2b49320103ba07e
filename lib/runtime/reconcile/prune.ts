/**
 * The prune step of a reconcile: deleting the children a CR no longer renders.
 *
 * Two sources, both only once every cache synced (before that, a missing cache entry says nothing):
 * - the child caches: {@link selectPrunable} picks the CR's children that we applied and that are no
 *   longer desired;
 * - the inventory (`status.children`, inventory.ts): entries of kinds the operator no longer watches (an
 *   earlier version's kinds) are pruned by get + delete ({@link pruneInventoryEntry}); with
 *   {@link ChildPrunerOptions.pruneUncachedEntries} (sharded runs), so are entries of watched kinds that
 *   the caches do not hold (a child made before sharding was turned on: no bucket label, so no cache).
 *
 * What could not be pruned stays in the inventory for the next reconcile. A failed or conflicting delete
 * is reported in the outcome, never thrown, so the reconcile still writes the CR's status.
 *
 * @see https://kubernetes.io/docs/concepts/architecture/garbage-collection/#background-deletion
 */
import type { ReconcileScope } from './reconcile-scope.js';
import { kindKey } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import type { ResolvedKind } from '../../operator/kinds.js';
import { deleteObject } from './apply.js';
import { isConflict } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ControllerMetrics } from '../metrics/metrics.js';
import { inventoryEntryOf, pruneInventoryEntry } from './inventory.js';
import type { ChildDecisionListener } from './child-decision.js';
import { isManagedBy, isOwnedBy } from './ownership.js';
import { type ChildCache, readerIn } from './child-cache.js';
import type { ChildStatus } from './status-writer.js';

/**
 * The children to delete: those owned by the CR (owner-uid label or ownerReference) AND carrying
 * `fieldManager`'s managedFields entry (so we applied them) AND not in `desired` (compared by
 * {@link ObjectRef.key}, so a desired child in another version of its group counts as desired).
 * Objects other controllers made (ReplicaSets, Pods under a child Deployment) fail the first two tests.
 * Objects already being deleted are skipped. Sorted by key.
 *
 * The caller must only prune once every child informer has synced; before that, a missing cache entry
 * says nothing.
 */
export function selectPrunable(candidates: readonly KubeObject[], desired: readonly KubeObject[], ownerUid: string, fieldManager: string): KubeObject[] {
  const wanted = new Set(desired.map((obj) => ObjectRef.of(obj).key()));
  return candidates
    .map((obj) => ({ obj, key: ObjectRef.of(obj).key() }))
    .filter(({ obj, key }) => isOwnedBy(obj, ownerUid) && isManagedBy(obj, fieldManager) && !wanted.has(key) && !obj.metadata?.deletionTimestamp)
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map(({ obj }) => obj);
}

export interface ChildPrunerOptions {
  readonly client: KubeClient;
  /** The operator's field manager (its name). */
  readonly fieldManager: string;
  /** The caches of the child kinds the operator owns. */
  readonly children: readonly ChildCache[];
  /** True once every informer synced; nothing is pruned before. */
  readonly cachesSynced: () => boolean;
  /** The operator's `retiredKinds` (see {@link pruneInventoryEntry}). @default none */
  readonly retiredKinds?: readonly ResolvedKind[];
  /** `cdk8s_operator_children_pruned_total`. @default none */
  readonly metrics?: Pick<ControllerMetrics, 'childrenPruned'>;
  /**
   * Also prune, by get + delete, the inventory entries of watched kinds that the child caches do not
   * hold. A sharded replica caches only children labelled with a bucket (lib/runtime/sharding/bucket-label.ts),
   * so a child applied before sharding was turned on and no longer rendered is found only this way. Costs
   * one GET per such entry per reconcile until it is pruned or gone (then it leaves the inventory).
   * @default false: a watched kind's cache holds every child (an entry it lacks is gone)
   */
  readonly pruneUncachedEntries?: boolean;
  /** Told each child deleted, or whose delete was refused (child-decision.ts). @default none */
  readonly onDecision?: ChildDecisionListener;
}

/** What one prune step did. */
export interface PruneOutcome {
  /** The children deleted, in order. */
  readonly pruned: readonly ObjectRef[];
  /** Inventory entries to keep: children not pruned (caches not synced) or whose delete failed. */
  readonly retained: readonly ChildStatus[];
  /** Deletes the API server refused (not 409), in order. */
  readonly failures: readonly Error[];
  /** The first delete answered with 409, if any. */
  readonly conflict?: Error;
}

/**
 * The prune step, with its memory of the deletes it sent (a child whose delete was sent is not deleted
 * again until the cache drops it: {@link forget}).
 */
export class ChildPruner {
  private readonly options: ChildPrunerOptions;
  private readonly watchedKinds: ReadonlyMap<string, ChildCache>;
  /** UIDs of children we asked to delete, until the cache drops them. */
  private readonly pruned = new Set<string>();

  constructor(options: ChildPrunerOptions) {
    this.options = options;
    this.watchedKinds = new Map(options.children.map((child) => [kindKey(child.kind), child]));
  }

  /**
   * Prunes what `cr` no longer renders: cached children not in `desired`, then `inventory` entries of kinds
   * not watched. Before every cache synced, prunes nothing and retains the inventory's entries that are
   * not desired. Never throws: refused deletes are in the outcome. Runs in a `prune` span of `trace`
   * (children deleted; each refused delete recorded on it).
   */
  async prune(scope: ReconcileScope, desired: readonly KubeObject[], inventory: readonly ChildStatus[]): Promise<PruneOutcome> {
    const { cr, logger, log, trace } = scope;
    const span = trace.step('prune');
    try {
      const outcome = await this.pruneUntraced(cr, desired, inventory, logger, log, scope.bucket);
      span.set({ 'cdk8s_operator.prune.deleted': outcome.pruned.length });
      for (const failure of [...outcome.failures, ...(outcome.conflict ? [outcome.conflict] : [])]) span.fail(failure);
      return outcome;
    } finally {
      span.end();
    }
  }

  private async pruneUntraced(cr: KubeObject, desired: readonly KubeObject[], inventory: readonly ChildStatus[], logger: Logger, log: Record<string, unknown>, bucket: number | undefined): Promise<PruneOutcome> {
    const wanted = new Set(desired.map((child) => ObjectRef.of(child).key()));
    const undesired = inventory.filter((entry) => !wanted.has(ObjectRef.fromEntry(entry).key()));
    if (!this.options.cachesSynced()) return { pruned: [], retained: undesired, failures: [] };
    const uid = cr.metadata?.uid ?? '';
    const pruned: ObjectRef[] = [];
    const retained: ChildStatus[] = [];
    const failures: Error[] = [];
    let conflict: Error | undefined;
    const failed = (err: unknown, entry: ChildStatus) => {
      retained.push(entry);
      if (isConflict(err)) conflict ??= err as Error;
      else failures.push(err as Error);
    };
    for (const child of this.options.children) {
      for (const obj of selectPrunable(readerIn(child.cache, bucket).byOwnerUid(uid), desired, uid, this.options.fieldManager)) {
        const objUid = obj.metadata?.uid ?? '';
        if (this.pruned.has(objUid)) continue;
        try {
          await deleteObject(this.options.client, child.kind, obj);
          this.options.onDecision?.(cr, { action: 'prune', object: obj, live: obj });
          this.pruned.add(objUid);
          pruned.push(ObjectRef.of(obj));
          this.options.metrics?.childrenPruned();
          logger.info({ ...log, child: ObjectRef.of(obj).toString() }, 'pruned child no longer rendered');
        } catch (err) {
          this.options.onDecision?.(cr, { action: 'failed', object: obj, live: obj, error: err as Error });
          failed(err, inventoryEntryOf(obj));
        }
      }
    }
    // Entries of kinds no longer watched (no cache): get + delete each (needs `retiredKinds` RBAC).
    // Sharded: also entries of watched kinds the caches lack (no bucket label yet), with the kind's own REST resource.
    for (const entry of undesired) {
      const ref = ObjectRef.fromEntry(entry);
      const watched = this.watchedKinds.get(kindKey(ref));
      if (watched && !(this.options.pruneUncachedEntries && !readerIn(watched.cache, bucket).get(ref.namespace, ref.name))) continue;
      try {
        const retiredKinds = watched ? [watched.kind, ...(this.options.retiredKinds ?? [])] : this.options.retiredKinds;
        const onDecision = this.options.onDecision;
        const onDeleted = onDecision ? (obj: KubeObject) => onDecision(cr, { action: 'prune', object: obj, live: obj }) : undefined;
        const result = await pruneInventoryEntry(entry, { client: this.options.client, ownerUid: uid, fieldManager: this.options.fieldManager, retiredKinds, onDeleted });
        if (result === 'pruned') {
          pruned.push(ref);
          this.options.metrics?.childrenPruned();
          logger.info({ ...log, child: ref.toString() }, watched ? 'pruned child no longer rendered (it was not in the cache: made before sharding)' : 'pruned child of a kind no longer rendered');
        }
      } catch (err) {
        this.options.onDecision?.(cr, { action: 'failed', object: { apiVersion: entry.apiVersion, kind: entry.kind, metadata: { name: entry.name, ...(entry.namespace ? { namespace: entry.namespace } : {}) } }, error: err as Error });
        failed(err, entry);
      }
    }
    return { pruned, retained, failures, ...(conflict ? { conflict } : {}) };
  }

  /** Forgets a child we asked to delete (call when the cache drops it, or its CR is forgotten). */
  forget(obj: KubeObject): void {
    this.pruned.delete(obj.metadata?.uid ?? '');
  }
}
