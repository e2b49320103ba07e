/**
 * Best-effort reading of a stored object's spec during conversion: defaults applied, no validation of
 * values against today's rules.
 *
 * Why: the API server converts stored objects on every read (GET, LIST, WATCH) in another version. A
 * ConversionReview that fails fails the whole request, so one object that today's rules reject (stored
 * before a `.min(1)` or a CEL rule was added) would break every LIST and WATCH of the kind, for the
 * operator, kubectl and the garbage collector (opentelemetry-operator#4288, provider-keycloak#669).
 * The API server itself never re-validates stored data on read; it applies defaults and prunes unknown
 * fields (structural schema), and validates only on write. This does the same:
 *
 * 1. the zod schema's own parse when the value passes it (zod defaults, the exact types `render` gets);
 * 2. otherwise the structural schema's view, as the API server reads stored data: `default`s applied to
 *    missing fields (and to `null` in fields that are not nullable), unknown fields pruned, every value
 *    kept as it is whatever its rules (`minimum`, `pattern`, `enum`, CEL …). A value whose JSON type
 *    does not fit its field (a string where an integer is declared) cannot be held at all: it is left
 *    out and returned in `dropped`, so the caller keeps it elsewhere (the conversion-data annotation).
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
 */
import type { z } from 'zod';
import { toStructuralSchema, type JSONSchemaProps } from './structural-schema.js';
import { formatFieldPath } from '../field-path.js';
import { isJsonObject } from '../../json-object.js';

/** A value left out because its JSON type does not fit its field: where it was (from the object's root), and the value. */
export interface DroppedField {
  /** Path segments from the object's root, e.g. `['spec', 'ports', 0, 'port']`. */
  readonly path: readonly (string | number)[];
  readonly value: unknown;
}

/** What {@link parseBestEffort} read. */
export interface BestEffortValue {
  readonly value: unknown;
  /** Today's rules the value breaks, one `field: message` each; empty when the zod parse passed. */
  readonly issues: readonly string[];
  /** Values that do not fit their field's type and are not in `value`. */
  readonly dropped: readonly DroppedField[];
}

const structuralCache = new WeakMap<z.ZodType, JSONSchemaProps>();

/**
 * Reads `value` (at `root`, e.g. `spec`) with `schema`: its zod parse when valid, else the structural
 * schema's defaulted, pruned, unvalidated view (see the module doc). Never throws for the value.
 *
 * @throws StructuralSchemaError only when `schema` itself is not structural (refused at synth already)
 */
export function parseBestEffort(schema: z.ZodType, value: unknown, root: string): BestEffortValue {
  const result = schema.safeParse(value);
  if (result.success) return { value: result.data, issues: [], dropped: [] };
  const issues = result.error.issues.map((i) => `${formatFieldPath(root, i.path as PropertyKey[])}: ${i.message}`);
  let structural = structuralCache.get(schema);
  if (!structural) {
    structural = toStructuralSchema(schema, root);
    structuralCache.set(schema, structural);
  }
  const dropped: DroppedField[] = [];
  return { value: conform(structural, value, [root], dropped), issues, dropped };
}

/** The value as the structural schema holds it; `undefined` = absent. */
function conform(schema: JSONSchemaProps, value: unknown, path: (string | number)[], dropped: DroppedField[]): unknown {
  if (value === null && !schema.nullable) value = undefined; // the API server prunes such nulls, then defaults
  if (value === undefined) return schema.default === undefined ? undefined : conform({ ...schema, default: undefined }, structuredClone(schema.default), path, dropped);
  if (value === null) return null;
  const drop = (): undefined => {
    dropped.push({ path: [...path], value });
    return undefined;
  };
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value) ? value : drop();
  switch (schema.type) {
    case undefined:
      return value;
    case 'string':
      return typeof value === 'string' ? value : drop();
    case 'integer':
      return Number.isInteger(value) ? value : drop();
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : drop();
    case 'boolean':
      return typeof value === 'boolean' ? value : drop();
    case 'array': {
      if (!Array.isArray(value)) return drop();
      const items = schema.items;
      if (!items) return value;
      const out: unknown[] = [];
      value.forEach((item, i) => {
        const held = conform(items, item, [...path, i], dropped);
        if (held !== undefined) out.push(held);
      });
      return out;
    }
    case 'object': {
      if (!isJsonObject(value)) return drop();
      const out: Record<string, unknown> = {};
      const properties = schema.properties ?? {};
      const keep = (key: string, held: unknown) => {
        if (held !== undefined) Object.defineProperty(out, key, { value: held, enumerable: true, writable: true, configurable: true });
      };
      for (const [key, field] of Object.entries(value)) {
        const declared = Object.hasOwn(properties, key) ? properties[key] : undefined;
        if (declared) keep(key, conform(declared, field, [...path, key], dropped));
        else if (schema.additionalProperties) keep(key, conform(schema.additionalProperties, field, [...path, key], dropped));
        else if (schema['x-kubernetes-preserve-unknown-fields'] || schema['x-kubernetes-embedded-resource']) keep(key, field);
        // else: an unknown field, pruned as the API server prunes it
      }
      for (const [key, field] of Object.entries(properties)) {
        if (!Object.hasOwn(out, key) && field.default !== undefined && !dropped.some((d) => d.path.length === path.length + 1 && d.path[path.length] === key && sameStart(d.path, path))) {
          keep(key, conform(field, undefined, [...path, key], dropped));
        }
      }
      return out;
    }
    default:
      return value;
  }
}

function sameStart(a: readonly (string | number)[], prefix: readonly (string | number)[]): boolean {
  return prefix.every((segment, i) => a[i] === segment);
}
