/**
 * lib/json-object.ts: canonical JSON (the text hashed into each child's desired-hash annotation and the
 * render memo's fingerprint) must not change with how keys are ordered, nor with whether they were in
 * order already (sortedKeys skips the sort then).
 */
import { canonicalJson, jsonEqual, sortedKeys } from '../../lib/json-object.js';
import { seededRandom as random } from '../support/seeded-random.js';

const KEYS = ['a', 'B', 'b', 'aa', '10', '2', 'é', 'metadata', 'apiVersion', 'z-1', 'z_1', ''];
const LEAVES = [1, 'x', true, null, undefined, 2.5, 0, '', Number.NaN];

function value(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth > 3 || pick < 0.3) return LEAVES[Math.floor(next() * LEAVES.length)];
  if (pick < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of KEYS) if (next() < 0.4) out[key] = value(next, depth + 1);
  return out;
}

/** The same value with every object's keys inserted in reverse order. */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v).reverse().map((k) => [k, reversed((v as Record<string, unknown>)[k])]));
}

describe('sortedKeys and canonicalJson', () => {
  test('GIVEN objects with keys in any order THEN sortedKeys equals Object.keys sorted, whether or not they were in order', () => {
    for (const keys of [[], ['a'], ['a', 'b', 'c'], ['c', 'b', 'a'], ['10', '2', 'a'], ['b', 'a', 'c'], ['a', 'a-b', 'a_b', 'aB']]) {
      const object = Object.fromEntries(keys.map((k) => [k, 1]));
      expect(sortedKeys(object)).toEqual(Object.keys(object).sort());
    }
  });

  test('GIVEN generated JSON values THEN canonical JSON is the same for any key order, and parses back to the value', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const v = value(random(seed), 0);
      const text = canonicalJson(v);
      expect({ seed, text: canonicalJson(reversed(v)) }).toEqual({ seed, text });
      if (text !== undefined) expect({ seed, parsed: JSON.parse(text) }).toEqual({ seed, parsed: JSON.parse(JSON.stringify(v)) });
    }
  });

  test('GIVEN a known object THEN its canonical text is exactly this (a change would re-apply every child once after an upgrade)', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: undefined, a: null }], a: 1, '10': 'x', '2': 'y' })).toBe('{"2":"y","10":"x","a":1,"b":[2,{"a":null,"d":1}]}') // integer-like keys first, as JavaScript orders them;
  });

  test('GIVEN pairs of generated values, and each value with one leaf changed THEN jsonEqual says what comparing their canonical JSON says', () => {
    let equal = 0;
    let different = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const next = random(seed);
      const a = value(next, 0);
      const b = next() < 0.5 ? reversed(a) : next() < 0.5 ? changedLeaf(a, next) : value(next, 0);
      const expected = canonicalJson(a) === canonicalJson(b);
      expect({ seed, equal: jsonEqual(a, b) }).toEqual({ seed, equal: expected });
      expect({ seed, equal: jsonEqual(b, a) }).toEqual({ seed, equal: expected });
      if (expected) equal++;
      else different++;
    }
    expect(equal).toBeGreaterThan(100); // both verdicts reached many times
    expect(different).toBeGreaterThan(100);
  });
});

/** `v` with one leaf (picked by `next`) replaced by another leaf value, undefined included. */
function changedLeaf(v: unknown, next: () => number): unknown {
  if (Array.isArray(v)) {
    if (v.length === 0) return [LEAVES[Math.floor(next() * LEAVES.length)]];
    const i = Math.floor(next() * v.length);
    return v.map((item, j) => (j === i ? changedLeaf(item, next) : item));
  }
  if (v === null || typeof v !== 'object') return LEAVES[Math.floor(next() * LEAVES.length)];
  const keys = Object.keys(v);
  const key = keys.length === 0 ? KEYS[Math.floor(next() * KEYS.length)]! : keys[Math.floor(next() * keys.length)]!;
  return { ...v, [key]: changedLeaf((v as Record<string, unknown>)[key], next) };
}
