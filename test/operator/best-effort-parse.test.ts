/**
 * Reading stored data as the API server does: defaults, pruning, no validation; values of the wrong
 * JSON type are left out and reported.
 */
import { z } from 'zod';
import { parseBestEffort } from '../../lib/operator/schema/best-effort-parse.js';

const Spec = z.object({
  replicas: z.int().min(1).default(1),
  port: z.union([z.int(), z.string()]).meta({ 'x-kubernetes-int-or-string': true }).optional(),
  tags: z.array(z.string().min(3)).optional(),
  note: z.string().nullable().optional(),
  extra: z.looseObject({}).optional(),
});

describe('parseBestEffort', () => {
  test('GIVEN a valid value WHEN read THEN it is zod\'s parse, with no issue', () => {
    expect(parseBestEffort(Spec, { replicas: 2 }, 'spec')).toEqual({ value: { replicas: 2 }, issues: [], dropped: [] });
  });

  test('GIVEN values that break rules WHEN read THEN they are kept as they are and every broken rule is named', () => {
    const read = parseBestEffort(Spec, { replicas: 0, tags: ['ab', 'abcd'] }, 'spec');
    expect(read.value).toEqual({ replicas: 0, tags: ['ab', 'abcd'] });
    expect(read.issues).toEqual([expect.stringMatching(/^spec\.replicas: Too small/), expect.stringMatching(/^spec\.tags\[0\]: Too small/)]);
    expect(read.dropped).toEqual([]);
  });

  test('GIVEN an invalid value with a missing defaulted field, a null in a non-nullable one and an unknown field WHEN read THEN the default applies and the unknown field is pruned', () => {
    const read = parseBestEffort(Spec, { replicas: null, tags: ['ab'], stray: 1, note: null }, 'spec');
    expect(read.value).toEqual({ replicas: 1, tags: ['ab'], note: null });
  });

  test('GIVEN values of the wrong JSON type WHEN read THEN they are left out and listed with their paths', () => {
    const read = parseBestEffort(Spec, { replicas: 'two', port: true, tags: ['abc', 7], extra: { any: { thing: 1 } } }, 'spec');
    expect(read.value).toEqual({ tags: ['abc'], extra: { any: { thing: 1 } } });
    expect(read.dropped).toEqual([
      { path: ['spec', 'replicas'], value: 'two' },
      { path: ['spec', 'port'], value: true },
      { path: ['spec', 'tags', 1], value: 7 },
    ]);
  });
});
