/**
 * Which admission UPDATEs the operator's validating hook may judge, and which of its violations count:
 * the pure decision logic behind `handleAdmissionReview` (webhook-reviews.ts).
 *
 * 1. **Exempt updates.** An UPDATE of an object that is being deleted (`metadata.deletionTimestamp` set
 *    on the old object) and an UPDATE that changes only `metadata` (labels, annotations, finalizers,
 *    ownerReferences …; every other top-level field, `spec` and `status` included, deep-equal) are
 *    admitted without calling `validateAdmission` or `mutateAdmission`. Without this, a policy lowered
 *    after creation denies the UPDATE that removes the last finalizer, and the object stays Terminating
 *    forever (ome#846, opendatahub-operator#2242); and a mutating hook could turn a label change, or the
 *    operator's own finalizer patch, into a spec change.
 * 2. **Ratcheting** (KEP-4008, CRD validation ratcheting, which the API server applies to the CRD's own
 *    schema): on UPDATE only violations the update *introduces* deny. A violation at path `P` is
 *    **kept** (not introduced) when `P` resolves to a value in the old object and the new object has a
 *    deep-equal value at `P`; it is **introduced** when the value at `P` changed, when `P` is absent in
 *    the old object (a field added or removed), when `P` cannot be parsed, and always on CREATE. So a
 *    label-only or correcting update of an object that violates a tightened rule is admitted, an update
 *    that leaves a violating field as it was is admitted, and a changed field that (still or newly)
 *    violates is denied. Values are compared as stored (the request's JSON, the API server's defaults
 *    applied), not after zod parsing.
 *
 *    Items of a list are correlated with the old object's as the API server correlates them: an item of
 *    a list-map (`x-kubernetes-list-type: map`, in the CRD's schema) with the old item that has the same
 *    `x-kubernetes-list-map-keys` values, wherever either stands in its list (`spec.ports[1].name` of
 *    the item `{ name: 'b' }` is compared with the old item named `b`, even at index 0); an item with no
 *    such old item is new (introduced). Items of any other list (atomic, the default, or a set) are not
 *    correlated one by one: a violation inside such a list is kept only when the whole list is
 *    deep-equal to the old one. Without a schema every list is taken as atomic.
 *
 * Paths are the ones hooks and zod report: `spec.replicas`, `spec.ports[0].name`, `metadata.labels["a/b"]`,
 * and Kubernetes' `metadata.labels[a/b]`.
 *
 * @see https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/4008-crd-ratcheting
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-ratcheting
 */
import type { FieldViolation } from '../../operator/admission.js';
import type { JSONSchemaProps } from '../../operator/schema/structural-schema.js';
import { isJsonObject } from '../../json-object.js';

type Json = Record<string, unknown>;

/** Why an UPDATE is admitted without running the hooks, or undefined when the hooks judge it. */
export type ExemptUpdate = 'Terminating' | 'MetadataOnly';

/**
 * Whether the UPDATE from `oldObject` to `object` is exempt from the admission hooks.
 * @returns `Terminating` when the old object has a deletionTimestamp; `MetadataOnly` when every top-level
 *   field but `metadata` is deep-equal; undefined otherwise (and for a CREATE: `oldObject` undefined)
 */
export function exemptUpdate(object: Json, oldObject: Json | undefined): ExemptUpdate | undefined {
  if (!oldObject) return undefined;
  const oldMetadata = (oldObject.metadata ?? {}) as Json;
  if (oldMetadata.deletionTimestamp !== undefined && oldMetadata.deletionTimestamp !== null) return 'Terminating';
  const keys = new Set([...Object.keys(object), ...Object.keys(oldObject)]);
  keys.delete('metadata');
  for (const key of keys) if (!deepEqual(object[key], oldObject[key])) return undefined;
  return 'MetadataOnly';
}

/**
 * The violations of `object` that the update from `oldObject` introduces (all of them on CREATE), by
 * the rule in this module's docstring.
 * @param schema the `openAPIV3Schema` of the object's version in its CRD: where the list-maps are.
 *   @default none: every list atomic
 */
