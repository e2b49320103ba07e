// `deploy`'s order and plan without a cluster (lib/cli/deploy-plan.ts), the in-process synthesis it
// applies (lib/cli/operator-manifests.ts: the same objects synth/main.ts writes), and its failures before
// any request. What it does against a cluster is in test/integration/deploy-command.test.ts.
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { runDeploy } from '../../lib/cli/deploy-command.js';
import { type Manifest, deployStage, formatPlan, objectLabel, orderForDeploy, orderForUndeploy } from '../../lib/cli/deploy-plan.js';
import { loadOperators } from '../../lib/cli/load-operators.js';
import { synthesizeOperators } from '../../lib/cli/operator-manifests.js';
import type { RequestRecord } from '../../lib/runtime/client/api-client.js';
import { synthesize } from '../../synth/main.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const m = (apiVersion: string, kind: string, name: string, namespace?: string): Manifest => ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

test('GIVEN each kind an operator synthesizes WHEN staged THEN CRDs, namespaces, RBAC, certificates, services, the Deployment, webhook configurations', () => {
  const stages = [
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'crds'],
    ['v1', 'Namespace', 'namespaces'],
    ['v1', 'ServiceAccount', 'rbac'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'rbac'],
    ['cert-manager.io/v1', 'Issuer', 'certificates'],
    ['cert-manager.io/v1', 'Certificate', 'certificates'],
    ['v1', 'Secret', 'certificates'],
    ['v1', 'Service', 'services'],
    ['networking.k8s.io/v1', 'NetworkPolicy', 'services'],
    ['v1', 'ConfigMap', 'services'],
    ['apps/v1', 'Deployment', 'workloads'],
    ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'webhooks'],
    ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'webhooks'],
    // A kind of the same name in another group is not the built-in one.
    ['example.com/v1', 'Deployment', 'services'],
  ];
  expect(stages.map(([apiVersion, kind]) => [apiVersion, kind, deployStage({ apiVersion, kind })])).toEqual(stages);
});

