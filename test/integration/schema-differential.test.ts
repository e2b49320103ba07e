/**
 * Differential test of schema fidelity: generated zod specs are synthesized into CRDs and installed on the
 * real API server; for generated CRs, offline validation (`validateCustomResource`, what
 * `Operator.parseCustomResource` runs) and a dry-run create (`POST …?dryRun=All`) must give the same
 * verdict, and for accepted CRs the same defaulted spec.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { z } from 'zod';
import { buildCrdManifest } from '../../lib/operator/schema/crd.js';
import { StructuralSchemaError } from '../../lib/operator/errors.js';
import type { ResolvedKind } from '../../lib/operator/kinds.js';
import { validateCustomResource } from '../../lib/operator/schema/validate.js';
import { installCRDs } from '../../lib/testing/install-crds.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';

const kubeConfig = testKubeConfig();
const group = `d${process.pid}.schemadiff.example.com`;
const crdDir = mkdtempSync(join(tmpdir(), 'schema-differential-'));

/** Regexes whose JS and RE2 readings differ unless translated: flags, `.`, `\s`, escapes, classes, sticky. */
const PATTERNS: readonly RegExp[] = [
  /^(gold|silver|bronze)$/i,
  /^[a-c]+$/,
  /^a.c$/,
  /^a.c$/s,
  /\s/,
  /^\S+$/,
  /^[\sx]*$/,
  /^x{2,3}$/,
  /b/y,
  /^(?<head>a)b?$/,
  /[]/,
  /^[^]$/,
  /^\x61\u0062c?$/,
  /^\a$/,
  /^[[:a]+$/,
];
/** Characters the CR strings are made of: cased letters, JS-only whitespace and line terminators, non-ASCII. */
const ALPHABET = ['a', 'b', 'c', 'x', 'G', 'O', 'L', 'D', 'A', ' ', '\t', '\n', '\r', '\v', '\u00a0', '\u2028', '\ufeff', 'é', '[', ':', '\u0007'];
const WORDS = ['gold', 'GOLD', 'Silver', 'abc', 'a\nc', 'a\u2028c', 'xx', 'xxx', 'ab', 'ba', 'a', 'a\u0007'];

type FieldDesc =
  | { kind: 'string'; min?: number; max?: number; pattern?: number; enumValues?: string[] }
  | { kind: 'int'; min?: number; max?: number }
  | { kind: 'number'; gt?: number; lte?: number }
  | { kind: 'boolean' }
  | { kind: 'array'; item: FieldDesc; min?: number; max?: number }
  | { kind: 'map'; value: FieldDesc }
  | { kind: 'object'; fields: Record<string, Modified> };
interface Modified {
  field: FieldDesc;
  optional: boolean;
  nullable: boolean;
  /** A candidate default; may violate the field (synth must then refuse the schema). */
  default?: unknown;
}

const small = fc.integer({ min: 0, max: 4 });
const scalarDesc: fc.Arbitrary<FieldDesc> = fc.oneof(
  fc.record({ kind: fc.constant('string' as const), min: fc.option(small, { nil: undefined }), max: fc.option(small, { nil: undefined }), pattern: fc.option(fc.nat({ max: PATTERNS.length - 1 }), { nil: undefined }) }, { requiredKeys: ['kind'] }),
  fc.record({ kind: fc.constant('string' as const), enumValues: fc.uniqueArray(fc.constantFrom('gold', 'silver', 'GOLD'), { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('int' as const), min: fc.option(fc.integer({ min: -2, max: 3 }), { nil: undefined }), max: fc.option(fc.integer({ min: 3, max: 10 }), { nil: undefined }) }, { requiredKeys: ['kind'] }),
  fc.record({ kind: fc.constant('number' as const), gt: fc.option(fc.constantFrom(0, 0.5), { nil: undefined }), lte: fc.option(fc.constantFrom(1, 2.5), { nil: undefined }) }, { requiredKeys: ['kind'] }),
  fc.constant({ kind: 'boolean' as const }),
);

const fieldDesc: fc.Arbitrary<FieldDesc> = fc.letrec<{ field: FieldDesc }>((tie) => ({
  field: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarDesc,
    fc.record({ kind: fc.constant('array' as const), item: scalarDesc, min: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }), max: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }, { requiredKeys: ['kind', 'item'] }),
    fc.record({ kind: fc.constant('map' as const), value: scalarDesc }),
    fc.record({ kind: fc.constant('object' as const), fields: fc.dictionary(fc.constantFrom('p', 'q', 'r'), modified(tie('field')), { minKeys: 1, maxKeys: 3 }) }),
  ),
})).field;

