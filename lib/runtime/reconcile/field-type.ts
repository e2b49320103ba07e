/**
 * The type of a field of a Kubernetes object, read from the OpenAPI v3 schema the API server publishes
 * (`GET /openapi/v3/apis/<group>/<version>`, kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-v3).
 * The child diff uses it to compare a field the way the server stores it, e.g. a resource quantity by
 * value wherever the schema says the field is a `Quantity`, not under a list of key names.
 */

/** How the server stores a scalar field, when that differs from "exactly as sent". */
export type ScalarForm =
  /**
   * `io.k8s.apimachinery.pkg.api.resource.Quantity`: re-serialised in canonical form (`0.5` → `500m`,
   * `1073741824` → `1Gi`), so it compares by value (kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/).
   */
  | 'quantity'
  /**
   * A `Quantity` that is a value of a `ResourceList` (a map of quantities: container resources,
   * ResourceQuota `hard`, PVC requests, Pod overhead): core/v1 defaulting also rounds it up to milli
   * (`SetDefaults_ResourceList`), so `1.5n` is stored as `1m`.
   */
  | 'resource-list-quantity'
  /**
   * `IntOrString` (built-in `format: int-or-string`, CRD `x-kubernetes-int-or-string: true`): stored as
   * sent, a number stays a number and a string a string, so it compares exactly.
   */
  | 'int-or-string';

/** The type of one field; navigate with {@link FieldType.field} and {@link FieldType.items}. */
export interface FieldType {
  /** Set for scalars whose stored form is not plain JSON equality's concern, see {@link ScalarForm}. */
  readonly form: ScalarForm | undefined;
  /** The type of property `name` of an object, or of every value of a map; undefined when unknown. */
  field(name: string): FieldType | undefined;
  /** The type of a list's items; undefined when unknown or not a list. */
  items(): FieldType | undefined;
}

/** The schema name of a resource quantity in the built-in OpenAPI documents. */
export const QUANTITY_SCHEMA = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

const REF_PREFIX = '#/components/schemas/';

type Schema = Record<string, unknown>;

/**
 * The {@link FieldType} of `components.schemas[name]` in an OpenAPI v3 document.
 * `$ref`s (also the `allOf: [{$ref}]` wrapping the server uses next to a `default` or `description`) are
 * resolved lazily; an unresolvable `$ref` gives an unknown type (undefined), never an error.
 *
 * @param schemas the document's `components.schemas`
 * @param name a schema name, e.g. `io.k8s.api.apps.v1.Deployment`
 */
export function fieldTypeOfSchema(schemas: Readonly<Record<string, unknown>>, name: string): FieldType | undefined {
  const cache = new Map<string, FieldType | undefined>();
  const byRef = (ref: string): FieldType | undefined => {
    if (!cache.has(ref)) {
      // node() resolves its fields only when asked, so a recursive schema (JSONSchemaProps) is fine.
      const schema = schemas[ref];
      cache.set(ref, isSchema(schema) ? node(schema, ref) : undefined);
    }
    return cache.get(ref);
  };
  const resolve = (schema: unknown): FieldType | undefined => {
    if (!isSchema(schema)) return undefined;
    const ref = refOf(schema);
    if (ref !== undefined) return ref.startsWith(REF_PREFIX) ? byRef(ref.slice(REF_PREFIX.length)) : undefined;
    return node(schema, undefined);
  };
  // Each node resolves a property, the map values and the items once, when first asked: the child diff
  // asks for every field of every child it compares.
  const node = (schema: Schema, ref: string | undefined, form = formOf(schema, ref)): FieldType => {
    const properties = isSchema(schema.properties) ? schema.properties : undefined;
    const mapValues = schema.additionalProperties;
    const fields = new Map<string, FieldType | undefined>();
    let mapValue: { type: FieldType | undefined } | undefined;
    let items: { type: FieldType | undefined } | undefined;
    const mapValueType = (): FieldType | undefined => {
      if (mapValue) return mapValue.type;
      const value = resolve(mapValues);
      // A map of quantities is a ResourceList; see 'resource-list-quantity'.
      return (mapValue = { type: value?.form === 'quantity' && isSchema(mapValues) ? node(mapValues, refOf(mapValues), 'resource-list-quantity') : value }).type;
    };
    return {
      form,
      field: (key) => {
        if (!properties || !(key in properties)) return mapValueType();
        if (!fields.has(key)) fields.set(key, resolve(properties[key]));
        return fields.get(key);
      },
      items: () => (items ??= { type: resolve(schema.items) }).type,
    };
  };
  return byRef(name);
}

function formOf(schema: Schema, ref: string | undefined): ScalarForm | undefined {
  if (ref === QUANTITY_SCHEMA) return 'quantity';
  return schema.format === 'int-or-string' || schema['x-kubernetes-int-or-string'] === true ? 'int-or-string' : undefined;
}

function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `$ref`, or the single `$ref` of an `allOf` wrapper. */
function refOf(schema: Schema): string | undefined {
  if (typeof schema.$ref === 'string') return schema.$ref;
  const all = schema.allOf;
  if (Array.isArray(all) && all.length === 1 && isSchema(all[0]) && typeof all[0].$ref === 'string') return all[0].$ref;
  return undefined;
}
