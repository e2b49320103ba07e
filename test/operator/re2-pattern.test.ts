import { toRe2Pattern } from '../../lib/operator/schema/re2-pattern.js';

describe('toRe2Pattern', () => {
  test.each([
    [/^(gold|silver|bronze)$/i, '(?i)^(?:gold|silver|bronze)$'],
    [/^a.c$/s, '(?s)^a.c$'],
    [/^a.c$/, '^a[^\\n\\r\\x{2028}\\x{2029}]c$'],
    [/b/y, '^(?:b)'],
    [/^(?<head>a)\x62\u0063$/, '^(?:a)\\x{62}\\x{63}$'],
    [/^\a[[:]$/, '^a[\\[:]$'],
    [/[]/, '[^\\x{0}-\\x{10ffff}]'],
    [/x{2,3}/g, 'x{2,3}'],
  ])('GIVEN %p WHEN translated THEN the RE2 pattern is %p', (regex, pattern) => {
    expect(toRe2Pattern(regex)).toEqual({ pattern });
  });

  test('GIVEN \\s WHEN translated THEN it is spelled out as JS whitespace, including U+00A0 and \\v', () => {
    const result = toRe2Pattern(/\s/) as { pattern: string };
    expect(result.pattern).toContain('\\x{a0}');
    expect(result.pattern).toContain('\\x{9}-\\x{d}');
  });

  test.each([
    [/^(?=a)/, 'a lookahead (?='],
    [/(?<!a)b/, 'a lookbehind (?<!'],
    [/(a)\1/, 'a backreference (\\1)'],
    [/^a$/m, 'the m flag'],
    [/\p{L}/u, 'a Unicode property escape'],
    [/a{1001}/, 'a repetition count above 1000 ({1001})'],
    [/(a{10}){101}/, 'nested repetitions multiply to 1010'],
  ])('GIVEN %p WHEN translated THEN it is refused naming %p', (regex, problem) => {
    const result = toRe2Pattern(regex);
    expect(result).toEqual({ problem: expect.stringContaining(problem) });
  });

  test('GIVEN nested repetitions that multiply to exactly 1000 WHEN translated THEN RE2 accepts them and so do we', () => {
    expect(toRe2Pattern(/(a{10}){100}/)).toEqual({ pattern: '(?:a{10}){100}' });
  });
});
