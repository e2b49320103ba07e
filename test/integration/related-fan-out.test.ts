/**
 * Only changes that matter fan out, against the real local control plane: 20 CRs of each of two test
 * operators reference one ConfigMap and copy its `data` into a child. `copier` reads only `data` of it,
 * `copier-always` declares `changeMatters: () => true`. A label added to the ConfigMap queues none of
 * copier's CRs and all of copier-always's (the fan-out before); a change of its data reconciles every CR
 * and their children follow.
 *
 * A third operator, `copier-strict`, declares a `changeMatters` that throws for a label `team: broken`:
 * its CRs tell it (Stalled=True `ChangeMattersFailed`, a Warning Event, an error log line) and become
 * Ready again once the next check of that ConfigMap succeeds.
 *
 * A fourth, `copier-transform`, declares a cache `scope.transform` that throws for a label
 * `cache: broken`: the ConfigMap is cached untransformed, its CRs tell it (Stalled=True
 * `CacheTransformFailed`, a Warning Event, an error log line) and become Ready again once a later version
 * transforms cleanly.
 *
 * Queued keys and reconciles are read from the manager's metrics (`workqueue_adds_total`,
 * `controller_runtime_reconcile_total`, per controller). Both controllers share one ConfigMap informer,
 * whose handlers run synchronously for each event: once copier-always has queued its 20 CRs for the
 * label change, copier has seen that event too, so its count of 0 is not a race.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator, type CustomResource, type RenderContext } from '../../lib/operator/operator.js';
import type { KubeResource } from '../../lib/operator/render/render-context.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { OperatorMetrics } from '../../lib/runtime/metrics/metrics.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually as waitFor } from '../support/eventually.js';
import { settled } from '../support/settled.js';

const SETUP_TIMEOUT_MS = 5 * 60_000;
const TEST_TIMEOUT_MS = 240_000;
const CRS = 20;

const CopySpec = z.object({ configMapName: z.string() });

/** Copies the `data` of the ConfigMap its CR names into a child ConfigMap `<cr>-copy`; reads nothing else of it. */
class CopierOperator extends Operator<typeof CopySpec> {
  constructor(scope: Construct, name: string, kind: string, changeMatters?: (oldObject: KubeResource, newObject: KubeResource) => boolean, transform?: (object: KubeResource) => KubeResource) {
    super(scope, name, {
      group: 'fanout.test.cdk8s.io',
      version: 'v1',
      kind,
      spec: CopySpec,
      owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }],
      related: { source: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapName', ...(changeMatters ? { changeMatters } : {}), ...(transform ? { scope: { transform } } : {}) } },
    });
  }

  render(cr: CustomResource<z.output<typeof CopySpec>>, scope: Construct, context: RenderContext): void {
    const [source] = context.related.source;
    new ApiObject(scope, 'copy', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${cr.metadata.name}-copy` }, data: { ...(source.data as Record<string, string>) } });
  }
}

const app = new App();
const copier = new CopierOperator(app, 'copier', 'Copy');
const always = new CopierOperator(app, 'copier-always', 'AlwaysCopy', () => true);
const strict = new CopierOperator(app, 'copier-strict', 'StrictCopy', (oldObject, newObject) => {
  if (newObject.metadata?.labels?.team === 'broken') throw new Error('team "broken" is not a team');
  return JSON.stringify(oldObject.data) !== JSON.stringify(newObject.data);
});
const STRICT_CRS = ['copier-strict-0', 'copier-strict-1'];
const transformed = new CopierOperator(app, 'copier-transform', 'TransformCopy', undefined, (object) => {
  if (object.metadata?.labels?.cache === 'broken') throw new Error('cache "broken" cannot be slimmed');
  return object;
});
const TRANSFORM_CRS = ['copier-transform-0', 'copier-transform-1'];
const metrics = new OperatorMetrics();
const logFile = join(tmpdir(), `related-fan-out-it-${process.pid}.log`);
let admin: ApiClient;
let manager: Manager;
let dir: string;
let ns: string;

const configMapPath = (name?: string) => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const crPath = (plural: string) => `/apis/fanout.test.cdk8s.io/v1/namespaces/${ns}/${plural}`;
/** The CRs of one operator (their children's names must not collide across operators). */
const namesOf = (operator: CopierOperator) => Array.from({ length: CRS }, (_, i) => `${operator.operatorName}-${i}`);

function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitFor(what, check, { timeoutMs, context: () => `; operator log: ${logFile}` });
}

/** Sum of a counter's values for one controller. */
async function counter(name: 'workqueue_adds_total' | 'controller_runtime_reconcile_total', controller: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)!.get();
  return metric.values.filter((v) => v.labels.controller === controller).reduce((sum, v) => sum + v.value, 0);
}

async function copiedData(name: string): Promise<Record<string, string> | undefined> {
  try {
    return ((await admin.request('GET', configMapPath(`${name}-copy`))) as { data?: Record<string, string> }).data ?? {};
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  const kubeConfig = testKubeConfig();
  admin = new ApiClient({ kubeConfig, userAgent: 'related-fan-out-test' });
  dir = await mkdtemp(join(tmpdir(), 'related-fan-out-it-'));
  const files: string[] = [];
  for (const operator of [copier, always, strict, transformed]) {
    const file = join(dir, `${operator.operatorName}-crd.json`);
    await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
    files.push(file);
  }
  await installCRDs(kubeConfig, files);
  ns = await createTestNamespace('fan-out', admin);
  await admin.request('POST', configMapPath(), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { color: 'blue' } } });
  for (const [names, plural, kind] of [[namesOf(copier), 'copies', 'Copy'], [namesOf(always), 'alwayscopies', 'AlwaysCopy'], [STRICT_CRS, 'strictcopies', 'StrictCopy'], [TRANSFORM_CRS, 'transformcopies', 'TransformCopy']] as const) {
    for (const name of names) {
      await admin.request('POST', crPath(plural), { body: { apiVersion: 'fanout.test.cdk8s.io/v1', kind, metadata: { name, namespace: ns }, spec: { configMapName: 'settings' } } });
    }
  }
  manager = new Manager({
    kubeConfig,
    namespace: ns,
    operators: [copier, always, strict, transformed],
    metrics,
    logger: pino({ level: 'debug' }, pino.destination({ dest: logFile, sync: true })),
  });
  await manager.start();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('related objects: only changes that matter fan out', () => {
  test(
    `GIVEN ${CRS} CRs of each operator referencing one ConfigMap, settled WHEN a label is added to it THEN copier (reads only data) queues none, copier-always (changeMatters: () => true) all ${CRS}; WHEN its data changes THEN every CR is reconciled and its child follows`,
    async () => {
      const names = [...namesOf(copier), ...namesOf(always)];
      await eventually('every child copied', async () => (await Promise.all(names.map(copiedData))).every((d) => d?.color === 'blue'));
      for (const operator of [copier, always]) {
        const controller = manager.controllers.find((c) => c.name === operator.operatorName)!;
        for (const name of namesOf(operator)) await settled(controller, `${ns}/${name}`, { context: () => `; operator log: ${logFile}` });
      }
      const before = {
        copierAdds: await counter('workqueue_adds_total', copier.operatorName),
        copierReconciles: await counter('controller_runtime_reconcile_total', copier.operatorName),
        alwaysAdds: await counter('workqueue_adds_total', always.operatorName),
      };

      // (a) a label: metadata only, which copier's render never read.
      await admin.request('PATCH', configMapPath('settings'), { body: { metadata: { labels: { team: 'a' } } }, contentType: 'application/merge-patch+json' });
      // (c) copier-always queues all its CRs for that event: the shared informer delivered it to copier as well.
      await eventually(`copier-always queued its ${CRS} CRs for the label`, async () => (await counter('workqueue_adds_total', always.operatorName)) - before.alwaysAdds >= CRS);
      const afterLabel = {
        copierAdds: await counter('workqueue_adds_total', copier.operatorName),
        copierReconciles: await counter('controller_runtime_reconcile_total', copier.operatorName),
        alwaysAdds: await counter('workqueue_adds_total', always.operatorName),
      };
      console.log(`label added to a ConfigMap referenced by ${CRS} CRs of each operator: copier queued ${afterLabel.copierAdds - before.copierAdds}, copier-always (changeMatters: () => true) queued ${afterLabel.alwaysAdds - before.alwaysAdds}`);
      expect(afterLabel.copierAdds - before.copierAdds).toBe(0);
      expect(afterLabel.copierReconciles - before.copierReconciles).toBe(0);
      expect(afterLabel.alwaysAdds - before.alwaysAdds).toBe(CRS);

      // (b) the data: every CR of copier reconciled, every child follows.
      await admin.request('PATCH', configMapPath('settings'), { body: { data: { color: 'green' } }, contentType: 'application/merge-patch+json' });
      await eventually('every child follows the new data', async () => (await Promise.all(names.map(copiedData))).every((d) => d?.color === 'green'));
      expect((await counter('workqueue_adds_total', copier.operatorName)) - afterLabel.copierAdds).toBeGreaterThanOrEqual(CRS);
      expect((await counter('controller_runtime_reconcile_total', copier.operatorName)) - afterLabel.copierReconciles).toBeGreaterThanOrEqual(CRS);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'GIVEN a related declaration whose changeMatters throws for a label WHEN the label is added THEN its CRs tell it (Stalled=True ChangeMattersFailed, a Warning Event, an error log line); WHEN the label changes again THEN they are Ready',
    async () => {
      const crOf = async (name: string) => admin.request<{ status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }>('GET', `${crPath('strictcopies')}/${name}`);
      const condition = async (name: string, type: string) => ((await crOf(name)).status?.conditions ?? []).find((c) => c.type === type);
      await eventually('copier-strict CRs Ready', async () => (await Promise.all(STRICT_CRS.map((n) => condition(n, 'Ready')))).every((c) => c?.status === 'True'));

      await admin.request('PATCH', configMapPath('settings'), { body: { metadata: { labels: { team: 'broken' } } }, contentType: 'application/merge-patch+json' });
      for (const name of STRICT_CRS) {
        const stalled = await eventually(`${name} Stalled=True ChangeMattersFailed`, async () => {
          const c = await condition(name, 'Stalled');
          return c?.status === 'True' && c.reason === 'ChangeMattersFailed' ? c : undefined;
        });
        expect(stalled.message).toContain(`related ConfigMap ${ns}/settings: changeMatters threw: team "broken" is not a team`);
        expect((await condition(name, 'Ready'))?.status).toBe('False');
        await eventually(`a Warning Event ChangeMattersFailed for ${name}`, async () => {
          const list = await admin.request<{ items: { type: string; reason: string; note: string; regarding: { kind: string; name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
          return list.items.find((e) => e.type === 'Warning' && e.reason === 'ChangeMattersFailed' && e.regarding.kind === 'StrictCopy' && e.regarding.name === name && e.note.includes('changeMatters threw'));
        });
      }
      const log = await readFile(logFile, 'utf8');
      expect(log.split('\n').some((line) => line.includes('"level":50') && line.includes("changeMatters threw") && line.includes('copier-strict'))).toBe(true);

      // The next check of the ConfigMap succeeds (a label that is no team's problem, data unchanged): Ready again.
      await admin.request('PATCH', configMapPath('settings'), { body: { metadata: { labels: { team: 'b' } } }, contentType: 'application/merge-patch+json' });
      for (const name of STRICT_CRS) {
        await eventually(`${name} Ready again`, async () => (await condition(name, 'Ready'))?.status === 'True' && (await condition(name, 'Stalled'))?.status === 'False');
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'GIVEN a related declaration whose cache transform throws for a label WHEN the label is added THEN the ConfigMap is cached untransformed and its CRs tell it (Stalled=True CacheTransformFailed, a Warning Event, an error log line); WHEN a later version transforms cleanly THEN they are Ready',
    async () => {
      const crOf = async (name: string) => admin.request<{ status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }>('GET', `${crPath('transformcopies')}/${name}`);
      const condition = async (name: string, type: string) => ((await crOf(name)).status?.conditions ?? []).find((c) => c.type === type);
      await eventually('copier-transform CRs Ready', async () => (await Promise.all(TRANSFORM_CRS.map((n) => condition(n, 'Ready')))).every((c) => c?.status === 'True'));

      await admin.request('PATCH', configMapPath('settings'), { body: { metadata: { labels: { cache: 'broken' } } }, contentType: 'application/merge-patch+json' });
      for (const name of TRANSFORM_CRS) {
        const stalled = await eventually(`${name} Stalled=True CacheTransformFailed`, async () => {
          const c = await condition(name, 'Stalled');
          return c?.status === 'True' && c.reason === 'CacheTransformFailed' ? c : undefined;
        });
        expect(stalled.message).toContain(`related ConfigMap ${ns}/settings: the cache transform threw: cache "broken" cannot be slimmed`);
        expect((await condition(name, 'Ready'))?.status).toBe('False');
        await eventually(`a Warning Event CacheTransformFailed for ${name}`, async () => {
          const list = await admin.request<{ items: { type: string; reason: string; note: string; regarding: { kind: string; name: string } }[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`);
          return list.items.find((e) => e.type === 'Warning' && e.reason === 'CacheTransformFailed' && e.regarding.kind === 'TransformCopy' && e.regarding.name === name && e.note.includes('the cache transform threw'));
        });
      }
      const log = await readFile(logFile, 'utf8');
      expect(log.split('\n').some((line) => line.includes('"level":50') && line.includes('cache transform threw') && line.includes('settings'))).toBe(true);
      // Cached untransformed, nothing lost: the children still carry the ConfigMap's data.
      expect((await Promise.all(TRANSFORM_CRS.map(copiedData))).every((d) => d !== undefined && Object.keys(d).length > 0)).toBe(true);

      // A later version transforms cleanly: Ready again.
      await admin.request('PATCH', configMapPath('settings'), { body: { metadata: { labels: { cache: 'ok' } } }, contentType: 'application/merge-patch+json' });
      for (const name of TRANSFORM_CRS) {
        await eventually(`${name} Ready again`, async () => (await condition(name, 'Ready'))?.status === 'True' && (await condition(name, 'Stalled'))?.status === 'False');
      }
    },
    TEST_TIMEOUT_MS,
  );
});
