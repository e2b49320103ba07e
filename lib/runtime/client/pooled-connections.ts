/**
 * The keep-alive pools of every {@link ApiClient} in the process, by API server URL, so that a dead
 * connection found by one client (a watch that went silent, a request that got no answer) makes every
 * client to that server drop its idle pooled sockets: they went through the same network path, and the
 * next request must not wait its whole timeout on one of them.
 *
 * Clients are held weakly: the registry never keeps a client alive (a closed client may still be used again:
 * `close()` only ends its idle sockets).
 */

/** What a client exposes to the registry. */
export interface ConnectionPool {
  /** Destroys the idle (pooled, not in use) sockets; returns how many. */
  destroyIdleSockets(): number;
}

const pools = new Map<string, Set<WeakRef<ConnectionPool>>>();

/** Adds `pool` under `server` (the API server URL, as the client uses it). */
export function registerConnectionPool(server: string, pool: ConnectionPool): void {
  let set = pools.get(server);
  if (!set) pools.set(server, (set = new Set()));
  set.add(new WeakRef(pool));
}

/**
 * Destroys the idle pooled sockets of every client to `server`; returns how many. Sockets in use are
 * left to their own deadline (a request's timeout, a watch's heartbeat).
 */
export function destroyIdleConnectionsTo(server: string): number {
  const set = pools.get(server);
  if (!set) return 0;
  let destroyed = 0;
  for (const ref of set) {
    const pool = ref.deref();
    if (pool === undefined) set.delete(ref);
    else destroyed += pool.destroyIdleSockets();
  }
  if (set.size === 0) pools.delete(server);
  return destroyed;
}
