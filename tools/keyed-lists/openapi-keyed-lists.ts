/**
 * Derives the keyed-list table of lib/operator/schema/keyed-lists.ts ({@link KeyedListSchema}) from a live API
 * server's OpenAPI v3 (`/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`): every array marked
 * `x-kubernetes-list-type: map` (with its `x-kubernetes-list-map-keys` and the keys' `default`s) or
 * `set`, reachable from the root schema of a chosen kind. Definitions that lead to none are left out.
 *
 * Used by tools/generate-keyed-lists.ts (which writes lib/operator/schema/keyed-lists.generated.ts) and by
 * test/integration/server-limits-differential.test.ts (which compares that file with the live server).
 * Development code: no entry of the package loads it, and the package does not ship it.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy
 * @see https://kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-v3
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { lookupBuiltInKind } from '../../lib/operator/kinds.js';
import type { KeyedListField, KeyedListSchema } from '../../lib/operator/schema/keyed-lists.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';

type Json = Record<string, any>;

/** Which kinds get a root in the table: `(apiVersion, kind) => boolean`, e.g. `('apps/v1', 'Deployment')`. */
export type IncludeKind = (apiVersion: string, kind: string) => boolean;

/** The kinds of the built-in kind table (lib/operator/kinds.ts), the ones `keyedListProblems` checks. */
export const BUILT_IN_KINDS: IncludeKind = (apiVersion, kind) => lookupBuiltInKind(apiVersion, kind) !== undefined;

/** GETs `path` and parses its JSON body. @throws Error naming the path when the server does not answer 200. */
async function getJson(kubeConfig: KubeConfig, path: string): Promise<Json> {
  const res = await ApiClient.sendOnce({ kubeConfig }, 'GET', path, { timeoutMs: 30_000 });
  if (res.statusCode !== 200) throw new Error(`GET ${path}: HTTP ${res.statusCode}: ${res.body.slice(0, 300)}`);
  return JSON.parse(res.body) as Json;
}

/** The server's Kubernetes version, `gitVersion` of `/version`, e.g. `v1.35.4`. */
export async function serverVersion(kubeConfig: KubeConfig): Promise<string> {
  const version = (await getJson(kubeConfig, '/version')).gitVersion;
  if (typeof version !== 'string' || !version) throw new Error('GET /version: the answer has no gitVersion');
  return version;
}

function refOf(schema: Json | undefined): string | undefined {
  if (!schema) return undefined;
  if (typeof schema.$ref === 'string') return schema.$ref.replace('#/components/schemas/', '');
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return refOf(schema.allOf[0]);
  return undefined;
}

/**
 * The table for the kinds `include` picks (default: the built-in kinds), from the server's OpenAPI v3.
 * Kinds and definitions come out sorted by name, fields by name (UTF-16 code units, as `Array.sort`).
 *
 * @throws Error naming the path when an OpenAPI document cannot be fetched.
 */
export async function deriveKeyedListSchema(kubeConfig: KubeConfig, include: IncludeKind = BUILT_IN_KINDS): Promise<KeyedListSchema> {
  const index = (await getJson(kubeConfig, '/openapi/v3')) as { paths: Record<string, unknown> };
  const schemas: Record<string, Json> = {};
  const roots: Record<string, string> = {};
  for (const path of Object.keys(index.paths).sort()) {
    if (!/^(api\/v1|apis\/[^/]+\/[^/]+)$/.test(path)) continue;
    const doc = await getJson(kubeConfig, `/openapi/v3/${path}`);
    Object.assign(schemas, doc.components?.schemas ?? {});
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}) as [string, Json][]) {
      for (const gvk of schema['x-kubernetes-group-version-kind'] ?? []) {
        const apiVersion = `${gvk.group ? gvk.group + '/' : ''}${gvk.version}`;
        if (include(apiVersion, gvk.kind)) roots[`${apiVersion}/${gvk.kind}`] = name;
      }
    }
  }

  const definitions: Record<string, Record<string, KeyedListField>> = {};
  const leads = new Map<string, boolean>();
  const visit = (name: string): boolean => {
    if (leads.has(name)) return leads.get(name)!;
    leads.set(name, false); // cycles (JSONSchemaProps) lead nowhere new
    const schema = schemas[name] ?? {};
    const fields: Record<string, KeyedListField> = {};
    for (const [field, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const shape = fieldShape(prop, visit, schemas);
      if (shape) fields[field] = shape;
    }
    const found = Object.keys(fields).length > 0;
    if (found) definitions[name] = fields;
    leads.set(name, found);
    return found;
  };
  const kindRoots: Record<string, string> = {};
  for (const gvk of Object.keys(roots).sort()) if (visit(roots[gvk])) kindRoots[gvk] = roots[gvk];
  const sortedDefinitions = Object.fromEntries(Object.keys(definitions).sort().map((k) => [k, definitions[k]]));
  return { kinds: kindRoots, definitions: sortedDefinitions };
}

function fieldShape(prop: Json, visit: (name: string) => boolean, schemas: Record<string, Json>): KeyedListField | undefined {
  const ref = refOf(prop);
  if (ref) return visit(ref) ? { object: ref } : undefined;
  if (prop.type === 'array') {
    const itemRef = refOf(prop.items);
    const item = itemRef && visit(itemRef) ? itemRef : undefined;
    const listType = prop['x-kubernetes-list-type'];
    if (listType === 'map') {
      const keys = prop['x-kubernetes-list-map-keys'] as string[];
      const itemSchema = itemRef ? schemas[itemRef] : prop.items;
      const defaults: Record<string, unknown> = {};
      for (const key of keys) {
        const d = itemSchema?.properties?.[key]?.default;
        if (d !== undefined) defaults[key] = d;
      }
      return { listMapKeys: keys, ...(Object.keys(defaults).length ? { keyDefaults: defaults } : {}), ...(item ? { items: item } : {}) };
    }
    if (listType === 'set') return { listSet: true };
    return item ? { items: item } : undefined;
  }
  if (prop.type === 'object' && prop.additionalProperties) {
    const valueRef = refOf(prop.additionalProperties);
    return valueRef && visit(valueRef) ? { values: valueRef } : undefined;
  }
  return undefined;
}
