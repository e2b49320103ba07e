/**
 * Stored form, differential: the child diff (lib/runtime/reconcile/child-diff.ts with the server's own OpenAPI v3
 * field types) against the real API server. Objects are rendered (the example operators' samples, and
 * cdk8s-plus-28 constructs with generated settings), applied with server-side apply, read back, and:
 *
 * - the diff must see no drift between each desired object and what the server stored (quantities
 *   re-serialised, Secret stringData folded into data, int-or-string kept, defaults added);
 * - the server must agree: applying the same object again changes nothing (generation, or
 *   resourceVersion for kinds without one, stays the same);
 * - for the example operators run by a Manager, a fresh Manager (an operator restart) reconciles every
 *   CR and sends no write at all.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App, Chart, Cron, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import fc from 'fast-check';
import { pino } from 'pino';
import { lookupBuiltInKind, type ResolvedKind } from '../../lib/operator/kinds.js';
import type { Operator } from '../../lib/operator/operator.js';
import { relatedLookupOf, renderChildren } from '../../lib/operator/render/render-children.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { applyObject } from '../../lib/runtime/reconcile/apply.js';
import { decideApply, withDesiredHash } from '../../lib/runtime/reconcile/child-diff.js';
import { Manager } from '../../lib/runtime/manager.js';
import { OpenApiFieldTypes } from '../../lib/runtime/reconcile/openapi-field-types.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { addOperators } from '../../operators/index.js';
import { createTestNamespace, serviceAccountUser, testKubeConfig } from '../support/cluster.js';
import { createExampleSamples } from '../support/example-samples.js';
import { eventually as waitFor } from '../support/eventually.js';

const FIELD_MANAGER = 'stored-form-test';
const TEST_TIMEOUT_MS = 300_000;

let admin: ApiClient;
let types: OpenApiFieldTypes;

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig() });
  types = new OpenApiFieldTypes({ client: admin });
});

afterAll(() => admin?.close());

function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  return waitFor(what, check, { timeoutMs });
}

function describeObject(obj: KubeObject): string {
  return `${obj.kind} ${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

function kindOf(obj: KubeObject): ResolvedKind {
  const kind = lookupBuiltInKind(obj.apiVersion ?? '', obj.kind ?? '');
  if (!kind) throw new Error(`${describeObject(obj)}: not a built-in kind`);
  return kind;
}

async function read(obj: KubeObject): Promise<KubeObject | undefined> {
  try {
    return await admin.request('GET', resourcePath(kindOf(obj), obj.metadata?.namespace, obj.metadata?.name));
  } catch (err) {
    if (isApiError(err, 404)) return undefined;
    throw err;
  }
}

/** Where the diff sees drift between desired objects and their read-back, as readable lines; [] when none. */
async function driftOf(pairs: readonly { desired: KubeObject; stored: KubeObject | undefined }[]): Promise<string[]> {
  const found: string[] = [];
  for (const { desired, stored } of pairs) {
    const fieldTypes = await types.forKind(desired.apiVersion ?? '', desired.kind ?? '');
    if (!fieldTypes) found.push(`${describeObject(desired)}: no field types`);
    const decision = decideApply(desired, stored, fieldTypes);
    if (decision.reason) found.push(`${describeObject(desired)}: ${decision.reason} at ${decision.path ?? '-'}`);
  }
  return found;
}

/** Applies each object (with its desired hash), reads it back, then applies it again and reports what the server changed the second time. */
async function applyReadReapply(objects: readonly KubeObject[]): Promise<{ pairs: { desired: KubeObject; stored: KubeObject | undefined }[]; reapplyChanged: string[] }> {
  const pairs: { desired: KubeObject; stored: KubeObject | undefined }[] = [];
  for (const obj of objects) {
    const desired = withDesiredHash(obj);
    await applyObject(admin, kindOf(desired), desired, { fieldManager: FIELD_MANAGER });
    pairs.push({ desired, stored: await read(desired) });
  }
  const reapplyChanged: string[] = [];
  for (const { desired, stored } of pairs) {
    const again = await applyObject(admin, kindOf(desired), desired, { fieldManager: FIELD_MANAGER });
    const generation = stored?.metadata?.generation;
    const same = generation !== undefined ? again.metadata?.generation === generation : again.metadata?.resourceVersion === stored?.metadata?.resourceVersion;
    if (!same) reapplyChanged.push(describeObject(desired));
  }
  return { pairs, reapplyChanged };
}

// --------------------------------------------------------------------------------------------------

