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

/** A structured summary of an error for a log line (`{err: {...}}` is pino's convention). */
export function errorFields(err: unknown): { err: { name?: string; message: string; code?: unknown; reason?: unknown } } {
  // Duck-typed rather than `instanceof Error`: errors from Node internals may come from another realm (jest's VM).
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    const e = err as { name?: string; message: string; code?: unknown; reason?: unknown };
    return { err: { name: e.name, message: e.message, code: e.code, reason: e.reason } };
  }
  return { err: { message: String(err) } };
}
