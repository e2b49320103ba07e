/**
 * zod v4 schema → Kubernetes structural OpenAPI v3 schema (the `openAPIV3Schema` of a CRD version).
 *
 * The conversion runs zod's own `z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' })` and then
 * normalises the result so that the API server accepts it:
 *
 * - every node has a `type`, except `x-kubernetes-int-or-string: true` (from
 *   `z.union([z.number().int(), z.string()])`) and `x-kubernetes-preserve-unknown-fields: true`
 *   (from `z.unknown()` / `z.any()`);
 * - `z.record(z.string(), X)` → `type: object, additionalProperties: X`; a record of unknown values and
 *   `z.looseObject()` → `type: object, x-kubernetes-preserve-unknown-fields: true`;
 * - `.nullable()` / `X | null` → `nullable: true`; `z.literal(v)` → single-value `enum`; unions of
 *   literals → one `enum` (a nullable enum is an error: the API server rejects null for it);
 * - enum, minimum/maximum (exclusive too), multipleOf, minLength/maxLength, pattern, format (the
 *   formats the API server knows), minItems/maxItems, min/maxProperties, required, default, description
 *   and title are kept;
 * - patterns are translated from JavaScript regex syntax and flags to RE2's, the engine the API server
 *   matches them with (see re2-pattern.ts: `/^gold$/i` → `(?i)^gold$`); a second and later pattern of
 *   one string go into `allOf: [{ pattern }]`, the only `allOf` emitted; a regex RE2 cannot express
 *   (lookaround, backreference, the `m` flag, a repetition count above 1000 …) is an error;
 * - a `.default()` / `.prefault()` value must be non-null, pass its own field's schema and be complete
 *   (parsing it gives it back unchanged), else an error: the API server drops `default: null`, refuses a
 *   CRD whose default violates its field, and applies defaults nested inside a default where zod does not;
 * - list-maps ({@link listMap}), list-sets ({@link listSet}) and CEL rules ({@link celRule}) come from
 *   zod metadata (`.meta()`), so they survive `.optional()`, `.max()` and friends;
 * - never emitted: `$ref`, `$schema`, `const`, `additionalProperties: false`, `type: null`, `oneOf`,
 *   `anyOf`, `not`, `uniqueItems`, and `allOf` other than of patterns.
 *
 * Anything that has no structural form (unions of different types, intersections, tuples, dates,
 * bigints, maps, sets, recursion, record keys restricted by enum or pattern, regexes with lookaround,
 * defaults that violate their field …)
 * throws a {@link StructuralSchemaError} naming the field, e.g.
 * `spec.foo.bar: union of object and string cannot be expressed as a structural schema`, so `cdk8s synth`
 * fails instead of the API server rejecting the CRD later.
 *
 * Field paths use `.name` for properties, `[]` for array items and `.*` for map values.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy (list-type, list-map-keys)
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules (CEL)
 */
import { z } from 'zod';
import { StructuralSchemaError } from '../errors.js';
import { toRe2Pattern } from './re2-pattern.js';
import { isJsonObject } from '../../json-object.js';

/** A node of a Kubernetes structural schema (subset of apiextensions.k8s.io/v1 JSONSchemaProps). */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  title?: string;
  default?: unknown;
  nullable?: boolean;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  additionalProperties?: JSONSchemaProps;
  minProperties?: number;
  maxProperties?: number;
  items?: JSONSchemaProps;
  /** Only `{ pattern }` entries: the second and later patterns of a string with several (`.regex()` twice, `.startsWith()` …). */
  allOf?: { pattern: string }[];
  minItems?: number;
  maxItems?: number;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
  'x-kubernetes-embedded-resource'?: boolean;
}

/**
 * A CEL validation rule (`x-kubernetes-validations` entry). Evaluated by the API server, and offline by
 * the server's own code: `render`, `renderForSnapshot` and `validateCustomResource` (lib/validator) run
 * it against the synthesized CRD, with the server's cost limits and messages; the operator's zod
 * validation (`parseCustomResource`, the runtime) does not.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules
 */
export interface CelRule {
  /** CEL expression over `self` (and `oldSelf` for transition rules), e.g. `self.minReplicas <= self.maxReplicas`. */
  readonly rule: string;
  /** Message shown when the rule fails. @default the API server's "failed rule: <rule>" */
  readonly message?: string;
  /** CEL expression producing the message (takes precedence over `message`). @default none: `message` */
  readonly messageExpression?: string;
  /** Error reason reported by the API server. @default 'FieldValueInvalid' (server default) */
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  /** JSONPath-like field the error is reported on, relative to this node, e.g. `.spec.replicas`. @default this node */
  readonly fieldPath?: string;
  /**
   * Evaluate a transition rule (one that reads `oldSelf`) also when the old value is absent, with
   * `oldSelf` an optional. @default false: transition rules run on updates of an existing value only
   */
  readonly optionalOldSelf?: boolean;
}

