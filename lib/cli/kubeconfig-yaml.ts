/**
 * Parses a kubeconfig file's text into the value client-node's `KubeConfig` gets from it. client-node 1.4
 * reads kubeconfigs with js-yaml 4's `load` (default schema; `config.js` `loadFromString`); we read them
 * with the `yaml` package, as everything else in this SDK, set up to resolve as that schema does, so a
 * password, token or name written as a plain scalar has the same value here as in client-node:
 * - plain scalars are resolved in js-yaml's default-schema order: null (`~`, `null`, `Null`, `NULL`,
 *   empty), bool (`true`/`True`/`TRUE`, `false`/`False`/`FALSE` only: YAML 1.2, so `yes`, `on` stay
 *   strings), int (decimal, `0b`, `0o`, `0x`, signed, no `_`; `017` is decimal 17), float (`.5`, `1e3`,
 *   `.inf`, `.nan`; `-.5` and a value that overflows stay strings), timestamp (`2024-01-02`,
 *   `2024-1-2 1:02:03`, … as `Date`), else string; quoted scalars are always strings;
 * - merge keys (`<<`) are merged, anchors and aliases resolved; a duplicate key is an error;
 * - more than one document, an unknown tag or any YAML error throws, as js-yaml does.
 * Proved against client-node's `KubeConfig` by test/cli/kubeconfig-loader.test.ts. Known differences, in
 * forms no kubeconfig field takes: an explicit `!!omap` or `!!pairs` reads as a mapping or a sequence of
 * mappings (js-yaml: sequences of one-key mappings, of pairs); `.nan` and `.NaN` as keys of one mapping are
 * one key, the last (js-yaml: duplicated key); a key merged in by `<<` and a later key of the same string
 * but another type (`1` and `"1"`) are refused as duplicates (js-yaml: the later wins).
 * @see https://yaml.org/spec/1.2.2/#1032-tag-resolution (the core schema)
 * @see https://yaml.org/type/timestamp.html, https://yaml.org/type/merge.html (YAML 1.1 types js-yaml adds)
 *
 * @throws YAMLError (`yaml`'s YAMLParseError or YAMLWarning) on a syntax error, more than one document,
 *   a duplicate key or an unknown tag
 */
import { parseDocument, type ScalarTag } from 'yaml';

/** The kubeconfig file's text as a value (a mapping for a valid kubeconfig; not validated here). */
export function parseKubeConfigYaml(text: string): unknown {
  const document = parseDocument(text, {
    schema: 'core',
    customTags: (tags) => [PLAIN_SCALAR, ...EXPLICIT_SCALARS, ...tags, 'timestamp', 'binary', 'set'],
    merge: true,
    uniqueKeys: true,
  });
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) throw problem;
  // js-yaml reads no document in a text of only blanks (undefined), and a null one in a comment.
  if (/^[ \t\r\n]*$/.test(text)) return undefined;
  return jsYamlValue(document.toJS({ mapAsMap: true, maxAliasCount: -1 }), new Map());
}

/**
 * `toJS`'s value (maps as `Map`) as js-yaml builds it: mapping keys as `String(key)` (a sequence key joined
 * by commas, a mapping key `[object Object]`), a `!!set` as an object of null values, `!!binary` as a
 * plain Uint8Array. Aliased nodes stay one object.
 * @throws Error on a nested sequence inside a key, or two keys with the same string (`1` and `"1"`), as js-yaml
 */
