/**
 * A real, local Kubernetes control plane for tests: etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok (a fake kubelet), all on loopback, in a temp dir, without containers.
 *
 * Unlike envtest (apiserver + etcd only), garbage collection works, namespaces finish terminating,
 * Deployments/StatefulSets/Jobs get Pods, and Pods are scheduled onto a fake Node and become Ready.
 *
 * Expected flow: `startControlPlane()` in a global setup (or beforeAll), tests use `kubeConfig`, each
 * in its own namespace; `stop()` at the end. If the test process exits or is interrupted without
 * `stop()`, its exit/SIGINT/SIGTERM handlers kill the components; if it dies in a way no handler sees
 * (SIGKILL, or Jest, whose sandboxed `process` never gets the real signals), a watchdog process stops
 * them within about a second (orphan-watchdog.ts). `stopControlPlaneFromState(dir)` stops one from
 * another process.
 *
 * Files in `dir`: `pki/` (CA, serving, admin and service-account keys), `kubeconfig`, `etcd/` (data),
 * `logs/<component>.log`, `kwok/stages.yaml`, `control-plane.json` (state: pids, ports, kubeconfig).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { ApiClient, type RawResponse, type SendOptions } from '../runtime/client/api-client.js';
import { ComponentProcess } from './component-process.js';
import { resolveControlPlaneBinaries, type ControlPlaneBinaries } from './control-plane-binaries.js';
import { startOrphanWatchdog, type OrphanWatchdog } from './orphan-watchdog.js';
import {
  CONTROL_PLANE_STATE_FILE,
  componentLiveness,
  readControlPlaneState,
  writeControlPlaneState,
  type ControlPlaneState,
} from './control-plane-state.js';
import { probeOnce, waitUntil } from './health-probe.js';
import { fakeNode, KWOK_NODE_ANNOTATION, kwokStagesYaml } from './kwok-node.js';
import { createControlPlanePki, type ControlPlanePki } from './pki.js';

export { installCRDs } from './install-crds.js';
export { stopControlPlaneFromState } from './control-plane-state.js';

/** Which components run besides etcd and kube-apiserver. */
export interface ControlPlaneComponents {
  /**
   * kube-controller-manager (GC, namespace deletion, workload controllers).
   * @default true: without it no owned object is garbage-collected and namespaces never finish terminating
   */
  readonly controllerManager?: boolean;
  /** kube-scheduler (binds Pods to the fake Node). @default true: without it every Pod stays Pending */
  readonly scheduler?: boolean;
  /** kwok plus the fake Nodes (Pods become Running/Ready). @default true: without it no Pod becomes Ready */
  readonly kwok?: boolean;
}

/**
 * Extra command-line flags per component (e.g. `['--v=4']`), appended after the ones the control plane
 * sets (a later flag wins).
 */
export interface ControlPlaneExtraArgs {
  /** Flags of etcd. @default none */
  readonly etcd?: readonly string[];
  /** Flags of kube-apiserver (also used when {@link ControlPlane.restartApiServer} starts it again). @default none */
  readonly apiServer?: readonly string[];
  /** Flags of kube-controller-manager. @default none */
  readonly controllerManager?: readonly string[];
  /** Flags of kube-scheduler. @default none */
  readonly scheduler?: readonly string[];
  /** Flags of kwok. @default none */
  readonly kwok?: readonly string[];
}

