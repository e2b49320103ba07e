/**
 * Telling a JSON object (a map) from the other values of parsed JSON or YAML, as code walking
 * Kubernetes objects, patches and schemas needs to: not null, not an array.
 */

/** Whether `value` is an object and not an array (nor null); `T` is the type the caller reads it as. */
export function isJsonObject<T extends object = Record<string, unknown>>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
