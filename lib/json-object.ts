/**
 * JSON values as the SDK walks and compares them: telling a JSON object (a map) from the other values of
 * parsed JSON or YAML (not null, not an array), and the canonical text of a value, for comparing and hashing.
 */

/** Whether `value` is an object and not an array (nor null); `T` is the type the caller reads it as. */
export function isJsonObject<T extends object = Record<string, unknown>>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted recursively (undefined-valued keys dropped): equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isJsonObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of sortedKeys(value)) if (value[key] !== undefined) out[key] = sortKeys(value[key]);
    return out;
  }
  return value;
}

/**
 * The own enumerable keys of `object`, sorted by UTF-16 code units (as `Array.prototype.sort`). Keys
 * already in order (a rendered child, sorted once) are not sorted again: the sort copies the array
 * into a work area each time, and canonical JSON is taken of every child on every reconcile.
 */
export function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return keys.sort();
  return keys;
}

/**
 * Whether `a` and `b` have the same {@link canonicalJson} text, without building it: objects compared by
 * their own enumerable keys whatever their order (as canonicalJson sorts them; a key whose value is
 * undefined or a function counts as absent), arrays element by element (undefined, a function or a
 * non-finite number counts as null, as JSON writes them). For comparing on the hot path (a reconcile's status).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  a = jsonValue(a);
  b = jsonValue(b);
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(jsonValue(a[i]) ?? null, jsonValue(b[i]) ?? null)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || jsonValue(x[key]) === undefined) continue;
    if (!Object.hasOwn(y, key) || !jsonEqual(x[key], y[key])) return false;
    count++;
  }
  for (const key in y) if (Object.hasOwn(y, key) && jsonValue(y[key]) !== undefined) count--;
  return count === 0;
}

/** A value as JSON writes it: null for a non-finite number, undefined for what JSON leaves out of an object. */
function jsonValue(value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}
