/**
 * Which updates of a related object reconcile the CRs that keep referencing it (the predicate on
 * controller-runtime's `Watches`, here decided from what render reads). An update matters to a related
 * declaration when its own `changeMatters` says so, or, by default, when a top-level field differs that
 * render has read of that declaration's objects ({@link RelatedReads}; every field before the first
 * render that was handed one). `metadata` is compared without `resourceVersion`, `managedFields` and
 * `generation`: they change on every write and say nothing render could use.
 *
 * Creations, deletions and updates that change which CRs reference the object are not decided here:
 * they always reconcile the CRs concerned (see the controller).
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions
 */
import type { RelatedDeclaration } from '../../operator/render/related.js';
import type { RelatedReads } from '../../operator/render/related-reads.js';
import type { KubeResource } from '../../operator/render/render-context.js';
import type { KubeObject } from '../client/kube-client.js';

/** `metadata` fields that change on writes without carrying anything render could use. */
export const NOISE_METADATA_FIELDS: readonly string[] = ['resourceVersion', 'managedFields', 'generation'];

/** One related declaration of a kind, as the controller checks it: its key and its own predicate. */
export interface RelatedChangeRule {
  /** The key of the declaration in `OperatorProps.related`. */
  readonly related: string;
  /** The declaration's `changeMatters`. @default the rule from what render read */
  readonly changeMatters?: RelatedDeclaration<never>['changeMatters'];
}

/** The top-level fields whose values differ between `oldObject` and `newObject` (`metadata` without {@link NOISE_METADATA_FIELDS}). */
export function changedFields(oldObject: KubeObject, newObject: KubeObject): Set<string> {
  const a = oldObject as Record<string, unknown>;
  const b = newObject as Record<string, unknown>;
  const out = new Set<string>();
  for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const same = field === 'metadata' ? sameJson(withoutNoise(a.metadata), withoutNoise(b.metadata)) : sameJson(a[field], b[field]);
    if (!same) out.add(field);
  }
  return out;
}

/**
 * True when the update `oldObject` → `newObject` of a related object matters to any of `rules` (the
 * declarations of its kind; more than one when two declarations name the same kind, and then the CRs
 * are not told apart: any one that matters reconciles them all). True when `rules` is empty (nothing
 * known: conservative).
 * @throws what a declaration's `changeMatters` throws
 */
export function relatedChangeMatters(rules: readonly RelatedChangeRule[], reads: RelatedReads, oldObject: KubeObject, newObject: KubeObject): boolean {
  if (rules.length === 0) return true;
  let changed: Set<string> | undefined;
  return rules.some((rule) => {
    if (rule.changeMatters) return rule.changeMatters(oldObject as KubeResource, newObject as KubeResource);
    changed ??= changedFields(oldObject, newObject);
    const read = reads.fieldsRead(rule.related);
    return [...changed].some((field) => read === undefined || read.has(field));
  });
}

function withoutNoise(metadata: unknown): unknown {
  if (metadata === null || typeof metadata !== 'object') return metadata;
  const out: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
  for (const field of NOISE_METADATA_FIELDS) delete out[field];
  return out;
}

/** Deep equality of JSON values (key order ignored). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((value, i) => sameJson(value, b[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((key) => Object.hasOwn(y, key) && sameJson(x[key], y[key]));
}
