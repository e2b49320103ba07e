/**
 * Cutting text to a limit the API server counts in its own units: UTF-8 bytes (Go's `len(string)`, used
 * by core validation such as an Event's note) or code points (Go's `utf8.RuneCountInString`, used by an
 * OpenAPI schema's `maxLength`, e.g. a CRD's condition message).
 *
 * Both functions first make the text well-formed UTF-16: a lone surrogate becomes U+FFFD, which is what
 * the API server's JSON decoder stores for it (3 bytes), so what we count is what the server counts.
 * Neither ever splits a code point.
 */

/** The ellipsis appended to cut text: U+2026, 1 code point, 3 UTF-8 bytes. */
export const ELLIPSIS = '…';

/** Size of `text` in UTF-8 bytes, as the API server counts it after decoding our JSON. */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(wellFormed(text), 'utf8');
}

/** Number of code points (Go runes) in `text`, as an OpenAPI `maxLength` counts it. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of wellFormed(text)) n++;
  return n;
}

/**
 * `text` if it fits in `maxBytes` UTF-8 bytes; otherwise its longest prefix of whole code points that,
 * followed by `ellipsis`, fits.
 *
 * @param maxBytes the limit in UTF-8 bytes; must be at least the ellipsis' size
 * @param ellipsis appended when cutting. @default '…' (3 bytes)
 * @throws RangeError when `maxBytes` is smaller than the ellipsis
 */
export function truncateUtf8(text: string, maxBytes: number, ellipsis = ELLIPSIS): string {
  const whole = wellFormed(text);
  if (Buffer.byteLength(whole, 'utf8') <= maxBytes) return whole;
  const budget = maxBytes - Buffer.byteLength(ellipsis, 'utf8');
  if (budget < 0) throw new RangeError(`maxBytes ${maxBytes} is smaller than the ellipsis ${JSON.stringify(ellipsis)}`);
  let used = 0;
  let end = 0;
  for (const ch of whole) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > budget) break;
    used += size;
    end += ch.length;
  }
  return whole.slice(0, end) + ellipsis;
}

/**
 * `text` if it has at most `maxCodePoints` code points; otherwise its first `maxCodePoints - 1` code
 * points followed by '…'.
 *
 * @throws RangeError when `maxCodePoints` is below 1
 */
export function truncateCodePoints(text: string, maxCodePoints: number): string {
  if (maxCodePoints < 1) throw new RangeError(`maxCodePoints must be at least 1 (got ${maxCodePoints})`);
  const whole = wellFormed(text);
  if (whole.length <= maxCodePoints) return whole; // UTF-16 units ≥ code points
  let count = 0;
  let end = 0;
  for (const ch of whole) {
    if (count === maxCodePoints - 1) {
      // Is the rest exactly one code point? Then the whole text fits.
      return whole.length - end === ch.length ? whole : whole.slice(0, end) + ELLIPSIS;
    }
    count++;
    end += ch.length;
  }
  return whole;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with every lone surrogate replaced by U+FFFD, as the API server's JSON decoder stores it. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
