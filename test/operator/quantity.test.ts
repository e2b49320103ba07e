import { canonicalQuantity, parseQuantity, quantitiesEqual } from '../../lib/operator/schema/quantity.js';

describe('quantity', () => {
  test.each([
    ['1Gi', '1073741824'],
    ['500m', '0.5'],
    ['1000m', '1'],
    ['1k', '1000'],
    ['1e3', '1k'],
    ['1.5Gi', '1536Mi'],
    ['0.1', '100m'],
    ['123Mi', '128974848'],
    [1, '1000m'],
    [0.25, '250m'],
    ['0', '0m'],
  ])('GIVEN %p and %p THEN equal', (a, b) => {
    expect(quantitiesEqual(a, b)).toBe(true);
  });

  test.each([
    ['1Gi', '1G'],
    ['500m', '0.6'],
    ['1', '1001m'],
    ['abc', 'abc'],
    ['1Gi', 'x'],
  ])('GIVEN %p and %p THEN not equal', (a, b) => {
    expect(quantitiesEqual(a, b)).toBe(false);
  });

  test('rejects non-quantities', () => {
    expect(parseQuantity('nginx:1.0')).toBeUndefined();
    expect(parseQuantity('')).toBeUndefined();
    expect(parseQuantity('1Gb')).toBeUndefined();
  });

  test('rounds below nano precision up, like the API server', () => {
    expect(canonicalQuantity('0.0000000001')).toBe(canonicalQuantity('1n'));
  });

  test('negative values', () => {
    expect(quantitiesEqual('-1Ki', '-1024')).toBe(true);
  });

  test('GIVEN a rounding scale THEN values finer than it are rounded up to it (RoundUp), coarser ones are kept', () => {
    expect(canonicalQuantity('1.5n')).toBe('2e-9');
    expect(canonicalQuantity('1.5n', -3)).toBe('1e-3');
    expect(canonicalQuantity('0.1e-12', -3)).toBe('1e-3');
    expect(canonicalQuantity('1001u', -3)).toBe('2e-3');
    expect(canonicalQuantity('1000u', -3)).toBe('1e-3');
    expect(canonicalQuantity('1Gi', -3)).toBe(canonicalQuantity('1073741824'));
    expect(quantitiesEqual('1.5n', '1m', -3)).toBe(true);
    expect(quantitiesEqual('1.5n', '1m')).toBe(false);
  });
});
