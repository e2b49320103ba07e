/**
 * The ring's Leases in memory, with the API server's resourceVersion checks: behind a
 * {@link FakeKubeClient}'s `respond`, the requests a ShardMember (lib/runtime/sharding/membership.ts)
 * sends for the Leases of namespace `ops` (LIST, POST, PUT; anything else throws). For the unit tests of
 * its decisions on a ManualClock; against a real API server: test/integration/shard-membership.test.ts.
 */
import { ApiError, type KubeObject } from '../../lib/runtime/client/kube-client.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/ops/leases';

/** The Leases of namespace `ops` by name; {@link handle} answers one request. */
export class LeaseStore {
  readonly leases = new Map<string, KubeObject>();
  private rv = 100;

  handle(method: string, path: string, body: KubeObject | undefined): unknown {
    const name = path.slice(LEASES.length + 1);
    const current = this.leases.get(name);
    if (method === 'GET' && path === LEASES) return { items: [...this.leases.values()].map((l) => structuredClone(l)), metadata: {} };
    if (method === 'POST' && path === LEASES) {
      const created = String(body!.metadata?.name);
      if (this.leases.has(created)) throw new ApiError(method, path, 409, 'AlreadyExists', undefined, 'already exists');
      return this.put(created, body!);
    }
    if (method === 'PUT') {
      if (!current) throw new ApiError(method, path, 404, 'NotFound', undefined, 'not found');
      if (body?.metadata?.resourceVersion !== current.metadata?.resourceVersion) throw new ApiError(method, path, 409, 'Conflict', undefined, 'the object has been modified');
      return this.put(name, body!);
    }
    throw new Error(`unexpected ${method} ${path}`);
  }

  put(name: string, lease: KubeObject): KubeObject {
    this.leases.set(name, { ...structuredClone(lease), metadata: { ...structuredClone(lease.metadata), resourceVersion: String(++this.rv) } });
    return structuredClone(this.leases.get(name)!);
  }
}

/** Lets the promises and immediates that a clock step started run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}
