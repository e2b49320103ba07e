import { parseAllDocuments } from 'yaml';
import { stringifyManifests } from '../../lib/operator/manifests/manifest-yaml.js';

type Obj = Record<string, any>;

function readAll(yaml: string, version: '1.1' | '1.2'): Obj[] {
  return parseAllDocuments(yaml, { version }).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as Obj;
  });
}

describe('stringifyManifests', () => {
  const ambiguous = ['yes', 'no', 'on', 'off', 'y', 'n', 'Y', 'N', 'Yes', 'NO', 'On', 'OFF', 'true', 'False', 'null', '~', '',
    '0755', '08', '010', '0o17', '0x1F', '0b101', '1_000', '1e3', '12:30', '12:30:00', '.inf', '-.Inf', '.nan', '1.0', '+1', '2001-12-14', ' padded', '#x', '<<', '='];

  test.each(ambiguous)('GIVEN the string %p WHEN written THEN it is double-quoted', (value) => {
    expect(stringifyManifests([{ data: { key: value } }])).toBe(`data:\n  key: ${JSON.stringify(value)}\n`);
  });

  test('GIVEN ambiguous strings WHEN written and read back by YAML 1.1 and 1.2 readers THEN they stay strings', () => {
    const doc = { data: Object.fromEntries(ambiguous.map((v, i) => [`k${i}`, v])), yes: 'on', '0755': 1, '<<': 'not a merge' };
    const yaml = stringifyManifests([doc]);
    expect(readAll(yaml, '1.1')).toEqual([doc]);
    expect(readAll(yaml, '1.2')).toEqual([doc]);
  });

  test('GIVEN plain strings, numbers, booleans and multi-line text WHEN written THEN they are not quoted', () => {
    expect(stringifyManifests([{ a: 'memcached', b: '-m=64', c: '25%', d: 3, e: true, f: 'line 1\nline 2\n' }]))
      .toBe('a: memcached\nb: -m=64\nc: 25%\nd: 3\ne: true\nf: |\n  line 1\n  line 2\n');
  });

  test('GIVEN several manifests WHEN written THEN they are one stream separated by ---', () => {
    expect(stringifyManifests([{ kind: 'A' }, { kind: 'B' }])).toBe('kind: A\n---\nkind: B\n');
  });
});