const LIST_TYPE = 'x-kubernetes-list-type';
const LIST_MAP_KEYS = 'x-kubernetes-list-map-keys';
const VALIDATIONS = 'x-kubernetes-validations';
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const INT_OR_STRING = 'x-kubernetes-int-or-string';
/** Marker our zod hooks leave on nodes that have no JSON Schema form; the normaliser turns it into an error with the field path. */
const UNREPRESENTABLE = 'x-cdk8s-unrepresentable';
/** Marker our zod hooks leave on nodes the API server would refuse or validate differently (the text is the reason). */
const INVALID = 'x-cdk8s-invalid';
/** Our zod hooks' list of a string's patterns, already in RE2 form (they replace zod's `pattern` / `allOf`). */
const PATTERNS = 'x-cdk8s-patterns';
/** Our zod hooks' RE2 form of a string format's own regex (dropped when the API server checks the format itself). */
const FORMAT_PATTERN = 'x-cdk8s-format-pattern';

/**
 * Marks an array schema as a list-map: items are objects identified by `keys`, so server-side apply
 * merges entries by key instead of replacing the whole list. Offline validation rejects duplicate keys
 * (the API server does too).
 *
 * Each key must be a scalar property of the item that is required or has a default.
 *
 * @example listMap(z.object({ name: z.string(), port: z.number().int() }), ['name'])
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy
 */
export function listMap<T extends z.ZodType>(item: T, keys: readonly [string, ...string[]]): z.ZodArray<T> {
  const array = z.array(item).superRefine((items, ctx) => {
    const seen = new Set<string>();
    items.forEach((entry, index) => {
      const value = entry as Record<string, unknown> | null;
      const key = JSON.stringify(Object.fromEntries(keys.map((k) => [k, value?.[k]])));
      if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `Duplicate value: ${key}`, path: [index] });
      seen.add(key);
    });
  });
  return array.meta({ ...array.meta(), [LIST_TYPE]: 'map', [LIST_MAP_KEYS]: [...keys] });
}

/**
 * Marks an array of scalars as a list-set: entries are unique and server-side apply merges them as a set.
 * Offline validation rejects duplicates.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy
 */
export function listSet<T extends z.ZodType>(item: T): z.ZodArray<T> {
  const array = z.array(item).superRefine((items, ctx) => {
    const seen = new Set<string>();
    items.forEach((entry, index) => {
      const key = JSON.stringify(entry);
      if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `Duplicate value: ${key}`, path: [index] });
      seen.add(key);
    });
  });
  return array.meta({ ...array.meta(), [LIST_TYPE]: 'set' });
}

/**
 * Attaches a CEL rule to a schema node (`x-kubernetes-validations`). Can be called repeatedly; rules
 * accumulate. Rules are enforced by the API server, and offline by `render`, `renderForSnapshot` and
 * `validateCustomResource`, which run the server's own code on the CR (a rule that does not compile is
 * reported there as a cause on the CR); zod validation (`parseCustomResource`) does not evaluate them.
 *
 * Cost errors come late: neither synth nor offline validation estimates a rule's cost. The API server
 * rejects the CRD itself when its estimated cost exceeds the budget; the estimate grows
 * with every string, list and map the rule touches that has no `maxLength` / `maxItems` /
 * `maxProperties`, so bound those (e.g. `z.string().max(63)`).
 *
 * @example celRule(z.object({ min: z.number().int(), max: z.number().int() }), { rule: 'self.min <= self.max', message: 'min must not exceed max' })
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation-rules
 */
export function celRule<T extends z.ZodType>(schema: T, rule: CelRule): T {
  const existing = schema.meta() as Record<string, unknown> | undefined;
  const rules = (existing?.[VALIDATIONS] as CelRule[] | undefined) ?? [];
  return schema.meta({ ...existing, [VALIDATIONS]: [...rules, { ...rule }] }) as T;
}

/**
 * Converts a zod schema into a Kubernetes structural schema.
 *
 * @param schema the zod v4 schema (e.g. an operator's spec)
 * @param path field path of the schema's root, used in error messages. @default 'spec'
 * @throws StructuralSchemaError naming the field when the schema has no structural form
 */
