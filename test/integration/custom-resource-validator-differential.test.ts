/**
 * validateCustomResource (lib/validator: apiextensions-apiserver's own code compiled to WebAssembly)
 * against the real API server: a CRD with schema constraints, list types, defaults and CEL rules
 * (`message`, `messageExpression`, `fieldPath`, `reason`, transition rules) is installed; generated
 * objects go to validateCustomResource and to a server-side dry-run create (and, with an old object,
 * a dry-run update of a stored one), and the verdicts, the refusals' causes (field path and
 * message) and an accepted object's stored spec and status (pruned, defaulted) must agree.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { installCRDs } from '../../lib/testing/install-crds.js';
import { validateCustomResources } from '../../lib/validator/validate-custom-resource.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

type Json = Record<string, any>;

const kubeConfig = testKubeConfig();
const group = 'cel-diff.validator.example.com';
const apiVersion = `${group}/v1`;
let namespace: string;

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gadgets.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget' },
    versions: [{
      name: 'v1', served: true, storage: true, subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              required: ['size'],
              properties: {
                size: { type: 'integer', minimum: 0, maximum: 10 },
                min: { type: 'integer' },
                max: { type: 'integer' },
                mode: { type: 'string', enum: ['fast', 'safe'], maxLength: 4, default: 'fast' },
                name: { type: 'string', maxLength: 12, 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] },
                tags: { type: 'array', maxItems: 4, 'x-kubernetes-list-type': 'set', items: { type: 'string', maxLength: 10 } },
                ports: {
                  type: 'array', maxItems: 4, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
                  items: {
                    type: 'object', required: ['name'],
                    properties: { name: { type: 'string', maxLength: 8 }, port: { type: 'integer' } },
                    'x-kubernetes-validations': [{ rule: 'has(self.port) && self.port > 0 && self.port < 65536', messageExpression: "'port of ' + self.name + ' out of range'" }],
                  },
                },
              },
              'x-kubernetes-validations': [
                { rule: '!has(self.min) || !has(self.max) || self.min <= self.max', messageExpression: "'min exceeds max in ' + self.mode + ' mode'", fieldPath: '.min', reason: 'FieldValueForbidden' },
                { rule: "self.mode != 'safe' || self.size >= 3", message: 'safe mode needs size 3 or more' },
                { rule: "!has(self.tags) || self.tags.all(t, t.startsWith('t-'))", message: 'tags start with t-', fieldPath: '.tags' },
                { rule: 'self.size >= oldSelf.size', message: 'size may not shrink' },
              ],
            },
            status: { type: 'object', properties: { ready: { type: 'boolean' } } },
          },
        },
      },
    }],
  },
};

beforeAll(async () => {
  namespace = await createTestNamespace('cel-diff', new ApiClient({ kubeConfig }));
  const file = join(await mkdtemp(join(tmpdir(), 'cel-diff-')), 'crd.json');
  await writeFile(file, JSON.stringify(crd));
  await installCRDs(kubeConfig, [file], 60_000);
}, 120_000);

/** Accepted, or the sorted causes `field: message` of the refusal (a refusal without causes: its message). */
interface Verdict {
  readonly accepted: boolean;
  readonly causes: readonly string[];
  /** An accepted object's `spec` and `status` as stored: pruned and defaulted. */
  readonly stored?: Json;
}

const storedFields = (object: Json | undefined): Json => ({ spec: object?.spec, status: object?.status });

const collection = () => `/apis/${group}/v1/namespaces/${namespace}/gadgets`;

async function serverVerdict(obj: Json, update: boolean): Promise<Verdict> {
  const res = update
    ? await ApiClient.sendOnce({ kubeConfig }, 'PUT', `${collection()}/${obj.metadata.name}?dryRun=All`, { body: obj, timeoutMs: 30_000 })
    : await ApiClient.sendOnce({ kubeConfig }, 'POST', `${collection()}?dryRun=All`, { body: obj, timeoutMs: 30_000 });
  if (res.statusCode < 300) return { accepted: true, causes: [], stored: storedFields(JSON.parse(res.body) as Json) };
  const status = JSON.parse(res.body) as { code?: number; message?: string; details?: { causes?: { field?: string; message?: string }[] } };
  if (status.code !== 422 && status.code !== 400) throw new Error(`unexpected answer ${res.statusCode}: ${res.body.slice(0, 500)}`);
  const causes = status.details?.causes ?? [];
  return { accepted: false, causes: causes.length > 0 ? causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).sort() : [status.message ?? ''] };
}

function offlineVerdicts(objects: readonly Json[], old?: Json): Verdict[] {
  return validateCustomResources(objects.map((object) => ({ crd, object, ...(old ? { oldObject: old } : {}) }))).map((v) => (v.verdict === 'valid'
    ? { accepted: true, causes: [], stored: storedFields(v.object) }
    : { accepted: false, causes: v.errors.map((e) => (e.field || e.type ? `${e.field}: ${e.message}` : e.message)).sort() }));
}