function jsYamlValue(value: unknown, seen: Map<unknown, unknown>): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  if (seen.has(value)) return seen.get(value);
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (Array.isArray(value)) {
    const array: unknown[] = [];
    seen.set(value, array);
    for (const item of value) array.push(jsYamlValue(item, seen));
    return array;
  }
  const object: Record<string, unknown> = {};
  seen.set(value, object);
  const entries: [unknown, unknown][] = value instanceof Set ? [...value].map((key) => [key, null]) : value instanceof Map ? [...value] : Object.entries(value);
  for (const [key, item] of entries) {
    const name = jsYamlKey(jsYamlValue(key, seen));
    if (Object.hasOwn(object, name)) throw new Error(`duplicated mapping key ${JSON.stringify(name)}`);
    Object.defineProperty(object, name, { value: jsYamlValue(item, seen), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** A mapping key as js-yaml names the property. */
function jsYamlKey(key: unknown): string {
  const objectKey = (k: unknown) => (typeof k === 'object' && k !== null && Object.prototype.toString.call(k) === '[object Object]' ? '[object Object]' : k);
  if (Array.isArray(key)) {
    if (key.some(Array.isArray)) throw new Error('nested arrays are not supported inside keys');
    return String(key.map(objectKey));
  }
  return String(objectKey(key));
}

/**
 * Every untagged plain scalar, resolved by {@link plainScalarValue}: first in the schema, so no other
 * default tag is tried (explicit tags such as `!!str` still reach their own).
 */
const PLAIN_SCALAR: ScalarTag = {
  tag: 'tag:cdk8s-operator-sdk,2026:js-yaml-plain',
  default: true,
  test: /[\s\S]*/,
  resolve: (source) => plainScalarValue(source),
  identify: () => false,
};

/** js-yaml's implicit scalar types, in the order it tries them. */
const TYPES = ['null', 'bool', 'int', 'float', 'timestamp'] as const;

/**
 * `!!null`, `!!bool`, `!!int`, `!!float`, `!!timestamp` on a scalar: its value as that type, which it must
 * have (js-yaml's "cannot resolve a node with !<tag> explicit tag").
 */
const EXPLICIT_SCALARS: ScalarTag[] = TYPES.map((type) => ({
  tag: `tag:yaml.org,2002:${type}`,
  resolve: (source: string, onError: (message: string) => void) => {
    const value = typedScalarValue(type, source);
    if (value === NOT_OF_TYPE) onError(`cannot resolve a node with !<tag:yaml.org,2002:${type}> explicit tag`);
    return value;
  },
  identify: () => false,
}));

const NOT_OF_TYPE = Symbol('not of the type');
const INT = /^[-+]?(?:0b[01]+|0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+)$/;
const FLOAT = /^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const TIMESTAMP = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?$/;

/** A plain scalar's value under js-yaml 4's default schema: the first of {@link TYPES} it is, else the string. */
export function plainScalarValue(source: string): unknown {
  for (const type of TYPES) {
    const value = typedScalarValue(type, source);
    if (value !== NOT_OF_TYPE) return value;
  }
  return source;
}

/** The scalar's value as `type`, or {@link NOT_OF_TYPE}. */
function typedScalarValue(type: (typeof TYPES)[number], source: string): unknown {
  switch (type) {
    case 'null':
      return ['', '~', 'null', 'Null', 'NULL'].includes(source) ? null : NOT_OF_TYPE;
    case 'bool':
      return ['true', 'True', 'TRUE'].includes(source) ? true : ['false', 'False', 'FALSE'].includes(source) ? false : NOT_OF_TYPE;
    case 'int': {
      const value = INT.test(source) ? integerValue(source) : NaN;
      return Number.isFinite(value) ? value : NOT_OF_TYPE;
    }
    case 'float':
      return FLOAT.test(source) && (Number.isFinite(parseFloat(source)) || FLOAT_SPECIAL.test(source)) ? floatValue(source) : NOT_OF_TYPE;
    case 'timestamp':
      return timestampValue(source) ?? NOT_OF_TYPE;
  }
}

/** `[-+]digits`, `0b…`, `0o…`, `0x…`; an unsigned or signed lone `0` is +0. */
function integerValue(source: string): number {
  const sign = source.startsWith('-') ? -1 : 1;
  const digits = /^[-+]/.test(source) ? source.slice(1) : source;
  if (digits === '0') return 0;
  const radix = { b: 2, o: 8, x: 16 }[digits.startsWith('0') ? digits[1] : ''];
  return radix === undefined ? sign * parseInt(digits, 10) : sign * parseInt(digits.slice(2), radix);
}

/** `.inf`, `-.Inf`, `.NaN`, or the decimal with its sign. */
function floatValue(source: string): number {
  const lower = source.toLowerCase();
  const sign = lower.startsWith('-') ? -1 : 1;
  const unsigned = /^[-+]/.test(lower) ? lower.slice(1) : lower;
  if (unsigned === '.inf') return sign * Infinity;
  if (unsigned === '.nan') return NaN;
  return sign * parseFloat(unsigned);
}

/** A YAML 1.1 timestamp as a `Date` (UTC unless it names an offset; fractions to the millisecond), or undefined. */
function timestampValue(source: string): Date | undefined {
  const date = DATE.exec(source);
  if (date) return new Date(Date.UTC(+date[1], +date[2] - 1, +date[3]));
  const match = TIMESTAMP.exec(source);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, , offsetSign, offsetHours, offsetMinutes] = match;
  const milliseconds = fraction ? +fraction.slice(0, 3).padEnd(3, '0') : 0;
  const result = new Date(Date.UTC(+year, +month - 1, +day, +hour, +minute, +second, milliseconds));
  if (offsetSign) {
    const offset = (+offsetHours * 60 + +(offsetMinutes ?? 0)) * 60_000;
    result.setTime(result.getTime() - (offsetSign === '-' ? -offset : offset));
  }
  return result;
}
