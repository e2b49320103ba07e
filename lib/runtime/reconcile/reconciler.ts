/**
 * The reconciler: one reconcile of one CR, as a sequence of named steps (see {@link Reconciler}).
 */
import type { ResolvedKind } from '../../operator/kinds.js';
import type { RelatedReads } from '../../operator/render/related-reads.js';
import type { RelatedLookup, RenderOutput } from '../../operator/render/render-children.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { EventRecorder } from '../events/events.js';
import { type Logger, silentLogger } from '../logger.js';
import type { ControllerMetrics } from '../metrics/metrics.js';
import { type AdoptionPolicy } from './adoption.js';
import { ChildApplier } from './apply-children.js';
import type { DeclarationFailure } from './change-check-failures.js';
import { type CacheReader, type ChildCache, readerIn } from './child-cache.js';
import type { ChildDecisionListener } from './child-decision.js';
import { withDesiredHash } from './child-diff.js';
import { FinalizerStep } from './finalizer-step.js';
import { nextInventory, readInventory } from './inventory.js';
import type { FieldTypeSource } from './openapi-field-types.js';
import { OutcomeReporter } from './outcome-reporter.js';
import { ChildPruner } from './prune.js';
import { type ReconcileStats, ReconcileStatsLog } from './reconcile-stats.js';
import type { ReconcileScope } from './reconcile-scope.js';
import { type RenderFingerprint, RenderMemo } from './render-memo.js';
import { type RenderFunction, RenderStep } from './render-step.js';
import { type StatusFunction, StatusStep } from './status-step.js';
import { NO_TRACE, type ReconcileTrace } from '../tracing/reconcile-trace.js';

export type { CacheReader, ChildCache } from './child-cache.js';
export type { ReconcileStats } from './reconcile-stats.js';

/**
 * The caller's options for one {@link Reconciler.reconcile} call (what the controller knows of this run:
 * its logger, span and a pending declaration failure). The reconciler combines them with the CR it reads
 * from the cache into the {@link ReconcileScope} every step of that reconcile takes.
 */
export interface ReconcileOptions {
  /** Logger carrying this reconcile's fields (controller, namespace, name, reconcileID). @default the reconciler's */
  readonly logger?: Logger;
  /**
   * A failure of the operator's own code outside render that this CR's reconcile must tell (a related
   * declaration's `changeMatters` threw): after the children are applied and pruned, `Stalled=True`
   * with its reason instead of Ready, a Warning Event, then a {@link TerminalError}.
   * @default none
   */
  readonly declarationFailure?: DeclarationFailure;
  /** This reconcile's span: the steps start their spans under it (lib/runtime/tracing/reconcile-trace.ts). @default none: not traced */
  readonly trace?: ReconcileTrace;
}

/**
 * What a reconcile asks of its controller: nothing (wait for the next change), or to run again after a
 * delay (kube-rs `Action::requeue`, controller-runtime `Result{RequeueAfter}`). Errors are thrown, not
 * returned; see the controller's error policy.
 */
export interface ReconcileResult {
  /** Run this key again after this many milliseconds, even without a change. */
  readonly requeueAfterMs?: number;
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
  /**
   * Skip render while the inputs it read are unchanged since the CR's last successful reconcile, and
   * reuse that render's children (render-memo.ts). @default true: render must be a pure function of the
   * CR, the related objects and the observed children anyway
   */
  readonly renderSkip?: boolean;
}

