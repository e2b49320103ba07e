/**
 * The storage-version migration against the real API server (cloud-on-k8s#2196,
 * kube-storage-version-migrator#103): a kind whose objects were stored in v1alpha1, then upgraded to
 * v1beta1 storage, can drop v1alpha1 only once every object is rewritten and `status.storedVersions`
 * is trimmed. The operator runs as its own ServiceAccount with its synthesized ClusterRole, so the
 * derived RBAC and the self-check are what is tested too.
 *
 * On the shared control plane, with a group of its own (`svm.test.example.com`); conversion is served
 * in this process (serveWebhooksLocally).
 */
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { Operator } from '../../lib/operator/operator.js';
import { spokeVersion } from '../../lib/operator/versions/versions.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { OperatorMetrics } from '../../lib/runtime/metrics/metrics.js';
import { checkAccess, describeMissing, requiredAccess } from '../../lib/runtime/startup/rbac-self-check.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { serveWebhooksLocally, type LocalWebhooks } from '../../lib/testing/local-webhooks.js';
import { createTestNamespace, serviceAccountUser, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const GROUP = 'svm.test.example.com';
const CRD = `gadgets.${GROUP}`;
const CRD_URL = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
const Hub = z.object({ replicas: z.int().min(1) });
const Alpha = z.object({ size: z.int().min(1) });
const alpha = (storage: boolean) =>
  spokeVersion({ hubSpec: Hub, name: 'v1alpha1', spec: Alpha, storage, toHub: (o) => ({ spec: { replicas: o.spec.size } }), fromHub: (h) => ({ spec: { size: h.spec.replicas } }) });

/** Release N-1 stores v1alpha1; release N stores v1beta1 and still serves v1alpha1; release N+1 retired v1alpha1. */
class Gadgets extends Operator<typeof Hub> {
  constructor(scope: Construct, release: 'N-1' | 'N' | 'N+1') {
    super(scope, `gadgets-${release}`, {
      group: GROUP, version: 'v1beta1', kind: 'Gadget', spec: Hub, name: 'gadget-operator',
      versions: release === 'N+1' ? [] : [alpha(release === 'N-1')],
      ...(release === 'N+1' ? { retiredVersions: ['v1alpha1'] } : {}),
    });
  }
  render(): void {}
}

const objectsOf = (operator: Operator, kind: string) =>
  operator.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c) && c.kind === kind).map((o) => o.toJson() as KubeObject);

let admin: ApiClient;
let local: LocalWebhooks;
let dir: string;
let namespaces: string[];
const NAMES = ['a', 'b', 'c', 'd', 'e'];

beforeAll(async () => {
  const kubeConfig = testKubeConfig();
  admin = new ApiClient({ kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'svm-'));
  const release = new Gadgets(new App(), 'N');
  local = await serveWebhooksLocally({ kubeConfig, operators: [release] });
  // Release N-1: v1alpha1 is the storage version; objects are created (and stored) in it.
  const before = join(dir, 'before.json');
  await writeFile(before, objectsOf(new Gadgets(new App(), 'N-1'), 'CustomResourceDefinition').map((o) => JSON.stringify(o)).join('\n---\n'));
  await installCRDs(kubeConfig, [before], 60_000, { webhook: local.webhook });
  namespaces = [await createTestNamespace('svm', admin), await createTestNamespace('svm', admin)];
  for (const [i, name] of NAMES.entries()) {
    const namespace = namespaces[i % 2]!;
    await eventually(`create ${name}`, () =>
      admin.request('POST', `/apis/${GROUP}/v1alpha1/namespaces/${namespace}/gadgets`, {
        body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'Gadget', metadata: { name, namespace }, spec: { size: i + 1 } },
      }),
    );
  }
  // Release N: v1beta1 is the storage version; v1alpha1 stays served.
  await local.install();
}, 10 * 60_000);

