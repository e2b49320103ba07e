import { z } from 'zod';
import { StructuralSchemaError } from '../../lib/operator/errors.js';
import { celRule, checkStructuralSchema, listMap, listSet, toStructuralSchema, type JSONSchemaProps } from '../../lib/operator/schema/structural-schema.js';

/** Every node, with its path, depth-first. */
function nodes(schema: JSONSchemaProps, path = 'spec'): [string, JSONSchemaProps][] {
  const out: [string, JSONSchemaProps][] = [[path, schema]];
  for (const [k, v] of Object.entries(schema.properties ?? {})) out.push(...nodes(v, `${path}.${k}`));
  if (schema.additionalProperties) out.push(...nodes(schema.additionalProperties, `${path}.*`));
  if (schema.items) out.push(...nodes(schema.items, `${path}[]`));
  return out;
}

function failure(schema: z.ZodType): StructuralSchemaError {
  try {
    toStructuralSchema(schema);
  } catch (e) {
    expect(e).toBeInstanceOf(StructuralSchemaError);
    return e as StructuralSchemaError;
  }
  throw new Error('expected toStructuralSchema to throw');
}

describe('toStructuralSchema', () => {
  const kitchenSink = z.object({
    size: z.int().min(1).max(100).describe('How many.'),
    ratio: z.number().gt(0).lt(1),
    port: z.union([z.number().int(), z.string()]),
    labels: z.record(z.string(), z.string()),
    extra: z.record(z.string(), z.unknown()),
    loose: z.looseObject({ a: z.string() }),
    strict: z.strictObject({ a: z.string() }),
    mode: z.literal('fast'),
    tier: z.union([z.literal('gold'), z.literal('silver')]),
    engine: z.enum(['postgres', 'mysql']),
    note: z.string().nullable(),
    email: z.email(),
    since: z.iso.datetime(),
    anything: z.unknown(),
    name: z.string().min(1).max(63).regex(/^[a-z]+$/),
    image: z.string().default('nginx'),
    ports: listMap(z.object({ name: z.string(), port: z.int() }), ['name']).max(8).optional(),
    tags: listSet(z.string()).optional(),
  });

  test('GIVEN a schema using every supported construct WHEN converted THEN every node is typed and no forbidden key appears', () => {
    const schema = toStructuralSchema(kitchenSink);

    for (const [path, node] of nodes(schema)) {
      const typed = node.type !== undefined || node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true;
      expect({ path, typed }).toEqual({ path, typed: true });
    }
    const text = JSON.stringify(schema);
    for (const forbidden of ['"$ref"', '"$schema"', '"const"', '"anyOf"', '"oneOf"', '"allOf"', '"additionalProperties":false', '"type":"null"', '"propertyNames"']) {
      expect(text).not.toContain(forbidden);
    }
    expect(checkStructuralSchema(schema, 'spec')).toEqual([]);
  });

  test('GIVEN int-or-string WHEN converted THEN it is x-kubernetes-int-or-string with no type', () => {
    const port = toStructuralSchema(kitchenSink).properties!.port;
    expect(port).toEqual({ 'x-kubernetes-int-or-string': true });
  });

  test('GIVEN records, loose objects and unknown WHEN converted THEN maps keep their value type and free-form fields preserve unknown fields', () => {
    const p = toStructuralSchema(kitchenSink).properties!;
    expect(p.labels).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(p.extra).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.loose).toMatchObject({ type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true });
    expect(p.loose.additionalProperties).toBeUndefined();
    expect(p.strict).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    expect(p.anything).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
  });

  test('GIVEN literals, enums and nullable fields WHEN converted THEN they become typed enums and nullable: true', () => {
    const p = toStructuralSchema(kitchenSink).properties!;
    expect(p.mode).toEqual({ type: 'string', enum: ['fast'] });
    expect(p.tier).toEqual({ type: 'string', enum: ['gold', 'silver'] });
    expect(p.engine).toEqual({ type: 'string', enum: ['postgres', 'mysql'] });
    expect(p.note).toEqual({ type: 'string', nullable: true });
    expect(toStructuralSchema(z.object({ a: z.union([z.string(), z.null()]) })).properties!.a).toEqual({ type: 'string', nullable: true });
  });

  test('GIVEN bounds, lengths, patterns, defaults and descriptions WHEN converted THEN they are carried, exclusive bounds as booleans', () => {
    const schema = toStructuralSchema(kitchenSink);
    const p = schema.properties!;
    expect(p.size).toEqual({ type: 'integer', minimum: 1, maximum: 100, description: 'How many.' });
    expect(p.ratio).toEqual({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true });
    expect(p.name).toEqual({ type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z]+$' });
    expect(p.image).toEqual({ type: 'string', default: 'nginx' });
    expect(schema.required).toContain('size');
    expect(schema.required).not.toContain('image');
    expect(schema.required).not.toContain('ports');
  });

  test('GIVEN formats the API server knows WHEN converted THEN the format is kept and zod\'s lookaround regex is dropped', () => {
    const p = toStructuralSchema(kitchenSink).properties!;
    expect(p.email).toEqual({ type: 'string', format: 'email' });
    expect(p.since).toEqual({ type: 'string', format: 'date-time' });
  });

  test('GIVEN listMap and listSet WHEN converted THEN the list type and keys are declared even after .max()', () => {
    const p = toStructuralSchema(kitchenSink).properties!;
    expect(p.ports).toMatchObject({
      type: 'array',
      maxItems: 8,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name', 'port'] },
    });
    expect(p.tags).toEqual({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' });
  });

  test('GIVEN listMap WHEN a value repeats a key THEN zod validation reports the duplicate at its index', () => {
    const schema = listMap(z.object({ name: z.string() }), ['name']);
    const result = schema.safeParse([{ name: 'a' }, { name: 'b' }, { name: 'a' }]);
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({ path: [2], message: 'Duplicate value: {"name":"a"}' });
  });

  test('GIVEN two celRule calls WHEN converted THEN both rules appear in x-kubernetes-validations in order', () => {
    const range = celRule(celRule(z.object({ min: z.int(), max: z.int() }), { rule: 'self.min <= self.max', message: 'min must not exceed max' }), {
      rule: 'self.max <= 100',
    });
    const schema = toStructuralSchema(z.object({ range }));
    expect(schema.properties!.range['x-kubernetes-validations']).toEqual([
      { rule: 'self.min <= self.max', message: 'min must not exceed max' },
      { rule: 'self.max <= 100' },
    ]);
  });

  test.each([
    ['a union of object and string', z.object({ foo: z.object({ bar: z.union([z.object({ a: z.string() }), z.string()]) }) }), 'spec.foo.bar: union of object and string cannot be expressed as a structural schema'],
    ['number | string', z.object({ a: z.union([z.number(), z.string()]) }), 'spec.a: union of number and string'],
    ['a discriminated union', z.object({ a: z.discriminatedUnion('t', [z.object({ t: z.literal('x') }), z.object({ t: z.literal('y') })]) }), 'spec.a: a union of 2 object shapes'],
    ['a date', z.object({ at: z.object({ when: z.date() }) }), 'spec.at.when: a date'],
    ['a bigint', z.object({ n: z.bigint() }), 'spec.n: a bigint'],
    ['a tuple', z.object({ pair: z.tuple([z.string(), z.int()]) }), 'spec.pair: a tuple'],
    ['a Map', z.object({ m: z.map(z.string(), z.string()) }), 'spec.m: a map'],
    ['properties plus a catchall', z.object({ o: z.object({ a: z.string() }).catchall(z.string()) }), 'spec.o: an object with both fixed properties and a catchall'],
    ['a list-map key that is optional', z.object({ l: listMap(z.object({ name: z.string().optional() }), ['name']) }), 'spec.l: list-map key "name" must be required or have a default'],
    ['a list-map key that does not exist', z.object({ l: listMap(z.object({ name: z.string() }), ['id']) }), 'spec.l: list-map key "id" is not a property'],
    ['a lookahead regex', z.object({ s: z.string().regex(/^(?!x)[a-z]+$/) }), 'spec.s: pattern /^(?!x)[a-z]+$/ uses a lookahead (?!'],
    ['a record with enum keys', z.object({ r: z.record(z.enum(['a', 'b']), z.string()) }), 'spec.r: a record whose keys are restricted'],
    ['a record with pattern keys', z.object({ r: z.record(z.string().regex(/^[a-z]+$/), z.int()) }), 'spec.r: a record whose keys are restricted'],
    ['a nullable enum', z.object({ e: z.enum(['a', 'b']).nullable() }), 'spec.e: a nullable enum'],
    ['a union of literals and null', z.object({ e: z.union([z.literal('a'), z.literal('b'), z.null()]) }), 'spec.e: a nullable enum'],
    ['a nullable literal', z.object({ e: z.literal('a').nullable().optional() }), 'spec.e: a nullable enum'],
    ['a constrained int-or-string', z.object({ p: z.union([z.int().min(1), z.string()]) }), 'spec.p: constraints (minimum) inside an int-or-string union'],
  ])('GIVEN %s WHEN converted THEN it fails naming the field', (_name, schema, message) => {
    expect(failure(schema).message).toContain(message);
  });

  test('GIVEN a recursive schema WHEN converted THEN it fails naming the field where it recurses', () => {
    interface Tree {
      name: string;
      children: Tree[];
    }
    const tree: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
    const error = failure(z.object({ root: tree }));
    expect(error.path).toBe('spec.root.children[]');
    expect(error.message).toContain('recursive schema');
  });
});

describe('checkStructuralSchema', () => {
  test('GIVEN a schema with the usual mistakes WHEN checked THEN each one is reported with its path', () => {
    const problems = checkStructuralSchema(
      {
        type: 'object',
        properties: {
          a: {},
          b: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false },
          c: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          d: { type: 'string', const: 'x' },
          e: { type: 'array' },
          f: { type: 'integer', 'x-kubernetes-int-or-string': true },
        },
      },
      'spec',
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'spec.a: missing type',
        'spec.b: additionalProperties: false',
        'spec.c: forbidden key anyOf',
        'spec.c: missing type',
        'spec.d: forbidden key const',
        'spec.e: array without a single item schema',
        'spec.f: x-kubernetes-int-or-string must not have a type',
      ]),
    );
  });
});

