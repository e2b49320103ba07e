/**
 * Writes to a local control plane's etcd behind kube-apiserver's back, through etcd's JSON gateway
 * (plain HTTP on loopback): for tests that need a watch's resourceVersion compacted away (410 Gone).
 */
import type { ControlPlane } from '../../lib/testing/control-plane.js';

/**
 * Deletes the object stored at `key` (e.g. `/registry/configmaps/ns/name`) straight in etcd, then
 * compacts etcd at its current revision, so a watch resuming from any older resourceVersion gets 410.
 * Call it while kube-apiserver is down (`plane.restartApiServer(() => deleteAndCompact(plane, key))`).
 * @throws Error naming the gateway path and etcd's answer when a call fails
 */
export async function deleteAndCompact(plane: ControlPlane, key: string): Promise<void> {
  await etcd(plane, '/v3/kv/deleterange', { key: b64(key) });
  const revision = (await etcd(plane, '/v3/kv/range', { key: b64('/registry/namespaces/default') })).header.revision as string;
  await etcd(plane, '/v3/kv/compaction', { revision, physical: true });
}

function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}

async function etcd(plane: ControlPlane, path: string, body: unknown): Promise<{ header: Record<string, unknown> } & Record<string, unknown>> {
  const res = await fetch(plane.etcdEndpoint + path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const json = (await res.json()) as { header: Record<string, unknown> } & Record<string, unknown>;
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
