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
