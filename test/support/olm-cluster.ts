/**
 * Operator Lifecycle Manager on a control plane of its own, for a test that installs bundles the way
 * users do: OLM's CRDs, its namespace and cluster configuration, the olm-operator and catalog-operator
 * of github.com/operator-framework/operator-lifecycle-manager (built by tools/olm/build.sh, see olm.ts)
 * as local processes, and one file-based catalog (olm-catalog.ts) served over gRPC by `opm serve`,
 * reached through a CatalogSource whose `spec.address` points at it, in OLM's global catalog namespace
 * (usable from every namespace). A test then subscribes to a package ({@link OlmCluster.subscribe}) and
 * waits for its InstallPlan and its ClusterServiceVersion.
 *
 * The control plane is its own because OLM acts on every namespace and installs cluster-wide objects
 * (CRDs, ClusterRoles) that other tests install in the shared one. opm, olm and catalog are stopped
 * by {@link OlmCluster.stop} and, when the test process dies without it, by an orphan watchdog (as the
 * control plane's components are).
 *
 * OLM's metrics servers listen on :8080 (no flag moves them); when another process holds the port they
 * log the error and go on, which nothing here depends on.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { ComponentProcess, readLogTailSync } from '../../lib/testing/component-process.js';
import { startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { installCRDs } from '../../lib/testing/install-crds.js';
import { startOrphanWatchdog, type OrphanWatchdog } from '../../lib/testing/orphan-watchdog.js';
import { eventually } from './eventually.js';
import { freePort } from './free-port.js';
import type { OlmObject } from './olm-catalog.js';
import type { OlmTools } from './olm.js';
import { commandEnv } from './run-command.js';

/** OLM's namespace: where olm and catalog run as OLM's chart sets them up, and its global catalog namespace. */
export const OLM_NAMESPACE = 'olm';

/** Options of {@link startOlmCluster}. */
export interface OlmClusterOptions {
  /** OLM's binaries and CRDs (olmTools in olm.ts). */
  readonly tools: OlmTools;
  /** The file-based catalog to serve: a directory `opm validate` accepts (see writeFileBasedCatalog). */
  readonly catalog: {
    /** The CatalogSource's name (Subscriptions' `spec.source`). */
    readonly name: string;
    readonly dir: string;
    readonly displayName: string;
  };
  /** The control plane's binaries (startControlPlane's `binDir`). @default startControlPlane's own resolution */
  readonly binDir?: string;
}

/** What a user applies to install a package: a namespace, an OperatorGroup and a Subscription. */
export interface OlmSubscription {
  /** The package in the catalog (also the OperatorGroup's and the Subscription's name). */
  readonly packageName: string;
  /** The namespace created for it. */
  readonly namespace: string;
  /** @default 'alpha': `package olm`'s default channel, and writeFileBasedCatalog's */
  readonly channel?: string;
}

/** A control plane with OLM running and a catalog served. */
export interface OlmCluster {
  readonly plane: ControlPlane;
  /** A client of the control plane as its admin (system:masters). */
  readonly admin: ApiClient;
  /** The last 30 lines of the log of opm, olm and catalog each: the `context` of a wait on OLM. */
  logsContext(): string;
  /**
   * Server-side applies `object` (field manager `olm-cluster-test`, forced). Only the kinds a test of
   * OLM applies: Namespace, OperatorGroup, CatalogSource, Subscription, OLMConfig.
   * @throws Error for another kind; the API server's error when it refuses the object
   */
  apply(object: OlmObject): Promise<void>;
  /**
   * Creates `namespace` with an OperatorGroup over all namespaces (what the bundles of `package olm`
   * support without a watch namespace) and a Subscription to the package, in this cluster's catalog,
   * with automatic approval.
   */
  subscribe(subscription: OlmSubscription): Promise<void>;
  /**
   * Waits until the Subscription `name` in `namespace` has an InstallPlan whose phase is Complete, and
   * returns that InstallPlan.
   * @param timeoutMs @default 600000 (10 min: OLM resolves and installs slowly on a busy 2-core machine)
   * @throws Error at the deadline, with the processes' log tails
   */
  installPlanComplete(namespace: string, name: string, timeoutMs?: number): Promise<OlmObject>;
  /**
   * Waits until the ClusterServiceVersion `name` in `namespace` is in phase Succeeded, and returns it.
   * @param timeoutMs @default 600000 (10 min, as {@link OlmCluster.installPlanComplete})
   * @throws Error at the deadline, with the processes' log tails
   */
  csvSucceeded(namespace: string, name: string, timeoutMs?: number): Promise<OlmObject>;
  /** Stops opm, olm and catalog, then the control plane, and removes the logs. Idempotent. */
  stop(): Promise<void>;
}

