/**
 * The status step of a reconcile: how its outcome is told, on the CR's status (conditions, children,
 * the operator's own fields), in Events, metrics and the log.
 *
 * - Success: `Ready` (or `Reconciling` while children are not ready), written only when it changed
 *   (status-writer.ts); `Applied` / `Pruned` Normal Events naming the children that existed and were
 *   updated (render changed, drift reverted) or were pruned. Creating a CR's children records none: as
 *   client-go's tools/events habits go, Events tell transitions and failures, not each success (the
 *   status and the log tell that); repeats are aggregated into a series (events/events.ts).
 * - A 409 of an apply or delete: {@link ConflictError}, no condition, no event (retried quietly).
 * - A failed step: `Stalled=True` with the step's reason and a Warning Event, both with
 *   {@link failureMessage}'s text (leads with the reason, names the CR once, fits 1024 bytes).
 * - A refused status write (not 409/404) is told at once: an error line, a Warning Event
 *   `StatusWriteFailed`, `cdk8s_operator_status_write_errors_total` + 1, and one more write without the
 *   operator's own status fields and with Stalled=True; then {@link ReconcileError} `StatusWriteFailed`.
 *   A status write that got no answer within the client's request timeout is told the same way but as
 *   what it is ("got no answer within N s", no server message) and without the second write, so the
 *   wait stays one request timeout.
 *
 * Events are recorded in the background, never awaited (as client-go's recorder does): an Event is not
 * desired state, and its POST was the slowest request of a first reconcile's last round trip
 * (bench/PROFILE.md §9). The recorder never rejects; it logs what it can't write.
 *
 * @see https://github.com/kubernetes-sigs/cli-utils/blob/master/pkg/kstatus/README.md (the conditions)
 */
import type { ReconcileScope } from './reconcile-scope.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { ApiError, KubeClient, KubeObject } from '../client/kube-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { apiErrorOf, findCause, isTerminalError, serverMessageOf } from '../error-chain.js';
import { RequestTimeoutError } from '../client/request-timeout-error.js';
import { ConflictError, ReconcileError, type ReconcileStep, TerminalError, isConflict } from '../errors.js';
import { type Logger, errorFields } from '../logger.js';
import type { EventRecorder } from '../events/events.js';
import type { ControllerMetrics } from '../metrics/metrics.js';
import type { ApplyOutcome } from './apply-children.js';
import { type Outcome, capMessage, nowRfc3339 } from './conditions.js';
import { errorMessage } from './error-message.js';
import { type FailedObject, failureMessage } from './failure-message.js';
import type { PruneOutcome } from './prune.js';
import type { ReconcileStats } from './reconcile-stats.js';
import { type ChildStatus, StatusWriter, computeStatus } from './status-writer.js';
import { NO_TRACE, type ReconcileTrace } from '../tracing/reconcile-trace.js';

export interface OutcomeReporterOptions {
  readonly client: KubeClient;
  /** The CR's resource. */
  readonly crRef: ResourceRef;
  /** The operator's field manager (its name). */
  readonly fieldManager: string;
  /** The operator's own status fields, kept as they are when no rendered status is written. @default none */
  readonly statusFields?: readonly string[];
  /** @default no events */
  readonly events?: EventRecorder;
  /** `cdk8s_operator_status_write_errors_total`. @default none */
  readonly metrics?: Partial<Pick<ControllerMetrics, 'statusWriteError'>>;
  /** Wall clock for condition transition times. @default () => new Date() */
  readonly now?: () => Date;
}

/** A step's failure, as {@link OutcomeReporter.stalled} tells it. */
export interface StepFailure {
  /** The Stalled condition's and the Warning Event's reason, e.g. `RenderFailed`. */
  readonly reason: string;
  /** The Event's action, also the step named in the message. */
  readonly action: 'Render' | 'Apply' | 'Prune' | 'Status' | 'Finalize';
  readonly message: string;
  /** The inventory to write with it; undefined keeps the CR's `status.children`. @default undefined */
  readonly children?: readonly ChildStatus[];
}

