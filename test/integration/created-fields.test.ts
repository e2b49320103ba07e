/**
 * What one CR costs to converge, and the field ownership its children's creates leave, against the run's
 * shared control plane (issue 33 item 1; reconcile/adoption.ts, reconcile/created-fields.ts).
 *
 * The `Shelf` operator renders one ConfigMap whose data is the CR's `spec.items`. Every request the
 * Manager sends is recorded (`onRequest`), so the test reads exactly what a reconcile sent:
 * - converging a new CR: the child's create (one POST, no lookup GET) and one status write; no Event
 *   (creating children records none);
 * - the create leaves our field manager's `Update` entry; the first changed render that drops an item
 *   first hands that entry to server-side apply (one guarded JSON patch, no GET: the informer remembers
 *   the entry's index), then applies: the dropped key is gone, only our `Apply` entry is left; an
 *   `Applied` Event tells the update;
 * - a later changed render: the apply alone.
 * Waits are bounded by deadlines; nothing asserts elapsed time.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator, type CustomResource } from '../../lib/operator/operator.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const TEST_TIMEOUT_MS = 180_000;
const GROUP = 'created-fields.test.cdk8s.io';
const OPERATOR_NAME = 'shelf-operator';

const ShelfSpec = z.object({ items: z.record(z.string(), z.string()) });

class ShelfOperator extends Operator<typeof ShelfSpec> {
  constructor(scope: Construct) {
    super(scope, OPERATOR_NAME, {
      name: OPERATOR_NAME,
      group: GROUP,
      version: 'v1',
      kind: 'Shelf',
      plural: 'shelves',
      spec: ShelfSpec,
      owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      examples: [{ apiVersion: `${GROUP}/v1`, kind: 'Shelf', metadata: { name: 'example', namespace: 'default' }, spec: { items: { a: '1' } } }],
    });
  }

  render(cr: CustomResource<z.output<typeof ShelfSpec>>, scope: Construct): void {
    new ApiObject(scope, 'items', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${cr.metadata.name}-items` }, data: cr.spec.items });
  }
}

let admin: ApiClient;
let dir: string;
let manager: Manager | undefined;

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'created-fields-test' });
  dir = await mkdtemp(join(tmpdir(), 'created-fields-'));
  const file = join(dir, 'crd.json');
  await writeFile(file, JSON.stringify(new ShelfOperator(new App()).customResourceDefinition.toJson()));
  await installCRDs(testKubeConfig(), [file], 60_000);
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shelfPath = (ns: string, name = '') => `/apis/${GROUP}/v1/namespaces/${ns}/shelves${name ? `/${name}` : ''}`;
const configMapPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const managerNames = (obj: KubeObject) => (obj.metadata?.managedFields ?? []).map((e) => `${(e as { manager: string }).manager}/${(e as { operation: string }).operation}`).sort();

/**
 * The requests (not watches) sent from record `from` on, as `METHOD path`; the child kind's OpenAPI
 * schema (read once per kind and process, for the child diff's field types) is counted apart.
 */
const sent = (requests: readonly RequestRecord[], from: number) =>
  requests
    .slice(from)
    .filter((r) => !r.watch && !r.path.startsWith('/openapi/'))
    .map((r) => `${r.method} ${r.path.split('?')[0]}`);

async function readyAt(ns: string, name: string): Promise<boolean> {
  const cr = await admin.request('GET', shelfPath(ns, name));
  const status = (cr.status ?? {}) as { observedGeneration?: number; conditions?: { type: string; status: string }[] };
  return status.observedGeneration === cr.metadata?.generation && status.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

test(
  'GIVEN a new CR THEN it converges with one create and one status write; GIVEN a render that drops a key THEN the create\'s fields are handed to apply (no GET) and the key is removed; later renders cost one apply',
  async () => {
    const ns = await createTestNamespace('created-fields', admin);
    const requests: RequestRecord[] = [];
    manager = new Manager({
      kubeConfig: testKubeConfig(),
      operators: [new ShelfOperator(new App())],
      namespace: ns,
      logger: pino({ level: 'warn' }),
      onRequest: (record) => requests.push(record),
    });
    await manager.start();

    // Converging: the create and one status write (the ConfigMap is ready at once); no lookup, no Event.
    let from = requests.length;
    await admin.request('POST', shelfPath(ns), { body: { apiVersion: `${GROUP}/v1`, kind: 'Shelf', metadata: { name: 'top', namespace: ns }, spec: { items: { a: '1', b: '2' } } } });
    await eventually('Ready=True', () => readyAt(ns, 'top'));
    // A request is recorded when its answer is read: wait for the status write's record too.
    await eventually('the status write recorded', async () => sent(requests, from).some((r) => r.endsWith('/status')));
    expect(sent(requests, from)).toEqual([`POST ${configMapPath(ns)}`, `PATCH ${shelfPath(ns, 'top')}/status`]);
    const created = await admin.request('GET', configMapPath(ns, 'top-items'));
    expect(created.data).toEqual({ a: '1', b: '2' });
    expect(managerNames(created)).toEqual([`${OPERATOR_NAME}/Update`]);

    // A render that no longer sets `b`: the created fields go to our Apply entry first, from the cache.
    from = requests.length;
    await admin.request('PATCH', shelfPath(ns, 'top'), { body: { spec: { items: { b: null } } }, contentType: 'application/merge-patch+json' });
    const updated = await eventually('b removed', async () => {
      const obj = await admin.request('GET', configMapPath(ns, 'top-items'));
      return JSON.stringify(obj.data) === JSON.stringify({ a: '1' }) ? obj : undefined;
    });
    expect(managerNames(updated)).toEqual([`${OPERATOR_NAME}/Apply`]);
    await eventually('Ready=True at generation 2', () => readyAt(ns, 'top'));
    const childRequests = () => sent(requests, from).filter((r) => r.includes('/configmaps'));
    await eventually('the apply recorded', async () => childRequests().length >= 2);
    expect(childRequests()).toEqual([`PATCH ${configMapPath(ns, 'top-items')}`, `PATCH ${configMapPath(ns, 'top-items')}`]);
    // The update is told once, by an Applied Normal Event; the create was not.
    const applied = await eventually('an Applied event', async () => {
      const list = (await admin.request('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)) as { items?: KubeObject[] };
      const items = list.items ?? [];
      return items.length > 0 ? items : undefined;
    });
    expect(applied.map((e) => `${e.type} ${e.reason} ${e.note}`)).toEqual([`Normal Applied applied ConfigMap ${ns}/top-items`]);

    // A later changed render: one apply, no conversion.
    from = requests.length;
    await admin.request('PATCH', shelfPath(ns, 'top'), { body: { spec: { items: { a: '3' } } }, contentType: 'application/merge-patch+json' });
    await eventually('a updated', async () => ((await admin.request('GET', configMapPath(ns, 'top-items'))).data as { a?: string }).a === '3');
    await eventually('the apply recorded', async () => childRequests().length >= 1);
    expect(childRequests()).toEqual([`PATCH ${configMapPath(ns, 'top-items')}`]);
    // The OpenAPI schema: once for the process (the index, then the core group's document).
    expect(requests.filter((r) => r.path.startsWith('/openapi/')).map((r) => r.path)).toEqual(['/openapi/v3', '/openapi/v3/api/v1']);
  },
  TEST_TIMEOUT_MS,
);