function modified(field: fc.Arbitrary<FieldDesc>): fc.Arbitrary<Modified> {
  return field.chain((f) =>
    fc.record({ field: fc.constant(f), optional: fc.boolean(), nullable: isEnum(f) ? fc.constant(false) : fc.boolean(), default: fc.option(valueFor(f), { nil: undefined, freq: 2 }) }, { requiredKeys: ['field', 'optional', 'nullable'] }),
  );
}

/** A nullable enum is refused at synth for its own reason (the API server rejects null for an enum). */
function isEnum(f: FieldDesc): boolean {
  return f.kind === 'string' && f.enumValues !== undefined;
}

const specDesc = fc.dictionary(fc.constantFrom('tier', 'replicas', 'zones', 'ratio', 'on', 'nested', 'labels'), modified(fieldDesc), { minKeys: 1, maxKeys: 4 });

function zodOf(desc: FieldDesc): z.ZodType {
  switch (desc.kind) {
    case 'string': {
      if (desc.enumValues) return z.enum(desc.enumValues as [string, ...string[]]);
      let s = z.string();
      if (desc.min !== undefined) s = s.min(desc.min);
      if (desc.max !== undefined) s = s.max(desc.max);
      if (desc.pattern !== undefined) s = s.regex(PATTERNS[desc.pattern]!);
      return s;
    }
    case 'int': {
      let s = z.int();
      if (desc.min !== undefined) s = s.min(desc.min);
      if (desc.max !== undefined) s = s.max(desc.max);
      return s;
    }
    case 'number': {
      let s = z.number();
      if (desc.gt !== undefined) s = s.gt(desc.gt);
      if (desc.lte !== undefined) s = s.lte(desc.lte);
      return s;
    }
    case 'boolean':
      return z.boolean();
    case 'array': {
      let s = z.array(zodOf(desc.item));
      if (desc.min !== undefined) s = s.min(desc.min);
      if (desc.max !== undefined) s = s.max(desc.max);
      return s;
    }
    case 'map':
      return z.record(z.string(), zodOf(desc.value));
    case 'object':
      return objectOf(desc.fields);
  }
}

function objectOf(fields: Record<string, Modified>): z.ZodType {
  return z.object(Object.fromEntries(Object.entries(fields).map(([k, m]) => {
    let s = zodOf(m.field);
    if (m.nullable) s = s.nullable();
    if (m.default !== undefined) s = s.default(m.default as never);
    else if (m.optional) s = s.optional();
    return [k, s];
  })));
}

/** Values for a field: valid and invalid ones, plus null and wrong types now and then. */
function valueFor(desc: FieldDesc): fc.Arbitrary<unknown> {
  const wrong = fc.constantFrom<unknown>(null, 'x', 7, true, [], {});
  const own = ((): fc.Arbitrary<unknown> => {
    switch (desc.kind) {
      case 'string':
        return fc.oneof(fc.constantFrom(...WORDS), fc.array(fc.constantFrom(...ALPHABET), { maxLength: 5 }).map((cs) => cs.join('')));
      case 'int':
        return fc.integer({ min: -3, max: 12 });
      case 'number':
        return fc.oneof(fc.constantFrom(0, 0.5, 1, 2.5, 2.75, -1), fc.integer({ min: -2, max: 4 }));
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(valueFor(desc.item), { maxLength: 4 });
      case 'map':
        return fc.dictionary(fc.constantFrom('a', 'b'), valueFor(desc.value), { maxKeys: 2 });
      case 'object':
        return fc.record(Object.fromEntries(Object.entries(desc.fields).map(([k, m]) => [k, valueFor(m.field)])), { requiredKeys: [] });
    }
  })();
  return fc.oneof({ arbitrary: own, weight: 8 }, { arbitrary: wrong, weight: 1 });
}

let counter = 0;

async function install(spec: z.ZodType): Promise<ResolvedKind> {
  const n = ++counter;
  const kind: ResolvedKind = { apiVersion: `${group}/v1`, group, version: 'v1', kind: `Diff${n}`, plural: `diff${n}s`, namespaced: true };
  const crd = buildCrdManifest({ group, version: 'v1', names: { kind: kind.kind, plural: kind.plural, singular: `diff${n}`, listKind: `Diff${n}List` }, scope: 'Namespaced', spec });
  const file = join(crdDir, `${kind.plural}.json`);
  writeFileSync(file, JSON.stringify(crd));
  await installCRDs(kubeConfig, [file], 60_000);
  return kind;
}