test('GIVEN a ServiceAccount with no RBAC of its own THEN it may read the OpenAPI v3 documents (system:discovery)', async () => {
  const ns = await createTestNamespace('sf-rbac', admin);
  const asServiceAccount = new ApiClient({ kubeConfig: testKubeConfig(), impersonate: serviceAccountUser(ns, 'nobody') });
  try {
    const source = new OpenApiFieldTypes({ client: asServiceAccount });
    const deployment = await source.forKind('apps/v1', 'Deployment');
    const container = deployment?.field('spec')?.field('template')?.field('spec')?.field('containers')?.items();
    expect(container?.field('resources')?.field('limits')?.field('memory')?.form).toBe('resource-list-quantity');
    const volume = deployment?.field('spec')?.field('template')?.field('spec')?.field('volumes')?.items();
    expect(volume?.field('emptyDir')?.field('sizeLimit')?.form).toBe('quantity');
    expect(deployment?.field('spec')?.field('strategy')?.field('rollingUpdate')?.field('maxSurge')?.form).toBe('int-or-string');
    expect(container?.field('image')?.form).toBeUndefined();
    const pvc = await source.forKind('v1', 'PersistentVolumeClaim');
    expect(pvc?.field('spec')?.field('resources')?.field('requests')?.field('storage')?.form).toBe('resource-list-quantity');
  } finally {
    asServiceAccount.close();
  }
});

/** A quantity as a user may write it: digits, an optional fraction, an optional suffix or exponent. */
const quantity = fc
  .tuple(
    fc.integer({ min: 0, max: 999_999 }),
    fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined }),
    fc.constantFrom('', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'Ki', 'Mi', 'Gi', 'Ti', 'e3', 'e-3', 'E6', 'e0', 'e-12'),
    fc.boolean(),
  )
  .map(([whole, fraction, suffix, asNumber]) => {
    const text = `${whole}${fraction === undefined ? '' : '.' + fraction}${suffix}`;
    return asNumber && suffix === '' && fraction === undefined ? whole : text;
  });

const QUOTA_RESOURCES = ['requests.cpu', 'requests.memory', 'requests.storage', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'cpu', 'memory', 'ephemeral-storage'];

test('GIVEN generated quantities in every form THEN the diff sees the stored (canonical, rounded) quantities as unchanged, and a changed value as drift', async () => {
  const ns = await createTestNamespace('sf-quantity', admin);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(quantity, { minLength: QUOTA_RESOURCES.length, maxLength: QUOTA_RESOURCES.length }), fc.array(quantity, { minLength: 1, maxLength: 8 }), async (values, sizes) => {
      const name = `q${run++ % 5}`;
      // ResourceList values (rounded up to milli by core/v1 defaulting) …
      const hard = Object.fromEntries(QUOTA_RESOURCES.map((r, i) => [r, values[i]]));
      const quota: KubeObject = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name, namespace: ns }, spec: { hard } };
      // … and plain Quantity fields (rounded up to nano), next to ResourceList values, in a PodTemplate
      const template: KubeObject = {
        apiVersion: 'v1',
        kind: 'PodTemplate',
        metadata: { name, namespace: ns },
        template: {
          metadata: { labels: { app: 'q' } },
          spec: {
            containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: values[0], memory: values[1] } } }],
            volumes: sizes.map((size, i) => ({ name: `v${i}`, emptyDir: { sizeLimit: size } })),
          },
        },
      };
      const { pairs, reapplyChanged } = await applyReadReapply([quota, template]);
      expect(await driftOf(pairs)).toEqual([]);
      expect(reapplyChanged).toEqual([]);
      // and a value the server did not store is drift
      const stored = pairs[0].stored!;
      const other = String(hard['limits.cpu']) === '123456789m' ? '5m' : '123456789m';
      const edited = { ...stored, spec: { hard: { ...(stored.spec as { hard: Record<string, string> }).hard, 'limits.cpu': other } } };
      expect(decideApply(pairs[0].desired, edited, await types.forKind('v1', 'ResourceQuota'))).toEqual({ reason: 'drift', path: 'spec.hard.limits.cpu' });
    }),
    { numRuns: 50 },
  );
}, TEST_TIMEOUT_MS);

interface PlusSettings {
  readonly replicas: number;
  readonly cpuMillis: number;
  readonly cpuUnits: number;
  readonly memoryMebibytes: number;
  readonly memoryGibibytes: number;
  readonly port: number;
  readonly password: string;
  readonly config: Record<string, string>;
  readonly minAvailable: number | string;
  readonly storageGibibytes: number;
}