describe('toStructuralSchema: patterns and defaults the API server agrees with', () => {
  test('GIVEN a case-insensitive regex WHEN converted THEN the pattern carries RE2 inline flag (?i)', () => {
    expect(toStructuralSchema(z.object({ tier: z.string().regex(/^(gold|silver|bronze)$/i) })).properties!.tier!.pattern).toBe('(?i)^(?:gold|silver|bronze)$');
  });

  test('GIVEN a string with two patterns WHEN converted THEN the second goes into allOf and the schema is structural', () => {
    const schema = toStructuralSchema(z.object({ a: z.string().regex(/^a/).regex(/b$/) }));
    expect(schema.properties!.a).toEqual({ type: 'string', pattern: '^a', allOf: [{ pattern: 'b$' }] });
    expect(checkStructuralSchema(schema)).toEqual([]);
  });

  test('GIVEN a regex with the m flag WHEN converted THEN it fails naming the field and the flag', () => {
    expect(failure(z.object({ a: z.string().regex(/^a$/m) })).message).toMatch(/^spec\.a: pattern \/\^a\$\/m uses the m flag/);
  });

  test.each([
    ['replicas', z.object({ replicas: z.int().min(1).max(10).default(0) }), /^spec\.replicas: the \.default\(\) value 0 violates the field's own schema \(Too small/],
    ['zones', z.object({ zones: z.array(z.string()).min(1).default([]) }), /^spec\.zones: the \.default\(\) value \[\] violates the field's own schema/],
    ['nested', z.object({ o: z.object({ a: z.int().default(1) }).default({} as never) }), /^spec\.o: the \.default\(\) value \{\} is incomplete: .*use \.default\(\{"a":1\}\)/],
    ['null', z.object({ zones: z.array(z.string()).nullable().default(null) }), /^spec\.zones: the \.default\(\) value null is dropped by the API server .*use \.nullable\(\)\.optional\(\)/],
    ['null prefault', z.object({ o: z.object({ a: z.string().nullable().prefault(null) }) }), /^spec\.o\.a: the \.prefault\(\) value null is dropped by the API server/],
  ])('GIVEN a default that disagrees with its field (%s) WHEN converted THEN it fails naming the path and the reason', (_name, schema, message) => {
    expect(failure(schema).message).toMatch(message);
  });

  test('GIVEN valid, complete defaults WHEN converted THEN they are kept', () => {
    const schema = toStructuralSchema(z.object({ n: z.int().min(1).default(1), o: z.object({ a: z.int().default(1) }).default({ a: 1 }) }));
    expect([schema.properties!.n!.default, schema.properties!.o!.default]).toEqual([1, { a: 1 }]);
  });
});
