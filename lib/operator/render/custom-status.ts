/**
 * The operator's `status()` hook, apart from render: its own status fields computed from the CR, the
 * CR's observed children and its related objects, the same {@link RenderContext} render gets (no
 * construct scope). The runtime calls it on every reconcile, after the children are applied and pruned,
 * also when the render memo skipped render (lib/runtime/reconcile/status-step.ts); `render` / `diff` and
 * lib/testing's snapshot helpers call it after render ({@link withOperatorStatus}), so an offline status
 * is what `run` writes.
 *
 * Merge rule: render's status fields, then status()'s (a field both return is status()'s).
 */
import type { CustomResource } from '../custom-resource.js';
import { type ObjectReference, RenderError } from '../errors.js';
import { ObservedChildren, sortResources, type KubeResource, type RenderContext } from './render-context.js';
import { findRelated, type RenderInputs, type RenderOutput, type RenderableOperator } from './render-children.js';
import { resolveReferences, resolveRelatedKinds } from './related.js';
import { validStatus } from './render-result.js';

/** What {@link statusOfCustomResource} needs of an operator besides what render needs. */
export interface StatusOperator extends RenderableOperator {
  /** The operator's `status(cr, context)` hook (see `Operator.status`). @default none */
  status?(cr: CustomResource<unknown>, context: RenderContext): unknown;
}

/**
 * Calls `operator.status(cr, context)` with the CR's observed children and the related objects its
 * references resolve to now (a missing one is simply absent: render, which ran first, decides whether
 * that is an error). Pure.
 *
 * @returns the validated status fields (defaults applied), or undefined when the operator has no
 *   status() or it returned nothing
 * @throws CustomResourceValidationError when the CR is invalid; RenderError `StatusFailed` (status()
 *   threw; the error is the cause), `InvalidStatus` (its result breaks the status schema, naming
 *   `status.<path>`, or sets a runtime-owned field), `InvalidReference` (a malformed reference)
 */
export function statusOfCustomResource(operator: StatusOperator, cr: CustomResource, inputs: RenderInputs = {}): Record<string, unknown> | undefined {
  if (typeof operator.status !== 'function') return undefined;
  const valid = operator.parseCustomResource(cr);
  const ref: ObjectReference = { apiVersion: valid.apiVersion, kind: valid.kind, namespace: valid.metadata.namespace, name: valid.metadata.name };
  const declarations = operator.related ?? {};
  let related: Record<string, KubeResource[]> = {};
  if (Object.keys(declarations).length > 0) {
    let references;
    try {
      references = resolveReferences(declarations, operator.relatedKinds ?? resolveRelatedKinds(declarations), valid);
    } catch (cause) {
      throw new RenderError('InvalidReference', ref, `related: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    }
    related = findRelated(declarations, references, inputs.related).related;
    const reads = inputs.relatedReads;
    if (reads) for (const key of Object.keys(related)) related[key] = related[key].map((object) => reads.track(key, object, 'status'));
  }
  const context: RenderContext = { observed: new ObservedChildren(sortResources(inputs.observed ?? [])), related };
  let returned: unknown;
  try {
    returned = operator.status(valid, context);
  } catch (cause) {
    throw new RenderError('StatusFailed', ref, `status() threw: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
  if (returned === undefined || returned === null) return undefined;
  return validStatus(returned, operator.statusSchema, ref, 'status()');
}

/** Render's status fields, then status()'s: a field both set is status()'s. Undefined when neither has any. */
export function mergeStatus(rendered: Record<string, unknown> | undefined, own: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (own === undefined) return rendered;
  return { ...rendered, ...own };
}

/**
 * `output` with the operator's status() fields merged into its status ({@link mergeStatus}), as the
 * runtime writes them: for offline paths (`render`, `diff`, snapshots). `inputs` as given to render.
 * @throws like {@link statusOfCustomResource}
 */
export function withOperatorStatus(operator: StatusOperator, cr: CustomResource, output: RenderOutput, inputs: RenderInputs = {}): RenderOutput {
  const own = statusOfCustomResource(operator, cr, inputs);
  if (own === undefined) return output;
  return { ...output, status: mergeStatus(output.status, own) };
}