export function toStructuralSchema(schema: z.ZodType, path = 'spec'): JSONSchemaProps {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, {
      target: 'openapi-3.0',
      io: 'input',
      reused: 'inline',
      cycles: 'ref',
      unrepresentable: (ctx) => ({ [UNREPRESENTABLE]: `${describeZodType(ctx.zodSchema)} (${ctx.message})` }),
      override: (ctx) => {
        const type = zodTypeName(ctx.zodSchema);
        if (type === 'tuple') replaceWith(ctx.jsonSchema, { [UNREPRESENTABLE]: 'a tuple' });
        if (type === 'string') replaceStringPatterns(ctx.zodSchema, ctx.jsonSchema);
        if (type === 'default' || type === 'prefault') {
          // cast: zod's public types do not expose a default's inner value, zodTypeName checked the type
          const problem = defaultProblem(ctx.zodSchema as unknown as ZodDefaultLike);
          if (problem) ctx.jsonSchema[INVALID] = problem;
        }
        // The openapi-3.0 target drops `propertyNames`, so a record's key schema (enum, pattern, length)
        // would vanish silently; put it back for normalizeObject to reject.
        if (type === 'record') {
          const keyNames = recordKeySchema(ctx.zodSchema);
          if (keyNames) ctx.jsonSchema.propertyNames = keyNames;
        }
      },
    }) as Record<string, unknown>;
  } catch (cause) {
    throw new StructuralSchemaError(path, `cannot convert to JSON Schema: ${(cause as Error).message}`, { cause });
  }
  const defs = {
    ...(json.definitions as Record<string, unknown> | undefined),
    ...(json.$defs as Record<string, unknown> | undefined),
    ...((json.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {}),
  };
  const result = normalize(json, path, { defs, refs: [] });
  const problems = checkStructuralSchema(result, path);
  if (problems.length > 0) throw new StructuralSchemaError(path, problems.join('; '));
  return result;
}

interface Ctx {
  readonly defs: Record<string, unknown>;
  readonly refs: readonly string[];
}

type Node = Record<string, unknown>;

const SCALARS = new Set(['string', 'integer', 'number', 'boolean']);
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
/** Formats the API server validates (k8s.io/kube-openapi strfmt, as listed in the CRD docs). */
const KUBERNETES_FORMATS = new Set([
  'bsonobjectid', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uuid', 'uuid3', 'uuid4', 'uuid5',
  'isbn', 'isbn10', 'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'byte', 'password', 'date',
  'date-time', 'datetime', 'duration', 'int32', 'int64', 'float', 'double',
]);
/** zod formats whose names differ from the Kubernetes ones. */
const FORMAT_ALIASES: Record<string, string> = { cidrv4: 'cidr', cidrv6: 'cidr', guid: 'uuid', url: 'uri' };
/** zod's `duration` is ISO 8601 (`P1D`), Kubernetes' is Go's (`1h`): never map it. */
const NEVER_MAPPED_FORMATS = new Set(['duration']);

function err(path: string, problem: string): StructuralSchemaError {
  return new StructuralSchemaError(path, problem);
}

