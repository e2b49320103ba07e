/**
 * Adoption is explicit (issue 22 item 6), against the run's shared control plane. The `Crate` operator
 * renders a ConfigMap `<name>-config` and a Service `<name>`. Objects made beforehand under those names
 * the way `kubectl create` makes them (POST, field manager `kubectl-create`) carry none of our labels, so
 * the label-selected child informers never see them:
 * - by default the CR is Stalled=True AdoptionRefused naming the object, a Warning Event and a warn log
 *   say so, the object is not written, the other child is still applied; deleting the object heals it;
 * - with `adoption: 'adopt'` the objects are taken over and end exactly as rendered: what kubectl-create
 *   set and render does not is gone, what another Apply manager owns stays, our ownerReference and labels
 *   are there;
 * - the lookup is paid on the create path only: a later reconcile that updates a child sends no GET.
 * Waits are bounded by deadlines; nothing asserts elapsed time.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { INSTANCE_LABEL, MANAGED_BY_LABEL, OWNER_UID_LABEL } from '../../lib/operator/render/labels.js';
import { Operator, type AdoptionPolicy, type CustomResource } from '../../lib/operator/operator.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const TEST_TIMEOUT_MS = 240_000;
const GROUP = 'adoption.test.cdk8s.io';
const OPERATOR_NAME = 'crate-operator';

const CrateSpec = z.object({ value: z.string().default('1') });

class CrateOperator extends Operator<typeof CrateSpec> {
  constructor(scope: Construct, adoption?: AdoptionPolicy) {
    super(scope, OPERATOR_NAME, {
      name: OPERATOR_NAME,
      group: GROUP,
      version: 'v1',
      kind: 'Crate',
      spec: CrateSpec,
      ...(adoption ? { adoption } : {}),
      owns: [
        { apiVersion: 'v1', kind: 'ConfigMap' },
        { apiVersion: 'v1', kind: 'Service' },
      ],
      examples: [{ apiVersion: `${GROUP}/v1`, kind: 'Crate', metadata: { name: 'example', namespace: 'default' }, spec: {} }],
    });
  }

  render(cr: CustomResource<z.output<typeof CrateSpec>>, scope: Construct): void {
    const name = cr.metadata.name;
    new ApiObject(scope, 'config', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-config` }, data: { value: cr.spec.value } });
    new ApiObject(scope, 'service', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
  }
}

let admin: ApiClient;
let dir: string;
const managers: Manager[] = [];

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'adoption-test' });
  dir = await mkdtemp(join(tmpdir(), 'adoption-'));
  const file = join(dir, 'crd.json');
  await writeFile(file, JSON.stringify(new CrateOperator(new App()).customResourceDefinition.toJson()));
  await installCRDs(testKubeConfig(), [file], 60_000);
}, 120_000);

afterAll(async () => {
  for (const manager of managers) await manager.stop();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const cratePath = (ns: string, name = '') => `/apis/${GROUP}/v1/namespaces/${ns}/crates${name ? `/${name}` : ''}`;
const configMapPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const servicePath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/services${name ? `/${name}` : ''}`;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

async function conditionOf(ns: string, name: string, type: string): Promise<Condition | undefined> {
  const cr = await admin.request('GET', cratePath(ns, name));
  const status = (cr.status ?? {}) as { observedGeneration?: number; conditions?: Condition[] };
  if (status.observedGeneration !== cr.metadata?.generation) return undefined;
  return status.conditions?.find((c) => c.type === type);
}

/** `kubectl create`: a POST with field manager kubectl-create. */
function kubectlCreate(path: string, body: KubeObject): Promise<KubeObject> {
  return admin.request('POST', path, { body, query: { fieldManager: 'kubectl-create' } });
}

/** Runs the Crate operator in a Manager watching `ns`; its requests go to `requests`, its log to a file. */
async function startOperator(ns: string, adoption: AdoptionPolicy | undefined, requests: RequestRecord[]): Promise<string> {
  const logFile = join(dir, `${ns}.log`);
  const manager = new Manager({
    kubeConfig: testKubeConfig(),
    operators: [new CrateOperator(new App(), adoption)],
    namespace: ns,
    logger: pino(pino.destination({ dest: logFile, sync: true })),
    onRequest: (record) => requests.push(record),
  });
  managers.push(manager);
  await manager.start();
  return logFile;
}

const managerNames = (obj: KubeObject) => (obj.metadata?.managedFields ?? []).map((e) => `${(e as { manager: string }).manager}/${(e as { operation: string }).operation}`).sort();
const ownerUids = (obj: KubeObject) => (obj.metadata?.ownerReferences ?? []).map((o) => (o as { uid: string }).uid);
const childGets = (requests: RequestRecord[], from = 0) =>
  requests.slice(from).filter((r) => r.method === 'GET' && !r.watch && /\/(configmaps|services)\/[^/]+$/.test(r.path));

