import { createHash } from 'node:crypto';

/**
 * SHA-256 (hex) of a value's canonical JSON: object keys sorted at every level, arrays kept in order,
 * no whitespace. Equal content gives an equal hash whatever the key order, so the hash only changes
 * when the content does. No clock, no randomness.
 */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** JSON with object keys sorted recursively; `undefined` members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}
