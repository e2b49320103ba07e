/**
 * Kubeconfig files a test writes from a control plane's own kubeconfig (`plane.kubeconfigPath`, or the
 * shared plane's), for a CLI process started with `--kubeconfig`:
 * - {@link writeServiceAccountKubeconfig}: the same cluster, every user authenticating as a ServiceAccount
 *   with a token from the TokenRequest API (a process that runs as that ServiceAccount);
 * - {@link writeOtherContextKubeconfig}: the plane's context renamed `mine`, beside a current context
 *   `elsewhere` whose server nothing listens on (a run that ignored `--context` would fail).
 *
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import type { KubeClient } from '../../lib/runtime/client/kube-client.js';

/**
 * Writes `file` (mode 0600): kubeconfig `from` with every user's credentials replaced by a token for
 * ServiceAccount `namespace/name` (valid 3600 s), requested through `admin`. Returns `file`.
 */
export async function writeServiceAccountKubeconfig(admin: KubeClient, from: string, namespace: string, name: string, file: string): Promise<string> {
  const review = await admin.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const config = parse(await readFile(from, 'utf8')) as { users: { name: string; user: Record<string, unknown> }[] };
  for (const user of config.users) user.user = { token: review.status.token };
  await writeFile(file, stringify(config), { mode: 0o600 });
  return file;
}

/**
 * Writes `file`: kubeconfig `from` with its (first) context renamed `mine`, and a current context
 * `elsewhere` (same user) on a cluster at https://127.0.0.1:1, where nothing listens. Returns `file`.
 */
export async function writeOtherContextKubeconfig(from: string, file: string): Promise<string> {
  const config = parse(await readFile(from, 'utf8')) as { clusters: any[]; contexts: any[]; users: any[]; 'current-context': string };
  const [context] = config.contexts;
  config.clusters.push({ name: 'elsewhere', cluster: { server: 'https://127.0.0.1:1' } });
  config.contexts = [{ name: 'mine', context: context.context }, { name: 'elsewhere', context: { cluster: 'elsewhere', user: context.context.user } }];
  config['current-context'] = 'elsewhere';
  await writeFile(file, stringify(config));
  return file;
}
