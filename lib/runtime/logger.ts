/**
 * The logging surface the runtime needs: four levels, each taking structured fields then a message.
 * A pino logger satisfies it as is (`pino()` or `logger.child({...})`).
 */
import { hasBrand } from '../operator/brand.js';
import { causeChain } from './error-chain.js';

/** Four levels, each taking structured fields then a message (a pino logger as is). */
export interface Logger {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

/** A logger that drops everything; the default where no logger is injected. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** The `err` field of a log line: see {@link errorFields}. */
export interface ErrorLogFields {
  readonly name?: string;
  readonly message: string;
  readonly code?: unknown;
  readonly reason?: unknown;
  readonly step?: unknown;
  /**
   * The stack of what was thrown where it was thrown: the first error of the cause chain that is not one
   * of the SDK's errors wrapping another (a `ReconcileError` around a `RenderError` around a render's own
   * throw), so a throw in render, finalize or a webhook handler gives the user's `file:line:col` as its
   * first frame (with tsx, the `.ts` file's). Absent when there is no stack (a thrown string).
   */
  readonly stack?: string;
}

/**
 * A structured summary of an error for a log line (`{err: {...}}` is pino's convention): name, message,
 * Node's `code`, the `reason` and `step` of the runtime's errors (lib/runtime/runtime-error.ts), and the
 * stack of what was thrown ({@link ErrorLogFields.stack}).
 */
export function errorFields(err: unknown): { err: ErrorLogFields } {
  // Duck-typed rather than `instanceof Error`: errors from Node internals may come from another realm (jest's VM).
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    const e = err as { name?: string; message: string; code?: unknown; reason?: unknown; step?: unknown };
    const stack = thrownStack(err);
    return { err: { name: e.name, message: e.message, code: e.code, reason: e.reason, step: e.step, ...(stack ? { stack } : {}) } };
  }
  return { err: { message: String(err) } };
}

/** See {@link ErrorLogFields.stack}. */
function thrownStack(err: unknown): string | undefined {
  const stackOf = (e: unknown): string | undefined => {
    const stack = e && typeof e === 'object' ? (e as { stack?: unknown }).stack : undefined;
    return typeof stack === 'string' && stack !== '' ? stack : undefined;
  };
  for (const candidate of causeChain(err)) {
    const wraps = (candidate as { cause?: unknown }).cause;
    if ((hasBrand(candidate, 'RuntimeError') || hasBrand(candidate, 'OperatorError')) && wraps && typeof wraps === 'object') continue;
    const stack = stackOf(candidate);
    if (stack) return stack;
  }
  return stackOf(err);
}

/**
 * A logger that adds `fields` to every line (pino's `child()` where the logger has one, so pino keeps its
 * fast path; a merging wrapper otherwise). Used for per-reconcile fields: controller, namespace, name,
 * reconcileID, as controller-runtime logs them.
 */
export function withFields(logger: Logger, fields: object): Logger {
  const child = (logger as { child?: (bindings: object) => Logger }).child;
  if (typeof child === 'function') return child.call(logger, fields);
  return {
    debug: (f, msg) => logger.debug({ ...fields, ...f }, msg),
    info: (f, msg) => logger.info({ ...fields, ...f }, msg),
    warn: (f, msg) => logger.warn({ ...fields, ...f }, msg),
    error: (f, msg) => logger.error({ ...fields, ...f }, msg),
  };
}
