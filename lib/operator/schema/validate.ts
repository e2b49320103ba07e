/**
 * Offline validation of a custom resource: what the API server would check on create/update, as far as
 * zod expresses it (types, required fields, enums, bounds, lengths, patterns, list-map key uniqueness),
 * plus apiVersion, kind and metadata. Defaults are applied, like the API server's defaulting.
 *
 * `null` is treated as the API server treats it: a `null` for a field that is not `.nullable()` is
 * dropped before validation (so the field's default applies, and a required field is reported missing),
 * also for map values; `null` in a list stays and is an error.
 *
 * Not checked offline: CEL rules (`celRule`), formats zod does not know, and the server-side pruning of
 * unknown fields (zod strips them from objects instead).
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation
 */
import type { z } from 'zod';
import { toStructuralSchema, type JSONSchemaProps } from './structural-schema.js';
import type { CustomResource } from '../custom-resource.js';
import { CustomResourceValidationError, type FieldError } from '../errors.js';
import type { ResolvedKind } from '../kinds.js';
import { dns1123LabelProblem, dns1123SubdomainProblem } from './names.js';
import { crNameProblem, type CrNameRule } from './cr-name-rule.js';
import { formatFieldPath } from '../field-path.js';

/**
 * Namespace a namespaced CR gets when it has none, as `kubectl apply` does with the default context.
 */
export const DEFAULT_NAMESPACE = 'default';

export { formatFieldPath } from '../field-path.js';

/**
 * Validates `obj` as a CR of `kind` whose spec follows `spec`, and returns it with defaults applied
 * (spec parsed by zod; a namespaced CR without a namespace gets {@link DEFAULT_NAMESPACE}). `status` and
 * all other metadata are passed through unchanged. With `nameRule`, `metadata.name` must also meet it, as
 * the CRD's schema demands of it (cr-name-rule.ts). @default no rule beyond the API server's own
 *
 * @throws CustomResourceValidationError listing every problem with its field path, e.g.
 *   `spec.size: Too small: expected number to be >=1`
 */
export function validateCustomResource<S extends z.ZodType>(kind: ResolvedKind, spec: S, obj: unknown, nameRule?: CrNameRule): CustomResource<z.output<S>> {
  const fields: FieldError[] = [];
  const record = typeof obj === 'object' && obj !== null && !Array.isArray(obj) ? (obj as Record<string, unknown>) : undefined;
  const rawMetadata = record?.metadata;
  const metadata =
    typeof rawMetadata === 'object' && rawMetadata !== null && !Array.isArray(rawMetadata) ? (rawMetadata as Record<string, unknown>) : undefined;
  const ref = {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    name: typeof metadata?.name === 'string' ? metadata.name : undefined,
    namespace: typeof metadata?.namespace === 'string' ? metadata.namespace : undefined,
  };
  if (!record) throw new CustomResourceValidationError(ref, [{ path: '', reason: 'must be an object' }]);

  if (record.apiVersion !== kind.apiVersion) {
    fields.push({ path: 'apiVersion', reason: `must be ${JSON.stringify(kind.apiVersion)}, got ${JSON.stringify(record.apiVersion)}` });
  }
  if (record.kind !== kind.kind) fields.push({ path: 'kind', reason: `must be ${JSON.stringify(kind.kind)}, got ${JSON.stringify(record.kind)}` });

  let namespace: string | undefined;
  if (!metadata) {
    fields.push({ path: 'metadata', reason: 'Required' });
  } else {
    if (typeof metadata.name !== 'string') fields.push({ path: 'metadata.name', reason: 'Required value: name is required' });
    else {
      const problem = dns1123SubdomainProblem(metadata.name) ?? (nameRule ? crNameProblem(metadata.name, nameRule) : undefined);
      if (problem) fields.push({ path: 'metadata.name', reason: `Invalid value: ${JSON.stringify(metadata.name)}: ${problem}` });
    }
    if (metadata.namespace !== undefined && metadata.namespace !== null) {
      if (!kind.namespaced) fields.push({ path: 'metadata.namespace', reason: `must not be set: ${kind.kind} is cluster-scoped` });
      else if (typeof metadata.namespace !== 'string') fields.push({ path: 'metadata.namespace', reason: 'must be a string' });
      else {
        const problem = dns1123LabelProblem(metadata.namespace);
        if (problem) fields.push({ path: 'metadata.namespace', reason: `Invalid value: ${JSON.stringify(metadata.namespace)}: ${problem}` });
        namespace = metadata.namespace;
      }
    } else if (kind.namespaced) {
      namespace = DEFAULT_NAMESPACE;
    }
  }

  const parsed = spec.safeParse(record.spec === null ? undefined : pruneNonNullableNulls(record.spec, structuralSchemaOf(spec)));
  if (!parsed.success) {
    for (const issue of parsed.error.issues) fields.push({ path: formatFieldPath('spec', issue.path), reason: issue.message });
  }
  if (fields.length > 0) throw new CustomResourceValidationError(ref, fields, parsed.success ? undefined : { cause: parsed.error });

  const { namespace: _ignored, ...restMetadata } = metadata as Record<string, unknown>;
  const result: CustomResource<z.output<S>> = {
    ...(record as object),
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    metadata: { ...restMetadata, name: restMetadata.name as string /* checked above */, ...(namespace !== undefined ? { namespace } : {}) },
    spec: parsed.data as z.output<S>,
  };
  return result;
}

const structuralSchemas = new WeakMap<z.ZodType, JSONSchemaProps>();

function structuralSchemaOf(spec: z.ZodType): JSONSchemaProps {
  let schema = structuralSchemas.get(spec);
  if (!schema) {
    schema = toStructuralSchema(spec, 'spec');
    structuralSchemas.set(spec, schema);
  }
  return schema;
}

/**
 * A copy of `value` without the `null`s the API server drops before validating a custom resource: a
 * property or map value that is `null` where the schema is not `nullable` (Kubernetes drops it before
 * defaulting, so a default then applies). Items of lists are kept. Measured on kube-apiserver 1.35 with
 * a dry-run create (test/integration/schema-differential.test.ts).
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting-and-nullable
 */
export function pruneNonNullableNulls(value: unknown, schema: JSONSchemaProps | undefined): unknown {
  if (schema === undefined || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => pruneNonNullableNulls(item, schema.items));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childSchema = schema.properties?.[key] ?? schema.additionalProperties;
    if (child === null && childSchema !== undefined && childSchema.nullable !== true) continue;
    out[key] = pruneNonNullableNulls(child, childSchema);
  }
  return out;
}