/** Options of {@link startControlPlane}. All optional. */
export interface ControlPlaneOptions {
  /**
   * Directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.
   * @default etcd and kube-apiserver from `KUBEBUILDER_ASSETS` when it has both, the rest (or all) from
   *   `${CDK8S_OPERATOR_SDK_CACHE:-~/.cache/cdk8s-operator-sdk}/bin/…`: downloaded (prebuilt, digests
   *   checked) or built by `tools/control-plane/build.sh` with Go, as `CDK8S_OPERATOR_SDK_BINARIES` says
   *   (unset: build when `go` is on PATH, else download); see resolveControlPlaneBinaries
   */
  readonly binDir?: string;
  /**
   * Kubernetes minor of the control plane (`1.35`), one of the tested range
   * (docs/reference/kubernetes-versions.md): its binaries are found, downloaded or built as for the
   * default. Ignored with `binDir` (the binaries there are whatever version they are).
   * @default the newest tested minor (`1.37`)
   * @throws Error (from startControlPlane) naming the tested minors for any other
   */
  readonly kubernetesVersion?: string;
  /**
   * State dir: certificates, kubeconfig, etcd data, logs, `control-plane.json`. Must be absent, empty,
   * or hold a stopped control plane (then it is wiped). Removed by `stop()` unless `keepDir` (a dir the
   * caller gave that already existed is emptied, not removed).
   * @default a new `mkdtemp` dir under the OS temp dir (`cdk8s-operator-sdk-control-plane-*`)
   */
  readonly dir?: string;
  /**
   * Budget of each start-up wait (each component's health check, each fake Node's Ready, and
   * {@link ControlPlane.restartApiServer}), in milliseconds.
   * @default 60000 ms: sized for 2 slow cores shared with other test processes; an idle machine needs a
   *   few seconds
   */
  readonly startTimeoutMs?: number;
  /** Components besides etcd and kube-apiserver. @default all true: a cluster in which workloads get Ready Pods */
  readonly components?: ControlPlaneComponents;
  /**
   * Progress lines (a component started or became ready; build.sh or download output).
   * @default none: component lines are dropped, build.sh or download output (only when it builds or
   *   downloads, which takes minutes) goes to stderr so neither ever looks hung
   */
  readonly log?: (line: string) => void;
  /** Extra flags per component. @default none */
  readonly extraArgs?: ControlPlaneExtraArgs;
  /**
   * Fake Nodes kwok manages, named `kwok-node-0` … `kwok-node-<n-1>`, all Ready before
   * `startControlPlane` resolves. Each holds {@link ControlPlaneOptions.podsPerNode} Pods, so size this
   * for the Pods a test makes (a Deployment of 1 replica per custom resource: N/250 + 1 nodes).
   * Ignored without kwok.
   * @default 1: one Node (250 Pods by default) is enough for most tests; each more adds kwok heartbeats
   *   to the machine's load
   */
  readonly fakeNodes?: number;
  /**
   * Pod capacity (allocatable `pods`) of each fake Node. The scheduler leaves Pods Pending beyond it.
   * @default 250: roomier than the kubelet's usual ceiling of 110 (kwok runs no containers, so it has no
   *   real limit)
   */
  readonly podsPerNode?: number;
  /**
   * Service CIDR, given to kube-apiserver and kube-controller-manager as `--service-cluster-ip-range`.
   * Every ClusterIP Service takes one address, so a /24 holds about 250 Services; raise it for more
   * (e.g. `10.0.0.0/16` for up to ~65000). Must not overlap the Pod CIDR `10.244.0.0/16`.
   * @default '10.0.0.0/24', as envtest
   */
  readonly serviceClusterIpRange?: string;
  /** Keep `dir` (logs, etcd data) after `stop()`, e.g. to read a failed run's logs. @default false: a run leaves nothing behind */
  readonly keepDir?: boolean;
  /**
   * Let the components outlive this process (used by `cdk8s-operator env up`): no exit/signal handlers
   * and no watchdog. Stop it with `stopControlPlaneFromState(dir)`.
   * @default false: the components are stopped when this process exits, is interrupted (SIGINT/SIGTERM)
   *   or dies (a watchdog process notices within a second, see orphan-watchdog.ts)
   */
  readonly outliveProcess?: boolean;
}

