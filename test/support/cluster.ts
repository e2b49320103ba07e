/**
 * What integration tests use to reach the run's shared control plane (started by global-setup.ts).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient } from '../../lib/runtime/client/api-client.js';

/** The environment variable through which global-setup.ts hands the kubeconfig path to test workers. */
export const TEST_KUBECONFIG_ENV = 'CDK8S_OPERATOR_TEST_KUBECONFIG';

/** The shared control plane's kubeconfig. Throws when jest ran without the global setup. */
export function testKubeConfig(): KubeConfig {
  const path = process.env[TEST_KUBECONFIG_ENV];
  if (!path) throw new Error(`${TEST_KUBECONFIG_ENV} is not set: run integration tests through jest.config.js (npm test)`);
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

let counter = 0;

/**
 * Creates a namespace no other test uses: `<prefix>-<pid>-<n>`. Namespaces are left behind for the
 * control plane's teardown; deleting them would only slow the run.
 */
export async function createTestNamespace(prefix: string, client = new ApiClient({ kubeConfig: testKubeConfig() })): Promise<string> {
  const name = `${prefix}-${process.pid}-${++counter}`.slice(0, 63);
  await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

/**
 * The user and groups the API server gives ServiceAccount `namespace/name`, for ApiClient's
 * `impersonate` option: requests then pass only that ServiceAccount's RBAC
 * (kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation).
 */
export function serviceAccountUser(namespace: string, name: string): { user: string; groups: string[] } {
  return { user: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] };
}