function normalize(input: unknown, path: string, ctx: Ctx): JSONSchemaProps {
  if (input === true) return { [PRESERVE]: true };
  if (input === false) throw err(path, 'a schema that accepts no value (z.never()) cannot be expressed as a structural schema');
  if (!isJsonObject<Node>(input)) throw err(path, `unexpected JSON Schema node ${JSON.stringify(input)}`);
  let node: Node = input;

  if (UNREPRESENTABLE in node) throw err(path, `${String(node[UNREPRESENTABLE])} cannot be expressed as a structural schema`);
  if (INVALID in node) throw err(path, String(node[INVALID]));

  if (typeof node.$ref === 'string') {
    const ref = node.$ref;
    if (ctx.refs.includes(ref)) throw err(path, 'a recursive schema cannot be expressed as a structural schema');
    const target = ctx.defs[ref.replace(/^#\/(\$defs|definitions|components\/schemas)\//, '')];
    if (target === undefined) throw err(path, `unresolvable reference ${ref}`);
    const { $ref: _ignored, ...rest } = node;
    return normalize({ ...(target as Node), ...rest }, path, { ...ctx, refs: [...ctx.refs, ref] });
  }

  if (Array.isArray(node.allOf) && !node.allOf.every((a) => isJsonObject<Node>(a) && Object.keys(a).length === 1 && typeof a.pattern === 'string')) {
    if (node.allOf.length !== 1) {
      throw err(path, 'an intersection (allOf, from z.intersection / .and()) cannot be expressed as a structural schema; use .extend() instead');
    }
    const { allOf, ...rest } = node;
    node = { ...(allOf[0] as Node), ...rest };
  }
  if (node.not !== undefined) throw err(path, 'a schema that accepts no value (z.never(), `not`) cannot be expressed as a structural schema');

  const union = (node.anyOf ?? node.oneOf) as unknown[] | undefined;
  if (Array.isArray(union)) return normalizeUnion(node, union, path, ctx);

  let type = node.type as unknown;
  let nullable = node.nullable === true;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== 'null');
    nullable ||= types.length < type.length;
    if (types.length !== 1) return normalizeUnion({ ...node, type: undefined }, types.map((t) => ({ type: t })), path, ctx, nullable);
    type = types[0];
  }
  if (type === 'null') throw err(path, 'a field that can only be null cannot be expressed as a structural schema');

  let enumValues = Array.isArray(node.enum) ? [...(node.enum as unknown[])] : undefined;
  if ('const' in node) enumValues = [node.const];
  if (enumValues?.includes(null)) {
    nullable = true;
    enumValues = enumValues.filter((v) => v !== null);
  }

  if (type === undefined) {
    if (enumValues && enumValues.length > 0) type = inferScalarType(enumValues, path);
    else if (isJsonObject<Node>(node.properties) || node.additionalProperties !== undefined) type = 'object';
    else if (node.items !== undefined) type = 'array';
  }

  const out: JSONSchemaProps = {};
  copyCommon(node, out);
  if (nullable) out.nullable = true;

  if (type === undefined) {
    if (hasConstraints(node)) throw err(path, 'a schema without a type (other than unknown/any) cannot be expressed as a structural schema');
    out[PRESERVE] = true;
    return out;
  }
  if (typeof type !== 'string' || !TYPES.has(type)) throw err(path, `type ${JSON.stringify(type)} cannot be expressed as a structural schema`);
  out.type = type as JSONSchemaProps['type'];
  if (enumValues) {
    if (enumValues.length === 0) throw err(path, 'an empty enum accepts no value');
    out.enum = enumValues;
    rejectNullableEnum(out, path);
  }

  switch (type) {
    case 'object':
      normalizeObject(node, out, path, ctx);
      break;
    case 'array':
      normalizeArray(node, out, path, ctx);
      break;
    case 'string':
      normalizeString(node, out, path);
      break;
    case 'integer':
    case 'number':
      normalizeNumber(node, out, type);
      break;
    default:
      break;
  }
  return out;
}

function copyCommon(node: Node, out: JSONSchemaProps): void {
  if (typeof node.description === 'string') out.description = node.description;
  if (typeof node.title === 'string') out.title = node.title;
  if (node.default !== undefined) out.default = node.default;
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') && value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
}

const CONSTRAINT_KEYS = [
  'enum', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum',
  'exclusiveMaximum', 'multipleOf', 'properties', 'additionalProperties', 'items', 'required',
  'minItems', 'maxItems', 'minProperties', 'maxProperties',
];

function hasConstraints(node: Node): boolean {
  return CONSTRAINT_KEYS.some((k) => node[k] !== undefined);
}

function inferScalarType(values: unknown[], path: string): string {
  const types = new Set(values.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v)));
  if (types.has('number')) types.delete('integer');
  if (types.size !== 1) throw err(path, `an enum mixing ${[...types].sort().join(' and ')} values cannot be expressed as a structural schema`);
  const [type] = [...types];
  if (!SCALARS.has(type)) throw err(path, `an enum of ${type} values cannot be expressed as a structural schema`);
  return type;
}

function isNullBranch(branch: unknown): boolean {
  if (!isJsonObject<Node>(branch)) return false;
  if (branch.type === 'null') return true;
  const values = Array.isArray(branch.enum) ? branch.enum : 'const' in branch ? [branch.const] : undefined;
  return values !== undefined && values.length > 0 && values.every((v) => v === null);
}

function branchType(branch: unknown): string {
  if (!isJsonObject<Node>(branch)) return 'unknown';
  if (typeof branch.type === 'string') return branch.type;
  if (branch.$ref !== undefined) return 'reference';
  if (branch.anyOf !== undefined || branch.oneOf !== undefined) return 'union';
  if (Array.isArray(branch.enum) || 'const' in branch) return 'literal';
  if (UNREPRESENTABLE in branch) return String(branch[UNREPRESENTABLE]);
  return 'unknown';
}

