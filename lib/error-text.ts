/**
 * The text of a thrown value, for the messages that quote it (`error: …` lines, wrapped errors, probe
 * results): an Error's message, anything else stringified. The reconciler's own, which adds the cause,
 * is lib/runtime/reconcile/error-message.ts.
 */

/** `err.message` for an Error, else `String(err)`. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The first line of {@link messageOf}: an error's summary without the detail lines after it. */
export function firstLineOf(err: unknown): string {
  return messageOf(err).split('\n', 1)[0];
}
