/**
 * The render skip against the real local control plane: an operator renders a ConfigMap (the CR's
 * color) and a LoadBalancer Service per CR, and counts its render calls per CR. Nothing in the control
 * plane writes a Service's load-balancer status (no cloud provider), so the test writes it: a child's
 * status update. Its reconcile reuses the last render (`cdk8s_operator_renders_skipped_total` + 1, no
 * render call); an edit of the CR's spec renders and its child follows.
 *
 * Reconciles are read from the manager's metrics (`controller_runtime_reconcile_total`), after
 * `settled()` left the queue idle, so the reconcile counted after the status write is that write's.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator, type CustomResource } from '../../lib/operator/operator.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { OperatorMetrics } from '../../lib/runtime/metrics/metrics.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually as waitFor } from '../support/eventually.js';
import { settled } from '../support/settled.js';

const SETUP_TIMEOUT_MS = 5 * 60_000;
const TEST_TIMEOUT_MS = 240_000;

const ColorSpec = z.object({ color: z.string() });

/** Render calls per CR name. */
const renders = new Map<string, number>();

/** A ConfigMap with the CR's color and a LoadBalancer Service; reads only the CR's spec and name. */
class CountingOperator extends Operator<typeof ColorSpec> {
  constructor(scope: Construct) {
    super(scope, 'render-skip-counter', {
      group: 'renderskip.test.cdk8s.io',
      version: 'v1',
      kind: 'Counted',
      spec: ColorSpec,
      owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }, { apiVersion: 'v1', kind: 'Service' }],
    });
  }

  render(cr: CustomResource<z.output<typeof ColorSpec>>, scope: Construct): void {
    renders.set(cr.metadata.name, (renders.get(cr.metadata.name) ?? 0) + 1);
    new ApiObject(scope, 'cm', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${cr.metadata.name}-cm` }, data: { color: cr.spec.color } });
    new ApiObject(scope, 'web', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `${cr.metadata.name}-web` },
      spec: { type: 'LoadBalancer', selector: { app: cr.metadata.name }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
  }
}

const operator = new CountingOperator(new App());
const metrics = new OperatorMetrics();
const logFile = join(tmpdir(), `render-skip-it-${process.pid}.log`);
const CR = 'paint';
let admin: ApiClient;
let manager: Manager;
let dir: string;
let ns: string;

const crPath = (name?: string) => `/apis/renderskip.test.cdk8s.io/v1/namespaces/${ns}/counteds${name ? `/${name}` : ''}`;

function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  return waitFor(what, check, { timeoutMs, context: () => `; renders: ${renders.get(CR)}; operator log: ${logFile}` });
}

/** Sum of a counter's values for the operator's controller. */
async function counter(name: 'controller_runtime_reconcile_total' | 'cdk8s_operator_renders_skipped_total'): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)!.get();
  return metric.values.filter((v) => v.labels.controller === operator.operatorName).reduce((sum, v) => sum + v.value, 0);
}

beforeAll(async () => {
  const kubeConfig = testKubeConfig();
  admin = new ApiClient({ kubeConfig, userAgent: 'render-skip-test' });
  dir = await mkdtemp(join(tmpdir(), 'render-skip-it-'));
  const file = join(dir, 'crd.json');
  await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
  await installCRDs(kubeConfig, [file]);
  ns = await createTestNamespace('render-skip', admin);
  manager = new Manager({ kubeConfig, namespace: ns, operators: [operator], metrics, logger: pino({ level: 'debug' }, pino.destination({ dest: logFile, sync: true })) });
  await manager.start();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('render skip on a real API server', () => {
  test(
    'GIVEN a settled CR WHEN a child\'s status is updated THEN it is reconciled without rendering (counted as skipped); WHEN its spec is edited THEN it renders and the child follows',
    async () => {
      await admin.request('POST', crPath(), { body: { apiVersion: 'renderskip.test.cdk8s.io/v1', kind: 'Counted', metadata: { name: CR, namespace: ns }, spec: { color: 'blue' } } });
      const controller = manager.controllers.find((c) => c.name === operator.operatorName)!;
      await eventually('the CR Ready', async () => {
        const cr = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', crPath(CR));
        return cr.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      });
      await settled(controller, `${ns}/${CR}`, { context: () => `; operator log: ${logFile}` });
      const before = { renders: renders.get(CR)!, reconciles: await counter('controller_runtime_reconcile_total'), skipped: await counter('cdk8s_operator_renders_skipped_total') };
      expect(before.renders).toBeGreaterThanOrEqual(1);

      // (a) a child's status, written as a cloud controller would: reconciled, not rendered.
      await admin.request('PATCH', `/api/v1/namespaces/${ns}/services/${CR}-web/status`, {
        body: { status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } } },
        contentType: 'application/merge-patch+json',
      });
      await eventually('a reconcile after the status write, and the queue idle', async () =>
        (await counter('controller_runtime_reconcile_total')) > before.reconciles && controller.active === 0 && controller.queue.len() === 0,
      );
      const afterStatus = { renders: renders.get(CR)!, skipped: await counter('cdk8s_operator_renders_skipped_total') };
      console.log(`child status update: ${afterStatus.skipped - before.skipped} render(s) skipped, ${afterStatus.renders - before.renders} render call(s)`);
      expect(afterStatus.renders).toBe(before.renders);
      expect(afterStatus.skipped).toBeGreaterThan(before.skipped);

      // (b) the spec: rendered, and the child follows.
      await admin.request('PATCH', crPath(CR), { body: { spec: { color: 'green' } }, contentType: 'application/merge-patch+json' });
      await eventually('the child follows the new spec', async () => {
        const cm = await admin.request<{ data?: Record<string, string> }>('GET', `/api/v1/namespaces/${ns}/configmaps/${CR}-cm`);
        return cm.data?.color === 'green';
      });
      expect(renders.get(CR)!).toBeGreaterThan(afterStatus.renders);
    },
    TEST_TIMEOUT_MS,
  );
});
