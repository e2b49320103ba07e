/**
 * The synthesized operator Deployment runs the operator: its container's command, args and env, run as a
 * process with the synthesized ServiceAccount's token and the cluster CA where a pod sees them
 * (in-cluster config, no kubeconfig; test/support/run-as-pod.ts), reconciles a sample under exactly the
 * synthesized RBAC with zero forbidden answers, and stops with exit code 0 on SIGTERM.
 *
 * Two images' worth: this repository's example (memcached, `node bin/cdk8s-operator.js` from the
 * sources) and a user's operator in a `cdk8s init typescript-app` project with the SDK installed from its
 * tarball (test/consumers/cdk8s-init-app: the default command, the SDK's compiled CLI in node_modules).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { type KubeObject, isApiError } from '../../lib/runtime/client/kube-client.js';
import { installCRDs } from '../../lib/testing/install-crds.js';
import { MemcachedOperator } from '../../operators/index.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { consumerProject, runIn } from '../support/consumer-project.js';
import { eventually } from '../support/eventually.js';
import { scrapeMetrics } from '../support/metrics-scrape.js';
import { type DeploymentLike, type PodProcess, requestServiceAccountToken, runContainerAsPod } from '../support/run-as-pod.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const kubeConfig = testKubeConfig();
const admin = new ApiClient({ kubeConfig });
const FIELD_MANAGER = 'in-cluster-run-test';

/** REST collection path of the kinds the operator synthesizes. */
const COLLECTIONS: Record<string, (ns?: string) => string> = {
  Namespace: () => '/api/v1/namespaces',
  ServiceAccount: (ns) => `/api/v1/namespaces/${ns}/serviceaccounts`,
  ClusterRole: () => '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: () => '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`,
  RoleBinding: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
  Deployment: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
  Service: (ns) => `/api/v1/namespaces/${ns}/services`,
};

async function serverSideApply(object: KubeObject): Promise<void> {
  const collection = COLLECTIONS[object.kind!];
  if (!collection) throw new Error(`no path for ${object.kind}`);
  await admin.request('PATCH', `${collection(object.metadata?.namespace)}/${object.metadata!.name}`, {
    query: { fieldManager: FIELD_MANAGER, force: true },
    body: object,
    contentType: 'application/apply-patch+yaml',
  });
}

type Condition = { type: string; status: string };

/** One operator as synthesized, and what its pod should do with a sample. */
interface SynthesizedOperator {
  /** Everything the operator synthesizes (Namespace, CRD, RBAC, Deployment). */
  readonly objects: KubeObject[];
  /** The host directory standing for the container's workingDir. */
  readonly workingDir: string;
  /** The container command expected in the Deployment. */
  readonly command: string[];
  /** A sample CR (its namespace is replaced by the test's own) and its collection's path in a namespace. */
  readonly sample: KubeObject;
  readonly collection: (namespace: string) => string;
  /** Kinds of the children the sample gets, sorted. */
  readonly childKinds: string[];
  /** Kinds synthesized beyond the Namespace, CRD, RBAC and Deployment (webhooks). @default none */
  readonly extraKinds?: string[];
}

/**
 * Webhook configurations are left out: on the local control plane the API server cannot reach a Service
 * (test/integration/webhooks.test.ts covers admission). The operator still creates its webhook Secret
 * and patches the CRD's caBundle under exactly the synthesized RBAC.
 */
const UNREACHABLE_HERE = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'];

let dir: string;
let pod: PodProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'in-cluster-run-'));
});

afterEach(async () => {
  await pod?.stop(5_000);
  pod = undefined;
});

afterAll(async () => {
  admin.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function runAsPodUntilReady(operator: SynthesizedOperator): Promise<void> {
  expect(operator.objects.map((o) => o.kind).sort()).toEqual(
    [
      'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'Namespace', 'Role', 'RoleBinding', 'ServiceAccount',
      // secure metrics: the metrics Service, the metrics-auth ClusterRole + binding, the metrics-reader ClusterRole
      'Service', 'ClusterRole', 'ClusterRoleBinding', 'ClusterRole',
      ...(operator.extraKinds ?? []),
    ].sort(),
  );
  const objects = operator.objects.filter((o) => !UNREACHABLE_HERE.includes(o.kind!));

  // The CRD through installCRDs (waits until Established and served); everything else applied as is.
  const crd = objects.find((o) => o.kind === 'CustomResourceDefinition')!;
  const crdFile = join(dir, `${crd.metadata!.name}.json`);
  await writeFile(crdFile, JSON.stringify(crd));
  await installCRDs(kubeConfig, [crdFile]);
  for (const object of objects.filter((o) => o.kind === 'Namespace')) await serverSideApply(object);
  for (const object of objects.filter((o) => !['Namespace', 'CustomResourceDefinition'].includes(o.kind!))) await serverSideApply(object);

  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as DeploymentLike & KubeObject;
  const operatorName = deployment.metadata.name;
  const saNamespace = deployment.metadata.namespace!;
  const saName = deployment.spec.template.spec.serviceAccountName!;
  // The token the process gets is the ServiceAccount's (the API server says who it is).
  const asServiceAccount = new KubeConfig();
  asServiceAccount.loadFromOptions({
    clusters: [kubeConfig.getCurrentCluster()!],
    users: [{ name: saName, token: await requestServiceAccountToken(kubeConfig, saNamespace, saName) }],
    contexts: [{ name: 'sa', cluster: kubeConfig.getCurrentCluster()!.name, user: saName }],
    currentContext: 'sa',
  });
  const review = await ApiClient.sendOnce({ kubeConfig: asServiceAccount }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  expect(JSON.parse(review.body).status.userInfo.username).toBe(`system:serviceaccount:${saNamespace}:${saName}`);

  // The container's command in its workingDir, args and env exactly as synthesized, except the bind
  // addresses (free loopback ports; see runContainerAsPod).
  const container = deployment.spec.template.spec.containers[0]!;
  expect(container.command).toEqual(operator.command);
  pod = await runContainerAsPod({ deployment, workingDir: operator.workingDir, kubeConfig });
  const running = pod;
  const output = () => running.output();
  let exited = false;
  void running.exited.then(() => (exited = true));
  expect(running.args.slice(0, 2)).toEqual(['run', '--module']);
  expect(running.args.slice(3, 5)).toEqual(['--operators', operatorName]);

  // The sample, in a namespace of this test's own.
  const ns = await createTestNamespace('in-cluster-run', admin);
  const name = operator.sample.metadata!.name!;
  const crPath = `${operator.collection(ns)}/${name}`;
  await admin.request('PATCH', crPath, {
    query: { fieldManager: FIELD_MANAGER },
    body: { ...operator.sample, metadata: { ...operator.sample.metadata, namespace: ns } },
    contentType: 'application/apply-patch+yaml',
  });

  const deadline = Date.now() + 120_000;
  let cr: KubeObject | undefined;
  for (;;) {
    if (exited) throw new Error(`the operator process exited early:\n${output()}`);
    cr = await admin.request('GET', crPath).catch((err) => (isApiError(err, 404) ? undefined : Promise.reject(err)));
    const status = cr?.status as { conditions?: Condition[] } | undefined;
    if (status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
    if (Date.now() > deadline) throw new Error(`${operator.sample.kind} ${ns}/${name} not Ready: ${JSON.stringify(cr?.status)}\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }

  // Its children exist, created by the operator's field manager (a POST: an Update entry until a changed render is applied).
  const children = (cr!.status as { children: { apiVersion: string; kind: string; name: string }[] }).children;
  expect(children.map((c) => c.kind).sort()).toEqual(operator.childKinds);
  const first = children[0]!;
  const childPath = `${first.apiVersion.includes('/') ? `/apis/${first.apiVersion}` : `/api/${first.apiVersion}`}/namespaces/${ns}/${first.kind.toLowerCase()}s/${first.name}`;
  const child = await admin.request('GET', childPath);
  expect((child.metadata as { managedFields: { manager: string; operation: string }[] }).managedFields).toContainEqual(
    expect.objectContaining({ manager: operatorName, operation: 'Update' }),
  );
  // This process did it (its reconcile log line for the CR), not some other operator in the cluster.
  const reconciles = output().split('\n').filter((line) => line.includes(`"namespace":"${ns}"`) && line.includes(`"name":"${name}"`));
  expect(reconciles.length).toBeGreaterThan(0);

  // /metrics, secure as synthesized: the process reviews scrapes as its ServiceAccount (the synthesized
  // metrics-auth ClusterRole); a scraper bound to the synthesized metrics-reader ClusterRole gets metrics.
  expect((await scrapeMetrics(running.metricsPort!)).status).toBe(401);
  const scraper = `${operatorName}-test-prometheus`;
  await serverSideApply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: scraper, namespace: saNamespace } });
  await serverSideApply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: scraper },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${operatorName}-metrics-reader` },
    subjects: [{ kind: 'ServiceAccount', name: scraper, namespace: saNamespace }],
  } as KubeObject);
  const scraperToken = await requestServiceAccountToken(kubeConfig, saNamespace, scraper);
  // The binding in effect before the first allowed scrape (a denial is cached 30 s).
  await eventually('the scraper may get /metrics', async () => {
    const sar = await admin.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: `system:serviceaccount:${saNamespace}:${scraper}`, groups: ['system:serviceaccounts'], nonResourceAttributes: { verb: 'get', path: '/metrics' } } },
    });
    return sar.status?.allowed === true;
  });
  const scraped = await scrapeMetrics(running.metricsPort!, { token: scraperToken });
  expect(scraped.status).toBe(200);

  // Zero forbidden answers: none counted by the client's metrics, none logged.
  const metrics = scraped.body;
  const requests = metrics.split('\n').filter((line) => line.startsWith('rest_client_requests_total{'));
  expect(requests.some((line) => line.includes('code="200"'))).toBe(true);
  expect(requests.filter((line) => line.includes('code="403"'))).toEqual([]);
  expect(output()).not.toMatch(/forbidden/i);
  expect(output()).not.toMatch(/"(code|statusCode|status)":\s*403\b/);

  expect(await running.stop()).toBe(0);
  pod = undefined;
}

/** The YAML documents of `file` as objects. */
async function readObjects(file: string): Promise<KubeObject[]> {
  return parseAllDocuments(await readFile(file, 'utf8')).map((doc) => doc.toJS() as KubeObject);
}

test('GIVEN the synthesized memcached example applied WHEN its Deployment container runs as its pod would THEN the sample becomes Ready with zero 403s and SIGTERM exits 0', async () => {
  const [sample] = await readObjects(join(repoRoot, 'operators/memcached/sample.yaml'));
  await runAsPodUntilReady({
    objects: new MemcachedOperator(new App()).toJson() as KubeObject[],
    workingDir: repoRoot, // /app in the repository's image
    command: ['node', 'bin/cdk8s-operator.js'],
    sample: sample!,
    collection: (ns) => `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`,
    childKinds: ['Deployment', 'Service'],
    // the webhook Service, Role + RoleBinding (its Secret), ClusterRole + ClusterRoleBinding (caBundles, reads)
    extraKinds: ['Service', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
  });
}, 180_000);

test('GIVEN a user\'s operator synthesized by `cdk8s synth` in a cdk8s init project WHEN its Deployment container runs as its pod would THEN the SDK installed from the tarball reconciles its sample with zero 403s', async () => {
  const project = await consumerProject('cdk8s-init-app');
  const synth = await runIn(project, 'npx', ['cdk8s', 'synth']);
  expect(synth.code).toBe(0);
  const [sample] = await readObjects(join(project, 'site.yaml'));
  await runAsPodUntilReady({
    objects: await readObjects(join(project, 'dist', 'static-site-operator.k8s.yaml')),
    workingDir: project, // /app in the user's image, holding the project and its node_modules
    command: ['node', 'node_modules/cdk8s-operator-sdk/bin/cdk8s-operator.js'],
    sample: sample!,
    collection: (ns) => `/apis/sites.example.com/v1/namespaces/${ns}/staticsites`,
    childKinds: ['Deployment', 'Service'],
  });
}, 20 * 60_000);
