/**
 * The API server's own count of requests that persisted something (`apiserver_request_total`): writes
 * other than dry runs, Leases (the API server's own heartbeats) left out. A command that must write
 * nothing leaves it unchanged (read it before and after).
 */
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import type { ControlPlane } from '../../lib/testing/control-plane.js';

export async function persistedWrites(plane: Pick<ControlPlane, 'kubeConfig'>): Promise<number> {
  const res = await ApiClient.sendOnce({ kubeConfig: plane.kubeConfig }, 'GET', '/metrics');
  let sum = 0;
  for (const line of String(res.body).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!/verb="(POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION|CREATE|UPDATE)"/.test(line)) continue;
    if (!line.includes('dry_run=""') || line.includes('resource="leases"')) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
