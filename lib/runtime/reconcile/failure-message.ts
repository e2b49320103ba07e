/**
 * The text a failed reconcile writes into its CR's Stalled condition message and Warning Event note.
 *
 * Both are regarding the CR, and both are cut by the API server's or our limit (an Event note is refused
 * above 1024 UTF-8 bytes, `NoteLengthLimit` in kubernetes pkg/apis/core/validation/events.go; a condition
 * message is cut at {@link MAX_CONDITION_MESSAGE_LENGTH} code points). Error messages name their object
 * first (`render Memcached ns/<name>: Service <name>-svc at <name>/service: invalid name …`), so a long
 * CR name, repeated in child names and construct paths, pushes the reason itself past the cut.
 */
import { MAX_CONDITION_MESSAGE_LENGTH } from './conditions.js';
import { truncateUtf8 } from './text-limit.js';

/**
 * Longest failure message, in UTF-8 bytes: the Event note limit, which also keeps it within the
 * condition's {@link MAX_CONDITION_MESSAGE_LENGTH} code points (a code point is at least one byte).
 */
export const FAILURE_MESSAGE_MAX_BYTES = Math.min(1024, MAX_CONDITION_MESSAGE_LENGTH);

/** Names at most this long are never shortened (a DNS label, 63, plus room). */
const SHORTEN_NAMES_LONGER_THAN = 24;

/** The object a failure is about: the CR, as `Kind namespace/name` and its bare `metadata.name`. */
export interface FailedObject {
  /** `Kind namespace/name` (or `Kind name` when cluster-scoped). */
  readonly reference: string;
  readonly name: string;
}

/**
 * The message for a failure of `step` (`render`, `apply`, `prune`, `status`, `finalize`) of `object`,
 * whose error said `detail`:
 *
 * 1. **Leads with the reason.** A heading that only names the object (`render Kind ns/name: `,
 *    `finalize Kind ns/name: `, `Kind ns/name: `; `Kind ns/name is invalid: ` becomes `invalid: `) is
 *    taken off the front, and the object is named once, at the end: `<reason> (<step> <Kind ns/name>)`.
 * 2. **Names the object once.** Every mention of the object's name inside the reason (child names,
 *    construct paths, quoted names) is shortened to its first 12 and last 6 characters around '…' when
 *    the name is longer than 24 characters; the full name is the one at the end.
 * 3. **Fits.** Whatever does not fit in `maxBytes` is cut at a code point boundary, ending in '…' (the
 *    object reference at the end goes first: the condition's owner and the Event's `regarding` name it
 *    anyway).
 *
 * Deterministic; the result is at most `maxBytes` UTF-8 bytes, lone surrogates as U+FFFD.
 *
 * @param maxBytes @default {@link FAILURE_MESSAGE_MAX_BYTES} (1024)
 */
export function failureMessage(step: string, object: FailedObject, detail: string, maxBytes = FAILURE_MESSAGE_MAX_BYTES): string {
  const reason = withoutObjectHeading(detail, object.reference) || detail;
  return truncateUtf8(`${shortenName(reason, object.name)} (${step} ${object.reference})`, maxBytes);
}

/** `detail` without a heading that only names the object (repeatedly: `render X: X is invalid: …`). */
function withoutObjectHeading(detail: string, reference: string): string {
  let text = detail.trimStart();
  for (;;) {
    const before = text;
    for (const heading of [`render ${reference}: `, `finalize ${reference}: `, `${reference}: `]) {
      if (text.startsWith(heading)) text = text.slice(heading.length);
    }
    if (text.startsWith(`${reference} is invalid: `)) text = `invalid: ${text.slice(`${reference} is invalid: `.length)}`;
    if (text === before) return text;
  }
}

/** Every mention of `name` in `text` shortened to `<first 12>…<last 6>` (names of at most 24 characters stay). */
function shortenName(text: string, name: string): string {
  if (name.length <= SHORTEN_NAMES_LONGER_THAN) return text;
  return text.split(name).join(`${name.slice(0, 12)}…${name.slice(-6)}`);
}