/** A running control plane. */
export interface ControlPlane {
  /** Path of the admin kubeconfig (`<dir>/kubeconfig`): client certificate CN=admin, O=system:masters. */
  readonly kubeconfigPath: string;
  /** The same kubeconfig, loaded. */
  readonly kubeConfig: KubeConfig;
  /** API server URL, `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** State dir. */
  readonly dir: string;
  /** etcd client URL, `http://127.0.0.1:<port>` (plain HTTP, loopback), e.g. for compaction tests. */
  readonly etcdEndpoint: string;
  /** Name of the (first) fake Node kwok manages, or undefined without kwok. */
  readonly nodeName: string | undefined;
  /** Names of every fake Node kwok manages (see `fakeNodes`); empty without kwok. */
  readonly nodeNames: readonly string[];
  /** The executables used. */
  readonly binaries: ControlPlaneBinaries;
  /** Paths of each component's log file, by component name (`etcd`, `kube-apiserver`, …). */
  readonly logPaths: Readonly<Record<string, string>>;
  /**
   * Stops every component (clients, then kube-apiserver, then etcd; SIGTERM to the process group,
   * SIGKILL after 5 s) and removes `dir` unless `keepDir`. Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Stops kube-apiserver (SIGTERM, SIGKILL after 1 s) and starts it again on the same port and etcd;
   * resolves once /readyz is ok (about 3–5 s on 2 cores). Watches break meanwhile: use it to test reconnects.
   * `whileDown` runs after the old process has exited and before the new one starts: the place to change
   * etcd behind the API server's back (e.g. delete a key and compact, to force a 410 on resume).
   * @throws Error with the log tail if it does not become ready within `startTimeoutMs`.
   */
  restartApiServer(whileDown?: () => Promise<void>): Promise<void>;
}

/** Name of the fake Node created for kwok. */
export const FAKE_NODE_NAME = 'kwok-node-0';

/** Default Service CIDR of the API server (`--service-cluster-ip-range`); see `serviceClusterIpRange`. */
const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
/** Pod CIDR kwok assigns pod IPs from. */
const POD_CIDR = '10.244.0.0/16';
/** InternalIP of the fake Node (never dialled). */
const FAKE_NODE_IP = '10.96.0.10';

/**
 * Controllers kube-controller-manager runs (`--controllers`): what tests of operators rely on —
 * ownerReference GC, namespace deletion, the workload controllers, default ServiceAccounts and tokens,
 * RBAC aggregation (admin/edit/view), EndpointSlices, PDB status, and PersistentVolumeClaim binding with
 * kube-controller-manager's development-only hostPath provisioner behind a default StorageClass
 * ({@link DEFAULT_STORAGE_CLASS}), so StatefulSets with volumeClaimTemplates become Ready. Node
 * lifecycle, attach/detach, IPAM, CSR signing, HPA and quota are left out (nothing to manage without real
 * nodes, or slow to start).
 */
export const CONTROLLER_MANAGER_CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'replicationcontroller-controller',
  'pod-garbage-collector-controller',
  'disruption-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
  'persistentvolume-binder-controller',
] as const;

/**
 * The default StorageClass created before kube-controller-manager starts: provisioner
 * `kubernetes.io/host-path` (kube-controller-manager's `--enable-hostpath-provisioner`, directories under
 * /tmp, development only), binding Immediate. The DefaultStorageClass admission plugin gives it to every
 * PersistentVolumeClaim without a class.
 */
export const DEFAULT_STORAGE_CLASS = 'standard';

// ---------------------------------------------------------------------------------------------------
// Clean-up of control planes of this process when it exits or is interrupted.

const running = new Set<RunningControlPlane>();
let handlersInstalled = false;

function killAllNow(): void {
  for (const plane of running) plane.killNow();
}

let signalled = false;
function onSignal(signal: NodeJS.Signals): void {
  if (signalled) return;
  signalled = true;
  const exits = [...running].flatMap((plane) => [...plane.processes.values()].map((p) => p.exited));
  killAllNow();
  // Let Node reap the killed children (else they linger as zombies of PID 1), at most 3 s.
  void Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 3000))]).then(() => {
    uninstallHandlers();
    signalled = false;
    // Keep the default behaviour (terminate) unless someone else handles the signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}
const onSigint = (): void => onSignal('SIGINT');
const onSigterm = (): void => onSignal('SIGTERM');

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllNow);
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
}

