/**
 * Admission ratcheting correlates the items of a list-map by their keys, as the API server does
 * (KEP-4008), not by their index. A Portal's `spec.ports` is a list-map keyed by `name`; an object
 * stored before two rules tightened holds one item that breaks both: `port` above today's CRD maximum
 * (the API server's own schema ratcheting judges it) and a `legacy-` name the validating hook now
 * flags (the SDK's ratcheting judges it). An item inserted before it, or the list reordered, leaves
 * that item as it was: the API server admits it, and so must the hook (compared by index, the item
 * would be new at its new index and denied). A new item that breaks the hook's rule is denied, naming
 * its path; the old item's port changed to another bad value is denied by the API server.
 *
 * On the shared control plane: the CRD's group is this file's own, and so are the webhook
 * configurations' rules.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { type CustomResource, type FieldViolation, Operator, listMap } from '../../lib/index.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs } from '../../lib/testing/install-crds.js';
import { type LocalWebhooks, serveWebhooksLocally } from '../../lib/testing/local-webhooks.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const PortalSpec = z.object({
  ports: listMap(z.object({ name: z.string(), port: z.number().int().min(1).max(65535) }), ['name']),
});
type Port = { name: string; port: number };

/** Flags every port named `legacy-…` (a rule the CRD's schema does not have). */
class PortalOperator extends Operator<typeof PortalSpec> {
  constructor(scope: Construct) {
    super(scope, 'portal-operator', { group: 'listmap.example.com', version: 'v1', kind: 'Portal', spec: PortalSpec, webhook: {} });
  }

  render(): void {}

  override validateAdmission(cr: CustomResource<z.output<typeof PortalSpec>>): FieldViolation[] {
    return (cr.spec.ports ?? []).flatMap((p, i) => (p.name.startsWith('legacy-') ? [{ path: `spec.ports[${i}].name`, message: 'Forbidden: legacy- names are retired' }] : []));
  }
}

const CRD = 'portals.listmap.example.com';
let admin: ApiClient;
let local: LocalWebhooks | undefined;
let dir: string;
let ns: string;
const path = (name = '') => `/apis/listmap.example.com/v1/namespaces/${ns}/portals${name ? `/${name}` : ''}`;
const setPorts = (ports: Port[]) => admin.request('PATCH', path('old'), { body: { spec: { ports } }, contentType: 'application/merge-patch+json' });
const refusal = (write: Promise<unknown>) => write.then(() => undefined, (err) => (isApiError(err, 422) ? String(err.status?.message ?? err.message) : Promise.reject(err)));

beforeAll(async () => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'admission-list-map-test' });
  ns = await createTestNamespace('list-map');
  dir = await mkdtemp(join(tmpdir(), 'admission-list-map-'));
  const operator = new PortalOperator(new App());

  // The CRD before the maximum: one object stored with port 70000 and a legacy- name, no webhook yet.
  const crd = JSON.parse(JSON.stringify(operator.customResourceDefinition.toJson())) as { spec: { versions: { schema: { openAPIV3Schema: any } }[] } }; // eslint-disable-line @typescript-eslint/no-explicit-any
  delete crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.ports.items.properties.port.maximum;
  await writeFile(join(dir, 'before.json'), JSON.stringify(crd));
  await installCRDs(testKubeConfig(), [join(dir, 'before.json')], 60_000);
  await eventually('the old object is stored', () =>
    admin.request('POST', path(), { body: { apiVersion: 'listmap.example.com/v1', kind: 'Portal', metadata: { name: 'old', namespace: ns }, spec: { ports: [{ name: 'legacy-b', port: 70000 }] } } }).then(() => true, (err) => (isApiError(err, 409) ? true : false)),
  );

  // Today's CRD (maximum 65535) and the validating hook.
  local = await serveWebhooksLocally({ kubeConfig: testKubeConfig(), operators: [operator] });
  await local.install(60_000);
  await eventually('the validating webhook answers', async () => {
    const message = await refusal(admin.request('POST', path(), { query: { dryRun: 'All' }, body: { apiVersion: 'listmap.example.com/v1', kind: 'Portal', metadata: { name: 'probe', namespace: ns }, spec: { ports: [{ name: 'legacy-x', port: 1 }] } } }));
    return message?.includes('legacy- names are retired') ?? false;
  });
}, 300_000);

afterAll(async () => {
  await local?.close();
  await admin?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`).catch(() => undefined);
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN a stored list-map item that breaks a tightened schema rule and a hook rule WHEN an item is inserted before it, or the list reordered THEN the API server and the hook both admit it', async () => {
  expect(await refusal(setPorts([{ name: 'a', port: 80 }, { name: 'legacy-b', port: 70000 }]))).toBeUndefined();
  expect(await refusal(setPorts([{ name: 'legacy-b', port: 70000 }, { name: 'a', port: 80 }]))).toBeUndefined();
  const stored = (await admin.request('GET', path('old'))) as { spec: { ports: Port[] } };
  expect(stored.spec.ports).toEqual([{ name: 'legacy-b', port: 70000 }, { name: 'a', port: 80 }]);
}, 120_000);

test('GIVEN that object WHEN a new item breaks the hook\'s rule, or the old item\'s port changes to another bad value THEN denied, naming the path', async () => {
  const hook = await refusal(setPorts([{ name: 'legacy-b', port: 70000 }, { name: 'a', port: 80 }, { name: 'legacy-c', port: 81 }]));
  expect(hook).toContain('spec.ports[2].name: Forbidden: legacy- names are retired');
  expect(hook).not.toContain('spec.ports[0]');
  const schema = await refusal(setPorts([{ name: 'legacy-b', port: 70001 }, { name: 'a', port: 80 }]));
  expect(schema).toMatch(/spec\.ports\[0\]\.port: Invalid value: 70001: .*65535/);
}, 120_000);