function normalizeUnion(node: Node, branches: unknown[], path: string, ctx: Ctx, forceNullable = false): JSONSchemaProps {
  const { anyOf: _a, oneOf: _o, ...outer } = node;
  const nonNull = branches.filter((b) => !isNullBranch(b));
  const nullable = forceNullable || node.nullable === true || nonNull.length < branches.length;
  if (nonNull.length === 0) throw err(path, 'a field that can only be null cannot be expressed as a structural schema');

  const finish = (out: JSONSchemaProps): JSONSchemaProps => {
    copyCommon(outer, out);
    if (nullable) out.nullable = true;
    rejectNullableEnum(out, path);
    return out;
  };

  if (nonNull.length === 1) {
    const inner = normalize({ ...(nonNull[0] as Node), ...stripUndefined({ description: outer.description, default: outer.default }) }, path, ctx);
    return finish(inner);
  }

  // A union of literals / enums of one scalar type → one enum.
  if (nonNull.every((b) => isJsonObject<Node>(b) && (Array.isArray(b.enum) || 'const' in b) && b.properties === undefined)) {
    const values = nonNull.flatMap((b) => {
      const n = b as Node;
      return Array.isArray(n.enum) ? (n.enum as unknown[]) : [n.const];
    });
    const unique = values.filter((v, i) => values.findIndex((w) => JSON.stringify(w) === JSON.stringify(v)) === i);
    return finish({ type: inferScalarType(unique, path) as JSONSchemaProps['type'], enum: unique });
  }

  const types = nonNull.map(branchType);
  const sorted = [...types].sort();
  if (sorted.length === 2 && sorted[0] === 'integer' && sorted[1] === 'string') {
    const extra = nonNull.flatMap((b) => Object.keys(b as Node).filter((k) => !isTrivialIntOrStringKey(k, (b as Node)[k])));
    if (extra.length > 0) {
      throw err(path, `constraints (${[...new Set(extra)].sort().join(', ')}) inside an int-or-string union cannot be expressed as a structural schema; use celRule() on the field instead`);
    }
    return finish({ [INT_OR_STRING]: true });
  }
  if (sorted.length === 2 && sorted[0] === 'number' && sorted[1] === 'string') {
    throw err(path, 'union of number and string cannot be expressed as a structural schema; use z.union([z.number().int(), z.string()]) for int-or-string');
  }
  const distinct = [...new Set(sorted)];
  if (distinct.length === 1 && distinct[0] === 'object') {
    throw err(path, `a union of ${nonNull.length} object shapes cannot be expressed as a structural schema; use one z.object with optional fields (and celRule() for exclusivity)`);
  }
  throw err(path, `union of ${distinct.join(' and ')} cannot be expressed as a structural schema`);
}

/**
 * The API server checks `enum` even for a null value of a `nullable` field, and rejects it (Kubernetes
 * 1.35: `Unsupported value: null`, also when null is listed in the enum), while zod accepts null: the CRD
 * would refuse CRs that offline validation passes.
 */
function rejectNullableEnum(out: JSONSchemaProps, path: string): void {
  if (out.nullable && out.enum) {
    throw err(path, 'a nullable enum (literal) cannot be expressed: the API server rejects null for a field with an enum; use .optional() instead of .nullable()');
  }
}

function isTrivialIntOrStringKey(key: string, value: unknown): boolean {
  if (key === 'type' || key === 'description' || key === 'format') return true;
  if (key === 'minimum') return value === Number.MIN_SAFE_INTEGER;
  if (key === 'maximum') return value === Number.MAX_SAFE_INTEGER;
  return false;
}

