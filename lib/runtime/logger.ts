/**
 * The logging surface the runtime needs: four levels, each taking structured fields then a message.
 * A pino logger satisfies it as is (`pino()` or `logger.child({...})`).
 */
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

/**
 * A structured summary of an error for a log line (`{err: {...}}` is pino's convention): name, message,
 * Node's `code`, and the `reason` and `step` of the runtime's errors (lib/runtime/runtime-error.ts).
 */
export function errorFields(err: unknown): { err: { name?: string; message: string; code?: unknown; reason?: unknown; step?: unknown } } {
  // Duck-typed rather than `instanceof Error`: errors from Node internals may come from another realm (jest's VM).
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    const e = err as { name?: string; message: string; code?: unknown; reason?: unknown; step?: unknown };
    return { err: { name: e.name, message: e.message, code: e.code, reason: e.reason, step: e.step } };
  }
  return { err: { message: String(err) } };
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
