/**
 * The text of an error a reconcile step caught (from render, finalize, a readyWhen predicate or the API
 * server), for condition messages, Event notes and the errors it throws.
 */
import { hasBrand } from '../../operator/brand.js';
import { ReconcileError } from '../errors.js';

/**
 * An error's message, with its cause's when the message does not include it. Not for the SDK's own
 * errors (their message is complete; a validation error's cause is zod's, whose message is raw JSON).
 * A thrown non-Error is stringified.
 */
export function errorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (hasBrand(err, 'OperatorError') || err instanceof ReconcileError) return err.message;
  const cause = err.cause instanceof Error && !err.message.includes(err.cause.message) ? `: ${err.cause.message}` : '';
  return err.message + cause;
}