export function introducedViolations(violations: readonly FieldViolation[], object: Json, oldObject: Json | undefined, schema?: JSONSchemaProps): FieldViolation[] {
  if (!oldObject) return [...violations];
  return violations.filter((v) => !isKept(v.path, object, oldObject, schema));
}

/**
 * Walks `path` down the new and the old object together (KEP-4008's correlation): properties by name,
 * list-map items by their keys, other lists only as a whole. Kept when a node on the way (or the value
 * at `path`) is deep-equal to the old node it is correlated with.
 */
function isKept(path: string, object: Json, oldObject: Json, schema: JSONSchemaProps | undefined): boolean {
  const segments = parseFieldPath(path);
  if (!segments || segments.length === 0) return false;
  let node: unknown = object;
  let old: unknown = oldObject;
  let at: JSONSchemaProps | undefined = schema;
  for (const [i, segment] of segments.entries()) {
    if (Array.isArray(node)) {
      if (!Array.isArray(old) || typeof segment !== 'number' || segment >= node.length) return false;
      const keys = at?.['x-kubernetes-list-type'] === 'map' ? at['x-kubernetes-list-map-keys'] : undefined;
      // Not a list-map: its items are not correlated, only the list as a whole.
      if (!keys || keys.length === 0) return deepEqual(node, old) && valueAt(node, segments.slice(i)).found;
      const item = node[segment];
      const match = old.find((o) => isJsonObject<Json>(item) && isJsonObject<Json>(o) && keys.every((k) => deepEqual(item[k], o[k])));
      if (match === undefined) return false;
      node = item;
      old = match;
      at = at?.items;
    } else if (isJsonObject<Json>(node)) {
      const key = String(segment);
      if (!Object.hasOwn(node, key) || !isJsonObject<Json>(old) || !Object.hasOwn(old, key)) return false;
      node = node[key];
      old = old[key];
      at = at?.properties?.[key] ?? at?.additionalProperties;
    } else {
      return false;
    }
  }
  return deepEqual(node, old);
}

/**
 * Splits a field path into keys and indices: `spec.ports[0].name` → `['spec', 'ports', 0, 'name']`,
 * `metadata.labels["a.b/c"]` and `metadata.labels[a.b/c]` → `['metadata', 'labels', 'a.b/c']`.
 * @returns undefined when the path is malformed
 */
export function parseFieldPath(path: string): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '[') {
      let end: number;
      let key: string;
      if (path[i + 1] === '"') {
        // A JSON string: find its closing quote (skipping escapes).
        let j = i + 2;
        while (j < path.length && path[j] !== '"') j += path[j] === '\\' ? 2 : 1;
        if (path[j + 1] !== ']') return undefined;
        try {
          key = JSON.parse(path.slice(i + 1, j + 1)) as string;
        } catch {
          return undefined;
        }
        end = j + 1;
        out.push(key);
      } else {
        end = path.indexOf(']', i);
        if (end < 0) return undefined;
        key = path.slice(i + 1, end);
        out.push(/^\d+$/.test(key) ? Number(key) : key);
      }
      i = end + 1;
      if (path[i] === '.') i++;
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    if (j === i) return undefined;
    out.push(path.slice(i, j));
    i = path[j] === '.' ? j + 1 : j;
    if (path[j] === '.' && i === path.length) return undefined;
  }
  return out;
}

function valueAt(root: unknown, segments: readonly (string | number)[]): { found: boolean; value?: unknown } {
  let node = root;
  for (const segment of segments) {
    if (Array.isArray(node)) {
      if (typeof segment !== 'number' || segment >= node.length) return { found: false };
      node = node[segment];
    } else if (node !== null && typeof node === 'object') {
      const key = String(segment);
      if (!Object.hasOwn(node, key)) return { found: false };
      node = (node as Json)[key];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: node };
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual((a as Json)[k], (b as Json)[k]));
}
