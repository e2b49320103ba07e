/**
 * `cdk8s-operator diff --all` (runDiff in process) with CRs stored in a spoke version, against the real
 * control plane: the installed Widget CRD (release N of fixtures/upgrade-operators.ts) stores v1alpha1,
 * and the release planned (fixtures/upgrade-operators-spoke-storage.ts) keeps v1alpha1 with its own
 * conversion. The plan reads the CRs in the stored version and converts each with the NEW release's
 * conversion before its render (issue 34); a CR that conversion refuses, or whose render fails, is
 * reported on its own, with the exit code of the issue (2 bad input, 3 a failure), and the rest of the
 * plan is still printed. Nothing is written: the API server's own count of persisted writes stays.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { type DiffOptions, runDiff } from '../../lib/cli/diff-command.js';
import type { UpgradePlan } from '../../lib/cli/upgrade-plan/upgrade-plan.js';
import type { ResolvedKind } from '../../lib/operator/kinds.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { persistedWrites } from '../support/persisted-writes.js';
import { WidgetOperator } from './fixtures/upgrade-operators.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'test/integration/fixtures/upgrade-operators-spoke-storage.ts';
const CONVERT = 'spoke-convert';
const RENDER = 'spoke-render';
const releaseN = new WidgetOperator(new App(), 'N');
const alpha: ResolvedKind = { ...releaseN.crd, version: 'v1alpha1', apiVersion: 'upgrade.example.com/v1alpha1' };

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;

beforeAll(async () => {
  plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'upgrade-plan-conversion-'));
  // Release N's CRD, storing v1alpha1 (no conversion webhook: the objects are read in the version they are stored in).
  const crd = releaseN.customResourceDefinition.toJson() as { spec: { versions: { name: string; storage: boolean }[]; conversion?: unknown } };
  for (const version of crd.spec.versions) version.storage = version.name === 'v1alpha1';
  crd.spec.conversion = { strategy: 'None' };
  const crdFile = join(dir, 'crd.json');
  await writeFile(crdFile, JSON.stringify(crd));
  await installCRDs(plane.kubeConfig, [crdFile]);
  for (const name of [CONVERT, RENDER]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  const widgets = [[CONVERT, 'c-1', 3], [CONVERT, 'c-2', 66], [CONVERT, 'c-3', 4], [RENDER, 'r-1', 77], [RENDER, 'r-2', 5]] as const;
  for (const [namespace, name, count] of widgets) {
    await admin.request('POST', resourcePath(alpha, namespace), { body: { apiVersion: alpha.apiVersion, kind: 'Widget', metadata: { name, namespace }, spec: { count } } });
  }
}, 10 * 60_000);

afterAll(async () => {
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function plan(options: Partial<DiffOptions>): Promise<{ code: number; plan: UpgradePlan; stderr: string }> {
  const before = await persistedWrites(plane);
  let stdout = '';
  let stderr = '';
  const code = await runDiff({ module: MODULE, kubeconfig: plane.kubeconfigPath, all: true, output: 'json', ...options }, {
    cwd: root,
    readStdin: async () => '',
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
  });
  expect(await persistedWrites(plane)).toBe(before);
  return { code, plan: JSON.parse(stdout) as UpgradePlan, stderr };
}

const summaryOf = (json: UpgradePlan) => Object.fromEntries(json.customResources.map((cr) => [cr.name, {
  errors: cr.errors, children: cr.children.map((c) => `${c.action} ${c.kind} ${c.namespace}/${c.name}`),
}]));

test('GIVEN Widgets stored in v1alpha1, one the new release cannot convert WHEN diff --all plans THEN each other CR is converted by the new release and rendered, the one that cannot is named, exit 2', async () => {
  const { code, plan: json, stderr } = await plan({ namespace: CONVERT });
  expect(code).toBe(2);
  const summary = summaryOf(json);
  expect(summary['c-1']).toEqual({ errors: [], children: [`create ConfigMap ${CONVERT}/c-1-config`] });
  expect(summary['c-3']).toEqual({ errors: [], children: [`create ConfigMap ${CONVERT}/c-3-config`] });
  expect(summary['c-2']!.children).toEqual([]);
  expect(summary['c-2']!.errors).toEqual([expect.stringMatching(/^cannot convert from upgrade\.example\.com\/v1alpha1 to upgrade\.example\.com\/v1: .*spec\.count: 66 has no size in v1/)]);
  // the new release's conversion (count × 10), not the installed one, fed the render
  const config = json.customResources.find((cr) => cr.name === 'c-1')!.children[0]!;
  expect(config.diff).toMatch(/^\+ {2}size: "30"$/m);
  expect(stderr).toMatch(new RegExp(`^error: Widget ${CONVERT}/c-2: cannot convert from upgrade\\.example\\.com/v1alpha1`, 'm'));
  expect(json.summary).toMatchObject({ customResources: 3, changed: 2, failed: 1 });
}, 5 * 60_000);

test('GIVEN a Widget whose render fails under the new release WHEN diff --all plans THEN its error names the render failure, the other CR is planned, exit 3', async () => {
  const { code, plan: json, stderr } = await plan({ namespace: RENDER });
  expect(code).toBe(3);
  const summary = summaryOf(json);
  expect(summary['r-2']).toEqual({ errors: [], children: [`create ConfigMap ${RENDER}/r-2-config`] });
  expect(summary['r-1']!.children).toEqual([]);
  expect(summary['r-1']!.errors).toEqual([expect.stringContaining('size 770 cannot be rendered (r-1)')]);
  expect(stderr).toMatch(new RegExp(`^error: Widget ${RENDER}/r-1: .*size 770 cannot be rendered`, 'm'));
}, 5 * 60_000);
