/**
 * Waits for a condition in an integration test: polls `check` until it returns something other than
 * undefined or false, and returns that. No fixed sleeps: the wait ends as soon as the condition holds.
 *
 * @throws Error `"<what>: not within <timeoutMs> ms (last error: …)<context>"` at the deadline
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; context?: () => string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}${options.context?.() ?? ''}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 200));
  }
}
