/**
 * The OLM bundle that `cdk8s-operator package olm` writes, installed by Operator Lifecycle Manager's own
 * controllers on a control plane of this file's own (OLM acts on every namespace, and the bundle's
 * CRDs and ClusterRoles are the examples', which other files install in the shared one).
 *
 * OLM (olm-operator and catalog-operator of github.com/operator-framework/operator-lifecycle-manager,
 * and operator-registry's `opm`, built by tools/olm/build.sh) runs as local processes
 * (test/support/olm-cluster.ts). The route is the one users take: a file-based catalog (olm.package,
 * olm.channel, olm.bundle; test/support/olm-catalog.ts) served over gRPC by `opm serve`, a
 * CatalogSource whose `spec.address` points at it, an OperatorGroup and a Subscription. No image is
 * pulled anywhere: `opm render` of the bundle directory carries its manifests inline as
 * `olm.bundle.object` properties with no bundle image, so the catalog-operator turns them into
 * InstallPlan steps itself.
 *
 * One catalog in OLM's global catalog namespace holds the bundles of the three example operators
 * (operators/); each is subscribed to in a namespace of its own. Then, for each:
 * - the InstallPlan is approved automatically and Complete;
 * - the ClusterServiceVersion reaches phase `Succeeded`;
 * - OLM created the Deployment (Available: kwok runs its pod), the ServiceAccount, a Role and RoleBinding
 *   for each of the CSV's `permissions` and a ClusterRole and ClusterRoleBinding for each of its
 *   `clusterPermissions` (and, the OperatorGroup targeting all namespaces, for each `permissions` entry
 *   too), with the CSV's rules, bound to that ServiceAccount;
 * - OLM installed the CSV's webhookdefinitions (memcached's admission and conversion) with a CA of its
 *   own, and none for an operator without webhooks;
 * - the owned CRD is Established, and the bundle's other manifests (metrics Service, metrics-reader
 *   ClusterRole) exist.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPackageOlm } from '../../lib/cli/package-olm-command.js';
import type { ApiClient } from '../../lib/runtime/client/api-client.js';
import { eventually } from '../support/eventually.js';
import { olmTools } from '../support/olm.js';
import { writeFileBasedCatalog, type CatalogBundle, type OlmObject as KubeObject } from '../support/olm-catalog.js';
import { startOlmCluster, type OlmCluster } from '../support/olm-cluster.js';
import { REPO_ROOT } from '../support/sdk-tarball.js';

type Rule = { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[]; nonResourceURLs?: string[] };
type Condition = { type: string; status: string };

const OPERATORS = ['memcached-operator', 'app-operator', 'database-operator'] as const;
const VERSION = '0.1.0';
const CATALOG = 'example-operators';

/** One example operator's bundle, as written and as `opm render` put it into the catalog, and its namespace. */
interface Bundle extends CatalogBundle {
  readonly namespace: string;
}

let dir: string;
let olm: OlmCluster;
let admin: ApiClient;
const bundles = new Map<string, Bundle>();

/** The last lines of each OLM process's log, for a failed wait's message. */
const logsContext = (): string => olm.logsContext();

const conditionTrue = (object: KubeObject | undefined, type: string): boolean =>
  ((object?.status?.conditions ?? []) as Condition[]).some((c) => c.type === type && c.status === 'True');

/** A rule's fields in one order, absent ones left out (the API server returns them in its own order). */
const canonicalRule = (r: Rule): string =>
  JSON.stringify({ apiGroups: r.apiGroups, resources: r.resources, resourceNames: r.resourceNames, nonResourceURLs: r.nonResourceURLs, verbs: r.verbs });