/** What the apply and prune steps of one reconcile did, for {@link OutcomeReporter.childrenReconciled}. */
export interface ChildrenResult {
  readonly applied: ApplyOutcome;
  readonly pruned: PruneOutcome;
  /** The inventory to write (inventory.ts' `nextInventory`). */
  readonly inventory: readonly ChildStatus[];
  /** The operator's own status fields as rendered (merged with status()'s); undefined keeps the existing ones. @default undefined */
  readonly custom?: Record<string, unknown>;
  /**
   * The operator's `status()` hook failed (status-step.ts): told like a failed render, after the
   * children were applied and pruned (Stalled=True with `reason`, a Warning Event, the inventory
   * written, the own status fields kept), then thrown as a ReconcileError with step `status`.
   * @default none
   */
  readonly statusFailure?: { readonly reason: 'StatusFailed' | 'InvalidStatus' | 'InvalidReference'; readonly message: string; readonly cause: unknown };
}

/** Tells a reconcile's outcome; keeps the status writer's memory of its writes. */
export class OutcomeReporter {
  private readonly options: OutcomeReporterOptions;
  private readonly statusWriter: StatusWriter;

  constructor(options: OutcomeReporterOptions) {
    this.options = options;
    this.statusWriter = new StatusWriter({ client: options.client, ref: options.crRef, fieldManager: options.fieldManager });
  }

  /**
   * Stalled=True with the failure's reason and a Warning event, both with {@link failureMessage}'s text;
   * a refused status write is told by {@link write}, not thrown. The error line is the controller's
   * (`Reconciler error`), once per failed reconcile; this one is at debug.
   */
  async stalled(cr: KubeObject, stats: ReconcileStats, failure: StepFailure, logger: Logger, trace: ReconcileTrace = NO_TRACE): Promise<void> {
    const { reason, action, message } = failure;
    const step = action.toLowerCase() as ReconcileStep;
    logger.debug({ operator: this.options.fieldManager, cr: ObjectRef.of(cr).toString(), step, reason, message }, 'reconcile step failed');
    const text = failureMessage(step, failedObject(cr), message);
    void this.options.events?.warning(cr, reason, action, text);
    try {
      stats.statusWritten = await this.write(cr, { kind: 'stalled', reason, message: text }, failure.children, undefined, logger, trace);
    } catch {
      // Told already (or a 409, retried with the reconcile's own error).
    }
  }

  /**
   * A step that waits for something outside the CR (a referenced object that does not exist yet):
   * Reconciling=True with the reason and a Warning event, both with {@link failureMessage}'s text.
   * @throws what {@link write} throws
   */
  async waiting(cr: KubeObject, stats: ReconcileStats, failure: StepFailure, logger: Logger, trace: ReconcileTrace = NO_TRACE): Promise<void> {
    const text = failureMessage(failure.action.toLowerCase(), failedObject(cr), failure.message);
    void this.options.events?.warning(cr, failure.reason, failure.action, text);
    stats.statusWritten = await this.write(cr, { kind: 'progressing', reason: failure.reason, message: text }, failure.children, undefined, logger, trace);
  }

  /**
   * The end of a reconcile that rendered: counts what was applied and pruned in `stats`, records the
   * `Applied` / `Pruned` events, then either tells the failures ({@link childrenFailed}, which throws),
   * throws {@link ConflictError} for a 409 (no condition, no event), tells a failed `status()`
   * (`statusFailure`: {@link stalled}, then a {@link ReconcileError} with step `status`), tells the scope's `declarationFailure`
   * ({@link stalled}, then a {@link TerminalError}), or writes Ready / Reconciling ({@link childrenOutcome})
   * with the inventory.
   *
   * @throws what {@link childrenFailed} and {@link write} throw; ConflictError on a 409 of an apply or delete
   */
  async childrenReconciled(scope: ReconcileScope, result: ChildrenResult): Promise<void> {
    const { cr, stats, logger, trace } = scope;
    const { applied, pruned, inventory } = result;
    stats.applied = applied.applied.length;
    stats.pruned = pruned.pruned.length;
    this.changed(cr, applied.updated, pruned.pruned);
    if (applied.failures.length + pruned.failures.length > 0) await this.childrenFailed(cr, stats, { apply: applied.failures, prune: pruned.failures }, inventory, logger, trace);
    const conflict = applied.conflict ?? pruned.conflict;
    if (conflict) throw new ConflictError(conflict.message, { cause: conflict });
    const statusFailure = result.statusFailure;
    if (statusFailure) {
      await this.stalled(cr, stats, { reason: statusFailure.reason, action: 'Status', message: statusFailure.message, children: inventory }, logger, trace);
      throw new ReconcileError(statusFailure.reason, statusFailure.message, { cause: statusFailure.cause, step: 'status' });
    }
    const declared = scope.declarationFailure;
    if (declared) {
      await this.stalled(cr, stats, { reason: declared.reason, action: 'Render', message: declared.message, children: inventory }, logger, trace);
      throw new TerminalError(declared.message, { cause: new ReconcileError(declared.reason, declared.message, { step: 'render', objectRef: scope.ref }) });
    }
    stats.statusWritten = await this.write(cr, childrenOutcome(applied.children, applied.waiting), inventory, result.custom, logger, trace);
  }