type Verdict = { accepted: true; spec: unknown } | { accepted: false; reason: string };

function offlineVerdict(kind: ResolvedKind, spec: z.ZodType, cr: object): Verdict {
  try {
    return { accepted: true, spec: validateCustomResource(kind, spec, cr).spec };
  } catch (e) {
    return { accepted: false, reason: (e as Error).message };
  }
}

async function serverVerdict(kind: ResolvedKind, namespace: string, cr: object): Promise<Verdict> {
  const res = await ApiClient.sendOnce({ kubeConfig }, 'POST', `/apis/${group}/v1/namespaces/${namespace}/${kind.plural}?dryRun=All`, { body: cr });
  if (res.statusCode === 201 || res.statusCode === 200) return { accepted: true, spec: (JSON.parse(res.body) as { spec?: unknown }).spec };
  if (res.statusCode !== 422 && res.statusCode !== 400) throw new Error(`dry-run create: HTTP ${res.statusCode}: ${res.body}`);
  return { accepted: false, reason: (JSON.parse(res.body) as { message: string }).message };
}

/** Whether every field's default is one the API server keeps and zod itself accepts (what synth must check). */
function defaultsValid(fields: Record<string, Modified>): boolean {
  return Object.values(fields).every((m) => {
    if (m.field.kind === 'object' && !defaultsValid(m.field.fields)) return false;
    if (m.default === undefined) return true;
    // The API server drops `default: null` from the CRD it stores, so synth refuses it.
    if (m.default === null) return false;
    let s = zodOf(m.field);
    if (m.nullable) s = s.nullable();
    const parsed = s.safeParse(m.default);
    return parsed.success && sortedJson(parsed.data) === sortedJson(m.default);
  });
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
}

test('GIVEN generated specs and CRs WHEN validated offline and by a dry-run create THEN the verdicts and the defaulted specs agree', async () => {
  const namespace = await createTestNamespace('schema-diff');
  let installed = 0;
  let compared = 0;
  const scenario = specDesc.chain((fields) => fc.tuple(fc.constant(fields), fc.array(valueFor({ kind: 'object', fields }), { minLength: 25, maxLength: 25 })));
  await fc.assert(
    fc.asyncProperty(scenario, async ([fields, specs]) => {
      const spec = objectOf(fields);
      let kind: ResolvedKind;
      try {
        kind = await installIfSynthesizes(spec);
      } catch (e) {
        // Synth refuses exactly the schemas whose defaults zod's own field rejects (or that are incomplete).
        expect(e).toBeInstanceOf(StructuralSchemaError);
        expect({ fields, defaultsValid: defaultsValid(fields), error: (e as Error).message }).toEqual({ fields, defaultsValid: false, error: expect.stringMatching(/\.(default|prefault)\(\) value/) });
        return;
      }
      expect({ fields, defaultsValid: defaultsValid(fields) }).toEqual({ fields, defaultsValid: true });
      installed++;
      for (const [i, crSpec] of specs.entries()) {
        const cr = { apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name: `cr-${i}`, namespace }, ...(crSpec === undefined ? {} : { spec: crSpec }) };
        const offline = offlineVerdict(kind, spec, cr);
        const server = await serverVerdict(kind, namespace, cr);
        compared++;
        const summary = (v: Verdict) => (v.accepted ? { accepted: true, spec: v.spec } : { accepted: false });
        expect({ crd: kind.kind, fields, cr: crSpec, verdict: summary(offline), reasons: [offline, server].map((v) => (v.accepted ? '' : v.reason)) }).toEqual({
          crd: kind.kind,
          fields,
          cr: crSpec,
          verdict: summary(server),
          reasons: expect.anything(),
        });
      }
    }),
    { numRuns: 12, endOnFailure: true },
  );
  // The run compared something: at least one generated schema synthesized and was installed.
  expect(installed).toBeGreaterThan(0);
  expect(compared).toBe(installed * 25);
}, 240_000);

async function installIfSynthesizes(spec: z.ZodType): Promise<ResolvedKind> {
  buildCrdManifest({ group, version: 'v1', names: { kind: 'Probe', plural: 'probes', singular: 'probe', listKind: 'ProbeList' }, scope: 'Namespaced', spec });
  return install(spec);
}