test(
  'GIVEN a ConfigMap made by kubectl create under a child name THEN the CR is Stalled naming it, with a Warning Event and a warn log; it is untouched, the Service is applied; deleting it heals the CR',
  async () => {
    const ns = await createTestNamespace('adoption-refuse', admin);
    const existing = await kubectlCreate(configMapPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'box-config', labels: { team: 'storage' } },
      data: { value: 'theirs', stray: 'x' },
    });
    const requests: RequestRecord[] = [];
    const logFile = await startOperator(ns, undefined, requests);
    const cr = await admin.request('POST', cratePath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Crate', metadata: { name: 'box', namespace: ns }, spec: {} } });

    const stalled = await eventually('Stalled=True AdoptionRefused', async () => {
      const condition = await conditionOf(ns, 'box', 'Stalled');
      return condition?.status === 'True' && condition.reason === 'AdoptionRefused' ? condition : undefined;
    });
    expect(stalled.message).toContain(`ConfigMap ${ns}/box-config`);
    expect(stalled.message).toContain('kubectl-create');
    expect(stalled.message).toContain(`operator.cdk8s.io/adopt=${OPERATOR_NAME}`);
    expect(stalled.message).toContain("adoption: 'adopt'");

    // Untouched: same resourceVersion, managedFields, no ownerReference, none of our labels.
    const after = await admin.request('GET', configMapPath(ns, 'box-config'));
    expect(after.metadata?.resourceVersion).toBe(existing.metadata?.resourceVersion);
    expect(after.metadata?.managedFields).toEqual(existing.metadata?.managedFields);
    expect(after.metadata?.ownerReferences).toBeUndefined();
    expect(after.metadata?.labels).toEqual({ team: 'storage' });
    expect(after.data).toEqual({ value: 'theirs', stray: 'x' });
    // The other child is still applied.
    const service = await eventually('the Service applied', async () => admin.request('GET', servicePath(ns, 'box')).catch(() => undefined));
    expect(ownerUids(service)).toEqual([cr.metadata?.uid]);

    const event = await eventually('a Warning Event AdoptionRefused', async () => {
      const list = await admin.request('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
      return ((list as { items?: KubeObject[] }).items ?? []).find((e) => e.type === 'Warning' && e.reason === 'AdoptionRefused');
    });
    expect(event.note).toContain(`ConfigMap ${ns}/box-config`);
    expect((event.regarding as { name: string }).name).toBe('box');
    // The controller's one line per failed reconcile (`Reconciler error`), its reason the condition's.
    const warned = await eventually('a warn log naming the object', async () => {
      const lines = (await readFile(logFile, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as { level: number; reason?: string; err?: { message?: string } });
      return lines.find((line) => line.level >= 40 && line.reason === 'AdoptionRefused' && line.err?.message?.includes(`ConfigMap ${ns}/box-config`));
    });
    expect(warned).toBeDefined();

    // Deleting the object heals it (its deletion is not watched: the retry with backoff finds the name free).
    await admin.request('DELETE', configMapPath(ns, 'box-config'));
    const created = await eventually('our ConfigMap created', async () => {
      const obj = await admin.request('GET', configMapPath(ns, 'box-config')).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
      return obj && ownerUids(obj).includes(cr.metadata?.uid ?? '') ? obj : undefined;
    });
    expect(created.data).toEqual({ value: '1' });
    await eventually('Ready=True', async () => (await conditionOf(ns, 'box', 'Ready'))?.status === 'True');
    expect((await conditionOf(ns, 'box', 'Stalled'))?.status).toBe('False');
  },
  TEST_TIMEOUT_MS,
);

test(
  "GIVEN adoption: 'adopt' and a ConfigMap and Service made by kubectl create (one field also owned by another Apply manager) THEN both are adopted and end exactly as rendered; a later update sends no GET",
  async () => {
    const ns = await createTestNamespace('adoption-adopt', admin);
    await kubectlCreate(configMapPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bin-config', labels: { team: 'storage' }, annotations: { note: 'hand-made' } },
      data: { value: 'theirs', stray: 'x' },
    });
    // Another Apply manager owns one annotation: it is theirs and stays.
    await admin.request('PATCH', configMapPath(ns, 'bin-config'), {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bin-config', annotations: { 'other.example.com/keep': 'yes' } } },
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'other-applier' },
    });
    await kubectlCreate(servicePath(ns), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'bin', annotations: { note: 'hand-made' } },
      spec: { selector: { app: 'bin', tier: 'old' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }, { name: 'debug', port: 9000 }] },
    });
    const requests: RequestRecord[] = [];
    await startOperator(ns, 'adopt', requests);
    const cr = await admin.request('POST', cratePath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Crate', metadata: { name: 'bin', namespace: ns }, spec: {} } });
    const uid = cr.metadata?.uid ?? '';
    await eventually('Ready=True', async () => (await conditionOf(ns, 'bin', 'Ready'))?.status === 'True');

    const configMap = await admin.request('GET', configMapPath(ns, 'bin-config'));
    expect(configMap.data).toEqual({ value: '1' });
    expect(ownerUids(configMap)).toEqual([uid]);
    expect(configMap.metadata?.labels).toEqual({ [INSTANCE_LABEL]: 'bin', [MANAGED_BY_LABEL]: OPERATOR_NAME, [OWNER_UID_LABEL]: uid });
    expect(Object.keys(configMap.metadata?.annotations ?? {}).sort()).toEqual(['operator.cdk8s.io/desired-hash', 'other.example.com/keep']);
    expect(managerNames(configMap)).toEqual([`${OPERATOR_NAME}/Apply`, 'other-applier/Apply']);

    const service = await admin.request('GET', servicePath(ns, 'bin'));
    const spec = service.spec as { selector?: Record<string, string>; ports: { name: string }[] };
    expect(spec.selector).toEqual({ app: 'bin' });
    expect(spec.ports.map((p) => p.name)).toEqual(['http']);
    expect(Object.keys(service.metadata?.annotations ?? {})).toEqual(['operator.cdk8s.io/desired-hash']);
    expect(ownerUids(service)).toEqual([uid]);
    expect(managerNames(service).filter((m) => m.endsWith('/Update'))).toEqual([]);

    const events = (await admin.request('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)) as { items?: KubeObject[] };
    expect((events.items ?? []).filter((e) => e.reason === 'Adopted').map((e) => e.note).sort()).toEqual([
      expect.stringContaining(`adopted ConfigMap ${ns}/bin-config`),
      expect.stringContaining(`adopted Service ${ns}/bin`),
    ]);
    // The lookups: one GET per child, on the create path.
    expect(childGets(requests).map((r) => r.path).sort()).toEqual([configMapPath(ns, 'bin-config'), servicePath(ns, 'bin')]);

    // A later reconcile that updates the ConfigMap (and finds the Service converged) sends no GET.
    const from = requests.length;
    await admin.request('PATCH', cratePath(ns, 'bin'), { body: { spec: { value: '2' } }, contentType: 'application/merge-patch+json' });
    await eventually('the ConfigMap updated', async () => ((await admin.request('GET', configMapPath(ns, 'bin-config'))).data as { value?: string } | undefined)?.value === '2');
    await eventually('Ready=True at the new generation', async () => (await conditionOf(ns, 'bin', 'Ready'))?.status === 'True');
    expect(childGets(requests, from)).toEqual([]);
  },
  TEST_TIMEOUT_MS,
);

test(
  "GIVEN adoption: 'adopt' and an object without managedFields (reset with [{}]) THEN it is adopted and ends exactly as rendered (its fields, given to before-first-apply by our first apply, are taken over too)",
  async () => {
    const ns = await createTestNamespace('adoption-unmanaged', admin);
    await kubectlCreate(configMapPath(ns), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tin-config', labels: { team: 'storage' } }, data: { value: 'theirs', stray: 'x' } });
    // kubernetes.io/docs/reference/using-api/server-side-apply/#clearing-managedfields
    const reset = await admin.request('PATCH', configMapPath(ns, 'tin-config'), {
      body: [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }],
      contentType: 'application/json-patch+json',
    });
    expect(reset.metadata?.managedFields).toBeUndefined();
    await startOperator(ns, 'adopt', []);
    const cr = await admin.request('POST', cratePath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Crate', metadata: { name: 'tin', namespace: ns }, spec: {} } });
    await eventually('Ready=True', async () => (await conditionOf(ns, 'tin', 'Ready'))?.status === 'True');
    const configMap = await admin.request('GET', configMapPath(ns, 'tin-config'));
    expect(configMap.data).toEqual({ value: '1' });
    expect(configMap.metadata?.labels).toEqual({ [INSTANCE_LABEL]: 'tin', [MANAGED_BY_LABEL]: OPERATOR_NAME, [OWNER_UID_LABEL]: cr.metadata?.uid });
    expect(managerNames(configMap)).toEqual([`${OPERATOR_NAME}/Apply`]);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN the default policy and an object annotated operator.cdk8s.io/adopt=<operator name> THEN that object is adopted, the annotation gone with the other leftovers',
  async () => {
    const ns = await createTestNamespace('adoption-annotated', admin);
    await kubectlCreate(configMapPath(ns), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'jar-config', annotations: { 'operator.cdk8s.io/adopt': OPERATOR_NAME } },
      data: { value: 'theirs', stray: 'x' },
    });
    await startOperator(ns, undefined, []);
    const cr = await admin.request('POST', cratePath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Crate', metadata: { name: 'jar', namespace: ns }, spec: {} } });
    await eventually('Ready=True', async () => (await conditionOf(ns, 'jar', 'Ready'))?.status === 'True');
    const configMap = await admin.request('GET', configMapPath(ns, 'jar-config'));
    expect(configMap.data).toEqual({ value: '1' });
    expect(ownerUids(configMap)).toEqual([cr.metadata?.uid]);
    expect(Object.keys(configMap.metadata?.annotations ?? {})).toEqual(['operator.cdk8s.io/desired-hash']);
  },
  TEST_TIMEOUT_MS,
);