const FIELD_MANAGER = 'olm-cluster-test';
const PLURALS: Readonly<Record<string, string>> = {
  Namespace: 'namespaces', OperatorGroup: 'operatorgroups', CatalogSource: 'catalogsources', Subscription: 'subscriptions', OLMConfig: 'olmconfigs',
};

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts a control plane, installs OLM's CRDs (Established and discoverable), its namespace and its
 * OLMConfig, serves the catalog with `opm serve` on a free port, starts olm and catalog as OLM's chart
 * runs them (deploy/chart/templates, less OpenShift's ClusterOperator status) and applies the
 * CatalogSource. Whatever started is stopped again when a step fails.
 *
 * @throws Error when the control plane does not start, OLM's CRDs are not Established within 5 min, or
 *   opm does not accept connections within 5 min (with the processes' log tails)
 */
export async function startOlmCluster(options: OlmClusterOptions): Promise<OlmCluster> {
  const { tools, catalog } = options;
  const dir = await mkdtemp(join(tmpdir(), 'olm-cluster-'));
  const processes: ComponentProcess[] = [];
  let plane: ControlPlane | undefined;
  let admin: ApiClient | undefined;
  let watchdog: OrphanWatchdog | undefined;
  let stopped: Promise<void> | undefined;

  const logsContext = (): string =>
    processes.map((p) => `\n--- last 30 lines of ${p.name}'s log ---\n${readLogTailSync(p.spec.logPath, 30)}`).join('');

  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      watchdog?.stop();
      for (const proc of [...processes].reverse()) await proc.stop();
      admin?.close();
      await plane?.stop();
      await rm(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const start = async (name: string, command: string, args: string[]): Promise<void> => {
    const proc = await ComponentProcess.start({ name, command, args, logPath: join(dir, `${name}.log`), env: commandEnv({ KUBECONFIG: plane!.kubeconfigPath }) });
    processes.push(proc);
    const statePath = join(dir, 'olm-processes.json');
    const components = processes.map((p) => ({ pid: p.pid, pgid: p.pgid, command: p.spec.command }));
    await writeFile(statePath, JSON.stringify({ dir, removeDirOnStop: true, components }));
    watchdog ??= await startOrphanWatchdog(statePath);
  };

  const apply = async (object: OlmObject): Promise<void> => {
    const group = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
    const plural = PLURALS[object.kind];
    if (!plural) throw new Error(`olm-cluster applies only ${Object.keys(PLURALS).join(', ')}, not ${object.kind}`);
    const ns = object.metadata.namespace ? `/namespaces/${object.metadata.namespace}` : '';
    await admin!.request('PATCH', `${group}${ns}/${plural}/${object.metadata.name}`, {
      body: object,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  };

  try {
    plane = await startControlPlane({ binDir: options.binDir });
    admin = new ApiClient({ kubeConfig: plane.kubeConfig });

    const crdFiles = (await readdir(tools.crds)).filter((f) => f.endsWith('.yaml')).map((f) => join(tools.crds, f));
    await installCRDs(plane.kubeConfig, crdFiles, 5 * 60_000);
    await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: OLM_NAMESPACE } });
    await apply({ apiVersion: 'operators.coreos.com/v1', kind: 'OLMConfig', metadata: { name: 'cluster' } });

    const catalogPort = await freePort();
    await start('opm', tools.opm, [
      // No --cache-dir: opm then builds its cache in a temporary directory of its own (with one, it
      // insists on a cache made beforehand by `opm serve --cache-only`). No pprof endpoint (:6060).
      'serve', catalog.dir, '--port', String(catalogPort), '--pprof-addr=', '--termination-log', join(dir, 'opm-termination.log'),
    ]);
    await eventually(`opm serve accepts connections on :${catalogPort}`, () => accepts(catalogPort), { timeoutMs: 5 * 60_000, context: logsContext });
    await start('olm', tools.olm, ['--namespace', OLM_NAMESPACE, '--writeStatusName', '', '--writePackageServerStatusName', '']);
    await start('catalog', tools.catalog, ['--namespace', OLM_NAMESPACE, '--writeStatusName', '']);

    await apply({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: catalog.name, namespace: OLM_NAMESPACE },
      spec: { sourceType: 'grpc', address: `127.0.0.1:${catalogPort}`, displayName: catalog.displayName },
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const client = admin;
  return {
    plane,
    admin: client,
    logsContext,
    apply,
    stop,
    async subscribe({ packageName, namespace, channel = 'alpha' }) {
      await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      await apply({ apiVersion: 'operators.coreos.com/v1', kind: 'OperatorGroup', metadata: { name: packageName, namespace }, spec: {} });
      await apply({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'Subscription',
        metadata: { name: packageName, namespace },
        spec: { name: packageName, channel, source: catalog.name, sourceNamespace: OLM_NAMESPACE, installPlanApproval: 'Automatic' },
      });
    },
    installPlanComplete(namespace, name, timeoutMs = 10 * 60_000) {
      return eventually(`an InstallPlan of the Subscription ${namespace}/${name} is Complete`, async () => {
        const subscription = await client.request<OlmObject>('GET', `/apis/operators.coreos.com/v1alpha1/namespaces/${namespace}/subscriptions/${name}`);
        const plan = subscription.status?.installPlanRef?.name as string | undefined;
        if (!plan) return undefined;
        const installPlan = await client.request<OlmObject>('GET', `/apis/operators.coreos.com/v1alpha1/namespaces/${namespace}/installplans/${plan}`);
        return installPlan.status?.phase === 'Complete' && installPlan;
      }, { timeoutMs, intervalMs: 1000, context: logsContext });
    },
    csvSucceeded(namespace, name, timeoutMs = 10 * 60_000) {
      return eventually(`CSV ${namespace}/${name} phase Succeeded`, async () => {
        const object = await client.request<OlmObject>('GET', `/apis/operators.coreos.com/v1alpha1/namespaces/${namespace}/clusterserviceversions/${name}`);
        return object.status?.phase === 'Succeeded' && object;
      }, { timeoutMs, intervalMs: 1000, context: logsContext });
    },
  };
}