/** Counts what the server decided, so a test shows its inputs reached both verdicts. */
class Tally {
  accepted = 0;
  refused = 0;
  add(verdict: Verdict): void {
    if (verdict.accepted) this.accepted++;
    else this.refused++;
  }
  expectBoth(): void {
    expect({ accepted: this.accepted > 0, refused: this.refused > 0 }).toEqual({ accepted: true, refused: true });
  }
}

/** Feeds `objects` to both sides (as updates of `old` when given); expects the same verdict and causes for each. */
async function expectAgreement(objects: readonly Json[], tally: Tally, old?: Json): Promise<void> {
  const offline = offlineVerdicts(objects, old);
  for (const [i, obj] of objects.entries()) {
    const server = await serverVerdict(obj, old !== undefined);
    tally.add(server);
    const who = `${obj.metadata.name} ${JSON.stringify(obj.spec)}`;
    expect({ who, ...offline[i] }).toEqual({ who, ...server });
  }
}

const gadget = (name: string, spec: Json | undefined, extra: Json = {}): Json => ({ apiVersion, kind: 'Gadget', metadata: { name, namespace, ...extra }, ...(spec === undefined ? {} : { spec }) });

/** Mostly `valid`, sometimes one of `invalid`: most objects then have zero or one problem. */
const mostly = <T>(valid: T, ...invalid: T[]) => fc.oneof({ arbitrary: fc.constant(valid), weight: 4 }, { arbitrary: fc.constantFrom(...invalid), weight: 1 });
const spec = fc.record({
  size: mostly<unknown>(3, -1, 11, 'three', undefined, 1),
  min: fc.option(fc.constantFrom(0, 5), { nil: undefined }),
  max: fc.option(fc.constantFrom(2, 9), { nil: undefined }),
  mode: mostly<unknown>(undefined, 'safe', 'fast', 'slow', 7),
  name: mostly<unknown>(undefined, 'a-name', 'x'.repeat(13)),
  tags: mostly<unknown>(undefined, ['t-a', 't-b'], ['t-a', 't-a'], ['x'], ['t-'.padEnd(11, 'x')], ['t-1', 't-2', 't-3', 't-4', 't-5']),
  ports: mostly<unknown>(undefined, [{ name: 'http', port: 80 }], [{ name: 'http', port: 0 }], [{ name: 'a', port: 1 }, { name: 'a', port: 2 }], [{ port: 80 }], [{ name: 'longer-name', port: 80 }]),
  extra: mostly<unknown>(undefined, 'pruned'),
});
const defined = (record: Json): Json => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));

