/**
 * The secure `/metrics` server against a real API server (the shared control plane, RBAC on): the
 * server reviews each scrape with a KubeClient acting as an operator ServiceAccount that has only the
 * synthesized `<operator>-metrics-auth` ClusterRole; callers hold ServiceAccount tokens from the
 * TokenRequest API.
 * - no token, or a token the API server does not know → 401;
 * - a token of a ServiceAccount not bound to the synthesized `<operator>-metrics-reader` → 403;
 * - a token of one bound to it → 200 with the Prometheus text; repeated scrapes are answered from the
 *   review caches;
 * - the synthesized metrics-auth ClusterRole lets the operator's ServiceAccount create both reviews
 *   (the RBAC self-check's requirements, checked as that ServiceAccount).
 */
import { App } from 'cdk8s';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { MetricsAuth } from '../../lib/runtime/metrics/metrics-auth.js';
import { OperatorMetrics } from '../../lib/runtime/metrics/metrics.js';
import { type ProbesServer, startProbesServer } from '../../lib/runtime/probes/probes-server.js';
import { METRICS_AUTH_ACCESS, checkAccess, describeMissing, requiredAccess } from '../../lib/runtime/startup/rbac-self-check.js';
import { createCertificateAuthority, issueServingCertificate } from '../../lib/runtime/webhook/x509.js';
import { MemcachedOperator } from '../../operators/index.js';
import { createTestNamespace, serviceAccountUser, testKubeConfig } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { scrapeMetrics } from '../support/metrics-scrape.js';
import { requestServiceAccountToken } from '../support/run-as-pod.js';

const kubeConfig = testKubeConfig();
const admin = new ApiClient({ kubeConfig });
const FIELD_MANAGER = 'secure-metrics-test';
const clients: ApiClient[] = [];
let server: ProbesServer | undefined;

afterAll(async () => {
  await server?.close();
  for (const client of clients) client.close();
  admin.close();
});

/** The synthesized object of `kind` named `name`. */
function synthesized(objects: KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`the memcached operator synthesizes no ${kind} ${name}`);
  return found;
}

async function applyClusterRole(role: KubeObject): Promise<void> {
  await admin.request('PATCH', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role.metadata!.name}`, {
    query: { fieldManager: FIELD_MANAGER, force: true },
    body: role,
    contentType: 'application/apply-patch+yaml',
  });
}

async function bindClusterRole(bindingName: string, role: string, namespace: string, serviceAccount: string): Promise<void> {
  await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: bindingName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
    },
  });
}

/** Whether the API server's authorizer already allows `user` the attributes (RBAC reads bindings from an informer). */
async function allowed(user: { user: string; groups: string[] }, attributes: Record<string, unknown>): Promise<boolean> {
  const review = await admin.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: user.user, groups: user.groups, ...attributes } },
  });
  return review.status?.allowed === true;
}

test('GIVEN the secure metrics server reviewing as an operator ServiceAccount with the synthesized metrics-auth ClusterRole WHEN scraped without a token, with an unknown one, an unbound one and one bound to the synthesized metrics-reader THEN 401, 401, 403 and 200 with metrics', async () => {
  const objects = new MemcachedOperator(new App()).toJson() as KubeObject[];
  const authRole = synthesized(objects, 'ClusterRole', 'memcached-operator-metrics-auth');
  const readerRole = synthesized(objects, 'ClusterRole', 'memcached-operator-metrics-reader');
  expect(readerRole).toMatchObject({ rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] });
  await applyClusterRole(authRole);
  await applyClusterRole(readerRole);

  const ns = await createTestNamespace('secure-metrics', admin);
  for (const name of ['operator', 'prometheus', 'stranger']) {
    await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  }
  await bindClusterRole(`${ns}-operator-metrics-auth`, authRole.metadata!.name!, ns, 'operator');
  await bindClusterRole(`${ns}-prometheus-metrics-reader`, readerRole.metadata!.name!, ns, 'prometheus');

  // The bindings in effect before the first scrape (a denial would be cached for 30 s).
  const operatorUser = serviceAccountUser(ns, 'operator');
  await eventually('the operator ServiceAccount may create the reviews', async () =>
    (await allowed(operatorUser, { resourceAttributes: { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' } })) &&
    allowed(operatorUser, { resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' } }),
  );
  await eventually('the prometheus ServiceAccount may get /metrics', () => allowed(serviceAccountUser(ns, 'prometheus'), { nonResourceAttributes: { verb: 'get', path: '/metrics' } }));

  // The RBAC self-check's requirement for the reviews, asked as the operator ServiceAccount: nothing missing.
  const asOperator = new ApiClient({ kubeConfig, impersonate: operatorUser });
  clients.push(asOperator);
  const required = requiredAccess([], { metricsAuthorization: true });
  expect(required).toEqual(METRICS_AUTH_ACCESS);
  expect((await checkAccess(asOperator, required)).map(describeMissing)).toEqual([]);

  // The server: HTTPS with a certificate for 127.0.0.1 from a CA the test trusts; reviews as the operator.
  const ca = createCertificateAuthority('secure-metrics-test-ca', { notAfter: new Date(Date.now() + 86_400_000) });
  const certificate = issueServingCertificate(ca, ['127.0.0.1'], { notAfter: new Date(Date.now() + 86_400_000) });
  const auth = new MetricsAuth({ client: asOperator });
  const metrics = new OperatorMetrics();
  metrics.controller('memcached-operator').reconciled('success', 0.01);
  server = await startProbesServer({
    metricsBindAddress: '127.0.0.1:0',
    healthProbeBindAddress: '0',
    registry: metrics.registry,
    metricsSecureServing: { certificate, authorize: (request) => auth.check(request) },
  });
  const port = server.metricsPort!;
  expect(server.metricsSecure).toBe(true);

  const [prometheusToken, strangerToken] = [await requestServiceAccountToken(kubeConfig, ns, 'prometheus'), await requestServiceAccountToken(kubeConfig, ns, 'stranger')];

  const anonymous = await scrapeMetrics(port, { ca: ca.certPem });
  expect(anonymous).toEqual({ status: 401, body: 'Unauthorized\n' });
  const unknown = await scrapeMetrics(port, { ca: ca.certPem, token: 'not-a-token-the-api-server-issued' });
  expect(unknown).toEqual({ status: 401, body: 'Unauthorized\n' });

  const stranger = await scrapeMetrics(port, { ca: ca.certPem, token: strangerToken });
  expect(stranger).toEqual({ status: 403, body: `Authorization denied for user system:serviceaccount:${ns}:stranger\n` });

  const prometheus = await scrapeMetrics(port, { ca: ca.certPem, token: prometheusToken });
  expect(prometheus.status).toBe(200);
  expect(prometheus.body).toContain('controller_runtime_reconcile_total{controller="memcached-operator",result="success"} 1');

  // Cached: scraping again sends no review (one TokenReview per token, one SubjectAccessReview per user).
  const before = auth.reviewCounts();
  expect(before).toEqual({ tokenReviews: 3, subjectAccessReviews: 2 });
  expect((await scrapeMetrics(port, { ca: ca.certPem, token: prometheusToken })).status).toBe(200);
  expect((await scrapeMetrics(port, { ca: ca.certPem, token: strangerToken })).status).toBe(403);
  expect(auth.reviewCounts()).toEqual(before);

  // Other paths and methods are not served, token or not.
  expect((await scrapeMetrics(port, { ca: ca.certPem, token: prometheusToken, path: '/healthz' })).status).toBe(404);
}, 120_000);