afterAll(async () => {
  await local?.close();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The CRD as release N+1 has it (no v1alpha1), PUT with dryRun: what the API server says about dropping it now. */
async function dropV1alpha1(dryRun: boolean): Promise<unknown> {
  const crd = await admin.request<KubeObject & { spec: { versions: { name: string }[]; conversion?: unknown } }>('GET', CRD_URL);
  const spec = { ...crd.spec, versions: crd.spec.versions.filter((v) => v.name !== 'v1alpha1'), conversion: { strategy: 'None' } };
  return admin.request('PUT', CRD_URL, { body: { ...crd, spec }, query: dryRun ? { dryRun: 'All' } : {} }).catch((err: unknown) => err);
}

test(
  'GIVEN objects stored in v1alpha1 and storage switched to v1beta1 WHEN the operator leads THEN it rewrites them and trims status.storedVersions to [v1beta1] (a refused trim told and retried), and a CRD without v1alpha1 is accepted',
  async () => {
    const crd = await eventually('storedVersions lists both versions', async () => {
      const c = await admin.request<KubeObject & { status: { storedVersions: string[] } }>('GET', CRD_URL);
      return [...c.status.storedVersions].sort().join(',') === 'v1alpha1,v1beta1' && c;
    });
    expect(crd.status.storedVersions).toContain('v1alpha1');

    // Before the migration the API server refuses release N+1's CRD.
    const refused = await dropV1alpha1(true);
    expect(isApiError(refused, 422)).toBe(true);
    expect(String((refused as Error).message)).toMatch(/status\.storedVersions\[0\]: Invalid value: "v1alpha1": missing from spec\.versions; v1alpha1 was previously a storage version/);

    // The operator runs as its ServiceAccount. First with its ClusterRole lacking the update on the
    // CRD's status (as an older release's RBAC would): the trim is refused, told and retried.
    const operator = new Gadgets(new App(), 'N');
    const sa = await createTestNamespace('svm-operator', admin);
    const [role] = objectsOf(operator, 'ClusterRole') as (KubeObject & { rules: { resources: string[] }[] })[];
    const roleName = `gadget-operator-${sa}`;
    const rolePath = `/apis/rbac.authorization.k8s.io/v1/clusterroles/${roleName}`;
    const withoutTrim = role!.rules.filter((r) => !r.resources.includes('customresourcedefinitions/status'));
    expect(withoutTrim.length).toBe(role!.rules.length - 1);
    await admin.request('POST', `/api/v1/namespaces/${sa}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'gadget-operator' } } });
    await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { ...role, metadata: { name: roleName }, rules: withoutTrim } });
    await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name: 'gadget-operator', namespace: sa }],
      },
    });
    const metrics = new OperatorMetrics({ registry: new Registry(), defaultMetrics: false });
    const manager = new Manager({ kubeConfig: testKubeConfig(), operators: [operator], impersonate: serviceAccountUser(sa, 'gadget-operator'), metrics });
    const asOperator = new ApiClient({ kubeConfig: testKubeConfig(), impersonate: serviceAccountUser(sa, 'gadget-operator') });
    const events = async () =>
      (await admin.request<{ items: { reason: string; type: string; note: string; regarding: { kind: string; name: string; uid?: string } }[] }>('GET', '/apis/events.k8s.io/v1/namespaces/default/events')).items.filter(
        (e) => e.regarding.name === CRD,
      );
    try {
      // The self-check asks for the CRD's get and status update by name; the authorizer's informer may
      // not have a new binding yet, so wait until what is granted counts.
      const required = requiredAccess([operator]);
      expect(required.filter((r) => r.resource === 'customresourcedefinitions').map(describeMissing)).toEqual([
        `cannot get customresourcedefinitions.apiextensions.k8s.io "${CRD}"`,
        `cannot update customresourcedefinitions.apiextensions.k8s.io/status "${CRD}"`,
      ]);
      await eventually('all but the status update granted', async () => (await checkAccess(asOperator, required)).map(describeMissing).join() === `cannot update customresourcedefinitions.apiextensions.k8s.io/status "${CRD}"`);
      await manager.start();
      const failed = await eventually('a StorageVersionMigrationFailed Warning regarding the CRD', async () => (await events()).find((e) => e.reason === 'StorageVersionMigrationFailed'));
      expect(failed.type).toBe('Warning');
      expect(failed.note).toMatch(/TrimFailed: setting status.storedVersions to \[v1beta1\] failed: .*403 Forbidden.*re-run cdk8s synth/);
      const errorCounted = await eventually('a failed migration counted', async () => /cdk8s_operator_storage_version_migrations_total\{crd="[^"]+",result="error"\} [1-9]/.test(await metrics.text()));
      expect(errorCounted).toBe(true);
      expect((await admin.request<{ status: { storedVersions: string[] } }>('GET', CRD_URL)).status.storedVersions).toContain('v1alpha1');

      // The synthesized ClusterRole, whole: the next retry trims.
      const current = await admin.request<KubeObject>('GET', rolePath);
      await admin.request('PUT', rolePath, { body: { ...current, rules: role!.rules } });
      await eventually('the synthesized ClusterRole grants everything the runtime needs', async () => (await checkAccess(asOperator, required)).length === 0);
      const trimmed = await eventually('status.storedVersions is [v1beta1]', async () => {
        const c = await admin.request<KubeObject & { status: { storedVersions: string[] } }>('GET', CRD_URL);
        return c.status.storedVersions.join(',') === 'v1beta1' && c;
      }, { timeoutMs: 300_000 }); // the retry backoff (5 s doubling, 50% jitter) may have grown while RBAC settled
      expect(trimmed.status.storedVersions).toEqual(['v1beta1']);
      // The success is counted after the trim's response comes back, so the trim can be seen before the
      // count: wait for the count (after refused trims, retried with backoff, it comes once).
      const text = await eventually('a successful migration counted', async () => {
        const t = await metrics.text();
        return /cdk8s_operator_storage_version_migrations_total\{crd="[^"]+",result="success"\} 1$/m.test(t) && t;
      }, { timeoutMs: 120_000 });
      // Each pass rewrites every object, or finds it written since the LIST (the reconciler's status
      // write: 409); the first pass ran before the grant, so at least two passes.
      const handled = [...text.matchAll(/^cdk8s_operator_storage_version_migrated_objects_total\{crd="([^"]+)",outcome="(rewritten|conflict)"\} (\d+)$/gm)];
      expect(handled.every((m) => m[1] === CRD)).toBe(true);
      expect(handled.reduce((sum, m) => sum + Number(m[3]), 0)).toBeGreaterThanOrEqual(2 * NAMES.length);
      expect(text).toMatch(/cdk8s_operator_storage_version_migrations_total\{crd="[^"]+",result="success"\} 1$/m);
      const event = await eventually('a StorageVersionMigrated Event regarding the CRD', async () => (await events()).find((e) => e.reason === 'StorageVersionMigrated'));
      expect(event.regarding).toMatchObject({ kind: 'CustomResourceDefinition', uid: crd.metadata!.uid });
      expect(event.note).toContain(`rewrote ${NAMES.length} objects in v1beta1`);
    } finally {
      await manager.stop();
      asOperator.close();
    }

    // Release N+1: v1alpha1 dropped (no conversion left): accepted, and every object reads as v1beta1,
    // which only holds when it was rewritten (a v1alpha1 body read without conversion has no replicas).
    expect(isApiError(await dropV1alpha1(true))).toBe(false);
    await installCRDs(testKubeConfig(), [await writeRelease(new Gadgets(new App(), 'N+1'))], 60_000);
    const list = await eventually('v1beta1 list after dropping v1alpha1', async () => {
      const l = await admin.request<{ items: KubeObject[] }>('GET', `/apis/${GROUP}/v1beta1/gadgets`);
      return l.items.length === NAMES.length && l;
    });
    const replicas = Object.fromEntries(list.items.map((o) => [o.metadata!.name, (o as { spec?: { replicas?: number } }).spec?.replicas]));
    expect(replicas).toEqual(Object.fromEntries(NAMES.map((name, i) => [name, i + 1])));
  },
  9 * 60_000,
);

async function writeRelease(operator: Operator): Promise<string> {
  const file = join(dir, `${operator.node.id}.json`);
  await writeFile(file, objectsOf(operator, 'CustomResourceDefinition').map((o) => JSON.stringify(o)).join('\n---\n'));
  return file;
}
