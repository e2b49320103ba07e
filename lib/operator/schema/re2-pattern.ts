/**
 * JavaScript `RegExp` → the `pattern` of a CRD schema, which the API server compiles with Go's
 * `regexp` package (RE2 syntax) and matches unanchored, like `RegExp.prototype.test`.
 *
 * The translation keeps what a JS regex means, not what it says:
 * - flags: `i` → `(?i)`, `s` → `(?s)`, `y` (sticky, and zod resets `lastIndex` to 0) → anchored at the
 *   start, `g`, `d` and `u` change nothing a match verdict depends on; `m` (JS line terminators include
 *   `\r`, U+2028 and U+2029, RE2's only `\n`) and `v` are refused;
 * - `.` without `s` excludes `\n`, `\r`, U+2028 and U+2029 (RE2's excludes only `\n`);
 * - `\s` / `\S` are spelled out as JS's whitespace set (RE2's `\s` is only `[\t\n\f\r ]`);
 * - `\uXXXX`, `\u{…}`, `\xXX`, `\cX`, `\0`, and JS identity escapes (`\a` is `a` in JS, a bell in RE2)
 *   become `\x{…}` or the literal character; `[]` and `[^]` become classes RE2 reads the same way;
 *   `[` inside a class is escaped (RE2 would read `[[:alpha:]]` as a POSIX class);
 * - named groups become plain groups (names do not change a verdict).
 *
 * Refused, with the reason: lookahead and lookbehind, backreferences, Unicode property escapes, inline
 * modifiers, lone surrogates and, without `u`, astral characters in a class (JS matches UTF-16 code
 * units there), and repetition counts RE2 rejects: above 1000, or nested repetitions whose counts
 * multiply past 1000 (Go's `regexp/syntax` "invalid repeat count").
 *
 * Known difference, not refused: with `i` and without `u`, JS compares upper-cased code units while RE2
 * uses Unicode case folding, so RE2 also matches U+017F (ſ) for `s` and U+212A (Kelvin sign) for `k`.
 *
 * @see https://github.com/google/re2/wiki/Syntax
 * @see https://pkg.go.dev/regexp/syntax
 * @see https://tc39.es/ecma262/#sec-regexp-regular-expression-objects
 */

/** The RE2 form of a JS regex, or why it has none. */
export type Re2Translation = { readonly pattern: string } | { readonly problem: string };

/** Go's `regexp/syntax` limit on a repetition count, alone or multiplied through nesting. */
export const RE2_MAX_REPEAT = 1000;

