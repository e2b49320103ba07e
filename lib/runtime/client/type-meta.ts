/**
 * Filling in an answer's `apiVersion` and `kind`: the items of a List come without them
 * (kubernetes.io/docs/reference/using-api/api-concepts/#collections), and the runtime keeps every object
 * self-describing. The one place that does it, for the pager (list-pages.ts), the watcher's cache and `diff`.
 */
import type { KubeObject } from './kube-client.js';
import type { ResourceRef } from './resource-path.js';

/** `group/version`, or `version` alone for the core group (''), e.g. `apps/v1`, `v1`. */
export function apiVersionOf(ref: Pick<ResourceRef, 'group' | 'version'>): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/** The kind of a List's items: `DeploymentList` → `Deployment`; undefined for a kind not ending in `List`. */
export function itemKindOf(listKind: string | undefined): string | undefined {
  return listKind?.endsWith('List') ? listKind.slice(0, -'List'.length) : undefined;
}

/**
 * `obj` with `apiVersion` and `kind` set where it has none (what it has is kept); `obj` itself when it
 * has both, a shallow copy otherwise. A field with no value given stays as it is.
 */
export function withTypeMeta<T extends KubeObject>(obj: T, apiVersion: string | undefined, kind: string | undefined): T {
  if (obj.apiVersion && obj.kind) return obj;
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersion, kind: obj.kind ?? kind };
}
