/** The parts of a GVK plus resource that locate it in the REST API. */
export interface ResourceRef {
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural resource name, e.g. 'deployments'. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Where one object is: its resource, its namespace (a namespaced resource's) and its name. */
export interface ObjectLocation {
  readonly ref: ResourceRef;
  readonly namespace?: string;
  readonly name: string;
}

/**
 * Builds a REST path (kubernetes.io/docs/reference/using-api/api-concepts/#resource-uris):
 * `/api/v1/namespaces/{ns}/pods/{name}/status` or `/apis/{group}/{version}/…`.
 * With no namespace a namespaced resource is addressed across all namespaces (list/watch only).
 * Errors: a name given for a namespaced resource without a namespace throws.
 */
export function resourcePath(ref: ResourceRef, namespace?: string, name?: string, subresource?: string): string {
  let path = ref.group === '' ? `/api/${ref.version}` : `/apis/${ref.group}/${ref.version}`;
  if (ref.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  else if (ref.namespaced && name) throw new Error(`${ref.plural}/${name}: a namespaced resource needs a namespace`);
  path += `/${ref.plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}
