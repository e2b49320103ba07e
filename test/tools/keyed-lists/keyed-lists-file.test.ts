import { readFileSync } from 'node:fs';
import { BUILT_IN_KEYED_LISTS, type KeyedListSchema } from '../../../lib/operator/schema/keyed-lists.js';
import { KEYED_LISTS_FILE, keyedListsFileText } from '../../../tools/keyed-lists/keyed-lists-file.js';

const committed = readFileSync(new URL(`../../../${KEYED_LISTS_FILE}`, import.meta.url), 'utf8');
const committedVersion = /kube-apiserver (v\S+),/.exec(committed.split('\n')[1])?.[1] ?? '';

/** `value` with every object's keys in reverse order (arrays keep theirs: their order is data). */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversedKeys(v)]));
}

describe('keyedListsFileText', () => {
  test('GIVEN the committed table and the version its header names WHEN rendered again THEN the text is byte-identical to the committed file (it was not edited by hand)', () => {
    expect(committedVersion).toMatch(/^v1\.\d+\.\d+/);
    expect(keyedListsFileText(BUILT_IN_KEYED_LISTS, committedVersion)).toBe(committed);
  });

  test('GIVEN the same table with every key order reversed THEN the same text (kinds, definitions, fields and properties in a stable order)', () => {
    const reversed = reversedKeys(BUILT_IN_KEYED_LISTS) as KeyedListSchema;
    expect(Object.keys(reversed.kinds)[0]).not.toBe(Object.keys(BUILT_IN_KEYED_LISTS.kinds)[0]);
    expect(keyedListsFileText(reversed, 'v1.2.3')).toBe(keyedListsFileText(BUILT_IN_KEYED_LISTS, 'v1.2.3'));
  });

  test('GIVEN key defaults listed out of the keys\' order THEN they are written in the order of listMapKeys', () => {
    const schema: KeyedListSchema = { kinds: { 'v1/Service': 'Service' }, definitions: { Service: { ports: { listMapKeys: ['port', 'protocol'], keyDefaults: { protocol: 'TCP', port: 0 } } } } };
    expect(keyedListsFileText(schema, 'v1.2.3')).toContain('"keyDefaults": {\n          "port": 0,\n          "protocol": "TCP"\n        }');
  });

  test('GIVEN a field with a property KeyedListField does not know THEN an error names the field path and the property', () => {
    const schema = { kinds: {}, definitions: { Pod: { spec: { object: 'PodSpec', listType: 'atomic' } } } } as unknown as KeyedListSchema;
    expect(() => keyedListsFileText(schema, 'v1.2.3')).toThrow('Pod.spec: unknown properties listType');
  });
});
