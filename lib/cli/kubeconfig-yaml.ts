/**
 * Parses a kubeconfig file's text into the same JavaScript value client-node's `KubeConfig` gets from it.
 *
 * client-node 1.4 reads kubeconfigs with js-yaml 4's default schema (`yaml.load`); we parse with the
 * `yaml` package, whose YAML 1.2 core schema resolves some plain scalars differently:
 *
 * | plain scalar | js-yaml default schema | `yaml` core schema |
 * |---|---|---|
 * | `0b101`, `-0x1F`, `+0o7` | numbers (binary ints; signs on every radix) | strings |
 * | `-.5`, `+.5` | strings | numbers |
 * | `1e400` (overflows) | string | `Infinity` |
 * | `-0` | `0` | `-0` |
 * | `2024-01-02`, `2024-01-02T10:00:00Z` | `Date` | strings |
 * | `2024-1-2`, `2024-01-02 1:2:3` (`yaml`'s YAML 1.1 timestamp) | strings | `Date` |
 * | `<<: *anchor` (merge key) | merged | a key named `<<` |
 *
 * A field holding such a value (a password, a token, a name) would come out differently, so the options
 * below replace the core schema's int and float tags with js-yaml's grammar (js-yaml 4.3.2, the one
 * client-node 1.4.0 installs: lib/type/int.js, float.js, timestamp.js): integers are decimal, or `0b`,
 * `0o`, `0x` digits, each with an optional sign; floats have digits before an optional dot, or a dot and
 * digits with no sign, `.inf` takes a sign, `.nan` none; a number that isn't finite stays a string.
 * Timestamps are `YYYY-MM-DD`, or a date with one- or two-digit month and day, a time `H:MM:SS` after
 * `T` or blanks, an optional fraction of which milliseconds are kept, and an optional `Z` or `±H[:MM]`
 * zone (UTC when none). Merge keys are on. Booleans (`true`/`True`/`TRUE`, and false likewise;
 * `yes`/`on` stay strings) and nulls (`~`, `null`, `Null`, `NULL`, empty) already agree.
 * test/cli/kubeconfig-loader.test.ts compares both parsers on generated scalars.
 *
 * Not reproduced, as no kubeconfig field depends on them: the wording of syntax errors; mapping keys
 * that are collections (`? [a]` becomes the key `a` in js-yaml, `[ a ]` here); the values of the explicit
 * `!!binary` and `!!set` tags; js-yaml's lack of a limit on alias expansion (`yaml` stops at 100 aliases
 * of a collection, its guard against "billion laughs").
 */
import { type ParseOptions, type ScalarTag, type SchemaOptions, parseDocument } from 'yaml';

const INT = 'tag:yaml.org,2002:int';
const FLOAT = 'tag:yaml.org,2002:float';

/** js-yaml 4's integer: an optional sign, then decimal digits or `0b`, `0o`, `0x` digits. */
const jsYamlInt: ScalarTag = {
  tag: INT,
  default: true,
  identify: (value) => Number.isInteger(value),
  test: /^[-+]?(?:0b[01]+|0o[0-7]+|0x[0-9a-fA-F]+|[0-9]+)$/,
  resolve(text) {
    const sign = text.startsWith('-') ? -1 : 1;
    const digits = /^[-+]/.test(text) ? text.slice(1) : text;
    // js-yaml gives a lone zero, signed or not, as 0 (never -0).
    if (digits === '0') return 0;
    const radix = { '0b': 2, '0o': 8, '0x': 16 }[digits.slice(0, 2)];
    const value = sign * (radix ? parseInt(digits.slice(2), radix) : parseInt(digits, 10));
    // Too large for a finite number: js-yaml's float type refuses it too, so it stays a string.
    return Number.isFinite(value) ? value : text;
  },
};

/** js-yaml 4's float (its integers are matched first, by {@link jsYamlInt}). */
const jsYamlFloat: ScalarTag = {
  tag: FLOAT,
  default: true,
  identify: (value) => typeof value === 'number',
  test: /^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  resolve(text) {
    const lower = text.toLowerCase();
    const sign = lower.startsWith('-') ? -1 : 1;
    const unsigned = /^[-+]/.test(lower) ? lower.slice(1) : lower;
    if (unsigned === '.inf') return sign * Number.POSITIVE_INFINITY;
    if (unsigned === '.nan') return Number.NaN;
    const value = sign * parseFloat(unsigned);
    return Number.isFinite(value) ? value : text;
  },
};

const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const DATE_TIME = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?$/;

/** js-yaml 4's timestamp: a date, or a date and time; see the module doc. */
const jsYamlTimestamp: ScalarTag = {
  tag: 'tag:yaml.org,2002:timestamp',
  default: true,
  identify: (value) => value instanceof Date,
  test: new RegExp(`${DATE.source}|${DATE_TIME.source}`),
  resolve(text) {
    const date = DATE.exec(text);
    if (date) return new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3])));
    const [, year, month, day, hour, minute, second, fraction, , zoneSign, zoneHour, zoneMinute] = DATE_TIME.exec(text)!;
    const ms = fraction ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0;
    const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second), ms);
    const offsetMs = zoneSign ? (zoneSign === '-' ? -1 : 1) * (Number(zoneHour) * 60 + Number(zoneMinute ?? 0)) * 60_000 : 0;
    return new Date(utc - offsetMs);
  },
};

/** `yaml` options that resolve plain scalars, merge keys and timestamps as js-yaml 4's default schema does. */
export const KUBECONFIG_YAML_OPTIONS: ParseOptions & SchemaOptions = {
  schema: 'core',
  merge: true,
  customTags: (tags) => [...tags.filter((t) => typeof t === 'string' || (t.tag !== INT && t.tag !== FLOAT)), jsYamlInt, jsYamlFloat, jsYamlTimestamp],
};

/**
 * The value of one kubeconfig file's YAML, as client-node's loader sees it.
 * @throws the `yaml` package's YAMLError on a syntax error, more than one document, or a tag it doesn't
 *   know (`!foo x`; js-yaml refuses those too, where `yaml` would only warn and keep the string).
 */
export function parseKubeConfigYaml(text: string): unknown {
  const doc = parseDocument(text, KUBECONFIG_YAML_OPTIONS);
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problem;
  return doc.toJS();
}