function stripUndefined(obj: Node): Node {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

function join(path: string, key: string): string {
  const segment = /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? key : JSON.stringify(key);
  return path ? `${path}.${segment}` : segment;
}

function isUnconstrained(schema: unknown): boolean {
  if (schema === true) return true;
  if (!isJsonObject<Node>(schema)) return false;
  return Object.keys(schema).every((k) => k === 'description' || k === 'title');
}

function normalizeObject(node: Node, out: JSONSchemaProps, path: string, ctx: Ctx): void {
  const properties = isJsonObject<Node>(node.properties) ? node.properties : undefined;
  if (properties) {
    out.properties = {};
    for (const [key, value] of Object.entries(properties)) out.properties[key] = normalize(value, join(path, key), ctx);
  }
  if (Array.isArray(node.required)) {
    const required = (node.required as string[]).filter((k) => properties !== undefined && k in properties);
    if (required.length > 0) out.required = required;
  }
  if (node.patternProperties !== undefined) throw err(path, 'patternProperties cannot be expressed as a structural schema');
  if (node.propertyNames !== undefined) {
    const names = node.propertyNames;
    if (!(isJsonObject<Node>(names) && Object.keys(names).every((k) => k === 'type') && (names.type === undefined || names.type === 'string'))) {
      throw err(path, 'a record whose keys are restricted (enum, pattern, length) cannot be expressed as a structural schema; use z.record(z.string(), …) and celRule() on the field');
    }
  }
  const additional = node.additionalProperties;
  if (additional !== undefined && additional !== false) {
    if (isUnconstrained(additional)) {
      out[PRESERVE] = true;
    } else {
      if (properties && Object.keys(properties).length > 0) {
        throw err(path, 'an object with both fixed properties and a catchall schema cannot be expressed as a structural schema (properties and additionalProperties are mutually exclusive)');
      }
      const values = normalize(additional, `${path}.*`, ctx);
      if (values[PRESERVE] && values.type === undefined && !values[INT_OR_STRING]) out[PRESERVE] = true;
      else out.additionalProperties = values;
    }
  }
  for (const key of ['minProperties', 'maxProperties'] as const) if (typeof node[key] === 'number') out[key] = node[key] as number;
}

function normalizeArray(node: Node, out: JSONSchemaProps, path: string, ctx: Ctx): void {
  if (Array.isArray(node.items) || node.prefixItems !== undefined) throw err(path, 'a tuple cannot be expressed as a structural schema');
  if (node.items === undefined) throw err(path, 'an array without an item schema cannot be expressed as a structural schema');
  out.items = normalize(node.items, `${path}[]`, ctx);
  for (const key of ['minItems', 'maxItems'] as const) if (typeof node[key] === 'number') out[key] = node[key] as number;
  if (node.uniqueItems === true) {
    if (out[LIST_TYPE] === undefined && out.items.type && SCALARS.has(out.items.type)) out[LIST_TYPE] = 'set';
    else if (out[LIST_TYPE] !== 'set') throw err(path, 'uniqueItems is not allowed in a structural schema; use listSet() for scalars or listMap() for objects');
  }
  const problems = checkListType(out);
  if (problems.length > 0) throw err(path, problems.join('; '));
}

function normalizeString(node: Node, out: JSONSchemaProps, path: string): void {
  for (const key of ['minLength', 'maxLength'] as const) if (typeof node[key] === 'number') out[key] = node[key] as number;
  let format = typeof node.format === 'string' ? node.format : undefined;
  if (format) format = FORMAT_ALIASES[format] ?? format;
  const known = format !== undefined && KUBERNETES_FORMATS.has(format) && !NEVER_MAPPED_FORMATS.has(format);
  if (known) out.format = format;
  // zod adds its own regex for formats; when the API server checks the format itself, drop the regex
  // (zod's use lookarounds the server's RE2 engine rejects).
  const patterns: unknown[] = Array.isArray(node[PATTERNS]) ? [...(node[PATTERNS] as unknown[])] : typeof node.pattern === 'string' ? [node.pattern] : [];
  if (node[FORMAT_PATTERN] !== undefined && !known) patterns.unshift(node[FORMAT_PATTERN]);
  for (const pattern of patterns) {
    if (isJsonObject<Node>(pattern) && typeof pattern.problem === 'string') {
      throw err(path, `pattern /${String(pattern.source)}/${String(pattern.flags)} uses ${pattern.problem}, which the API server's regular expression engine (RE2) cannot express`);
    }
  }
  const translated = patterns.filter((p): p is string => typeof p === 'string');
  const unique = translated.filter((p, i) => translated.indexOf(p) === i);
  if (unique.length > 0) out.pattern = unique[0];
  if (unique.length > 1) out.allOf = unique.slice(1).map((pattern) => ({ pattern }));
}

/**
 * Replaces zod's JSON Schema patterns of a string (which carry a regex's source but not its flags) by
 * their RE2 translations ({@link toRe2Pattern}), or by the reason there is none.
 */
function replaceStringPatterns(schema: unknown, json: Record<string, unknown>): void {
  const def = (schema as { _zod?: { def?: { pattern?: unknown; checks?: { _zod?: { def?: { pattern?: unknown } } }[] } } })._zod?.def;
  const translate = (regex: RegExp): unknown => {
    const result = toRe2Pattern(regex);
    return 'pattern' in result ? result.pattern : { problem: result.problem, source: regex.source, flags: regex.flags };
  };
  const checks = (def?.checks ?? []).map((c) => c._zod?.def?.pattern).filter((p): p is RegExp => p instanceof RegExp);
  delete json.pattern;
  if (Array.isArray(json.allOf) && json.allOf.every((a) => isJsonObject<Node>(a) && Object.keys(a).every((k) => k === 'type' || k === 'pattern'))) delete json.allOf;
  if (def?.pattern instanceof RegExp) json[FORMAT_PATTERN] = translate(def.pattern);
  if (checks.length > 0) json[PATTERNS] = checks.map(translate);
}

interface ZodDefaultLike {
  _zod: { def: { type: string; defaultValue: unknown; innerType: z.ZodType } };
}

/**
 * Why a `.default(v)` / `.prefault(v)` would make the CRD disagree with zod, or undefined. The API server
 * refuses a CRD whose default does not validate against its own field, and applies the defaults nested
 * inside a default (and prunes unknown fields from it) where zod returns `.default()`'s value as it is;
 * so the value must be valid and already complete: parsing it must give it back unchanged. It also drops
 * `default: null` from a CRD it stores (measured on kube-apiserver 1.35), so a null default is refused.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting
 */
function defaultProblem(schema: ZodDefaultLike): string | undefined {
  const { type, defaultValue, innerType } = schema._zod.def;
  const method = type === 'prefault' ? '.prefault()' : '.default()';
  let value: unknown;
  try {
    value = JSON.parse(JSON.stringify(defaultValue ?? null));
  } catch (cause) {
    return `the ${method} value is not JSON: ${(cause as Error).message}`;
  }
  if (value === null) {
    return `the ${method} value null is dropped by the API server (a CRD cannot default a field to null: the stored schema loses the default), so a CR without the field would be stored without it while zod gives null; use .nullable().optional() and read a missing value as null, or a non-null default`;
  }
  const parsed = innerType.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`);
    return `the ${method} value ${JSON.stringify(value)} violates the field's own schema (${issues.join('; ')}); the API server refuses such a CRD`;
  }
  if (canonicalJson(parsed.data) !== canonicalJson(value)) {
    return `the ${method} value ${JSON.stringify(value)} is incomplete: the field parses it to ${JSON.stringify(parsed.data)} (defaults inside it applied, unknown fields dropped), which the API server would store while zod returns the value as it is; use .default(${JSON.stringify(parsed.data)})`;
  }
  return undefined;
}