export interface ReconcilerOptions {
  readonly operator: ReconciledOperator;
  /**
   * Renders a CR, given its observed children and a lookup of related objects: its desired children as
   * plain manifests, stamped (namespace, labels, ownerReference) and sorted, or the whole
   * {@link RenderOutput} (ordering, status, requeueAfter); throws when render or validation fails.
   * Usually `(cr, inputs) => renderCustomResource(operator, cr, inputs)`.
   */
  readonly render: RenderFunction;
  /**
   * The operator's `status()` hook (status-step.ts): its own status fields from the CR, its observed
   * children and related objects, run on every reconcile after apply and prune (also when render was
   * skipped) and merged over render's status. Usually `(cr, inputs) => statusOfCustomResource(operator, cr, inputs)`.
   * @default none
   */
  readonly status?: StatusFunction;
  /** Where render finds related objects (the related kinds' caches). @default nothing exists */
  readonly related?: RelatedLookup;
  /**
   * What render read of the related objects (the same {@link RelatedReads} the render function passes
   * render): a related field render never read does not undo a skip of render. @default unknown: every
   * field of a related object counts
   */
  readonly relatedReads?: RelatedReads;
  /**
   * The operator's own status fields (the keys of its status schema): kept as they are when a reconcile
   * writes status without a rendered status (render failed, or returned none). @default none
   */
  readonly statusFields?: readonly string[];
  readonly client: KubeClient;
  /** Cache of the CRs. */
  readonly crs: CacheReader;
  /** Caches of the child kinds the operator owns. */
  readonly children: readonly ChildCache[];
  /** True once every informer (CRs and children) has synced; prune waits for it. */
  readonly cachesSynced: () => boolean;
  /**
   * The child caches hold only labelled children (a sharded run: lib/runtime/sharding/bucket-label.ts):
   * inventory entries they lack are pruned by get + delete (prune.ts, `pruneUncachedEntries`).
   * @default false
   */
  readonly pruneUncachedEntries?: boolean;
  /**
   * Sharded with per-bucket child caches: the bucket of a CR key (`namespace/name`), the one its children
   * carry; each reconcile reads that bucket's caches only ({@link ReconcileScope.bucket}).
   * @default none: every lookup goes over the whole caches
   */
  readonly bucketOf?: (key: string) => number;
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
   * `cdk8s_operator_status_write_errors_total` / `cdk8s_operator_renders_skipped_total`. @default none
   */
  readonly metrics?: Pick<ControllerMetrics, 'applySkipped' | 'childrenPruned'> & Partial<Pick<ControllerMetrics, 'statusWriteError' | 'renderSkipped'>>;
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
  /**
   * Told each child's decision as it is made: created, updated (with the server's answer), unchanged,
   * waiting, pruned, refused (child-decision.ts). `cdk8s-operator diff` runs the reconciler with a
   * client that sends every write as a dry run and prints these. @default none
   */
  readonly onChildDecision?: ChildDecisionListener;
}

