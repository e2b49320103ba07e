/**
 * The status step of a reconcile: the operator's `status()` hook (lib/operator/render/custom-status.ts),
 * run on every reconcile after the children are applied and pruned, also when the render memo skipped
 * render, with the CR's children as the caches hold them then and its related objects. What it reads
 * is not among render's inputs (render-memo.ts), so a change that only status() reads (a Pod appearing,
 * a child's status) never renders again.
 *
 * Its fields are merged over render's (render's, then status()'s). A failure (status() threw, or its
 * result breaks the status schema) is returned, not thrown: the outcome reporter tells it like a failed
 * render (Stalled=True `StatusFailed` / `InvalidStatus`, a Warning Event, then a ReconcileError with
 * step `status`, logged by the controller at error) once the inventory is known.
 */
import { RenderError } from '../../operator/errors.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { relatedIn } from './child-cache.js';
import { mergeStatus } from '../../operator/render/custom-status.js';
import type { RelatedLookup, RenderInputs } from '../../operator/render/render-children.js';
import type { KubeResource } from '../../operator/render/render-context.js';
import type { KubeObject } from '../client/kube-client.js';
import { errorMessage } from './error-message.js';
import type { ChildrenResult } from './outcome-reporter.js';

/** The operator's status() fields of a CR, validated; undefined when it returned none. Throws when it fails. */
export type StatusFunction = (cr: KubeObject, inputs: RenderInputs) => Record<string, unknown> | undefined;

export interface StatusStepOptions {
  readonly status: StatusFunction;
  /** Where status() finds related objects. @default nothing exists */
  readonly related?: RelatedLookup;
}

/** The status fields to write, or the failure to tell. */
export type StatusStepResult = Pick<ChildrenResult, 'custom' | 'statusFailure'>;

export class StatusStep {
  constructor(private readonly options: StatusStepOptions) {}

  /**
   * Runs status() for `cr` given its `observed` children now, merged over `rendered` (render's status);
   * sharded, related objects made from children are looked up in the CR's `bucket` (child-cache.ts).
   * Never throws: a failure comes back as `statusFailure` (the status fields are then left as they are).
   */
  run(cr: KubeObject, observed: readonly KubeResource[], rendered: Record<string, unknown> | undefined, bucket?: number): StatusStepResult {
    try {
      return { custom: mergeStatus(rendered, this.options.status(cr, { observed, related: relatedIn(this.options.related, bucket) })) };
    } catch (err) {
      const reference = ObjectRef.of(cr).toString();
      const detail = errorMessage(err);
      const message = detail.includes(reference) ? detail : `status ${reference}: ${detail}`;
      const reason = err instanceof RenderError && (err.reason === 'InvalidStatus' || err.reason === 'InvalidReference') ? err.reason : 'StatusFailed';
      return { statusFailure: { reason, message, cause: err } };
    }
  }
}
