/**
 * What `render(cr, scope, context)` may return besides the children it builds: the operator's own status
 * fields and a timed requeue. Returning nothing is the same as `{}`.
 */
import { RUNTIME_STATUS_FIELDS } from '../schema/runtime-status-fields.js';
import { RenderError, type ObjectReference } from '../errors.js';

/** A delay: cdk8s's `Duration` (`Duration.minutes(5)`) or anything with `toMilliseconds()`. */
export interface RequeueDelay {
  toMilliseconds(): number;
}

/**
 * The optional return value of `render`.
 *
 * @example
 * render(cr, scope, context) {
 *   const pods = context.related.pods;
 *   return { status: { nodes: pods.map((p) => p.metadata.name) }, requeueAfter: Duration.minutes(10) };
 * }
 */
export interface RenderResult<Status> {
  /**
   * The operator's own status fields (the `status` schema's input type). Validated (defaults applied)
   * before it is written, merged into the runtime's single status write (observedGeneration,
   * conditions, children), and written only when it changed. A field left out is removed (server-side
   * apply drops fields its manager no longer sends). @default none: the fields keep their last value
   */
  readonly status?: Status;
  /**
   * Reconcile this CR again after this delay even if nothing changes (controller-runtime's
   * `Result{RequeueAfter}`); an event in between reconciles it earlier without cancelling the timer.
   * Raised to {@link MIN_REQUEUE_AFTER_MS} and capped at {@link MAX_REQUEUE_AFTER_MS}. Counted in
   * `controller_runtime_reconcile_total{result="requeue_after"}`. @default no timed requeue
   */
  readonly requeueAfter?: RequeueDelay;
}

/** Shortest timed requeue: 1 s, so a render cannot turn into a hot loop. */
export const MIN_REQUEUE_AFTER_MS = 1_000;
/** Longest timed requeue: 24 h (the periodic resync, 10 h by default, comes first anyway). */
export const MAX_REQUEUE_AFTER_MS = 86_400_000;


export interface StatusSchema {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/**
 * Checks what render returned.
 * @throws RenderError `InvalidResult` (not an object, a bad requeueAfter) or `InvalidStatus` (no status
 *   schema, a schema violation naming `status.<path>`, a runtime-owned key)
 */
export function renderResultOf(returned: unknown, statusSchema: StatusSchema | undefined, ref: ObjectReference): { status?: Record<string, unknown>; requeueAfterMs?: number } {
  if (returned === undefined || returned === null) return {};
  if (typeof returned !== 'object' || Array.isArray(returned)) {
    throw new RenderError('InvalidResult', ref, `render() must return nothing or { status?, requeueAfter? }, got ${Array.isArray(returned) ? 'an array' : typeof returned}`);
  }
  const { status, requeueAfter, ...rest } = returned as RenderResult<unknown>;
  const unknownKeys = Object.keys(rest);
  if (unknownKeys.length > 0) throw new RenderError('InvalidResult', ref, `render() returned unknown field(s) ${unknownKeys.join(', ')}; expected status, requeueAfter`);
  const out: { status?: Record<string, unknown>; requeueAfterMs?: number } = {};

  if (requeueAfter !== undefined) {
    let ms = NaN;
    try {
      ms = typeof requeueAfter?.toMilliseconds === 'function' ? requeueAfter.toMilliseconds() : NaN;
    } catch {
      // e.g. cdk8s's Duration.millis(0.5) refuses to convert: reported below like any other bad delay
    }
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new RenderError('InvalidResult', ref, `requeueAfter must be a positive Duration (e.g. Duration.minutes(5)), got ${describeValue(requeueAfter)}`);
    }
    out.requeueAfterMs = Math.min(MAX_REQUEUE_AFTER_MS, Math.max(MIN_REQUEUE_AFTER_MS, Math.round(ms)));
  }

  if (status !== undefined) out.status = validStatus(status, statusSchema, ref, 'render()');
  return out;
}

/**
 * Validates the operator's own status fields as `source` (`render()` or `status()`) returned them: parsed
 * by the status schema (defaults applied), then copied as plain JSON.
 * @throws RenderError `InvalidStatus`: no status schema, a schema violation naming `status.<path>`, not
 *   an object, or a runtime-owned key (observedGeneration, conditions, children)
 */
export function validStatus(status: unknown, statusSchema: StatusSchema | undefined, ref: ObjectReference, source: 'render()' | 'status()'): Record<string, unknown> {
  if (!statusSchema) throw new RenderError('InvalidStatus', ref, `${source} returned a status, but the operator declares no \`status\` schema`);
  const parsed = statusSchema.safeParse(status);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${['status', ...issue.path.map(String)].join('.')}: ${issue.message}`);
    throw new RenderError('InvalidStatus', ref, problems.join('; '));
  }
  const data = parsed.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new RenderError('InvalidStatus', ref, 'status must be an object');
  const reserved = RUNTIME_STATUS_FIELDS.filter((key) => key in (data as object));
  if (reserved.length > 0) throw new RenderError('InvalidStatus', ref, `status.${reserved[0]} is written by the runtime; use another field name`);
  return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