/** The cdk8s-plus-28 constructs an operator's render may emit, in namespace `ns`. */
function renderPlus(ns: string, id: string, s: PlusSettings): KubeObject[] {
  const app = new App();
  const chart = new Chart(app, id, { namespace: ns });
  const resources: kplus.ContainerResources = {
    cpu: { request: kplus.Cpu.millis(s.cpuMillis), limit: kplus.Cpu.units(s.cpuUnits) },
    memory: { request: Size.mebibytes(s.memoryMebibytes), limit: Size.gibibytes(s.memoryGibibytes) },
  };
  const container = () => ({
    image: 'nginx:1.27',
    portNumber: s.port,
    resources,
    securityContext: { ensureNonRoot: false },
    envVariables: { MODE: kplus.EnvValue.fromValue('on') },
  });
  const deployment = new kplus.Deployment(chart, 'web', { replicas: s.replicas, containers: [container()] });
  const service = deployment.exposeViaService({ ports: [{ port: 80, targetPort: s.port }] });
  new kplus.StatefulSet(chart, 'db', { replicas: 1, containers: [container()] });
  new kplus.Ingress(chart, 'ingress', { rules: [{ host: 'web.example.com', path: '/', backend: kplus.IngressBackend.fromService(service) }] });
  new kplus.Secret(chart, 'creds', { stringData: { password: s.password } });
  new kplus.ConfigMap(chart, 'config', { data: s.config });
  const worker = new kplus.Deployment(chart, 'worker', { containers: [container()] });
  new kplus.HorizontalPodAutoscaler(chart, 'hpa', {
    target: worker,
    maxReplicas: 5,
    metrics: [kplus.Metric.resourceCpu(kplus.MetricTarget.averageUtilization(70)), kplus.Metric.resourceMemory(kplus.MetricTarget.averageValue(s.memoryMebibytes * 1024 * 1024))],
  });
  new ApiObject(chart, 'pdb', {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    spec: { minAvailable: s.minAvailable, selector: { matchLabels: deployment.matchLabels } },
  });
  new kplus.Job(chart, 'job', { containers: [{ ...container(), command: ['true'] }], ttlAfterFinished: Duration.minutes(5) });
  new kplus.CronJob(chart, 'cron', { schedule: Cron.daily(), containers: [{ ...container(), command: ['true'] }] });
  new kplus.NetworkPolicy(chart, 'netpol', {
    selector: deployment,
    ingress: { rules: [{ peer: kplus.Pods.all(chart, 'all-pods'), ports: [kplus.NetworkPolicyPort.tcp(s.port)] }] },
  });
  new kplus.ServiceAccount(chart, 'sa');
  const role = new kplus.Role(chart, 'role');
  role.allowRead(kplus.ApiResource.PODS, kplus.ApiResource.CONFIG_MAPS);
  return chart.toJson() as KubeObject[];
}

