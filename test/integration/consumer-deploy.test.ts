/**
 * `cdk8s-operator deploy` and `undeploy --include-crds` from a user's own project (the SDK installed from
 * its tarball; the CommonJS `cdk8s init`-shaped one and the ESM one), against a control plane of this
 * test's own (the consumer projects' operators, CRDs and namespaces are also installed by other tests,
 * e.g. in-cluster-run.test.ts; on the shared plane `undeploy --include-crds` would pull a CRD from under
 * them, and a namespace they made first is rightly left by undeploy, as seen in CI): the project's operator module is synthesized in-process (no `cdk8s synth`, no dist/), its CRD
 * becomes Established and its Deployment Available (kwok), and undeploy leaves none of it.
 */
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { consumerProject, runIn } from '../support/consumer-project.js';

const CONSUMERS = [
  { name: 'cdk8s-init-app', module: 'static-site-operator.ts', operator: 'static-site-operator', crd: 'staticsites.sites.example.com' },
  { name: 'esm-lowest-peers', module: 'greeting-operator.ts', operator: 'greeting-operator', crd: 'greetings.greetings.example.com' },
];

let admin: ApiClient;
let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'consumer-deploy-test' });
}, 10 * 60_000);
afterAll(async () => {
  admin?.close();
  await plane?.stop();
});

const get = (path: string): Promise<KubeObject | undefined> => admin.request('GET', path).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
const conditionOf = (object: KubeObject | undefined, type: string) => ((object?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type)?.status;

describe.each(CONSUMERS)('consumer project $name', (consumer) => {
  test('GIVEN its operator module WHEN `cdk8s-operator deploy` then `undeploy --include-crds` THEN the CRD is Established and the Deployment Available, then nothing is left', async () => {
    const dir = await consumerProject(consumer.name);
    const kubeconfig = plane.kubeconfigPath;
    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${consumer.crd}`;
    const deploymentPath = `/apis/apps/v1/namespaces/${consumer.operator}-system/deployments/${consumer.operator}`;

    const deployed = await runIn(dir, 'npx', ['cdk8s-operator', 'deploy', '--module', consumer.module, '--kubeconfig', kubeconfig, '--timeout', '240s']);
    if (deployed.code !== 0) throw new Error(`deploy exited ${deployed.code}:\n${deployed.stderr}`);
    expect(conditionOf(await get(crdPath), 'Established')).toBe('True');
    expect(conditionOf(await get(deploymentPath), 'Available')).toBe('True');

    const removed = await runIn(dir, 'npx', ['cdk8s-operator', 'undeploy', '--module', consumer.module, '--kubeconfig', kubeconfig, '--include-crds', '--timeout', '240s']);
    if (removed.code !== 0) throw new Error(`undeploy exited ${removed.code}:\n${removed.stderr}`);
    expect({ crd: await get(crdPath), deployment: await get(deploymentPath), namespace: await get(`/api/v1/namespaces/${consumer.operator}-system`) }).toEqual({ crd: undefined, deployment: undefined, namespace: undefined });
  }, 20 * 60_000);
});