function uninstallHandlers(): void {
  if (!handlersInstalled) return;
  handlersInstalled = false;
  process.off('exit', killAllNow);
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigterm);
}

// ---------------------------------------------------------------------------------------------------

/** A free TCP port on 127.0.0.1 (bound to :0 and released; another process could take it meanwhile). */
async function freePort(): Promise<number> {
  return await new Promise<number>((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

async function prepareDir(requested: string | undefined): Promise<{ dir: string; created: boolean }> {
  if (requested === undefined) {
    return { dir: await mkdtemp(join(tmpdir(), 'cdk8s-operator-sdk-control-plane-')), created: true };
  }
  const dir = resolve(requested);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dir, { recursive: true });
    return { dir, created: true };
  }
  if (entries.length === 0) return { dir, created: false };
  const state = await readControlPlaneState(dir);
  if (!state) {
    throw new Error(`control plane dir ${dir} is not empty and holds no control-plane.json: refusing to use it`);
  }
  const alive = componentLiveness(state).filter((c) => c.alive);
  if (alive.length > 0) {
    throw new Error(
      `a control plane is already running in ${dir} (${alive.map((c) => `${c.name} pid ${c.pid}`).join(', ')}); stop it first`,
    );
  }
  // A stopped control plane's leftovers: start from scratch.
  for (const entry of entries) await rm(join(dir, entry), { recursive: true, force: true });
  return { dir, created: false };
}

function kubeconfigYaml(server: string, pki: ControlPlanePki): string {
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'cdk8s-operator-sdk', cluster: { server, 'certificate-authority-data': b64(pki.caCertPem) } }],
    users: [{ name: 'admin', user: { 'client-certificate-data': b64(pki.adminCertPem), 'client-key-data': b64(pki.adminKeyPem) } }],
    contexts: [{ name: 'cdk8s-operator-sdk', context: { cluster: 'cdk8s-operator-sdk', user: 'admin', namespace: 'default' } }],
    'current-context': 'cdk8s-operator-sdk',
  });
}

interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiServer: number;
  controllerManager: number;
  scheduler: number;
  kwok: number;
}

class RunningControlPlane implements ControlPlane {
  readonly processes = new Map<string, ComponentProcess>();
  readonly logPaths: Record<string, string> = {};
  kubeConfig = new KubeConfig();
  private stopping: Promise<void> | undefined;
  private stateWrites: Promise<void> = Promise.resolve();
  private watchdog: OrphanWatchdog | undefined;
  private readonly startedAt = new Date().toISOString();

  constructor(
    readonly dir: string,
    private readonly removeDirOnStop: boolean,
    readonly binaries: ControlPlaneBinaries,
    private readonly pki: ControlPlanePki,
    private readonly ports: Ports,
    private readonly options: ControlPlaneOptions,
    readonly nodeNames: readonly string[],
  ) {}

  get nodeName(): string | undefined {
    return this.nodeNames[0];
  }

  get kubeconfigPath(): string {
    return join(this.dir, 'kubeconfig');
  }
  get server(): string {
    return `https://127.0.0.1:${this.ports.apiServer}`;
  }
  get etcdEndpoint(): string {
    return `http://127.0.0.1:${this.ports.etcdClient}`;
  }
  private get timeoutMs(): number {
    return this.options.startTimeoutMs ?? 60_000;
  }
  private log(line: string): void {
    this.options.log?.(`[control-plane] ${line}`);
  }

  toState(): ControlPlaneState {
    return {
      version: 1,
      dir: this.dir,
      kubeconfigPath: this.kubeconfigPath,
      server: this.server,
      etcdEndpoint: this.etcdEndpoint,
      removeDirOnStop: this.removeDirOnStop,
      ownerPid: process.pid,
      startedAt: this.startedAt,
      components: [...this.processes.values()].map((p) => ({
        name: p.name,
        pid: p.pid,
        pgid: p.pgid,
        command: p.spec.command,
        args: p.spec.args,
        ...(p.spec.env?.HOME !== undefined && p.spec.env.HOME !== process.env.HOME ? { home: p.spec.env.HOME } : {}),
        logPath: p.spec.logPath,
      })),
    };
  }

