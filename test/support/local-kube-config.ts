/**
 * A kubeconfig for a test's own local HTTP server (a fake API server): one cluster at `server`, an
 * anonymous user, one context.
 */
import { KubeConfig } from '@kubernetes/client-node';

export function localKubeConfig(server: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'local', server, skipTLSVerify: true }],
    users: [{ name: 'local' }],
    contexts: [{ name: 'local', cluster: 'local', user: 'local' }],
    currentContext: 'local',
  });
  return kubeConfig;
}