describe('custom resource validator against the API server', () => {
  test('GIVEN handpicked Gadgets WHEN created THEN the verdicts and causes agree, CEL messages included', async () => {
    const tally = new Tally();
    await expectAgreement([
      gadget('hand-valid', { size: 3 }),
      gadget('hand-no-spec', undefined),
      gadget('hand-min-max', { size: 3, min: 5, max: 2 }),
      gadget('hand-safe', { size: 1, mode: 'safe' }),
      gadget('hand-two-rules', { size: 1, mode: 'safe', min: 5, max: 2, tags: ['x'] }),
      gadget('hand-blocked', { size: 'three', min: 5, max: 2 }),
      gadget('hand-port', { size: 3, ports: [{ name: 'http', port: 70000 }] }),
      gadget('hand-pruned', { size: 3, extra: 1 }),
      gadget('Hand_Bad_Name', { size: 3 }),
      { ...gadget('hand-status', { size: 3 }), status: { ready: 'yes' } },
    ], tally);
    tally.expectBoth();
    const [verdict] = validateCustomResources([{ crd, object: gadget('hand-min-max', { size: 3, min: 5, max: 2, mode: 'fast' }) }]);
    expect(verdict.errors).toEqual([{ field: 'spec.min', type: 'FieldValueForbidden', message: 'Forbidden: min exceeds max in fast mode' }]);
  }, 120_000);

  test('GIVEN generated Gadgets (bounds, enums, list types, CEL rules) WHEN created THEN the verdicts and causes agree', async () => {
    const tally = new Tally();
    let n = 0;
    await fc.assert(fc.asyncProperty(spec, async (generated) => {
      await expectAgreement([gadget(`gen-${++n}`, defined(generated))], tally);
    }), { numRuns: 120 });
    tally.expectBoth();
  }, 300_000);

  test('GIVEN a stored Gadget WHEN generated updates are checked THEN the verdicts and causes agree, transition rules and ratcheting included', async () => {
    // stored before its CRD tightened would be the ratcheting case; here an invalid-by-now field is
    // impossible to store, so ratcheting shows as an unchanged field that keeps passing
    const created = await ApiClient.sendOnce({ kubeConfig }, 'POST', collection(), { body: gadget('stored', { size: 5, name: 'a-name', tags: ['t-a'] }), timeoutMs: 30_000 });
    expect(created.statusCode).toBe(201);
    const stored = JSON.parse(created.body) as Json;
    const tally = new Tally();
    const shrunk = { ...stored, spec: { ...stored.spec, size: 4, name: 'b-name' } };
    await expectAgreement([shrunk], tally, stored);
    expect(offlineVerdicts([shrunk], stored)[0].causes).toEqual(['spec.name: Invalid value: "b-name": name is immutable', 'spec: Invalid value: size may not shrink']);
    await fc.assert(fc.asyncProperty(spec, fc.constantFrom(3, 5, 7), async (generated, size) => {
      const next = { ...stored, spec: defined({ ...generated, size: generated.size === 3 ? size : generated.size }) };
      await expectAgreement([next], tally, stored);
    }), { numRuns: 80 });
    tally.expectBoth();
  }, 300_000);

  test('GIVEN Dials stored under a loose schema WHEN the CRD tightens (maximum, maxLength, a CEL rule) THEN updates judged against the new CRD agree, ratcheting of unchanged fields included', async () => {
    const dialGroup = `dial.${group}`;
    const dialCrd = (tight: boolean) => ({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `dials.${dialGroup}` },
      spec: {
        group: dialGroup, scope: 'Namespaced', names: { kind: 'Dial', listKind: 'DialList', plural: 'dials', singular: 'dial' },
        versions: [{
          name: 'v1', served: true, storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: {
            type: 'object',
            properties: { level: { type: 'integer', maximum: tight ? 5 : 10 }, label: { type: 'string', maxLength: tight ? 3 : 10 } },
            ...(tight ? { 'x-kubernetes-validations': [{ rule: 'self.level % 2 == 0', message: 'level must be even' }] } : {}),
          } } } },
        }],
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'cel-diff-dial-'));
    const install = async (tight: boolean) => {
      await writeFile(join(dir, 'crd.json'), JSON.stringify(dialCrd(tight)));
      await installCRDs(kubeConfig, [join(dir, 'crd.json')], 60_000);
    };
    const dials = `/apis/${dialGroup}/v1/namespaces/${namespace}/dials`;
    const dial = (name: string, spec: Json) => ({ apiVersion: `${dialGroup}/v1`, kind: 'Dial', metadata: { name, namespace }, spec });
    await install(false);
    const created = await ApiClient.sendOnce({ kubeConfig }, 'POST', dials, { body: dial('loose', { level: 7, label: 'long' }), timeoutMs: 30_000 });
    expect(created.statusCode).toBe(201);
    const stored = JSON.parse(created.body) as Json;

    await install(true);
    // the CR handler picks up the new schema asynchronously: wait until a create is judged by it
    await eventually('the tightened Dial schema served', async () => (await ApiClient.sendOnce({ kubeConfig }, 'POST', `${dials}?dryRun=All`, { body: dial('probe', { level: 7 }), timeoutMs: 30_000 })).statusCode === 422);

    const tight = dialCrd(true);
    const tally = new Tally();
    for (const level of [7, 4, 9]) {
      for (const label of ['long', 'ab', 'longer']) {
        const next = { ...stored, spec: { level, label } };
        const offline = validateCustomResources([{ crd: tight, object: next, oldObject: stored }])[0];
        const server = await serverVerdictAt(`${dials}/loose`, next);
        tally.add(server);
        const mine = offline.verdict === 'valid' ? { accepted: true, causes: [] } : { accepted: false, causes: offline.errors.map((e) => `${e.field}: ${e.message}`).sort() };
        expect({ level, label, ...mine }).toEqual({ level, label, ...server });
      }
    }
    tally.expectBoth();
    // ratcheting: the stored object, unchanged, still passes; as a new object it does not
    expect(validateCustomResources([{ crd: tight, object: stored, oldObject: stored }])[0].verdict).toBe('valid');
    expect(validateCustomResources([{ crd: tight, object: dial('fresh', { level: 7, label: 'long' }) }])[0].errors.map((e) => e.field).sort()).toEqual(['<nil>', 'spec.label', 'spec.level']); // maxLength blocks the CEL rules
  }, 300_000);
});

/** A dry-run PUT of `obj` at `path`: accepted, or the sorted causes. */
async function serverVerdictAt(path: string, obj: Json): Promise<Verdict> {
  const res = await ApiClient.sendOnce({ kubeConfig }, 'PUT', `${path}?dryRun=All`, { body: obj, timeoutMs: 30_000 });
  if (res.statusCode < 300) return { accepted: true, causes: [] };
  const status = JSON.parse(res.body) as { code?: number; message?: string; details?: { causes?: { field?: string; message?: string }[] } };
  if (status.code !== 422) throw new Error(`unexpected answer ${res.statusCode}: ${res.body.slice(0, 500)}`);
  return { accepted: false, causes: (status.details?.causes ?? []).map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).sort() };
}