  /**
   * Tells the failures of the apply and prune steps (Stalled=True with the first one's reason, the
   * inventory written with it), then throws: {@link TerminalError} when every failure is terminal, else
   * {@link ReconcileError} with the Stalled condition's reason (so the controller's `Reconciler error`
   * line says the same), step `apply` or `prune` (the first failure's).
   */
  async childrenFailed(cr: KubeObject, stats: ReconcileStats, failures: { readonly apply: readonly Error[]; readonly prune: readonly Error[] }, inventory: readonly ChildStatus[], logger: Logger, trace: ReconcileTrace = NO_TRACE): Promise<never> {
    const all = [...failures.apply, ...failures.prune];
    const first = all[0] as Error;
    const reason = first instanceof ReconcileError ? first.reason : 'ApplyFailed';
    const message = all.map((f) => f.message).join('; ');
    const pruning = failures.apply.length === 0;
    await this.stalled(cr, stats, { reason, action: pruning ? 'Prune' : 'Apply', message, children: inventory }, logger, trace);
    if (all.every((f) => isTerminalError(f))) throw new TerminalError(message, { cause: first });
    const thrownReason = reason === 'Forbidden' || reason === 'PruneFailed' || reason === 'AdoptionRefused' ? reason : 'ApplyFailed';
    throw new ReconcileError(thrownReason, message, { cause: first, step: pruning ? 'prune' : 'apply', objectRef: ObjectRef.of(cr) });
  }

  /** `Applied` (children that existed, updated) and `Pruned` Normal Events naming the children (none when there are none). */
  changed(cr: KubeObject, updated: readonly ObjectRef[], pruned: readonly ObjectRef[]): void {
    if (updated.length > 0) void this.options.events?.normal(cr, 'Applied', 'Apply', `applied ${updated.join(', ')}`);
    if (pruned.length > 0) void this.options.events?.normal(cr, 'Pruned', 'Prune', `pruned ${pruned.join(', ')} (no longer rendered)`);
  }

