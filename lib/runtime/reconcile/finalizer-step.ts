/**
 * The finalizer step of a reconcile, for operators that define `finalize(cr)` (the flow is finalizer.ts'):
 * add our finalizer to a live CR that lacks it; on a CR being deleted, run the hook once and remove it.
 *
 * Both writes carry the read resourceVersion, and the cache shows them late: the step remembers on top
 * of which resourceVersion it added or removed the finalizer, so a reconcile in between does not write
 * (or finalize) again.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/
 */
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { ReconcileError } from '../errors.js';
import type { EventRecorder } from '../events/events.js';
import { errorMessage } from './error-message.js';
import { addFinalizer, finalizerName, hasFinalizer, removeFinalizer } from './finalizer.js';
import type { OutcomeReporter } from './outcome-reporter.js';
import type { ReconcileScope } from './reconcile-scope.js';

/** The operator's part in finalization: its name (the finalizer's suffix) and its hook. */
export interface FinalizingOperator {
  readonly operatorName: string;
  /** When defined, a finalizer is added and this runs once on deletion before it is removed. */
  finalize?(cr: never, context: { readonly signal: AbortSignal }): Promise<void>;
}

export interface FinalizerStepOptions {
  readonly client: KubeClient;
  /** The CR's resource. */
  readonly crRef: ResourceRef;
  readonly operator: FinalizingOperator;
  /** Tells a failed finalize (Stalled=True FinalizeFailed + Warning event). */
  readonly reporter: OutcomeReporter;
  /** @default no events */
  readonly events?: EventRecorder;
  /** Passed to the hook; aborted when the process must stop writing at once. @default never aborted */
  readonly signal?: AbortSignal;
}

export class FinalizerStep {
  /** Our finalizer's name, when the operator finalizes; undefined makes both steps no-ops. */
  readonly name: string | undefined;
  private readonly options: FinalizerStepOptions;
  /** CR uid → resourceVersion our finalizer was added on top of. */
  private readonly added = new Map<string, string>();
  /** CR uid → resourceVersion our finalizer was removed from (after finalize succeeded). */
  private readonly finalized = new Map<string, string>();

  constructor(options: FinalizerStepOptions) {
    this.options = options;
    this.name = typeof options.operator.finalize === 'function' ? finalizerName(options.operator.operatorName) : undefined;
  }

  /**
   * Adds our finalizer to a live CR that lacks it (unless we just did, on top of the same resourceVersion).
   * @throws ConflictError (409) / ReconcileError from the patch
   */
  async ensure(scope: ReconcileScope): Promise<void> {
    const { cr, logger, log } = scope;
    if (!this.name || hasFinalizer(cr, this.name)) return;
    const uid = cr.metadata?.uid ?? '';
    if (this.added.get(uid) === cr.metadata?.resourceVersion) return;
    await addFinalizer(this.options.client, this.options.crRef, cr, this.name);
    this.added.set(uid, cr.metadata?.resourceVersion ?? '');
    logger.debug(log, 'finalizer added');
  }

  /**
   * On a CR being deleted: runs the operator's hook, then removes our finalizer (a `Finalized` Normal
   * event). Nothing when the CR does not carry our finalizer, or we removed it on top of this version.
   *
   * @throws ReconcileError `FinalizeFailed` (step `finalize`, the hook's error as cause, so a
   *   `TerminalError` it threw stays in the chain) after Stalled=True is told; the finalizer is kept
   * @throws ConflictError (409) / ReconcileError from the patch removing it
   */
  async finalize(scope: ReconcileScope): Promise<void> {
    const { cr, stats, logger, trace } = scope;
    if (!this.name || !hasFinalizer(cr, this.name)) return;
    const uid = cr.metadata?.uid ?? '';
    // Already finalized; the cache still shows the version from before our finalizer was removed.
    if (this.finalized.get(uid) === cr.metadata?.resourceVersion) return;
    const reference = scope.ref.toString();
    const { operator } = this.options;
    const span = trace.step('finalize');
    try {
      const signal = this.options.signal ?? new AbortController().signal;
      await (operator.finalize as (cr: KubeObject, context: { signal: AbortSignal }) => Promise<void>).call(operator, cr, { signal });
    } catch (err) {
      span.fail(err);
      span.end();
      const message = `finalize ${reference}: ${errorMessage(err)}`;
      await this.options.reporter.stalled(cr, stats, { reason: 'FinalizeFailed', action: 'Finalize', message }, logger, trace);
      throw new ReconcileError('FinalizeFailed', message, { cause: err, step: 'finalize', objectRef: scope.ref });
    }
    try {
      await removeFinalizer(this.options.client, this.options.crRef, cr, this.name);
    } catch (err) {
      span.fail(err);
      throw err;
    } finally {
      span.end();
    }
    this.finalized.set(uid, cr.metadata?.resourceVersion ?? '');
    logger.info({ operator: operator.operatorName, cr: reference }, 'finalized; finalizer removed');
    void this.options.events?.normal(cr, 'Finalized', 'Finalize', `finalizer ${this.name} ran; removed it`);
  }

  /** Drops what is remembered about a CR (call when it is deleted). */
  forget(uid: string): void {
    this.added.delete(uid);
    this.finalized.delete(uid);
  }
}
