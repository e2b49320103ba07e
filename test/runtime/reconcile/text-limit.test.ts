import fc from 'fast-check';
import { codePointLength, truncateCodePoints, truncateUtf8, utf8ByteLength, wellFormed } from '../../../lib/runtime/reconcile/text-limit.js';

/** Text mixing 1-, 2-, 3- and 4-byte characters and lone surrogates. */
const anyText = fc.array(
  fc.oneof(fc.constantFrom('a', 'é', '€', '😀', '\uD800', '\uDC00'), fc.string({ unit: 'binary', maxLength: 3 })),
  { maxLength: 400 },
).map((parts) => parts.join(''));

describe('truncateUtf8', () => {
  test('GIVEN 3000 ASCII characters THEN 1024 bytes ending in an ellipsis', () => {
    const cut = truncateUtf8('x'.repeat(3000), 1024);
    expect(Buffer.byteLength(cut)).toBe(1024);
    expect(cut.endsWith('…')).toBe(true);
  });

  test('GIVEN 600 × "é" (1200 bytes) THEN at most 1024 bytes, no character split', () => {
    const cut = truncateUtf8('é'.repeat(600), 1024);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(1024);
    expect(cut).toBe('é'.repeat(510) + '…');
  });

  test('GIVEN any text and limit THEN the result fits, is well-formed, and is a prefix of the text (or the text itself when it fits)', () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 3, max: 1200 }), (text, max) => {
        const cut = truncateUtf8(text, max);
        expect(utf8ByteLength(cut)).toBeLessThanOrEqual(max);
        expect(wellFormed(cut)).toBe(cut);
        if (utf8ByteLength(text) <= max) expect(cut).toBe(wellFormed(text));
        else expect(wellFormed(text).startsWith(cut.slice(0, -1))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test('GIVEN a limit below the ellipsis THEN a RangeError', () => {
    expect(() => truncateUtf8('abcdef', 2)).toThrow(RangeError);
  });
});

describe('truncateCodePoints', () => {
  test('GIVEN astral characters THEN they count as one code point and are never split', () => {
    expect(truncateCodePoints('😀'.repeat(5), 5)).toBe('😀'.repeat(5));
    expect(truncateCodePoints('😀'.repeat(6), 5)).toBe('😀'.repeat(4) + '…');
  });

  test('GIVEN any text and limit THEN at most `max` code points, well-formed; unchanged when it fits', () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 500 }), (text, max) => {
        const cut = truncateCodePoints(text, max);
        expect(codePointLength(cut)).toBeLessThanOrEqual(max);
        expect(wellFormed(cut)).toBe(cut);
        if (codePointLength(text) <= max) expect(cut).toBe(wellFormed(text));
        else expect(codePointLength(cut)).toBe(max);
      }),
      { numRuns: 300 },
    );
  });
});

describe('wellFormed', () => {
  test('GIVEN lone surrogates THEN each becomes U+FFFD; pairs are kept', () => {
    expect(wellFormed('a\uD800b\uDC00c😀')).toBe('a\uFFFDb\uFFFDc😀');
    expect(utf8ByteLength('\uD800')).toBe(3);
  });
});
