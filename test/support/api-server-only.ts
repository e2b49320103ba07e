/**
 * For a test file that needs only the API (Leases, and nothing that schedules or runs Pods): a control
 * plane of etcd and kube-apiserver alone, one namespace of the file's own, clients closed at the end,
 * and a client a test can cut off from the API server as a frozen or partitioned replica would be.
 *
 * `useApiServerOnly('le')` registers the file's `beforeAll` (start the control plane, create the
 * namespace `le-<pid>`) and `afterAll` (close every client it made, stop the control plane).
 */
import { ApiClient, type ApiClientOptions } from '../../lib/runtime/client/api-client.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';

const SETUP_TIMEOUT_MS = 10 * 60_000;

/** What {@link useApiServerOnly} gives the file; read its fields inside tests (set in `beforeAll`). */
export interface ApiServerOnly {
  readonly plane: ControlPlane;
  /** The control plane's admin. */
  readonly admin: ApiClient;
  /** `<prefix>-<pid>`, created in `beforeAll`. */
  readonly namespace: string;
  /** A new client of the control plane (its kubeconfig, plus `options`), closed in `afterAll`. */
  client(options?: Omit<ApiClientOptions, 'kubeConfig'>): ApiClient;
}

/** Registers the hooks described in the module doc, and returns the file's handle on them. */
export function useApiServerOnly(namespacePrefix: string): ApiServerOnly {
  let plane: ControlPlane | undefined;
  let admin: ApiClient | undefined;
  const clients: ApiClient[] = [];
  const namespace = `${namespacePrefix}-${process.pid}`;

  beforeAll(async () => {
    plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
    admin = new ApiClient({ kubeConfig: plane.kubeConfig });
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    for (const client of clients) client.close();
    admin?.close();
    await plane?.stop();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useApiServerOnly: the control plane is not started yet (read it inside a test or a hook)');
    return value;
  };
  return {
    get plane() {
      return started(plane);
    },
    get admin() {
      return started(admin);
    },
    namespace,
    client(options = {}) {
      const client = new ApiClient({ ...options, kubeConfig: started(plane).kubeConfig });
      clients.push(client);
      return client;
    },
  };
}

/** A client whose every request fails, while {@link Partitionable.partitioned} is true, as if the API server were unreachable. */
export interface Partitionable {
  partitioned: boolean;
  readonly client: Pick<ApiClient, 'request'>;
}

/** Wraps `client`: see {@link Partitionable}. */
export function partitionable(client: ApiClient): Partitionable {
  const self: Partitionable = {
    partitioned: false,
    client: {
      request: ((method: string, path: string, options?: object) =>
        self.partitioned ? Promise.reject(new Error('partitioned by the test')) : client.request(method, path, options)) as ApiClient['request'],
    },
  };
  return self;
}