/**
 * Reconciles one CR by key: cache → (finalizer) → render → apply what differs → prune → status, each
 * step in its own file (finalizer-step.ts, render-step.ts, apply-children.ts, prune.ts, inventory.ts,
 * outcome-reporter.ts); this class holds them and runs them in order.
 *
 * Guarantees:
 * - Reads only the caches, but for one GET of a child's name when its create found the name taken
 *   (adoption.ts), and one when a created child's fields cannot be handed to apply from the cache
 *   (created-fields.ts); writes only: a create (POST) of a missing child, server-side apply of children
 *   that need it ({@link decideApply}),
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
 * - the operator's status() fails → after apply and prune, Stalled=True StatusFailed (InvalidStatus for
 *   a result its status schema refuses) + Warning event, then ReconcileError with step `status`;
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
  private readonly crs: CacheReader;
  private readonly logger: Logger;
  private readonly events: EventRecorder | undefined;
  private readonly children: readonly ChildCache[];
  private readonly stats = new ReconcileStatsLog();
  private readonly status: OutcomeReporter;
  private readonly finalizer: FinalizerStep;
  private readonly renderStep: RenderStep;
  private readonly statusStep: StatusStep | undefined;
  private readonly applier: ChildApplier;
  private readonly pruner: ChildPruner;
  /** The last successful render of each CR; undefined when the operator opted out (`renderSkip: false`). */
  private readonly renderMemo: RenderMemo | undefined;
  private readonly metrics: ReconcilerOptions['metrics'];
  private readonly bucketOf: ((key: string) => number) | undefined;

  constructor(options: ReconcilerOptions) {
    const { operator, client, children, events, metrics } = options;
    this.operatorName = operator.operatorName;
    this.crs = options.crs;
    this.logger = options.logger ?? silentLogger;
    this.events = events;
    this.children = children;
    const fieldManager = this.operatorName;
    this.status = new OutcomeReporter({ client, crRef: operator.crd, fieldManager, statusFields: options.statusFields, events, metrics, now: options.now });
    this.finalizer = new FinalizerStep({ client, crRef: operator.crd, operator, reporter: this.status, events, signal: options.signal });
    this.renderStep = new RenderStep({ render: options.render, related: options.related, children, reporter: this.status });
    this.statusStep = options.status ? new StatusStep({ status: options.status, related: options.related }) : undefined;
    this.applier = new ChildApplier({
      client, fieldManager, children, events, metrics,
      adoption: operator.adoption, fieldTypes: options.fieldTypes, applyConcurrency: options.applyConcurrency, onDecision: options.onChildDecision,
    });
    this.pruner = new ChildPruner({ client, fieldManager, children, cachesSynced: options.cachesSynced, retiredKinds: operator.retiredKinds, metrics, pruneUncachedEntries: options.pruneUncachedEntries, onDecision: options.onChildDecision });
    this.metrics = metrics;
    this.bucketOf = options.bucketOf;
    this.renderMemo = operator.renderSkip === false ? undefined : new RenderMemo({ related: options.related, relatedReads: options.relatedReads });
  }

  /** Test hook: the number of CRs whose last render is remembered for reuse (render-memo.ts). @internal */
  get rememberedRenders(): number {
    return this.renderMemo?.size ?? 0;
  }

  /**
   * Test hook: what the last reconcile of each key did. An entry lives while its CR is in the cache
   * (removed by {@link forget}, and by a reconcile that finds the CR gone); at most
   * `MAX_STATS_ENTRIES` (1024) are kept, the least recently reconciled going first ({@link ReconcileStatsLog}).
   * @internal
   */
  get lastStats(): ReadonlyMap<string, ReconcileStats> {
    return this.stats.view;
  }

  /**
   * Reconciles the CR with `key` (`namespace/name` or `name`). `options.logger` carries this reconcile's
   * fields (controller, namespace, name, reconcileID); @default the reconciler's logger. `options.trace`
   * gets a span per step (render, apply per child, prune, status write, finalize); @default not traced.
   */
  async reconcile(key: string, options: ReconcileOptions = {}): Promise<ReconcileResult | void> {
    const { namespace, name } = ObjectRef.splitCacheKey(key);
    const cr = this.crs.get(namespace, name);
    if (!cr) {
      this.stats.forget(key);
      this.renderMemo?.forget(key);
      return;
    }
    const scope: ReconcileScope = {
      key, cr, ref: ObjectRef.of(cr), stats: this.stats.begin(key), logger: options.logger ?? this.logger, log: { operator: this.operatorName, key },
      trace: options.trace ?? NO_TRACE, declarationFailure: options.declarationFailure, bucket: this.bucketOf?.(key),
    };
    if (cr.metadata?.deletionTimestamp) {
      this.renderMemo?.forget(key);
      return this.finalizer.finalize(scope);
    }
    try {
      return await this.reconcileChildren(scope);
    } catch (err) {
      this.renderMemo?.forget(key); // never skip render right after a failed reconcile
      throw err;
    }
  }

  /** finalizer → render (or the remembered render) → apply → prune → status() → status, for a CR not being deleted. */
  private async reconcileChildren(scope: ReconcileScope): Promise<ReconcileResult | void> {
    const { key, cr, stats, logger, log } = scope;
    await this.finalizer.ensure(scope);
    const observed = () => this.renderStep.observedChildren(cr, scope.bucket);
    const reused = this.renderMemo?.reuse(key, cr, observed, scope.bucket);
    let output: RenderOutput;
    let desired: KubeObject[];
    let fingerprint: RenderFingerprint | undefined;
    if (reused) {
      ({ output } = reused);
      desired = [...reused.desired];
      this.metrics?.renderSkipped?.();
      logger.debug(log, 'render skipped: its inputs are unchanged since the last successful reconcile');
    } else {
      const rendered = await this.renderStep.run(scope);
      if (!rendered) return;
      output = rendered;
      fingerprint = this.renderMemo?.fingerprint(cr, output, observed, scope.bucket); // in render's tick: the caches it saw
      desired = output.children.map(withDesiredHash);
    }
    const applied = await this.applier.apply(scope, output, desired);
    const previous = readInventory(cr);
    const pruned = await this.pruner.prune(scope, desired, previous);
    const inventory = nextInventory(applied.children, pruned.retained, previous, desired);
    const custom = this.statusStep ? this.statusStep.run(cr, observed(), output.status, scope.bucket) : { custom: output.status };
    await this.status.childrenReconciled(scope, { applied, pruned, inventory, ...custom });
    if (stats.applied + stats.pruned > 0 || stats.statusWritten) logger.debug({ ...log, ...stats, ready: applied.waiting.length === 0 }, 'reconciled');
    if (fingerprint) this.renderMemo?.remember(key, fingerprint, { output, desired });
    return output.requeueAfterMs === undefined ? undefined : { requeueAfterMs: output.requeueAfterMs };
  }

  /** Drops what the reconciler remembers about a CR (call when it is deleted from the cache). */
  forget(cr: KubeObject): void {
    const uid = cr.metadata?.uid ?? '';
    this.status.forget(uid);
    this.finalizer.forget(uid);
    this.events?.forget(uid);
    this.stats.forget(ObjectRef.cacheKeyOf(cr));
    this.renderMemo?.forget(ObjectRef.cacheKeyOf(cr));
    const bucket = this.bucketOf?.(ObjectRef.cacheKeyOf(cr));
    for (const child of this.children) for (const obj of readerIn(child.cache, bucket).byOwnerUid(uid)) this.forgetChild(obj);
  }

  /** Forgets a child we applied or pruned (call on its delete event). */
  forgetChild(obj: KubeObject): void {
    this.pruner.forget(obj);
    this.applier.forget(obj);
  }
}