const plusSettings: fc.Arbitrary<PlusSettings> = fc.record({
  replicas: fc.integer({ min: 0, max: 5 }),
  cpuMillis: fc.integer({ min: 1, max: 500 }), // ≤ the smallest cpu limit (0.5)
  cpuUnits: fc.constantFrom(1, 2, 0.5, 1.5, 4),
  memoryMebibytes: fc.integer({ min: 1, max: 4096 }),
  memoryGibibytes: fc.constantFrom(4, 5, 8),
  port: fc.integer({ min: 1024, max: 65535 }),
  password: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  config: fc.dictionary(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9._-]{0,19}$/), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
  minAvailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`)),
  storageGibibytes: fc.integer({ min: 1, max: 100 }),
});

test('GIVEN cdk8s-plus-28 constructs (Deployment … Role, Secret with stringData) with generated settings THEN no drift after the server stored them, and a re-apply changes nothing', async () => {
  const ns = await createTestNamespace('sf-plus', admin);
  let run = 0;
  const kindsSeen = new Set<string>();
  await fc.assert(
    fc.asyncProperty(plusSettings, async (settings) => {
      const objects = renderPlus(ns, `r${run++}`, settings);
      for (const o of objects) kindsSeen.add(o.kind ?? '');
      const { pairs, reapplyChanged } = await applyReadReapply(objects);
      expect(await driftOf(pairs)).toEqual([]);
      expect(reapplyChanged).toEqual([]);
    }),
    { numRuns: 6 },
  );
  expect([...kindsSeen].sort()).toEqual(
    ['ConfigMap', 'CronJob', 'Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'Job', 'NetworkPolicy', 'PodDisruptionBudget', 'Role', 'Secret', 'Service', 'ServiceAccount', 'StatefulSet'].sort(),
  );
}, TEST_TIMEOUT_MS);

// --------------------------------------------------------------------------------------------------
// The example operators under the runtime

function crPath(operator: Operator, namespace: string, name?: string): string {
  const c = operator.crd;
  return `/apis/${c.group}/${c.version}/namespaces/${namespace}/${c.plural}${name ? `/${name}` : ''}`;
}

test('GIVEN the example operators\' samples reconciled by a Manager THEN their children show no drift, and a restarted Manager writes nothing', async () => {
  const operators = addOperators(new App());
  const dir = await mkdtemp(join(tmpdir(), 'stored-form-'));
  try {
    const files = await Promise.all(
      operators.map(async (o) => {
        const file = join(dir, `${o.operatorName}-crd.json`);
        await writeFile(file, JSON.stringify(o.customResourceDefinition.toJson()));
        return file;
      }),
    );
    await installCRDs(testKubeConfig(), files, 60_000);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const ns = await createTestNamespace('sf-examples', admin);
  const logger = pino({ level: 'silent' });
  const first = new Manager({ kubeConfig: testKubeConfig(), operators, namespace: ns, logger });
  await first.start();
  const samples: { operator: Operator; name: string }[] = [];
  try {
    for (const operator of operators) {
      for (const path of await createExampleSamples(admin, operator, ns)) samples.push({ operator, name: path.slice(path.lastIndexOf('/') + 1) });
    }
    // Converged: every CR is Ready (its children's readiness will not change any more), and a reconcile
    // of every CR writes nothing (status included).
    for (const { operator, name } of samples) {
      await eventually(`${operator.crd.kind} ${name} Ready`, async () => {
        const cr = await admin.request('GET', crPath(operator, ns, name));
        const conditions = (cr.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
        return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
      });
    }
    for (const { operator, name } of samples) {
      const controller = first.controllers.find((c) => c.name === operator.operatorName)!;
      await eventually(`${operator.crd.kind} ${name} settled`, async () => {
        await controller.reconciler.reconcile(`${ns}/${name}`);
        const stats = controller.reconciler.lastStats.get(`${ns}/${name}`);
        return stats !== undefined && stats.applied === 0 && stats.pruned === 0 && !stats.statusWritten;
      });
    }
    // The diff itself, without the reconciler's memory of its own applies: desired vs what the server stored.
    const pairs: { desired: KubeObject; stored: KubeObject | undefined }[] = [];
    for (const { operator, name } of samples) {
      const cr = (await admin.request('GET', crPath(operator, ns, name))) as unknown as CustomResource;
      // The related objects beside the samples, as created in ns: what the Manager's render read.
      const related = relatedLookupOf(operator.exampleRelated.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: ns } })));
      for (const child of renderChildren(operator, cr, { related })) {
        const desired = withDesiredHash(child as KubeObject);
        pairs.push({ desired, stored: await read(desired) });
      }
    }
    expect(pairs.length).toBeGreaterThanOrEqual(samples.length);
    expect(pairs.filter((p) => p.stored === undefined).map((p) => describeObject(p.desired))).toEqual([]);
    expect(await driftOf(pairs)).toEqual([]);
  } finally {
    await first.stop();
  }

  // An operator restart: a fresh Manager has no memory of its applies; it reconciles every CR once.
  const requests: RequestRecord[] = [];
  const second = new Manager({ kubeConfig: testKubeConfig(), operators, namespace: ns, logger, onRequest: (r) => requests.push(r) });
  await second.start();
  try {
    await eventually('every CR reconciled by the restarted manager', async () =>
      samples.every(({ operator, name }) => second.controllers.find((c) => c.name === operator.operatorName)!.reconciler.lastStats.has(`${ns}/${name}`)) &&
      second.controllers.every((c) => c.active === 0 && c.queue.len() === 0),
    );
    const writes = requests.filter((r) => !r.watch && r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
    expect(writes).toEqual([]);
    for (const { operator, name } of samples) {
      const stats = second.controllers.find((c) => c.name === operator.operatorName)!.reconciler.lastStats.get(`${ns}/${name}`);
      expect(stats).toEqual({ applied: 0, pruned: 0, statusWritten: false });
    }
  } finally {
    await second.stop();
  }
}, TEST_TIMEOUT_MS);
