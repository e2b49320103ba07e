/**
 * The start-up report (tofu-controller#1641) against the real local control plane: CRs that exist when
 * the controller starts come in the CR informer's initial list and are queued low; a CR created after
 * the informer synced is queued high and handed out by the first get, ahead of the whole initial list.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { InformerFactory } from '../../lib/runtime/cache/informer-factory.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { Controller } from '../../lib/runtime/reconcile/controller.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { RecordingWorkqueue } from '../support/recording-workqueue.js';

/** A cold build of the binaries can take a long time; a warm start is seconds. */
const SETUP_TIMEOUT_MS = 10 * 60_000;
const TEST_TIMEOUT_MS = 120_000;
/** CRs that exist before the controller starts. */
const INITIAL_CRS = 1000;

const crd = { apiVersion: 'prio.example.com/v1', group: 'prio.example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const NAMESPACES = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

let plane: ControlPlane;
let client: ApiClient;
let dir: string;

beforeAll(async () => {
  plane = await startControlPlane({
    components: { controllerManager: false, scheduler: false, kwok: false },
    log: (line) => process.env.CONTROL_PLANE_DEBUG && console.log(line),
  });
  client = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'controller-priority-'));
  const file = join(dir, 'widgets.json');
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.prio.example.com' },
      spec: {
        group: 'prio.example.com',
        scope: 'Namespaced',
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }],
      },
    }),
  );
  await installCRDs(plane.kubeConfig, [file]);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  client?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const widget = (name: string, size = 1) => ({ apiVersion: crd.apiVersion, kind: 'Widget', metadata: { name, namespace: 'prio' }, spec: { size } });
const widgets = resourcePath({ ...crd }, 'prio');

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test(
  `GIVEN ${INITIAL_CRS} CRs that exist when the controller starts WHEN a user creates one and edits another after the informer synced THEN the initial list is queued low, the creation and the edit high, and the first two gets hand those out`,
  async () => {
    await client.request('POST', resourcePath(NAMESPACES), { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prio' } } });
    for (let i = 0; i < INITIAL_CRS; i++) await client.request('POST', widgets, { body: widget(`cr-${i}`) });

    const informers = new InformerFactory({ client });
    const queue = new RecordingWorkqueue({ name: 'prio' });
    const controller = new Controller({
      operator: { operatorName: 'prio-operator', crd, childKinds: () => [] },
      render: () => [],
      client,
      informers,
      queue,
      namespace: 'prio',
    });
    controller.watch();
    informers.start();
    try {
      await informers.waitForSync();
      expect(queue.adds).toHaveLength(INITIAL_CRS);
      expect(new Set(queue.adds.map(([, priority]) => priority))).toEqual(new Set(['low']));

      await client.request('POST', widgets, { body: widget('created-now') });
      await until(() => queue.adds.some(([key]) => key === 'prio/created-now'), 'the creation to be queued');
      const edited = await client.request<{ metadata: { resourceVersion: string } }>('GET', `${widgets}/cr-${INITIAL_CRS - 1}`);
      await client.request('PUT', `${widgets}/cr-${INITIAL_CRS - 1}`, { body: { ...widget(`cr-${INITIAL_CRS - 1}`, 2), metadata: { name: `cr-${INITIAL_CRS - 1}`, namespace: 'prio', resourceVersion: edited.metadata.resourceVersion } } });
      await until(() => queue.adds.length > INITIAL_CRS + 1, 'the edit to be queued');

      expect(queue.adds.slice(INITIAL_CRS)).toEqual([
        ['prio/created-now', 'high'],
        [`prio/cr-${INITIAL_CRS - 1}`, 'high'],
      ]);
      // Not the 1001st and 1002nd: the first slot of the cycle is high's; the second is normal's, and with nothing normal queued it goes to high.
      expect([await queue.get(), await queue.get()]).toEqual(['prio/created-now', `prio/cr-${INITIAL_CRS - 1}`]);
    } finally {
      queue.shutDown();
      await informers.stop();
    }
  },
  TEST_TIMEOUT_MS,
);