/** JSON text with object keys sorted, for comparing JSON values. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (isJsonObject<Node>(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v));
}

function normalizeNumber(node: Node, out: JSONSchemaProps, type: 'integer' | 'number'): void {
  const safe = type === 'integer';
  if (typeof node.minimum === 'number' && !(safe && node.minimum === Number.MIN_SAFE_INTEGER)) out.minimum = node.minimum;
  if (typeof node.maximum === 'number' && !(safe && node.maximum === Number.MAX_SAFE_INTEGER)) out.maximum = node.maximum;
  if (typeof node.exclusiveMinimum === 'number') {
    out.minimum = node.exclusiveMinimum;
    out.exclusiveMinimum = true;
  } else if (node.exclusiveMinimum === true && out.minimum !== undefined) out.exclusiveMinimum = true;
  if (typeof node.exclusiveMaximum === 'number') {
    out.maximum = node.exclusiveMaximum;
    out.exclusiveMaximum = true;
  } else if (node.exclusiveMaximum === true && out.maximum !== undefined) out.exclusiveMaximum = true;
  if (typeof node.multipleOf === 'number') out.multipleOf = node.multipleOf;
  if (typeof node.format === 'string' && ['int32', 'int64', 'float', 'double'].includes(node.format)) out.format = node.format;
}

function checkListType(node: JSONSchemaProps): string[] {
  const problems: string[] = [];
  const listType = node[LIST_TYPE];
  const items = node.items;
  if (listType === 'map') {
    const keys = node[LIST_MAP_KEYS];
    if (!Array.isArray(keys) || keys.length === 0) problems.push('a list-map needs x-kubernetes-list-map-keys');
    if (!items || items.type !== 'object') problems.push('a list-map needs object items');
    for (const key of keys ?? []) {
      const property = items?.properties?.[key];
      if (!property) problems.push(`list-map key "${key}" is not a property of the items`);
      else if (!property.type || !SCALARS.has(property.type)) problems.push(`list-map key "${key}" must be a scalar`);
      else if (!items?.required?.includes(key) && property.default === undefined) {
        problems.push(`list-map key "${key}" must be required or have a default`);
      }
    }
  } else if (listType === 'set') {
    if (!items || !items.type || !SCALARS.has(items.type)) problems.push('a list-set needs scalar items');
  } else if (listType !== undefined && listType !== 'atomic') {
    problems.push(`unknown x-kubernetes-list-type ${JSON.stringify(listType)}`);
  }
  return problems;
}

const FORBIDDEN_KEYS = ['$ref', '$schema', '$defs', 'definitions', 'const', 'anyOf', 'oneOf', 'not', 'uniqueItems', 'patternProperties', 'propertyNames', 'prefixItems'];

/**
 * Checks a schema against the API server's structural-schema rules (as far as they apply to schemas we
 * generate) and returns one message per violation, each starting with the field path. An empty array
 * means the schema is structural.
 *
 * Rules: every node has a type (or is int-or-string / preserve-unknown-fields); no `$ref`, `$schema`,
 * `const`, logical junctors, `uniqueItems`, `type: null` or type arrays; `additionalProperties` is never
 * `false` and never next to `properties`; arrays have a single item schema; list-map keys are required
 * (or defaulted) scalar properties.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 */