  /**
   * Writes the status for `outcome` when it changed ({@link StatusWriter.write}), and when the API server
   * refuses it (anything but 409, which is thrown as is, and 404, which the writer takes as "deleted"):
   * an error log line, a Warning event `StatusWriteFailed` naming the server's message,
   * `cdk8s_operator_status_write_errors_total` + 1, then one more write without the operator's own
   * status fields and with Stalled=True (the outcome's own reason when it was stalled already, else
   * `StatusWriteFailed`); when that is refused too, it is counted and logged.
   *
   * @param children the inventory to write; undefined keeps the CR's `status.children`
   * @param custom the operator's own status fields as rendered; undefined keeps their existing values
   *   (re-sent, so server-side apply keeps them ours)
   * @param trace gets a `status` span: whether a write was sent, and the refusal
   * @returns true when a write was sent
   * @throws ConflictError on 409; ReconcileError `StatusWriteFailed` (step `status`) when refused
   */
  async write(cr: KubeObject, outcome: Outcome, children: readonly ChildStatus[] | undefined, custom: Record<string, unknown> | undefined, logger: Logger, trace: ReconcileTrace = NO_TRACE): Promise<boolean> {
    const span = trace.step('status');
    try {
      const written = await this.writeStatusTold(cr, outcome, children, custom, logger);
      span.set({ 'cdk8s_operator.status.written': written });
      return written;
    } catch (err) {
      span.fail(err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** {@link write} without its span. */
  private async writeStatusTold(cr: KubeObject, outcome: Outcome, children: readonly ChildStatus[] | undefined, custom: Record<string, unknown> | undefined, logger: Logger): Promise<boolean> {
    try {
      return await this.writeStatus(cr, outcome, children, custom);
    } catch (err) {
      if (isConflict(err)) throw err;
      const api = apiErrorOf(err);
      const timeout = findCause(err, (c): c is RequestTimeoutError => c instanceof RequestTimeoutError);
      const serverMessage = api ? serverMessageOf(api) : undefined;
      const { what, told } = statusWriteFailure(api, serverMessage, timeout, err);
      const ref = ObjectRef.of(cr);
      const reference = ref.toString();
      const message = `status ${reference}: ${told}`;
      const fields = { operator: this.options.fieldManager, cr: reference, step: 'status', code: api?.code, serverMessage, timeoutMs: timeout?.timeoutMs };
      this.options.metrics?.statusWriteError?.();
      logger.error({ ...fields, ...errorFields(err) }, what);
      const text = failureMessage('status', failedObject(cr), told);
      void this.options.events?.warning(cr, 'StatusWriteFailed', 'Status', text);
      // No answer: a second write would wait as long for nothing; the retry of the reconcile writes it.
      if (!api && timeout) throw new ReconcileError('StatusWriteFailed', message, { cause: err, step: 'status', objectRef: ref });
      const minimal: Outcome = outcome.kind === 'stalled' ? outcome : { kind: 'stalled', reason: 'StatusWriteFailed', message: text };
      try {
        await this.writeStatus(cr, minimal, children, {}, []);
      } catch (again) {
        if (!isConflict(again)) {
          this.options.metrics?.statusWriteError?.();
          logger.error({ ...fields, ...errorFields(again) }, 'status write refused again without the operator\'s own status fields; the CR shows no condition');
        }
      }
      throw new ReconcileError('StatusWriteFailed', message, { cause: err, step: 'status', objectRef: ref });
    }
  }

  /** Drops what the status writer remembers about a CR (call when it is deleted). */
  forget(uid: string): void {
    this.statusWriter.forget(uid);
  }

  private writeStatus(cr: KubeObject, outcome: Outcome, children: readonly ChildStatus[] | undefined, custom?: Record<string, unknown>, ownFields?: readonly string[]): Promise<boolean> {
    const now = nowRfc3339(this.options.now?.() ?? new Date());
    const fields = ownFields ?? this.options.statusFields ?? [];
    const existing = (cr.status ?? {}) as Record<string, unknown>;
    const own = custom ?? Object.fromEntries(fields.filter((f) => existing[f] !== undefined).map((f) => [f, existing[f]]));
    return this.statusWriter.write(cr, computeStatus(cr, outcome, children, now, own), fields);
  }
}

/**
 * What a failed status write was, for the log line (`what`) and the Event / condition text (`told`):
 * refused by the API server (its code, reason and message), no answer within the client's request
 * timeout (RequestTimeoutError: not a refusal, there is no server message), or failed before any
 * answer (a transport error: connection refused, reset).
 */
function statusWriteFailure(api: ApiError | undefined, serverMessage: string | undefined, timeout: RequestTimeoutError | undefined, err: unknown): { what: string; told: string } {
  if (api) return { what: 'status write refused', told: `status write refused (${api.code} ${api.reason}): ${serverMessage}` };
  if (timeout) return { what: 'status write got no answer', told: `status write got no answer within ${timeout.timeoutMs / 1000} s (the API server or its storage did not respond; not a refusal): ${timeout.method} ${timeout.path}` };
  return { what: 'status write failed before an answer', told: `status write failed before the API server answered: ${errorMessage(err)}` };
}

/**
 * The outcome of a reconcile whose children were all applied: ready, or progressing (`ChildrenNotReady`)
 * with why each waiting child is not ready.
 */
export function childrenOutcome(children: readonly ChildStatus[], waiting: readonly string[]): Outcome {
  return waiting.length === 0
    ? { kind: 'ready', message: `${children.length} ${children.length === 1 ? 'child' : 'children'} ready` }
    : { kind: 'progressing', reason: 'ChildrenNotReady', message: capMessage(waiting.join('; ')) };
}

/** The CR as {@link failureMessage} names it. */
function failedObject(cr: KubeObject): FailedObject {
  return { reference: ObjectRef.of(cr).toString(), name: cr.metadata?.name ?? '' };
}
