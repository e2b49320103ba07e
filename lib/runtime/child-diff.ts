import { createHash } from 'node:crypto';
import type { KubeObject } from './api-client.js';
import { quantitiesEqual } from './quantity.js';

/**
 * Annotation on every child holding a hash of the desired object it was applied from.
 * It changes whenever render's output changes, including when render stops setting a field, which a
 * "desired ⊆ actual" check alone cannot see (see DESIGN.md, "Deciding whether a child needs an apply").
 */
export const DESIRED_HASH_ANNOTATION = 'operator.cdk8s.io/desired-hash';

/** Keys whose values (and everything below them) are resource quantities, compared by value. */
const QUANTITY_KEYS = new Set(['resources', 'limits', 'requests', 'capacity', 'allocatable', 'hard', 'overhead', 'sizeLimit', 'storage']);

/** Why a child needs an apply, or `undefined` when it doesn't. */
export type ApplyReason = 'missing' | 'render-changed' | 'drift';

export interface ApplyDecision {
  /** undefined: desired ⊆ actual and the hash matches, so no request at all. */
  readonly reason?: ApplyReason;
  /** For drift: the first path where actual differs from desired, e.g. `spec.replicas`. */
  readonly path?: string;
}

/** JSON with object keys sorted recursively, so equal objects give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** sha256 of the canonical JSON of `desired` without its own hash annotation; 20 hex characters. */
export function desiredHash(desired: KubeObject): string {
  const annotations = { ...(desired.metadata?.annotations ?? {}) };
  delete annotations[DESIRED_HASH_ANNOTATION];
  const copy = { ...desired, metadata: { ...desired.metadata, annotations } };
  return createHash('sha256').update(canonicalJson(copy)).digest('hex').slice(0, 20);
}

/** A copy of `desired` carrying {@link DESIRED_HASH_ANNOTATION}. */
export function withDesiredHash<T extends KubeObject>(desired: T): T {
  const hash = desiredHash(desired);
  return {
    ...desired,
    metadata: { ...desired.metadata, annotations: { ...(desired.metadata?.annotations ?? {}), [DESIRED_HASH_ANNOTATION]: hash } },
  };
}

/**
 * Decides whether a child needs a server-side apply.
 *
 * - no actual object → `missing`;
 * - the actual object's hash annotation differs from the desired one → `render-changed` (covers a field
 *   that render stopped setting: the next apply omits it and SSA removes it);
 * - desired is not contained in actual → `drift` (someone edited a field we set).
 *
 * "Contained" ignores everything actual has beyond desired (server defaults, other managers' fields),
 * compares quantities by value under resource keys (`1Gi` = `1073741824`, `500m` = `0.5`), a number
 * with the same digits as a string (int-or-string), and lets a desired zero value (`false`, `0`, `''`,
 * `[]`, `{}`) match an absent field, since the API server drops omitempty zero values.
 * Lists of objects match when desired's items are found, in order, among actual's items (other managers
 * may add items to list-maps such as containers or env); lists of scalars (args, command) must be equal.
 *
 * @param desired the rendered child, with {@link withDesiredHash} applied
 * @param actual the cached child, or undefined when it does not exist
 */
export function decideApply(desired: KubeObject, actual: KubeObject | undefined): ApplyDecision {
  if (!actual) return { reason: 'missing' };
  const want = desired.metadata?.annotations?.[DESIRED_HASH_ANNOTATION];
  const have = actual.metadata?.annotations?.[DESIRED_HASH_ANNOTATION];
  if (want === undefined || want !== have) return { reason: 'render-changed' };
  const path = firstDifference(desired, actual, [], false);
  return path === undefined ? {} : { reason: 'drift', path: path.join('.') };
}

/** The path of the first place where `desired` is not contained in `actual`, or undefined. */
export function firstDifference(desired: unknown, actual: unknown, path: string[], quantity: boolean): string[] | undefined {
  if (actual === undefined || actual === null) return isZero(desired) ? undefined : path;
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual)) return path;
    if (desired.length > 0 && desired.every(isScalar)) {
      // Lists of scalars (args, command, hosts …) are atomic: an item added or removed is drift.
      if (actual.length !== desired.length) return path;
      const i = desired.findIndex((d, n) => !scalarsEqual(d, actual[n], quantity));
      return i < 0 ? undefined : [...path, String(i)];
    }
    let cursor = 0;
    for (let i = 0; i < desired.length; i++) {
      let found = false;
      while (cursor < actual.length) {
        const candidate = actual[cursor++];
        if (firstDifference(desired[i], candidate, [], quantity) === undefined) {
          found = true;
          break;
        }
      }
      if (!found) return [...path, String(i)];
    }
    return undefined;
  }
  if (desired !== null && typeof desired === 'object') {
    if (typeof actual !== 'object' || Array.isArray(actual)) return path;
    for (const [key, value] of Object.entries(desired)) {
      if (value === undefined) continue;
      const diff = firstDifference(value, (actual as Record<string, unknown>)[key], [...path, key], quantity || QUANTITY_KEYS.has(key));
      if (diff) return diff;
    }
    return undefined;
  }
  return scalarsEqual(desired, actual, quantity) ? undefined : path;
}

function isScalar(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && value !== undefined);
}

function scalarsEqual(desired: unknown, actual: unknown, quantity: boolean): boolean {
  if (desired === actual) return true;
  const scalar = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';
  if (!scalar(desired) || !scalar(actual)) return false;
  if (quantity && quantitiesEqual(desired, actual)) return true;
  // int-or-string: 8080 and "8080" carry the same value
  return typeof desired !== typeof actual && String(desired) === String(actual);
}

function isZero(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value).every((v) => v === undefined);
  return false;
}