export function checkStructuralSchema(schema: unknown, path = ''): string[] {
  const problems: string[] = [];
  const at = (p: string, problem: string) => problems.push(`${p || '<root>'}: ${problem}`);
  const visit = (node: unknown, p: string): void => {
    if (!isJsonObject<Node>(node)) {
      at(p, 'schema node is not an object');
      return;
    }
    for (const key of FORBIDDEN_KEYS) if (key in node) at(p, `forbidden key ${key}`);
    if (node.allOf !== undefined && !(Array.isArray(node.allOf) && node.allOf.every((a) => isJsonObject<Node>(a) && Object.keys(a).length === 1 && typeof a.pattern === 'string'))) {
      at(p, 'allOf other than a list of patterns');
    }
    for (const key of Object.keys(node)) if (key.startsWith('x-cdk8s-')) at(p, `internal key ${key}`);
    const type = node.type;
    const intOrString = node[INT_OR_STRING] === true;
    const preserve = node[PRESERVE] === true;
    if (type === undefined) {
      if (!intOrString && !preserve) at(p, 'missing type');
    } else if (typeof type !== 'string' || !TYPES.has(type)) {
      at(p, `invalid type ${JSON.stringify(type)}`);
    } else if (intOrString) {
      at(p, 'x-kubernetes-int-or-string must not have a type');
    }
    if (node.nullable !== undefined && typeof node.nullable !== 'boolean') at(p, 'nullable must be a boolean');
    if (node.additionalProperties === false) at(p, 'additionalProperties: false');
    if (node.additionalProperties !== undefined && node.properties !== undefined) at(p, 'properties and additionalProperties are mutually exclusive');
    if (type !== undefined && type !== 'object' && (node.properties !== undefined || node.additionalProperties !== undefined)) {
      at(p, `properties on a ${String(type)} node`);
    }
    if (Array.isArray(node.required) && isJsonObject<Node>(node.properties)) {
      for (const key of node.required as string[]) if (!(key in node.properties)) at(p, `required property ${key} is not declared`);
    }
    if (type === 'array') {
      if (!isJsonObject<Node>(node.items)) at(p, 'array without a single item schema');
      for (const problem of checkListType(node as JSONSchemaProps)) at(p, problem);
    } else if (node.items !== undefined) {
      at(p, `items on a ${String(type)} node`);
    }
    if (isJsonObject<Node>(node.properties)) for (const [key, value] of Object.entries(node.properties)) visit(value, join(p, key));
    if (isJsonObject<Node>(node.additionalProperties)) visit(node.additionalProperties, `${p}.*`);
    if (isJsonObject<Node>(node.items)) visit(node.items, `${p}[]`);
  };
  visit(schema, path);
  return problems;
}

function zodTypeName(schema: unknown): string | undefined {
  return (schema as { _zod?: { def?: { type?: string } } })?._zod?.def?.type;
}

/** The JSON Schema of a z.record's key type, or undefined when it is a plain (maybe described) `z.string()`. */
function recordKeySchema(schema: unknown): Record<string, unknown> | undefined {
  const keyType = (schema as { _zod?: { def?: { keyType?: z.ZodType } } })?._zod?.def?.keyType;
  if (!keyType) return undefined;
  const { $schema: _ignored, ...keyJson } = z.toJSONSchema(keyType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const plain = keyJson.type === 'string' && Object.keys(keyJson).every((k) => ['type', 'description', 'title'].includes(k));
  return plain ? undefined : keyJson;
}

function describeZodType(schema: unknown): string {
  const type = zodTypeName(schema) ?? 'unknown type';
  const article = /^[aeiou]/.test(type) ? 'an' : 'a';
  return `${article} ${type === 'custom' ? 'z.custom()' : type}`;
}

function replaceWith(target: Record<string, unknown>, replacement: Record<string, unknown>): void {
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, replacement);
}
