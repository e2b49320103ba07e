/**
 * Whether a child needs an apply: compares the rendered child with the cached one as the server would
 * store it (the desired-hash annotation for render changes, containment by field type for drift), so an
 * unchanged child costs no request.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../client/kube-client.js';
import type { FieldType } from './field-type.js';
import { quantitiesEqual } from '../../operator/schema/quantity.js';
import { canonicalJson } from '../../json-object.js';

/**
 * Annotation on every child holding a hash of the desired object it was applied from.
 * It changes whenever render's output changes, including when render stops setting a field, which a
 * "desired ⊆ actual" check alone cannot see (see DESIGN.md, "Deciding whether a child needs an apply").
 */
export const DESIRED_HASH_ANNOTATION = 'operator.cdk8s.io/desired-hash';

/** Why a child needs an apply, or `undefined` when it doesn't. */
export type ApplyReason = 'missing' | 'render-changed' | 'drift';

export interface ApplyDecision {
  /** undefined: desired ⊆ actual and the hash matches, so no request at all. */
  readonly reason?: ApplyReason;
  /** For drift: the first path where actual differs from desired, e.g. `spec.replicas`. */
  readonly path?: string;
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
 * - the stored form of desired ({@link storedForm}) is not contained in actual → `drift` (someone edited
 *   a field we set).
 *
 * "Contained" ignores everything actual has beyond desired (server defaults, other managers' fields) and
 * compares each field as the server stores it, by the field's type in `types` (the kind's OpenAPI
 * schema, see {@link FieldType}): a `Quantity` by value (`1Gi` = `1073741824`, `500m` = `0.5`) wherever
 * it sits, rounded up to nano, or to milli in a ResourceList (`1.5n` is stored as `1m` in container
 * resources); every other scalar exactly (an int-or-string keeps its JSON type). A desired zero value
 * (`false`, `0`, `''`, `[]`, `{}`) matches an absent field, since the API server drops omitempty zero
 * values. Lists of objects match when desired's items are found, in order, among actual's items (other
 * managers may add items to list-maps such as containers or env); lists of scalars (args, command) must be
 * equal.
 *
 * @param desired the rendered child, with {@link withDesiredHash} applied
 * @param actual the cached child, or undefined when it does not exist
 * @param types the type of desired's kind; @default unknown: every scalar compares exactly, so a
 *   quantity the server re-serialised counts as drift (one no-op apply)
 */
export function decideApply(desired: KubeObject, actual: KubeObject | undefined, types?: FieldType): ApplyDecision {
  if (!actual) return { reason: 'missing' };
  const want = desired.metadata?.annotations?.[DESIRED_HASH_ANNOTATION];
  const have = actual.metadata?.annotations?.[DESIRED_HASH_ANNOTATION];
  if (want === undefined || want !== have) return { reason: 'render-changed' };
  const path = firstDifference(storedForm(desired), actual, [], types);
  return path === undefined ? {} : { reason: 'drift', path: path.join('.') };
}

/**
 * `desired` with its write-only fields folded in the way the API server does on every write, so it can
 * be compared with what a read returns:
 * - `v1 Secret` `stringData`: each value, UTF-8 and base64-encoded, goes into `data` under the same key
 *   (overwriting a `data` entry of that key); `stringData` itself is never returned
 *   (kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/secret-v1/).
 *
 * Other objects are returned as they are.
 */
export function storedForm(desired: KubeObject): KubeObject {
  if (desired.apiVersion !== 'v1' || desired.kind !== 'Secret') return desired;
  const stringData = desired.stringData as Record<string, unknown> | undefined;
  if (stringData === undefined || stringData === null) return desired;
  const { stringData: _, ...rest } = desired;
  const data: Record<string, unknown> = { ...((desired.data as Record<string, unknown> | undefined) ?? {}) };
  for (const [key, value] of Object.entries(stringData)) {
    if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
    else if (value !== undefined && value !== null) data[key] = value; // the server rejects it; let the apply say why
  }
  return { ...rest, data };
}

/**
 * The path of the first place where `desired` is not contained in `actual`, or undefined.
 * @param type the type of `desired` at `path`, or undefined when unknown
 */
export function firstDifference(desired: unknown, actual: unknown, path: string[], type: FieldType | undefined): string[] | undefined {
  const at = [...path];
  return differs(desired, actual, at, type) ? at : undefined;
}

/**
 * Whether `desired` is not contained in `actual`. On true, `path` has been extended to the first
 * difference; on false it is as it was (one array for the whole walk: the diff runs on every reconcile).
 */
function differs(desired: unknown, actual: unknown, path: string[], type: FieldType | undefined): boolean {
  if (actual === undefined || actual === null) return !isZero(desired);
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual)) return true;
    const itemType = type?.items();
    if (desired.length > 0 && desired.every(isScalar)) {
      // Lists of scalars (args, command, hosts …) are atomic: an item added or removed is drift.
      if (actual.length !== desired.length) return true;
      const i = desired.findIndex((d, n) => !scalarsEqual(d, actual[n], itemType));
      if (i >= 0) path.push(String(i));
      return i >= 0;
    }
    let cursor = 0;
    for (let i = 0; i < desired.length; i++) {
      let found = false;
      while (cursor < actual.length) {
        if (!differs(desired[i], actual[cursor++], [], itemType)) {
          found = true;
          break;
        }
      }
      if (!found) {
        path.push(String(i));
        return true;
      }
    }
    return false;
  }
  if (desired !== null && typeof desired === 'object') {
    if (typeof actual !== 'object' || Array.isArray(actual)) return true;
    for (const key in desired) {
      const value = (desired as Record<string, unknown>)[key];
      if (value === undefined || !Object.hasOwn(desired, key)) continue;
      path.push(key);
      if (differs(value, (actual as Record<string, unknown>)[key], path, type?.field(key))) return true;
      path.pop();
    }
    return false;
  }
  return !scalarsEqual(desired, actual, type);
}

function isScalar(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && value !== undefined);
}

function scalarsEqual(desired: unknown, actual: unknown, type: FieldType | undefined): boolean {
  if (desired === actual) return true;
  const form = type?.form;
  if (form !== 'quantity' && form !== 'resource-list-quantity') return false;
  const scalar = (v: unknown): v is string | number => typeof v === 'string' || typeof v === 'number';
  return scalar(desired) && scalar(actual) && quantitiesEqual(desired, actual, form === 'resource-list-quantity' ? -3 : -9);
}

function isZero(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value).every((v) => v === undefined);
  return false;
}
