import { parseDurationMs } from '../../lib/cli/duration-flag.js';

test('GIVEN Go-style durations or bare seconds THEN milliseconds', () => {
  expect(parseDurationMs('30s')).toBe(30_000);
  expect(parseDurationMs('1m30s')).toBe(90_000);
  expect(parseDurationMs('500ms')).toBe(500);
  expect(parseDurationMs('2h')).toBe(7_200_000);
  expect(parseDurationMs('45')).toBe(45_000);
  expect(parseDurationMs('0.5')).toBe(500);
});

test('GIVEN garbage THEN an error naming the value', () => {
  expect(() => parseDurationMs('soon')).toThrow('"soon" is not a duration');
  expect(() => parseDurationMs('10x')).toThrow('"10x"');
  expect(() => parseDurationMs('')).toThrow('not a duration');
});
