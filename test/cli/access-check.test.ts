// The permission check of `deploy`/`undeploy` (lib/cli/access-check.ts) on a stand-in client that answers
// reviews from a fixed list (pure logic: what is asked, what is reported); against a real API server and
// RBAC it is in test/integration/deploy-command.test.ts. And the dry-run client letting reviews through.
import { type AccessRequest, accessLabel, missingAccess } from '../../lib/cli/access-check.js';
import { DryRunOnlyClient, DryRunOnlyError, SELF_SUBJECT_ACCESS_REVIEWS } from '../../lib/cli/dry-run-client.js';
import type { KubeClient, RequestOptions } from '../../lib/runtime/client/kube-client.js';

/** Answers each review `allowed` when its label is in `allowed`; records what was asked. */
function reviewer(allowed: readonly string[]): KubeClient & { asked: string[]; sent: string[] } {
  const asked: string[] = [];
  const sent: string[] = [];
  return {
    asked,
    sent,
    async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
      sent.push(`${method} ${path}`);
      const attributes = (options.body as { spec: { resourceAttributes: AccessRequest } }).spec.resourceAttributes;
      const label = accessLabel(attributes);
      asked.push(label);
      return { status: { allowed: allowed.includes(label) } } as T;
    },
    watch: () => {
      throw new Error('no watch');
    },
    suspectConnections: () => 0,
  };
}

test('GIVEN requests WHEN labelled THEN verb, resource.group, name, and namespace or cluster-wide', () => {
  expect(accessLabel({ verb: 'create', group: 'apps', resource: 'deployments', namespace: 'ns' })).toBe('create deployments.apps in namespace ns');
  expect(accessLabel({ verb: 'patch', group: '', resource: 'namespaces', name: 'ns' })).toBe('patch namespaces ns (cluster-wide)');
});

test('GIVEN duplicate requests and some allowed WHEN checked THEN each asked once, the denied ones returned in order', async () => {
  const client = reviewer(['create namespaces (cluster-wide)']);
  const crd: AccessRequest = { verb: 'create', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' };
  const ns: AccessRequest = { verb: 'create', group: '', resource: 'namespaces' };
  const pods: AccessRequest = { verb: 'list', group: '', resource: 'pods', namespace: 'x' };
  const missing = await missingAccess(client, [crd, ns, pods, { ...crd }]);
  expect(missing.map(accessLabel)).toEqual(['create customresourcedefinitions.apiextensions.k8s.io (cluster-wide)', 'list pods in namespace x']);
  expect(client.asked.sort()).toEqual(['create customresourcedefinitions.apiextensions.k8s.io (cluster-wide)', 'create namespaces (cluster-wide)', 'list pods in namespace x']);
  expect(new Set(client.sent)).toEqual(new Set([`POST ${SELF_SUBJECT_ACCESS_REVIEWS}`]));
});

test('GIVEN the dry-run client with allowReviews WHEN a review and a write are sent THEN the review goes through, the write is refused naming the command', async () => {
  const inner = reviewer([]);
  const client = new DryRunOnlyClient(inner, { command: 'deploy --dry-run', allowReviews: true });
  await client.request('POST', SELF_SUBJECT_ACCESS_REVIEWS, { body: { spec: { resourceAttributes: { verb: 'get', group: '', resource: 'pods' } } } });
  await expect(client.request('PATCH', '/api/v1/namespaces/x')).rejects.toThrow(new DryRunOnlyError('PATCH', '/api/v1/namespaces/x', 'deploy --dry-run'));
  await expect(client.request('PATCH', '/api/v1/namespaces/x')).rejects.toThrow('only reads and dryRun=All writes may leave cdk8s-operator deploy --dry-run');
  // Without it (diff), a review is a write like any other.
  await expect(new DryRunOnlyClient(inner).request('POST', SELF_SUBJECT_ACCESS_REVIEWS, { body: {} })).rejects.toThrow('cdk8s-operator diff');
  expect(inner.sent).toEqual([`POST ${SELF_SUBJECT_ACCESS_REVIEWS}`]);
});