  /** Writes the state file; writes are serialised so the last one holds every component. */
  saveState(): Promise<void> {
    this.stateWrites = this.stateWrites.catch(() => undefined).then(() => writeControlPlaneState(this.toState()));
    return this.stateWrites;
  }

  /** Starts a component and records it in the state file before anything can fail. */
  private async spawn(name: string, command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<ComponentProcess> {
    const logPath = join(this.dir, 'logs', `${name}.log`);
    this.logPaths[name] = logPath;
    const proc = await ComponentProcess.start({ name, command, args, logPath, env });
    this.processes.set(name, proc);
    await this.saveState();
    if (!this.options.outliveProcess && !this.watchdog) {
      this.watchdog = await startOrphanWatchdog(join(this.dir, CONTROL_PLANE_STATE_FILE));
    }
    this.log(`${name} started (pid ${proc.pid}), log ${logPath}`);
    return proc;
  }

  /**
   * Waits until `check` passes for component `proc`; fails early if the process exits.
   * The error names the component and carries its log tail.
   */
  private async waitReady(proc: ComponentProcess, what: string, check: () => Promise<{ ok: boolean; detail: string }>): Promise<void> {
    const t0 = Date.now();
    const abort = proc.exited.then((exit) => {
      throw new Error(`${proc.name} exited during start-up (code ${exit.code}, signal ${exit.signal})`);
    });
    try {
      await waitUntil(what, check, { timeoutMs: this.timeoutMs, intervalMs: 100, abort });
    } catch (err) {
      const tail = await proc.logTail(40);
      throw new Error(`${(err as Error).message}\n--- last 40 lines of ${proc.spec.logPath} ---\n${tail}`, { cause: err });
    }
    this.log(`${what}: ok after ${Date.now() - t0} ms`);
  }

  async startEtcd(): Promise<void> {
    const { etcdClient, etcdPeer } = this.ports;
    const proc = await this.spawn('etcd', this.binaries.etcd, [
      '--name=control-plane',
      `--data-dir=${join(this.dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=control-plane=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
      ...(this.options.extraArgs?.etcd ?? []),
    ]);
    await this.waitReady(proc, 'etcd /health', async () => {
      const r = await probeOnce(`${this.etcdEndpoint}/health`);
      return { ok: r.statusCode === 200 && r.body.includes('"health":"true"'), detail: `${r.statusCode} ${r.body.trim()}` };
    });
  }

  private apiServerArgs(): string[] {
    const pki = this.pki;
    return [
      `--etcd-servers=${this.etcdEndpoint}`,
      `--cert-dir=${join(this.dir, 'kube-apiserver')}`,
      `--tls-cert-file=${pki.servingCertPath}`,
      `--tls-private-key-file=${pki.servingKeyPath}`,
      `--client-ca-file=${pki.caCertPath}`,
      `--secure-port=${this.ports.apiServer}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // The `kubernetes` Service cannot get 127.0.0.1 as an endpoint (loopback is invalid in Endpoints).
      '--endpoint-reconciler-type=none',
      `--service-cluster-ip-range=${this.options.serviceClusterIpRange ?? SERVICE_CLUSTER_IP_RANGE}`,
      '--allow-privileged=true',
      '--authorization-mode=RBAC',
      // ServiceAccount: as envtest; otherwise a Pod is rejected until its namespace's default
      // ServiceAccount exists. TaintNodesByCondition: it taints every new Node not-ready:NoSchedule and
      // only the node-lifecycle controller (not run here: it would taint the fake Node whenever kwok's
      // heartbeat lags on a busy machine) removes that taint.
      '--disable-admission-plugins=ServiceAccount,TaintNodesByCondition',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPublicKeyPath}`,
      `--service-account-signing-key-file=${pki.serviceAccountKeyPath}`,
      ...(this.options.extraArgs?.apiServer ?? []),
    ];
  }

  async startApiServer(): Promise<void> {
    await mkdir(join(this.dir, 'kube-apiserver'), { recursive: true });
    const proc = await this.spawn('kube-apiserver', this.binaries.kubeApiServer, this.apiServerArgs());
    const tls = { ca: this.pki.caCertPem, cert: this.pki.adminCertPem, key: this.pki.adminKeyPem };
    await this.waitReady(proc, 'kube-apiserver /readyz', async () => {
      const r = await probeOnce(`${this.server}/readyz`, tls);
      return { ok: r.statusCode === 200, detail: `${r.statusCode} ${r.body.trim().split('\n').filter((l) => l.includes('fail') || l.length < 80).slice(-3).join('; ')}` };
    });
  }

  async writeKubeconfig(): Promise<void> {
    const text = kubeconfigYaml(this.server, this.pki);
    await writeFile(this.kubeconfigPath, text, { mode: 0o600 });
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromString(text);
  }

  /** Common flags of kube-controller-manager and kube-scheduler (client kubeconfigs, loopback serving). */
  private clientComponentArgs(name: string, port: number): string[] {
    return [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(this.dir, name)}`,
      '--leader-elect=false',
    ];
  }

  /** One request of the start-up with the admin kubeconfig; any status resolves; 10 s: the local server is stuck. */
  private adminRequest(method: string, path: string, options: SendOptions = {}): Promise<RawResponse> {
    return ApiClient.sendOnce({ kubeConfig: this.kubeConfig, userAgent: 'cdk8s-operator-sdk/testing', requestTimeoutMs: 10_000 }, method, path, options);
  }

  async startControllerManager(): Promise<void> {
    await mkdir(join(this.dir, 'kube-controller-manager'), { recursive: true });
    const storageClass = await this.adminRequest('POST', '/apis/storage.k8s.io/v1/storageclasses', {
      body: {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: DEFAULT_STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
        provisioner: 'kubernetes.io/host-path',
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      },
    });
    if (storageClass.statusCode !== 201 && storageClass.statusCode !== 409) {
      throw new Error(`creating StorageClass ${DEFAULT_STORAGE_CLASS} failed: HTTP ${storageClass.statusCode} ${storageClass.body}`);
    }
    const proc = await this.spawn('kube-controller-manager', this.binaries.kubeControllerManager, [
      ...this.clientComponentArgs('kube-controller-manager', this.ports.controllerManager),
      '--use-service-account-credentials=false',
      '--enable-hostpath-provisioner',
      `--controllers=${CONTROLLER_MANAGER_CONTROLLERS.join(',')}`,
      `--service-account-private-key-file=${this.pki.serviceAccountKeyPath}`,
      `--root-ca-file=${this.pki.caCertPath}`,
      `--service-cluster-ip-range=${this.options.serviceClusterIpRange ?? SERVICE_CLUSTER_IP_RANGE}`,
      ...(this.options.extraArgs?.controllerManager ?? []),
    ]);
    await this.waitReady(proc, 'kube-controller-manager /healthz', async () => {
      const r = await probeOnce(`https://127.0.0.1:${this.ports.controllerManager}/healthz`);
      return { ok: r.statusCode === 200, detail: `${r.statusCode} ${r.body.trim().slice(0, 200)}` };
    });
  }

  async startScheduler(): Promise<void> {
    await mkdir(join(this.dir, 'kube-scheduler'), { recursive: true });
    const proc = await this.spawn('kube-scheduler', this.binaries.kubeScheduler, [
      ...this.clientComponentArgs('kube-scheduler', this.ports.scheduler),
      ...(this.options.extraArgs?.scheduler ?? []),
    ]);
    await this.waitReady(proc, 'kube-scheduler /healthz', async () => {
      const r = await probeOnce(`https://127.0.0.1:${this.ports.scheduler}/healthz`);
      return { ok: r.statusCode === 200, detail: `${r.statusCode} ${r.body.trim().slice(0, 200)}` };
    });
  }

  async startKwok(nodeNames: readonly string[]): Promise<void> {
    const kwokDir = join(this.dir, 'kwok');
    await mkdir(kwokDir, { recursive: true });
    const configPath = join(kwokDir, 'stages.yaml');
    await writeFile(configPath, kwokStagesYaml());

    // Create the Nodes before kwok starts, so kwok finds them on its first list.
    const resources = this.options.podsPerNode === undefined ? {} : { pods: String(this.options.podsPerNode) };
    for (const nodeName of nodeNames) {
      const created = await this.adminRequest('POST', '/api/v1/nodes', { body: fakeNode(nodeName, resources) });
      if (created.statusCode !== 201 && created.statusCode !== 409) {
        throw new Error(`creating fake Node ${nodeName} failed: HTTP ${created.statusCode} ${created.body}`);
      }
    }

    const proc = await this.spawn(
      'kwok',
      this.binaries.kwok,
      [
        `--kubeconfig=${this.kubeconfigPath}`,
        `--config=${configPath}`,
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION.key}=${KWOK_NODE_ANNOTATION.value}`,
        `--server-address=127.0.0.1:${this.ports.kwok}`,
        `--node-ip=${FAKE_NODE_IP}`,
        `--cidr=${POD_CIDR}`,
        '--node-lease-duration-seconds=40',
        ...(this.options.extraArgs?.kwok ?? []),
      ],
      // kwok also loads ~/.kwok/kwok.yaml when it exists: give it a HOME of its own.
      { ...process.env, HOME: kwokDir },
    );
    await this.waitReady(proc, 'kwok /healthz', async () => {
      const r = await probeOnce(`http://127.0.0.1:${this.ports.kwok}/healthz`);
      return { ok: r.statusCode === 200, detail: `${r.statusCode} ${r.body.trim().slice(0, 200)}` };
    });
    for (const nodeName of nodeNames) {
      await this.waitReady(proc, `fake Node ${nodeName} Ready`, async () => {
        const r = await this.adminRequest('GET', `/api/v1/nodes/${nodeName}`);
        if (r.statusCode !== 200) return { ok: false, detail: `GET node: HTTP ${r.statusCode}` };
        const node = JSON.parse(r.body) as { status?: { conditions?: { type: string; status: string }[] } };
        const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
        return { ok: ready?.status === 'True', detail: `Ready=${ready?.status ?? 'absent'}` };
      });
    }
  }

