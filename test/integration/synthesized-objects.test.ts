/**
 * The synthesized objects against a real kube-apiserver (+ etcd, from lib/testing/control-plane): CRDs
 * are accepted, the status the runtime writes is not pruned, rendered children pass server-side
 * validation with their ownerReference, and the server and offline validation agree on bad CRs.
 */
import { App } from 'cdk8s';
import { z } from 'zod';
import { resolveKind, type ChildKind } from '../../lib/operator/kinds.js';
import type { Operator } from '../../lib/operator/operator.js';
import { celRule, listMap, listSet } from '../../lib/operator/schema/structural-schema.js';
import { testKubeConfig } from '../support/cluster.js';
import { ApiClient, type RawResponse } from '../../lib/runtime/client/api-client.js';
import { renderExamplesForSnapshot } from '../../lib/testing/render-snapshot.js';
import { addOperators } from '../../operators/index.js';
import { ScriptedOperator, WebOperator } from '../operator/fixtures/test-operators.js';

type Json = Record<string, any>;

const SinkSpec = z.object({
  size: z.int().min(1).max(100),
  ratio: z.number().gt(0).lt(1).optional(),
  port: z.union([z.number().int(), z.string()]).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  loose: z.looseObject({ a: z.string() }).optional(),
  tier: z.enum(['gold', 'silver']).default('gold'),
  note: z.string().nullable().optional(),
  since: z.iso.datetime().optional(),
  anything: z.unknown().optional(),
  ports: listMap(z.object({ name: z.string(), port: z.int() }), ['name']).max(8).optional(),
  tags: listSet(z.string()).optional(),
  range: celRule(z.object({ min: z.int(), max: z.int() }), { rule: 'self.min <= self.max', message: 'min must not exceed max' }).optional(),
});

const kubeConfig = testKubeConfig();
const app = new App();
const operators: Operator[] = [
  ...addOperators(app),
  new WebOperator(app, 'web-operator', { deployment: { networkPolicies: true } }), // the opt-in NetworkPolicies applied too
  new ScriptedOperator(app, 'sink-operator', { kind: 'Sink', spec: SinkSpec as never }, () => undefined) as unknown as Operator,
];

function pathOf(obj: Json, owns: readonly ChildKind[] = [], subresource = ''): string {
  const kind = resolveKind({ apiVersion: obj.apiVersion, kind: obj.kind }, [...owns, ...operators.map((o) => o.crd)]);
  const base = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  const ns = kind.namespaced ? `/namespaces/${obj.metadata.namespace}` : '';
  return `${base}${ns}/${kind.plural}/${obj.metadata.name}${subresource}`;
}

async function apply(obj: Json, options: { owns?: readonly ChildKind[]; subresource?: string; dryRun?: boolean } = {}): Promise<RawResponse> {
  const query = `?fieldManager=crd-apiserver-test&force=true${options.dryRun ? '&dryRun=All' : ''}`;
  return ApiClient.sendOnce({ kubeConfig }, 'PATCH', pathOf(obj, options.owns, options.subresource) + query, { body: obj, contentType: 'application/apply-patch+yaml' });
}

/** POST, as `kubectl create` does: the path where the API server's validation and pruning answer plainly. */
async function create(obj: Json): Promise<RawResponse> {
  const itemPath = pathOf(obj);
  return ApiClient.sendOnce({ kubeConfig }, 'POST', itemPath.slice(0, itemPath.lastIndexOf('/')), { body: obj });
}

