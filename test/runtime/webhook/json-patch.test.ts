import fc from 'fast-check';
import { applyJsonPatch, jsonPatch } from '../../../lib/runtime/webhook/json-patch.js';

describe('jsonPatch', () => {
  test('GIVEN two objects WHEN diffed THEN add, remove and replace with RFC 6901 escaping', () => {
    const from = { metadata: { labels: { a: '1', 'x/y': 'old' } }, spec: { list: [1, 2] } };
    const to = { metadata: { labels: { 'x/y': 'new', 'b~c': '2' } }, spec: { list: [1] } };
    expect(jsonPatch(from, to)).toEqual([
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'add', path: '/metadata/labels/b~0c', value: '2' },
      { op: 'replace', path: '/metadata/labels/x~1y', value: 'new' },
      { op: 'replace', path: '/spec/list', value: [1] },
    ]);
  });

  test('GIVEN equal values WHEN diffed THEN no operation', () => {
    expect(jsonPatch({ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 2 }] } })).toEqual([]);
  });

  test('GIVEN any two JSON objects WHEN the patch is applied to the first THEN it gives the second', () => {
    fc.assert(fc.property(fc.object(), fc.object(), (a, b) => {
      const [from, to] = [JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b))];
      expect(applyJsonPatch(from, jsonPatch(from, to))).toEqual(to);
    }));
  });
});