/** JS WhiteSpace and LineTerminator code points (ECMA-262 `\s`), as ranges. */
const JS_WHITESPACE: readonly [number, number][] = [
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029],
  [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

function hex(cp: number): string {
  return `\\x{${cp.toString(16)}}`;
}

function rangesToClassBody(ranges: readonly [number, number][]): string {
  return ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('');
}

function complement(ranges: readonly [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const WHITESPACE_BODY = rangesToClassBody(JS_WHITESPACE);
const NON_WHITESPACE_BODY = rangesToClassBody(complement(JS_WHITESPACE));
const ANY_BODY = `${hex(0)}-${hex(MAX_CODE_POINT)}`;
/** JS `.` without the `s` flag. */
const JS_DOT = `[^\\n\\r${hex(0x2028)}${hex(0x2029)}]`;

class Refused extends Error {}

function refuse(problem: string): never {
  throw new Refused(problem);
}

/** A code point as RE2 reads it literally: metacharacters escaped, control characters as `\x{…}`. */
function literal(cp: number): string {
  if (cp < 0x80) {
    const ch = String.fromCharCode(cp);
    if (/[A-Za-z0-9]/.test(ch)) return ch;
    if (cp < 0x20 || cp === 0x7f) return hex(cp);
    return /[\\^$.|?*+()[\]{}\-]/.test(ch) ? `\\${ch}` : ch;
  }
  if (cp >= 0xd800 && cp <= 0xdfff) refuse('a lone surrogate (half of a UTF-16 pair)');
  return String.fromCodePoint(cp);
}

interface Frame {
  /** Largest repetition weight found inside the group so far. */
  inner: number;
}

/**
 * Translates a JS regex into an RE2 pattern with the same match verdict on every string (but see the
 * known case-folding difference above).
 *
 * @returns `{ pattern }`, or `{ problem }` naming the construct RE2 lacks (e.g. `a lookahead (?=`)
 */
export function toRe2Pattern(regex: RegExp): Re2Translation {
  try {
    return { pattern: translate(regex) };
  } catch (e) {
    if (e instanceof Refused) return { problem: e.message };
    throw e;
  }
}

function translate(regex: RegExp): string {
  const flags = new Set(regex.flags);
  if (flags.has('m')) refuse('the m flag (JS ends lines also at \\r, U+2028 and U+2029; RE2 only at \\n)');
  if (flags.has('v')) refuse('the v flag (Unicode sets)');
  const unicode = flags.has('u');
  const dotAll = flags.has('s');
  const src = regex.source;
  let i = 0;
  const stack: Frame[] = [{ inner: 1 }];
  let out = '';
  // Weight of the last atom (1, or a group's inner weight), for the repetition check; undefined after
  // an assertion or at the start (nothing to repeat).
  let lastAtomWeight: number | undefined;

  const codePointAt = (at: number): [number, number] => {
    const cp = unicode ? src.codePointAt(at)! : src.charCodeAt(at);
    return [cp, cp > 0xffff ? 2 : 1];
  };

  /** Reads an escape after `\` at `i`; returns RE2 text and whether it is a single character (for class ranges). */
  const escape = (inClass: boolean): { text: string; cp?: number; classBody?: string } => {
    const c = src[i];
    if (c === undefined) refuse('a trailing backslash');
    i++;
    switch (c) {
      case 'd': case 'D': case 'w': case 'W':
        return { text: `\\${c}`, classBody: `\\${c}` };
      case 's':
        return { text: `[${WHITESPACE_BODY}]`, classBody: WHITESPACE_BODY };
      case 'S':
        return { text: `[${NON_WHITESPACE_BODY}]`, classBody: NON_WHITESPACE_BODY };
      case 'b':
        return inClass ? { text: hex(8), cp: 8 } : { text: '\\b' };
      case 'B':
        if (inClass) return unicode ? refuse('\\B inside a class') : { text: 'B', cp: 0x42 };
        return { text: '\\B' };
      case 'n': return { text: '\\n', cp: 0x0a };
      case 'r': return { text: '\\r', cp: 0x0d };
      case 't': return { text: '\\t', cp: 0x09 };
      case 'f': return { text: '\\f', cp: 0x0c };
      case 'v': return { text: '\\v', cp: 0x0b };
      case '0':
        if (/[0-9]/.test(src[i] ?? '')) refuse('an octal escape');
        return { text: hex(0), cp: 0 };
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(src.slice(i));
        if (!m) return unicode ? refuse('an incomplete \\x escape') : { text: 'x', cp: 0x78 };
        i += 2;
        const cp = parseInt(m[0], 16);
        return { text: hex(cp), cp };
      }
      case 'u': {
        const braced = unicode ? /^\{([0-9a-fA-F]+)\}/.exec(src.slice(i)) : null;
        const m = braced ?? /^[0-9a-fA-F]{4}/.exec(src.slice(i));
        if (!m) return unicode ? refuse('an incomplete \\u escape') : { text: 'u', cp: 0x75 };
        i += m[0].length;
        let cp = parseInt(braced ? m[1]! : m[0], 16);
        if (cp >= 0xd800 && cp <= 0xdbff && src.slice(i, i + 2) === '\\u') {
          const low = /^[0-9a-fA-F]{4}/.exec(src.slice(i + 2));
          const lowCp = low ? parseInt(low[0], 16) : 0;
          if (lowCp >= 0xdc00 && lowCp <= 0xdfff) {
            if (inClass && !unicode) refuse('a surrogate pair inside a class without the u flag (JS matches its halves separately)');
            i += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lowCp - 0xdc00);
          }
        }
        if (cp >= 0xd800 && cp <= 0xdfff) refuse('a lone surrogate (half of a UTF-16 pair)');
        return { text: hex(cp), cp };
      }
      case 'c': {
        const letter = src[i];
        if (letter && /[A-Za-z]/.test(letter)) {
          i++;
          const cp = letter.charCodeAt(0) % 32;
          return { text: hex(cp), cp };
        }
        if (unicode) refuse('an incomplete \\c escape');
        // Annex B: a `\c` not followed by a letter is a literal backslash; the `c` is read next.
        i--;
        return { text: '\\\\', cp: 0x5c };
      }
      case 'p': case 'P':
        if (unicode) refuse('a Unicode property escape (\\p{…})');
        return { text: c, cp: c.charCodeAt(0) };
      case 'k':
        if (unicode || /\(\?<(?![=!])/.test(src)) refuse('a backreference (\\k<name>)');
        return { text: 'k', cp: 0x6b };
      default: {
        if (/[1-9]/.test(c)) refuse(`a backreference (\\${c})`);
        i--;
        const [cp, len] = codePointAt(i);
        i += len;
        return { text: literal(cp), cp };
      }
    }
  };

  const klass = (): string => {
    // at i: just after '['
    let negated = false;
    if (src[i] === '^') {
      negated = true;
      i++;
    }
    let body = '';
    let empty = true;
    while (i < src.length && src[i] !== ']') {
      empty = false;
      const start = readClassAtom();
      if (src[i] === '-' && src[i + 1] !== undefined && src[i + 1] !== ']') {
        i++;
        const end = readClassAtom();
        if (start.cp === undefined || end.cp === undefined) {
          if (unicode) refuse('a class range with a class escape as an end');
          body += `${start.classBody ?? start.text}\\-${end.classBody ?? end.text}`;
        } else {
          body += `${start.text}-${end.text}`;
        }
      } else {
        body += start.classBody ?? start.text;
      }
    }
    if (src[i] !== ']') refuse('an unterminated class');
    i++;
    if (empty) return negated ? `[${ANY_BODY}]` : `[^${ANY_BODY}]`;
    return `[${negated ? '^' : ''}${body}]`;
  };

  const readClassAtom = (): { text: string; cp?: number; classBody?: string } => {
    if (src[i] === '\\') {
      i++;
      return escape(true);
    }
    const [cp, len] = codePointAt(i);
    if (!unicode && cp >= 0xd800 && cp <= 0xdfff) refuse('an astral character inside a class without the u flag (JS matches its UTF-16 halves separately)');
    i += len;
    return { text: literal(cp), cp };
  };

  const repeat = (weight: number): void => {
    if (lastAtomWeight === undefined) refuse('a quantifier with nothing to repeat');
    const total = weight * lastAtomWeight;
    if (weight > RE2_MAX_REPEAT || total > RE2_MAX_REPEAT) {
      refuse(`a repetition count above ${RE2_MAX_REPEAT}${weight <= RE2_MAX_REPEAT ? ` (nested repetitions multiply to ${total})` : ''}`);
    }
    const frame = stack[stack.length - 1]!;
    frame.inner = Math.max(frame.inner, total);
    lastAtomWeight = undefined;
  };

  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      i++;
      const e = escape(false);
      out += e.text;
      lastAtomWeight = e.text === '\\b' || e.text === '\\B' ? undefined : 1;
      continue;
    }
    if (c === '[') {
      i++;
      out += klass();
      lastAtomWeight = 1;
      continue;
    }
    if (c === '(') {
      i++;
      if (src[i] === '?') {
        const rest = src.slice(i + 1);
        if (rest.startsWith(':')) {
          i += 2;
        } else if (rest.startsWith('=') || rest.startsWith('!')) {
          refuse(`a lookahead (?${rest[0]}`);
        } else if (rest.startsWith('<=') || rest.startsWith('<!')) {
          refuse(`a lookbehind (?${rest.slice(0, 2)}`);
        } else if (rest.startsWith('<')) {
          const end = src.indexOf('>', i);
          if (end < 0) refuse('an unterminated group name');
          i = end + 1;
        } else {
          refuse('an inline modifier group (?flags:…)');
        }
      }
      out += '(?:';
      stack.push({ inner: 1 });
      lastAtomWeight = undefined;
      continue;
    }
    if (c === ')') {
      i++;
      if (stack.length === 1) refuse('an unmatched )');
      const frame = stack.pop()!;
      const parent = stack[stack.length - 1]!;
      parent.inner = Math.max(parent.inner, frame.inner);
      out += ')';
      lastAtomWeight = frame.inner;
      continue;
    }
    if (c === '|') {
      i++;
      out += '|';
      lastAtomWeight = undefined;
      continue;
    }
    if (c === '^' || c === '$') {
      i++;
      out += c;
      lastAtomWeight = undefined;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      i++;
      if (lastAtomWeight === undefined) refuse('a quantifier with nothing to repeat');
      lastAtomWeight = undefined;
      out += c;
      if (src[i] === '?') {
        i++;
        out += '?';
      }
      continue;
    }
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (m) {
        i += m[0].length;
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
        if (min > RE2_MAX_REPEAT || (max !== undefined && max > RE2_MAX_REPEAT)) refuse(`a repetition count above ${RE2_MAX_REPEAT} (${m[0]})`);
        // Go checks max (or min when unbounded); a count of 0 ends the check (regexp/syntax repeatIsValid).
        repeat(max ?? min);
        out += m[0];
        if (src[i] === '?') {
          i++;
          out += '?';
        }
        continue;
      }
      if (unicode) refuse('a lone {');
      i++;
      out += '\\{';
      lastAtomWeight = 1;
      continue;
    }
    if (c === '.') {
      i++;
      out += dotAll ? '.' : JS_DOT;
      lastAtomWeight = 1;
      continue;
    }
    const [cp, len] = codePointAt(i);
    if (!unicode && cp >= 0xd800 && cp <= 0xdbff) {
      // A literal astral character outside a class: JS matches its two code units in a row, RE2 the code point.
      const pair = src.codePointAt(i)!;
      if (pair <= 0xffff) refuse('a lone surrogate (half of a UTF-16 pair)');
      i += 2;
      out += String.fromCodePoint(pair);
      lastAtomWeight = 1;
      continue;
    }
    i += len;
    out += literal(cp);
    lastAtomWeight = 1;
  }
  if (stack.length !== 1) refuse('an unterminated group');

  const inline = `${flags.has('i') ? 'i' : ''}${dotAll ? 's' : ''}`;
  let pattern = out;
  if (flags.has('y')) pattern = `^(?:${pattern})`;
  return inline ? `(?${inline})${pattern}` : pattern;
}