async function waitForResource(group: string, version: string, plural: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const res = await ApiClient.sendOnce({ kubeConfig }, 'GET', `/apis/${group}/${version}`);
    if (res.statusCode === 200 && (JSON.parse(res.body).resources as { name: string }[]).some((r) => r.name === plural)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${plural}.${group}/${version} not served after 30 s`);
}

beforeAll(async () => {
  for (const operator of operators) {
    for (const obj of operator.toJson() as Json[]) {
      // Webhook configurations only as a dry run: the server validates them, but on this shared control
      // plane it cannot reach their Service, and failurePolicy: Fail would refuse every other test's
      // writes (test/integration/webhooks.test.ts serves and checks them).
      const res = await apply(obj, { dryRun: ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes(obj.kind) });
      if (res.statusCode >= 300) throw new Error(`${obj.kind} ${obj.metadata.name} rejected: ${res.statusCode} ${res.body}`);
    }
    await waitForResource(operator.crd.group, operator.crd.version, operator.crd.plural);
  }
  for (const ns of ['team-a']) await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
}, 120_000);

describe('against a real API server', () => {
  test('GIVEN every synthesized CRD WHEN applied THEN the server accepted it and reports it Established', async () => {
    for (const operator of operators) {
      const res = await ApiClient.sendOnce({ kubeConfig }, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${operator.crd.plural}.${operator.crd.group}`);
      const conditions = JSON.parse(res.body).status.conditions as { type: string; status: string }[];
      expect({ crd: operator.crd.kind, established: conditions.find((c) => c.type === 'Established')?.status }).toEqual({ crd: operator.crd.kind, established: 'True' });
    }
  });

  test.each(operators.slice(0, 4).map((o) => [o.operatorName, o] as const))(
    'GIVEN a sample of %s WHEN created, given a runtime status and its children dry-run applied THEN nothing is pruned or rejected',
    async (_name, operator) => {
      for (const example of operator.examples) {
        const cr = operator.parseCustomResource(example);
        const created = await apply({ apiVersion: cr.apiVersion, kind: cr.kind, metadata: { name: cr.metadata.name, namespace: cr.metadata.namespace }, spec: example.spec });
        expect(created.statusCode).toBeLessThan(300);
        const uid = JSON.parse(created.body).metadata.uid as string;

        const status = {
          observedGeneration: 1,
          conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 }],
          children: [{ apiVersion: 'v1', kind: 'Service', name: 'x', namespace: cr.metadata.namespace, ready: true }],
        };
        const patched = await apply({ apiVersion: cr.apiVersion, kind: cr.kind, metadata: { name: cr.metadata.name, namespace: cr.metadata.namespace }, status }, { subresource: '/status' });
        expect(patched.statusCode).toBe(200);
        expect(JSON.parse(patched.body).status).toEqual(status);

        for (const child of Object.values(renderExamplesForSnapshot(operator, { uid })).flat()) {
          const res = await apply(child, { owns: operator.owns, dryRun: true });
          expect({ child: `${child.kind}/${child.metadata.name}`, status: res.statusCode, body: res.statusCode < 300 ? '' : res.body }).toEqual({
            child: `${child.kind}/${child.metadata.name}`,
            status: res.statusCode,
            body: '',
          });
        }
      }
    },
  );

  test('GIVEN a CR using every schema construct WHEN applied THEN the server accepts it and applies the default', async () => {
    const res = await apply({
      apiVersion: 'demo.example.com/v1alpha1',
      kind: 'Sink',
      metadata: { name: 'full', namespace: 'team-a' },
      spec: { size: 3, ratio: 0.5, port: 'http', labels: { a: 'b' }, extra: { x: { y: 1 } }, loose: { a: 'x', b: 2 }, note: null, since: '2026-01-01T00:00:00Z', anything: [1, 'a'], ports: [{ name: 'a', port: 1 }], tags: ['x'], range: { min: 1, max: 2 } },
    });
    expect(res.statusCode).toBeLessThan(300);
    const spec = JSON.parse(res.body).spec;
    expect(spec.tier).toBe('gold');
    expect(spec.loose).toEqual({ a: 'x', b: 2 });
    expect(spec.extra).toEqual({ x: { y: 1 } });
  });

  test('GIVEN an out-of-range CR WHEN applied and validated offline THEN both reject spec.size', async () => {
    const bad = { apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name: 'bad', namespace: 'team-a' }, spec: { size: 0 } };
    const res = await apply(bad);
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('spec.size');
    const sink = operators[operators.length - 1];
    expect(() => sink.parseCustomResource(bad)).toThrow(/spec\.size: Too small/);
  });

  test('GIVEN a CR breaking the CEL rule WHEN applied THEN the server rejects it with the rule message', async () => {
    const res = await apply({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name: 'cel', namespace: 'team-a' }, spec: { size: 1, range: { min: 3, max: 2 } } });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('min must not exceed max');
  });
  test('GIVEN a CR with a string where an integer belongs WHEN created THEN the server rejects spec.size with a type error', async () => {
    const res = await create({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name: 'wrong-type', namespace: 'team-a' }, spec: { size: 'three' } });
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).details.causes).toContainEqual(expect.objectContaining({ reason: 'FieldValueTypeInvalid', field: 'spec.size' }));
  });

  test('GIVEN a CR without a required field WHEN applied THEN the server rejects it naming spec.size', async () => {
    const res = await apply({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name: 'missing', namespace: 'team-a' }, spec: { tier: 'gold' } });
    expect(res.statusCode).toBe(422);
    expect(res.body).toMatch(/spec\.size: Required value/);
  });

  test('GIVEN a CR with a field the schema does not declare WHEN stored THEN the server prunes it', async () => {
    // Created, not applied: server-side apply refuses undeclared fields outright ("field not declared in schema").
    const res = await create({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name: 'unknown-field', namespace: 'team-a' }, spec: { size: 1, surprise: 'gone' } });
    expect(res.statusCode).toBeLessThan(300);
    const stored = JSON.parse((await ApiClient.sendOnce({ kubeConfig }, 'GET', pathOf({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name: 'unknown-field', namespace: 'team-a' } }))).body);
    expect(stored.spec.size).toBe(1);
    expect(stored.spec).not.toHaveProperty('surprise');
  });

  test.each([[8080], ['http']])('GIVEN an int-or-string field set to %p WHEN stored THEN it keeps the form it was sent in', async (port) => {
    const name = `port-${typeof port}`;
    const res = await apply({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name, namespace: 'team-a' }, spec: { size: 1, port } });
    expect(res.statusCode).toBeLessThan(300);
    const stored = JSON.parse((await ApiClient.sendOnce({ kubeConfig }, 'GET', pathOf({ apiVersion: 'demo.example.com/v1alpha1', kind: 'Sink', metadata: { name, namespace: 'team-a' } }))).body);
    expect(stored.spec.port).toStrictEqual(port);
  });
});
