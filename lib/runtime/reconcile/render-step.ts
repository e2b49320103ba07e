/**
 * The render step of a reconcile: the CR's desired children (and ordering, status, requeue) from the
 * operator's render, given the CR's observed children and its related objects.
 *
 * - A missing referenced object (`RenderError` `ReferenceNotFound`) is waited for, not retried: the CR is
 *   Reconciling with that reason and a Warning event, and the step returns nothing (the object's
 *   creation reconciles the CR through the related index).
 * - Any other failure: Stalled=True with `RenderFailed` (or the RenderError's `InvalidStatus`,
 *   `InvalidReference`, `InvalidResult`, or `ChildRefused` for children the offline validator refused) and a Warning event, then a thrown {@link ReconcileError}, step
 *   `render`, whose cause is render's error (a `TerminalError` thrown by render stays in the chain, where
 *   the controller finds it).
 */
import { RenderError } from '../../operator/errors.js';
import type { RelatedLookup, RenderInputs, RenderOutput } from '../../operator/render/render-children.js';
import type { KubeResource } from '../../operator/render/render-context.js';
import type { KubeObject } from '../client/kube-client.js';
import { ChildRefusedError } from '../../validator/child-refused-error.js';
import { findCause } from '../error-chain.js';
import { ReconcileError, type ReconcileFailureReason } from '../errors.js';
import { type ChildCache, readerIn, relatedIn } from './child-cache.js';
import { errorMessage } from './error-message.js';
import type { OutcomeReporter } from './outcome-reporter.js';
import type { ReconcileScope } from './reconcile-scope.js';

/** Renders a CR: bare stamped children, or the whole {@link RenderOutput}; throws when render fails. */
export type RenderFunction = (cr: KubeObject, inputs: RenderInputs) => KubeObject[] | RenderOutput;

export interface RenderStepOptions {
  readonly render: RenderFunction;
  /** Where render finds related objects. @default nothing exists */
  readonly related?: RelatedLookup;
  /** The caches of the child kinds: render's `context.observed` is the CR's children in them. */
  readonly children: readonly ChildCache[];
  /** Tells a failed or waiting render. */
  readonly reporter: OutcomeReporter;
}

/** RenderError reasons that are the Stalled condition's reason as they are; any other failure is `RenderFailed`. */
const OWN_REASONS: readonly string[] = ['InvalidStatus', 'InvalidReference', 'InvalidResult'];

export class RenderStep {
  constructor(private readonly options: RenderStepOptions) {}

  /**
   * Renders `cr`. @returns its output, or undefined when it waits for a referenced object (told already)
   * @throws ReconcileError (step `render`) when render fails, after Stalled=True is told; what the
   *   status write throws (ConflictError, ReconcileError `StatusWriteFailed`) while waiting
   */
  async run(scope: ReconcileScope): Promise<RenderOutput | undefined> {
    const { cr, stats, logger, log, trace } = scope;
    const span = trace.step('render');
    try {
      const output = toRenderOutput(this.options.render(cr, { observed: this.observedChildren(cr, scope.bucket), related: relatedIn(this.options.related, scope.bucket) }));
      span.set({ 'cdk8s_operator.render.children': output.children.length });
      span.end();
      return output;
    } catch (err) {
      const reference = scope.ref.toString();
      const detail = errorMessage(err);
      const message = detail.includes(reference) ? detail : `render ${reference}: ${detail}`;
      if (err instanceof RenderError && err.reason === 'ReferenceNotFound') {
        span.set({ 'cdk8s_operator.render.waiting': true });
        span.end();
        logger.info({ ...log, message }, 'waiting for a referenced object');
        await this.options.reporter.waiting(cr, stats, { reason: 'ReferenceNotFound', action: 'Render', message }, logger, trace);
        return undefined;
      }
      span.fail(err);
      span.end();
      const reason = failureReason(err);
      await this.options.reporter.stalled(cr, stats, { reason, action: 'Render', message }, logger, trace);
      throw new ReconcileError(reason, message, { cause: err, step: 'render', objectRef: scope.ref });
    }
  }

  /** This CR's children in the caches (any owned kind; sharded, those of the CR's `bucket`), as render's `context.observed`. */
  observedChildren(cr: KubeObject, bucket?: number): KubeResource[] {
    const uid = cr.metadata?.uid;
    if (!uid) return [];
    return this.options.children.flatMap((child) => readerIn(child.cache, bucket).byOwnerUid(uid) as KubeResource[]);
  }
}

/** The Stalled reason of a failed render. */
function failureReason(err: unknown): ReconcileFailureReason {
  if (findCause(err, (candidate): candidate is ChildRefusedError => candidate instanceof ChildRefusedError)) return 'ChildRefused';
  return err instanceof RenderError && OWN_REASONS.includes(err.reason) ? (err.reason as ReconcileFailureReason) : 'RenderFailed';
}

/** A render's output, also when the render function returned bare children. */
function toRenderOutput(rendered: KubeObject[] | RenderOutput): RenderOutput {
  if (!Array.isArray(rendered)) return rendered;
  return { children: rendered as RenderOutput['children'], waitsFor: new Map(), readyWhen: new Map(), references: [] };
}