test('GIVEN objects in any order WHEN ordered for deploy THEN by stage, RBAC roles before bindings, synthesized order kept within a kind', () => {
  const objects = [
    m('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'hook'),
    m('apps/v1', 'Deployment', 'op', 'ns'),
    m('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rb', 'ns'),
    m('rbac.authorization.k8s.io/v1', 'ClusterRole', 'b'),
    m('rbac.authorization.k8s.io/v1', 'ClusterRole', 'a'),
    m('v1', 'ServiceAccount', 'op', 'ns'),
    m('cert-manager.io/v1', 'Certificate', 'cert', 'ns'),
    m('cert-manager.io/v1', 'Issuer', 'issuer', 'ns'),
    m('v1', 'Service', 'svc', 'ns'),
    m('v1', 'Namespace', 'ns'),
    m('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'things.example.com'),
  ];
  const ordered = orderForDeploy(objects);
  expect(ordered.map((s) => [s.stage, s.objects.map(objectLabel)])).toEqual([
    ['crds', ['CustomResourceDefinition things.example.com']],
    ['namespaces', ['Namespace ns']],
    ['rbac', ['ServiceAccount ns/op', 'ClusterRole b', 'ClusterRole a', 'RoleBinding ns/rb']],
    ['certificates', ['Certificate ns/cert', 'Issuer ns/issuer']],
    ['services', ['Service ns/svc']],
    ['workloads', ['Deployment ns/op']],
    ['webhooks', ['ValidatingWebhookConfiguration hook']],
  ]);
  expect(orderForUndeploy(objects).map(objectLabel)).toEqual([
    'ValidatingWebhookConfiguration hook',
    'Deployment ns/op',
    'Service ns/svc',
    'Issuer ns/issuer',
    'Certificate ns/cert',
    'RoleBinding ns/rb',
    'ClusterRole a',
    'ClusterRole b',
    'ServiceAccount ns/op',
    'Namespace ns',
    'CustomResourceDefinition things.example.com',
  ]);
});

test('GIVEN a plan WHEN formatted THEN numbered stages, one action per object, prunes and notes', () => {
  const text = formatPlan([
    {
      operatorName: 'web-operator',
      stages: [
        { stage: 'crds', objects: [{ label: 'CustomResourceDefinition webs.example.com', action: 'unchanged' }] },
        { stage: 'workloads', objects: [{ label: 'Deployment web-system/web-operator', action: 'change' }] },
        { stage: 'webhooks', objects: [{ label: 'ValidatingWebhookConfiguration web-operator-webhook', action: 'create' }] },
      ],
      prune: ['Role web-system/old'],
      keptCrds: ['CustomResourceDefinition olds.example.com'],
      notes: ['webhook certificates are self-managed'],
    },
  ]);
  expect(text).toBe(
    [
      'web-operator:',
      '  1. CustomResourceDefinitions, then wait until Established',
      '       unchanged  CustomResourceDefinition webs.example.com',
      "  2. the operator's Deployment, then wait for its rollout, its Pods Ready and /readyz",
      '       change     Deployment web-system/web-operator',
      '  3. webhook configurations (once the Deployment that serves them is ready)',
      '       create     ValidatingWebhookConfiguration web-operator-webhook',
      '  prune: delete Role web-system/old (no longer synthesized)',
      '  note: webhook certificates are self-managed',
      '  note: CustomResourceDefinition olds.example.com is no longer synthesized; kept (deleting it deletes its custom resources): undeploy --include-crds, or delete it yourself',
      '',
    ].join('\n'),
  );
});

test('GIVEN the example operators WHEN synthesized in-process THEN the same objects synth/main.ts writes, the memcached webhook configurations deployed last', async () => {
  const set = await loadOperators({ cwd: REPO });
  const synthesized = synthesizeOperators(set, set.pick(undefined));
  const files = synthesize();
  expect(synthesized.map((s) => `${s.operator.operatorName}.k8s.yaml`)).toEqual([...files.keys()]);
  for (const { operator, objects } of synthesized) {
    const written = parseAllDocuments(files.get(`${operator.operatorName}.k8s.yaml`)!).map((d) => d.toJS());
    expect(objects).toEqual(written);
  }
  const memcached = synthesized.find((s) => s.operator.operatorName === 'memcached-operator')!;
  const stages = orderForDeploy(memcached.objects).map((s) => s.stage);
  expect(stages).toEqual(['crds', 'namespaces', 'rbac', 'services', 'workloads', 'webhooks']);
}, 120_000);

test('GIVEN cert-manager webhook certificates WHEN ordered THEN the Issuer and Certificate come after RBAC and before the Deployment', async () => {
  const set = await loadOperators({ modulePath: 'test/integration/fixtures/cert-manager-operator.ts', cwd: REPO });
  const [{ objects }] = synthesizeOperators(set, set.pick(undefined));
  const ordered = orderForDeploy(objects);
  expect(ordered.map((s) => s.stage)).toEqual(['crds', 'namespaces', 'rbac', 'certificates', 'services', 'workloads', 'webhooks']);
  expect(ordered.find((s) => s.stage === 'certificates')!.objects.map((o) => o.kind).sort()).toEqual(['Certificate', 'Issuer']);
}, 60_000);

test('GIVEN an unknown --context WHEN deploy THEN exit 1 naming the known contexts, before any request', async () => {
  const requests: RequestRecord[] = [];
  let stderr = '';
  const kubeconfig = `${REPO}test/cli/fixtures/deploy-kubeconfig.yaml`;
  const code = await runDeploy(
    { kubeconfig, context: 'nope', operators: 'app-operator' },
    { cwd: REPO, writeStdout: () => undefined, writeStderr: (t) => (stderr += t), env: {}, onRequest: (r) => requests.push(r) },
  );
  expect(code).toBe(1);
  expect(stderr).toBe('error: --context nope: no such context in the kubeconfig; known: only\n');
  expect(requests).toEqual([]);
});

test('GIVEN an unknown operator name WHEN deploy THEN exit 1 naming the known ones, before any request', async () => {
  let stderr = '';
  const requests: RequestRecord[] = [];
  const code = await runDeploy(
    { kubeconfig: `${REPO}test/cli/fixtures/deploy-kubeconfig.yaml`, operators: 'nope' },
    { cwd: REPO, writeStdout: () => undefined, writeStderr: (t) => (stderr += t), env: {}, onRequest: (r) => requests.push(r) },
  );
  expect(code).toBe(1);
  expect(stderr).toBe('error: unknown operator(s) nope; known: memcached-operator, app-operator, database-operator\n');
  expect(requests).toEqual([]);
});