  async restartApiServer(whileDown?: () => Promise<void>): Promise<void> {
    const old = this.processes.get('kube-apiserver');
    if (!old) throw new Error('restartApiServer: kube-apiserver is not running');
    this.log('restarting kube-apiserver');
    // With its clients connected, kube-apiserver drains for a long time after SIGTERM; a reconnect
    // test does not need that: SIGKILL after 1 s.
    await old.stop(1000);
    this.processes.delete('kube-apiserver');
    await whileDown?.();
    await this.startApiServer();
  }

  /** SIGKILLs every component now and removes the dir, synchronously (exit handlers). */
  killNow(): void {
    this.watchdog?.stop();
    for (const proc of this.processes.values()) proc.killNow();
    running.delete(this);
    if (this.removeDirOnStop && !this.options.keepDir) {
      try {
        rmSync(this.dir, { recursive: true, force: true });
      } catch {
        // best effort while exiting
      }
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    this.watchdog?.stop();
    const byName = (names: string[]): ComponentProcess[] => [...this.processes.values()].filter((p) => names.includes(p.name));
    const servers = ['kube-apiserver', 'etcd'];
    const clients = [...this.processes.values()].filter((p) => !servers.includes(p.name));
    await Promise.all(clients.map((p) => p.stop()));
    await Promise.all(byName(['kube-apiserver']).map((p) => p.stop()));
    await Promise.all(byName(['etcd']).map((p) => p.stop()));
    running.delete(this);
    if (running.size === 0) uninstallHandlers();
    if (this.options.keepDir) {
      this.log(`stopped; kept ${this.dir}`);
      await rm(join(this.dir, CONTROL_PLANE_STATE_FILE), { force: true });
    } else if (this.removeDirOnStop) {
      await rm(this.dir, { recursive: true, force: true });
    } else {
      // A caller-provided dir: empty it, keep the dir itself.
      for (const entry of await readdir(this.dir)) await rm(join(this.dir, entry), { recursive: true, force: true });
    }
    this.log('stopped');
  }
}

/**
 * Starts a local control plane and resolves once every component is ready:
 * etcd `/health`, kube-apiserver `/readyz`, kube-controller-manager and kube-scheduler `/healthz`,
 * kwok `/healthz` and its fake Node `Ready`.
 *
 * Everything listens on 127.0.0.1 on free ports; TLS material is generated per control plane (see
 * {@link createControlPlanePki}). Typical start on 2 cores with built binaries: a few seconds.
 *
 * @throws Error when the executables cannot be found or built (says how to get them), or when a
 *   component exits or is not ready within `startTimeoutMs`: the message names the component and
 *   includes the last 40 lines of its log. Whatever had started is stopped before the error is thrown.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const components = {
    controllerManager: options.components?.controllerManager ?? true,
    scheduler: options.components?.scheduler ?? true,
    kwok: options.components?.kwok ?? true,
  };
  const fakeNodes = options.fakeNodes ?? 1;
  if (!Number.isInteger(fakeNodes) || fakeNodes < 1) throw new Error(`fakeNodes must be an integer >= 1, got ${fakeNodes}`);
  if (options.podsPerNode !== undefined && (!Number.isInteger(options.podsPerNode) || options.podsPerNode < 1)) {
    throw new Error(`podsPerNode must be an integer >= 1, got ${options.podsPerNode}`);
  }
  // kwok-node-0 first (FAKE_NODE_NAME), so `nodeName` stays what it was with one node.
  const nodeNames = components.kwok ? Array.from({ length: fakeNodes }, (_, i) => (i === 0 ? FAKE_NODE_NAME : `kwok-node-${i}`)) : [];
  const binaries = await resolveControlPlaneBinaries({ binDir: options.binDir, kubernetesVersion: options.kubernetesVersion, components, log: options.log });
  const { dir, created } = await prepareDir(options.dir);
  let plane: RunningControlPlane | undefined;
  try {
    await mkdir(join(dir, 'logs'), { recursive: true });
    await mkdir(join(dir, 'pki'), { recursive: true });
    const [pki, etcdClient, etcdPeer, apiServer, controllerManager, scheduler, kwok] = await Promise.all([
      createControlPlanePki(join(dir, 'pki')),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const ports = { etcdClient, etcdPeer, apiServer, controllerManager, scheduler, kwok };
    if (new Set(Object.values(ports)).size !== Object.keys(ports).length) {
      throw new Error(`free port allocation returned duplicates: ${JSON.stringify(ports)}`);
    }
    plane = new RunningControlPlane(
      dir,
      options.dir === undefined || created,
      binaries,
      pki,
      ports,
      options,
      nodeNames,
    );
    if (!options.outliveProcess) {
      running.add(plane);
      installHandlers();
    }
    await plane.startEtcd();
    await plane.startApiServer();
    await plane.writeKubeconfig();
    await plane.saveState();
    const started: Promise<void>[] = [];
    if (components.controllerManager) started.push(plane.startControllerManager());
    if (components.scheduler) started.push(plane.startScheduler());
    if (components.kwok) started.push(plane.startKwok(nodeNames));
    const results = await Promise.allSettled(started);
    const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failures.length > 0) {
      throw failures.length === 1
        ? failures[0]!.reason
        : new AggregateError(failures.map((f) => f.reason), failures.map((f) => (f.reason as Error).message).join('\n\n'));
    }
    return plane;
  } catch (err) {
    if (plane) {
      await plane.stop().catch(() => undefined);
    } else if (options.dir === undefined || created) {
      await rm(dir, { recursive: true, force: true });
    }
    throw err;
  }
}
