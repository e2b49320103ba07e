/**
 * A related kind scoped to namespaces, against the shared control plane (RBAC authorization): the
 * operator's synthesized RBAC grants ConfigMaps only by a Role in each of the scope's namespaces, not by
 * its ClusterRole. A Manager acting as the operator's ServiceAccount passes the RBAC self-check, syncs
 * one ConfigMap informer per scope namespace, and caches the ConfigMaps of those namespaces only; the
 * ServiceAccount cannot list ConfigMaps anywhere else.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { z } from 'zod';
import { Operator } from '../../lib/operator/operator.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { resourcePath, type ResourceRef } from '../../lib/runtime/client/resource-path.js';
import { isApiError } from '../../lib/runtime/client/kube-client.js';
import { Manager } from '../../lib/runtime/manager.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { createTestNamespace, serviceAccountUser, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const REFS: Record<string, ResourceRef> = {
  Namespace: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  ServiceAccount: { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true },
  ClusterRole: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'clusterrolebindings', namespaced: false },
  Role: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', namespaced: true },
  RoleBinding: { group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'rolebindings', namespaced: true },
};

/** Reads ConfigMaps named by its CRs in two namespaces only; renders nothing. */
class ReaderOperator extends Operator<z.ZodObject<{ configMapName: z.ZodString }>> {
  constructor(scope: Construct, name: string, namespaces: string[]) {
    super(scope, name, {
      group: 'scope-rbac.test.cdk8s.io',
      version: 'v1',
      kind: 'Reader',
      spec: z.object({ configMapName: z.string() }),
      related: { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapName', optional: true, scope: { namespaces } } },
      deployment: { image: 'registry.example.com/scope-rbac:1.0.0', module: 'operators.ts' },
    });
  }

  render(): void {}
}

let admin: ApiClient;
let manager: Manager | undefined;
let operator: ReaderOperator;
let dir: string;
let inScope: string[];
let outside: string;

beforeAll(async () => {
  const kubeConfig = testKubeConfig();
  admin = new ApiClient({ kubeConfig, userAgent: 'related-scope-rbac-test' });
  inScope = [await createTestNamespace('scope-a', admin), await createTestNamespace('scope-b', admin)];
  outside = await createTestNamespace('scope-c', admin);
  operator = new ReaderOperator(new App(), `scope-rbac-${process.pid}`, inScope);
  dir = await mkdtemp(join(tmpdir(), 'related-scope-rbac-'));
  const crd = join(dir, 'crd.json');
  await writeFile(crd, JSON.stringify(operator.customResourceDefinition.toJson()));
  await installCRDs(kubeConfig, [crd]);
  for (const object of operator.toJson() as KubeObject[]) {
    const ref = REFS[object.kind!];
    if (ref) await admin.request('POST', resourcePath(ref, object.metadata?.namespace), { body: object });
  }
  for (const namespace of [...inScope, outside]) {
    await admin.request('POST', `/api/v1/namespaces/${namespace}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace } } });
  }
}, 5 * 60_000);

afterAll(async () => {
  await manager?.stop();
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN the synthesized RBAC WHEN a Manager runs as the ServiceAccount with the self-check THEN it starts, and caches the ConfigMaps of the scope namespaces only', async () => {
  const json = operator.toJson() as KubeObject[];
  const clusterRole = json.find((o) => o.kind === 'ClusterRole') as unknown as { rules: { resources: string[] }[] };
  expect(clusterRole.rules.flatMap((r) => r.resources)).not.toContain('configmaps');
  expect(json.filter((o) => o.kind === 'Role' && o.metadata?.name === `${operator.operatorName}-related`).map((o) => o.metadata?.namespace).sort()).toEqual([...inScope].sort());

  const user = serviceAccountUser(operator.operatorNamespace, operator.operatorName);
  // The RBAC authorizer reads bindings from an informer: wait until the new ones count.
  const asOperator = new ApiClient({ kubeConfig: testKubeConfig(), impersonate: user });
  try {
    await eventually('the Roles in the scope namespaces count', async () => {
      for (const namespace of inScope) await asOperator.request('GET', `/api/v1/namespaces/${namespace}/configmaps`);
      return true;
    });
    const denied = await asOperator.request('GET', `/api/v1/namespaces/${outside}/configmaps`).then(() => undefined, (err: unknown) => err);
    expect(isApiError(denied, 403)).toBe(true);
  } finally {
    asOperator.close();
  }

  manager = new Manager({ kubeConfig: testKubeConfig(), operators: [operator], impersonate: user, rbacSelfCheck: true, events: false, logger: pino({ level: 'silent' }), cacheSyncTimeoutMs: 60_000 });
  await manager.start();
  const informers = manager.informers.all().filter((i) => i.resource.plural === 'configmaps');
  expect(informers.map((i) => i.namespace).sort()).toEqual([...inScope].sort());
  const cached = informers.flatMap((i) => i.list()).map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`);
  for (const namespace of inScope) expect(cached).toContain(`${namespace}/settings`);
  // Every namespace also has kube-root-ca.crt; none of the outside namespace's ConfigMaps is cached.
  expect([...new Set(cached.map((key) => key.split('/')[0]))].sort()).toEqual([...inScope].sort());
}, 180_000);
