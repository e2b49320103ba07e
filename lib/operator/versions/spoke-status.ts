/**
 * The status schema of a spoke version: what the runtime writes, the hub's status fields as the hub
 * declares them, and the spoke's own status fields.
 *
 * Why every spoke holds the hub's status: server-side apply converts the object into every version
 * that owns fields in it (each `managedFields` entry is kept in its own `apiVersion`), and the
 * API server refuses the apply when the converted object has a field that version's schema lacks
 * (`failed to convert new object: .status.nodes: field not declared in schema`). A CR created in a
 * spoke has a manager in that spoke, so the runtime's status apply (in the hub) is converted into the
 * spoke; conversion copies the hub's status fields as they are (conversion.ts), so the spoke's schema
 * must declare them, with the same schema.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts (managedFields per apiVersion)
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/
 */
import type { z } from 'zod';
import { StructuralSchemaError } from '../errors.js';
import { RUNTIME_STATUS_FIELDS, statusSchema } from '../schema/crd.js';
import type { JSONSchemaProps } from '../schema/structural-schema.js';

/**
 * The status schema of a spoke: {@link statusSchema} of the spoke's own status, plus every status field
 * of the hub. A field both declare must be declared alike (descriptions aside); CEL rules of the hub's
 * status object are kept (they read the hub's fields, which the spoke holds as they are).
 *
 * @param hubStatus the hub's (the Operator's) status schema; @default none: the spoke holds the runtime's fields and its own
 * @throws StructuralSchemaError naming `status.<field>` when the spoke declares a field the hub also
 *   declares, with another schema (the spoke could not hold the hub's value), or when either status
 *   schema is not a structural object schema
 */
export function spokeStatusSchema(hubStatus: z.ZodType | undefined, spokeStatus: z.ZodType | undefined): JSONSchemaProps {
  const own = statusSchema(spokeStatus);
  if (!hubStatus) return own;
  const hub = statusSchema(hubStatus);
  const properties: Record<string, JSONSchemaProps> = { ...own.properties };
  for (const [name, schema] of Object.entries(hub.properties ?? {})) {
    if ((RUNTIME_STATUS_FIELDS as readonly string[]).includes(name)) continue;
    const declared = properties[name];
    if (declared !== undefined && canonicalSchema(declared) !== canonicalSchema(schema)) {
      throw new StructuralSchemaError(
        `status.${name}`,
        `cannot hold the hub's status.${name}: declared as ${canonicalSchema(declared)}, the hub's is ${canonicalSchema(schema)}. ` +
          'Every version holds the hub\'s status fields as they are (server-side apply converts the object into each version that owns fields in it): ' +
          'declare it as the hub does, or give the spoke\'s field another name',
      );
    }
    properties[name] = schema;
  }
  const rules = [...(own['x-kubernetes-validations'] ?? [])];
  for (const rule of hub['x-kubernetes-validations'] ?? []) {
    if (!rules.some((r) => JSON.stringify(r) === JSON.stringify(rule))) rules.push(rule);
  }
  return { ...own, properties, ...(rules.length > 0 ? { 'x-kubernetes-validations': rules } : {}) };
}

/**
 * The top-level status fields a status schema declares (runtime's included), or `undefined` when it
 * keeps unknown fields (`x-kubernetes-preserve-unknown-fields`), i.e. holds any field.
 */
export function declaredStatusFields(schema: JSONSchemaProps): ReadonlySet<string> | undefined {
  if (schema['x-kubernetes-preserve-unknown-fields']) return undefined;
  return new Set(Object.keys(schema.properties ?? {}));
}

/** A schema as sorted JSON without descriptions: equal text, same values accepted. */
function canonicalSchema(schema: unknown): string {
  // `properties` maps field names to schemas: a field may be called `description`.
  const strip = (value: unknown, names = false): unknown => {
    if (Array.isArray(value)) return value.map((v) => strip(v));
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (!names && (key === 'description' || key === 'title')) continue;
      out[key] = strip((value as Record<string, unknown>)[key], !names && key === 'properties');
    }
    return out;
  };
  return JSON.stringify(strip(schema));
}