/** The rules of an RBAC object as a sorted list of canonical rules (compared as a set). */
const sortedRules = (rules: readonly Rule[]): string[] => rules.map(canonicalRule).sort();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'olm-install-'));
  const tools = await olmTools();

  // The bundles, as a user writes them, and a file-based catalog of them: each package's bundle with
  // its manifests inline (olm.bundle.object), no bundle image, in a channel `alpha`.
  const bundleDirs: string[] = [];
  for (const operator of OPERATORS) {
    const bundle = join(dir, 'bundles', operator);
    const stderr: string[] = [];
    const code = await runPackageOlm(
      { out: bundle, operator, version: VERSION, provider: 'Example Inc.', maintainer: ['Ops <ops@example.com>'] },
      { cwd: REPO_ROOT, writeStdout: () => {}, writeStderr: (text) => stderr.push(text) },
    );
    if (code !== 0) throw new Error(`package olm --operator ${operator} exited ${code}: ${stderr.join('')}`);
    bundleDirs.push(bundle);
  }
  for (const bundle of await writeFileBasedCatalog(tools, join(dir, 'catalog'), bundleDirs)) {
    bundles.set(bundle.packageName, { ...bundle, namespace: `${bundle.packageName}-system` });
  }
  if (bundles.size !== OPERATORS.length) throw new Error(`the catalog holds packages ${[...bundles.keys()].join(', ')}, not ${OPERATORS.join(', ')}`);

  // OLM with the catalog in its global catalog namespace. Then what a user applies for each operator:
  // its namespace, an OperatorGroup over all namespaces (the bundles' one install mode) and a
  // Subscription with automatic approval.
  olm = await startOlmCluster({ tools, catalog: { name: CATALOG, dir: join(dir, 'catalog'), displayName: 'Example operators' }, binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = olm.admin;
  for (const [operator, { namespace }] of bundles) await olm.subscribe({ packageName: operator, namespace });
}, 45 * 60_000);

