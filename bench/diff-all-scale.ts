/**
 * Benchmark (not a test) of `cdk8s-operator diff --all` at scale (issue 34: "what will this upgrade do
 * to my 3000 CRs"), on the local control plane. Prints one JSON line.
 *
 * ```
 * npx tsx bench/diff-all-scale.ts [--crs 3000] [--concurrency 8]
 * ```
 *
 * Setup: the Widget operator of test/integration/fixtures/upgrade-operators.ts at release N (its CRD),
 * `--crs` Widgets in one namespace and the children one reconcile of release N applies (two ConfigMaps
 * each, applied as the runtime applies them). Then, in a fresh node process, `runDiff` with `--all -o
 * json` and the module of release N+1 (each CR: a ConfigMap changed, one pruned, a Secret created; the
 * runtime's reconciler with dry-run writes, lib/cli/upgrade-plan/custom-resource-plan.ts).
 *
 * Figures: `setupMs` (creating the objects), `planMs` (the runDiff call, wall time), `requests` (by
 * method, from the client's `onRequest`), `exitCode`, the plan's summary, and `peakRssMiB`
 * (`process.resourceUsage().maxRSS` of the planning process, whole process).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { runDiff } from '../lib/cli/diff-command.js';
import type { UpgradePlan } from '../lib/cli/upgrade-plan/upgrade-plan.js';
import type { CustomResource } from '../lib/operator/custom-resource.js';
import { kindKey } from '../lib/operator/kinds.js';
import { ObjectRef } from '../lib/operator/object-ref.js';
import { renderCustomResource } from '../lib/operator/render/render-children.js';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import type { KubeObject } from '../lib/runtime/client/kube-client.js';
import { resourcePath } from '../lib/runtime/client/resource-path.js';
import { applyObject } from '../lib/runtime/reconcile/apply.js';
import { withDesiredHash } from '../lib/runtime/reconcile/child-diff.js';
import { mapConcurrently } from '../lib/runtime/reconcile/map-concurrently.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { WidgetOperator } from '../test/integration/fixtures/upgrade-operators.js';
import { benchOptions } from './bench-options.js';

// --child, --kubeconfig: the planning process, as main() starts it.
const { values, number } = benchOptions({
  crs: { type: 'string', default: '3000' },
  concurrency: { type: 'string', default: '8' },
  child: { type: 'boolean', default: false },
  kubeconfig: { type: 'string', default: '' },
});
const concurrency = String(number('concurrency'));
const root = fileURLToPath(new URL('..', import.meta.url));
const NAMESPACE = 'scale';

/** The planning process: one runDiff --all, its figures as the last line of stdout. */
async function child(kubeconfig: string, concurrency: string): Promise<void> {
  const requests: Record<string, number> = {};
  let stdout = '';
  const started = performance.now();
  const exitCode = await runDiff({ module: 'test/integration/fixtures/upgrade-operators.ts', kubeconfig, all: true, output: 'json', concurrency }, {
    cwd: root,
    readStdin: async () => '',
    writeStdout: (text) => { stdout += text; },
    writeStderr: () => {},
    onRequest: (record) => { requests[record.method] = (requests[record.method] ?? 0) + 1; },
  });
  const planMs = Math.round(performance.now() - started);
  const plan = JSON.parse(stdout) as UpgradePlan;
  console.log(JSON.stringify({ planMs, exitCode, requests, summary: plan.summary, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

async function main(): Promise<void> {
  const crs = number('crs');
  const plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
  const dir = await mkdtemp(join(tmpdir(), 'bench-diff-all-'));
  try {
    const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-diff-all-scale' });
    const releaseN = new WidgetOperator(new App(), 'N');
    const crdFile = join(dir, 'crd.json');
    await writeFile(crdFile, JSON.stringify(releaseN.customResourceDefinition.toJson()));
    await installCRDs(plane.kubeConfig, [crdFile]);
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
    const t0 = performance.now();
    await mapConcurrently(Array.from({ length: crs }, (_, i) => i), 16, async (i) => {
      const cr = await admin.request<KubeObject>('POST', resourcePath(releaseN.crd, NAMESPACE), {
        body: { apiVersion: 'upgrade.example.com/v1', kind: 'Widget', metadata: { name: `w-${i}`, namespace: NAMESPACE }, spec: { size: 1 + (i % 12) } },
      });
      for (const c of renderCustomResource(releaseN, cr as unknown as CustomResource).children.map(withDesiredHash)) {
        const kind = releaseN.childKinds().find((k) => kindKey(k) === kindKey(ObjectRef.of(c)))!;
        await applyObject(admin, kind, c, { fieldManager: releaseN.operatorName });
      }
    });
    const setupMs = Math.round(performance.now() - t0);
    admin.close();
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(kubeconfigPath, plane.kubeConfig.exportConfig());
    const self = fileURLToPath(import.meta.url);
    const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--child', '--kubeconfig', kubeconfigPath, '--concurrency', concurrency], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>;
    console.log(JSON.stringify({ crs, setupMs, ...result, loadavg1: Math.round(loadavg()[0]! * 10) / 10, date: new Date().toISOString() }));
  } finally {
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (values.child) await child(values.kubeconfig, concurrency);
else await main();