afterAll(async () => {
  await olm?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 2 * 60_000);

describe.each(OPERATORS)('OLM installs the bundle of the example operator %s from the catalog', (OPERATOR) => {
  // Read when the tests run, after beforeAll.
  let NAMESPACE: string;
  let CSV_NAME: string;
  let csv: KubeObject;
  let bundle: Bundle;
  beforeAll(() => {
    bundle = bundles.get(OPERATOR)!;
    ({ namespace: NAMESPACE, csvName: CSV_NAME, csv } = bundle);
  });

  test('GIVEN the Subscription WHEN the catalog-operator resolves it THEN an InstallPlan for the CSV is approved automatically and Complete', async () => {
    const plan = await olm.installPlanComplete(NAMESPACE, OPERATOR);
    // The catalog's bundle has no image and carries every manifest of the bundle directory inline.
    expect(bundle.catalogEntry.image).toBe('');
    expect(bundle.catalogEntry.properties.filter((p) => p.type === 'olm.bundle.object')).toHaveLength(bundle.manifestCount);
    expect(plan.spec).toMatchObject({ approval: 'Automatic', approved: true, clusterServiceVersionNames: [CSV_NAME] });
    // No step came from an unpacked bundle image: the bundle's objects were in the catalog.
    expect(plan.status.bundleLookups ?? []).toEqual([]);
    const steps = plan.status.plan as { resource: { kind: string; name: string }; status: string }[];
    // Each step done: `Created` when the plan created it, `Present` once a later sync found it there.
    expect(steps.filter((s) => !['Created', 'Present'].includes(s.status))).toEqual([]);
    expect(steps.map((s) => `${s.resource.kind}/${s.resource.name}`)).toEqual(expect.arrayContaining([
      `ClusterServiceVersion/${CSV_NAME}`,
      ...(csv.spec.customresourcedefinitions.owned as { name: string }[]).map((c) => `CustomResourceDefinition/${c.name}`),
      `ServiceAccount/${OPERATOR}`,
      `Service/${OPERATOR}-metrics-service`,
      `ClusterRole/${OPERATOR}-metrics-reader`,
    ]));
  }, 12 * 60_000);

  test('GIVEN the InstallPlan WHEN the olm-operator installs the CSV THEN it reaches phase Succeeded', async () => {
    const live = await olm.csvSucceeded(NAMESPACE, CSV_NAME);
    expect(live.status).toMatchObject({ phase: 'Succeeded', reason: 'InstallSucceeded' });
  }, 12 * 60_000);

  test('GIVEN the Succeeded CSV THEN OLM created its Deployment, which is Available', async () => {
    const strategy = csv.spec.install.spec.deployments[0] as { name: string; spec: { template: { spec: { serviceAccountName: string; containers: { name: string; image: string; args: string[] }[] } } } };
    const deployment = await eventually(`Deployment ${strategy.name} Available`, async () => {
      const object = await admin.request<KubeObject>('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${strategy.name}`);
      return conditionTrue(object, 'Available') && object;
    }, { timeoutMs: 5 * 60_000, intervalMs: 1000, context: logsContext });
    expect(deployment.metadata.labels).toMatchObject({ 'olm.owner': CSV_NAME, 'olm.owner.kind': 'ClusterServiceVersion', 'olm.owner.namespace': NAMESPACE });
    const podSpec = deployment.spec.template.spec;
    expect(podSpec.serviceAccountName).toBe(strategy.spec.template.spec.serviceAccountName);
    const container = podSpec.containers.find((c: { name: string }) => c.name === 'operator');
    expect(container).toMatchObject({ image: strategy.spec.template.spec.containers[0]!.image, args: strategy.spec.template.spec.containers[0]!.args });
  }, 6 * 60_000);

  test('GIVEN the Succeeded CSV THEN OLM created the ServiceAccount and the RBAC of its permissions and clusterPermissions, bound to that ServiceAccount', async () => {
    const spec = csv.spec.install.spec as { permissions?: { serviceAccountName: string; rules: Rule[] }[]; clusterPermissions?: { serviceAccountName: string; rules: Rule[] }[]; deployments: { spec: { template: { spec: { serviceAccountName: string } } } }[] };
    const install = { permissions: spec.permissions ?? [], clusterPermissions: spec.clusterPermissions ?? [] };
    const serviceAccountName = spec.deployments[0]!.spec.template.spec.serviceAccountName;
    expect([...install.permissions, ...install.clusterPermissions].map((p) => p.serviceAccountName)).toEqual(expect.arrayContaining([serviceAccountName]));
    await admin.request('GET', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${serviceAccountName}`);

    const owned = `olm.owner=${CSV_NAME},olm.owner.namespace=${NAMESPACE}`;
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const list = async (path: string): Promise<KubeObject[]> => (await admin.request<{ items: KubeObject[] }>('GET', path, { query: { labelSelector: owned } })).items;
    const roles = await list(`${rbac}/namespaces/${NAMESPACE}/roles`);
    const roleBindings = await list(`${rbac}/namespaces/${NAMESPACE}/rolebindings`);
    const clusterRoles = await list(`${rbac}/clusterroles`);
    const clusterRoleBindings = await list(`${rbac}/clusterrolebindings`);

    // The rules of each role OLM made for the CSV, as bound to the ServiceAccount. (For the webhook
    // Service OLM also binds the ServiceAccount to the built-in system:auth-delegator ClusterRole.)
    const boundRules = (bindings: KubeObject[], roleObjects: KubeObject[], roleKind: string): string[][] =>
      roleObjects.map((role) => {
        const binding = bindings.find((b) => b.roleRef.kind === roleKind && b.roleRef.name === role.metadata.name);
        const subjects = binding?.subjects as { kind: string; name: string; namespace?: string }[] | undefined;
        expect({ role: role.metadata.name, subjects }).toEqual({ role: role.metadata.name, subjects: [expect.objectContaining({ kind: 'ServiceAccount', name: serviceAccountName, namespace: NAMESPACE })] });
        return sortedRules(role.rules as Rule[]);
      });
    const canonical = (sets: string[][]): string[] => sets.map((rules) => rules.join('\n')).sort();
    expect(canonical(boundRules(roleBindings, roles, 'Role'))).toEqual(canonical(install.permissions.map((p) => sortedRules(p.rules))));
    // The OperatorGroup targets all namespaces, so OLM also grants each `permissions` entry cluster-wide,
    // with read access to namespaces (pkg/controller/operators/olm/operatorgroup.go, ensureSingletonRBAC).
    const namespacesRule: Rule = { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] };
    expect(canonical(boundRules(clusterRoleBindings, clusterRoles, 'ClusterRole'))).toEqual(canonical([
      ...install.clusterPermissions.map((p) => sortedRules(p.rules)),
      ...install.permissions.map((p) => sortedRules([...p.rules, namespacesRule])),
    ]));
  }, 2 * 60_000);

  test('GIVEN the Succeeded CSV THEN OLM installed its webhookdefinitions (if any): the webhook Service, the admission configurations and the CRD\'s conversion, with OLM\'s CA', async () => {
    type WebhookDefinition = { type: string; generateName: string; deploymentName: string; containerPort: number; targetPort: number; webhookPath: string; conversionCRDs?: string[] };
    const definitions = (csv.spec.webhookdefinitions ?? []) as WebhookDefinition[];
    // memcached has the three kinds; the other examples none.
    expect(definitions.map((d) => d.type).sort()).toEqual(OPERATOR === 'memcached-operator' ? ['ConversionWebhook', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] : []);
    for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
      const { items } = await admin.request<{ items: KubeObject[] }>('GET', `/apis/admissionregistration.k8s.io/v1/${kind}`, { query: { labelSelector: `olm.owner=${CSV_NAME}` } });
      const expected = definitions.filter((d) => d.type === (kind.startsWith('validating') ? 'ValidatingAdmissionWebhook' : 'MutatingAdmissionWebhook')).length;
      expect({ kind, count: items.length }).toEqual({ kind, count: expected });
    }
    const expectedService = (d: WebhookDefinition) => ({ namespace: NAMESPACE, name: `${d.deploymentName}-service`, path: d.webhookPath, port: d.containerPort });
    for (const d of definitions) {
      const service = await admin.request<KubeObject>('GET', `/api/v1/namespaces/${NAMESPACE}/services/${d.deploymentName}-service`);
      expect(service.spec.ports).toEqual(expect.arrayContaining([expect.objectContaining({ port: d.containerPort, targetPort: d.targetPort })]));
      if (d.type === 'ConversionWebhook') {
        // Waited for: the catalog-operator may apply the bundle's CRD again after the olm-operator set
        // its conversion (an InstallPlan step finding the CRD already there updates it to the
        // manifest: catalog/step.go, NewCRDV1Step); the olm-operator then finds no caBundle and sets
        // it again (olm/apiservices.go, areWebhooksAvailable).
        for (const name of d.conversionCRDs ?? []) {
          const conversion = await eventually(`CRD ${name} converts through OLM's webhook Service with OLM's CA`, async () => {
            const crd = await admin.request<KubeObject>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
            const webhook = crd.spec.conversion?.webhook;
            return webhook?.clientConfig?.caBundle && webhook.clientConfig.service?.name === expectedService(d).name && crd.spec.conversion;
          }, { timeoutMs: 10 * 60_000, intervalMs: 1000, context: logsContext });
          expect({ name, strategy: conversion.strategy, service: conversion.webhook.clientConfig.service }).toEqual({ name, strategy: 'Webhook', service: expectedService(d) });
          expect(conversion.webhook.clientConfig.caBundle).toEqual(expect.stringMatching(/^\S{100,}$/));
        }
        continue;
      }
      const kind = d.type === 'ValidatingAdmissionWebhook' ? 'validatingwebhookconfigurations' : 'mutatingwebhookconfigurations';
      const { items } = await admin.request<{ items: KubeObject[] }>('GET', `/apis/admissionregistration.k8s.io/v1/${kind}`, {
        query: { labelSelector: `olm.owner=${CSV_NAME},olm.webhook-description-generate-name=${d.generateName}` },
      });
      expect({ kind, count: items.length }).toEqual({ kind, count: 1 });
      const webhooks = items[0]!.webhooks as { name: string; clientConfig: { service: unknown; caBundle: string } }[];
      expect(webhooks.map((w) => ({ name: w.name, service: w.clientConfig.service }))).toEqual([{ name: d.generateName, service: expectedService(d) }]);
      expect(webhooks[0]!.clientConfig.caBundle).toEqual(expect.stringMatching(/^\S{100,}$/));
    }
  }, 12 * 60_000);

  test('GIVEN the Succeeded CSV THEN its owned CRD is Established and the bundle\'s other manifests exist', async () => {
    const owned = (csv.spec.customresourcedefinitions.owned as { name: string }[]).map((c) => c.name);
    expect(owned.length).toBeGreaterThan(0);
    for (const name of new Set(owned)) {
      const crd = await admin.request<KubeObject>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      expect({ name, established: conditionTrue(crd, 'Established') }).toEqual({ name, established: true });
    }
    await admin.request('GET', `/api/v1/namespaces/${NAMESPACE}/services/${OPERATOR}-metrics-service`);
    await admin.request('GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${OPERATOR}-metrics-reader`);
  }, 2 * 60_000);
});
