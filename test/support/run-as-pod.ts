/**
 * Runs the container of a synthesized Deployment the way its pod would run it, without Docker: the
 * container's command and args, its env with the downward-API fields resolved as the kubelet resolves
 * them, and the ServiceAccount's projected token, the cluster CA and the namespace file at
 * /var/run/secrets/kubernetes.io/serviceaccount, with KUBERNETES_SERVICE_HOST/PORT set. The process
 * gets no kubeconfig, so it reaches the API server through in-cluster config as the ServiceAccount.
 *
 * The files are laid out in a private mount namespace (`unshare --mount --propagation private` with a
 * tmpfs over /var/run), so the host's /var/run is untouched; this needs root (or CAP_SYS_ADMIN).
 * What differs from a pod: the process runs as the caller's user, shares the host's network (see
 * {@link RunAsPodOptions.bindAddresses}), and `workingDir` maps the container's working directory to a
 * host directory.
 *
 * @see https://kubernetes.io/docs/tasks/run-application/access-api-from-pod/
 * @see https://kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin/#bound-service-account-token-volume
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { freePort } from './free-port.js';

/** Where a pod sees its ServiceAccount's token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The parts of an apps/v1 Deployment that running its container needs. */
export interface DeploymentLike {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly template: {
      readonly spec: {
        readonly serviceAccountName?: string;
        readonly containers: readonly ContainerLike[];
      };
    };
  };
}

interface EnvVarLike {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string } };
}

interface ContainerLike {
  readonly name: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: readonly EnvVarLike[];
}

export interface RunAsPodOptions {
  /** The synthesized Deployment; its first container runs. Its namespace is the pod's. */
  readonly deployment: DeploymentLike;
  /** Host directory that stands for the container's `workingDir` (the command runs in it). */
  readonly workingDir: string;
  /**
   * An admin kubeconfig of the cluster: it gives the API server's address and CA, and requests the
   * ServiceAccount token. The process gets neither the file nor its credentials.
   */
  readonly kubeConfig: KubeConfig;
  /**
   * Replace the container's `:8443` / `:8081` bind addresses with free loopback ports: a pod has a
   * network namespace of its own, this process shares the host's with other tests.
   * @default true
   */
  readonly bindAddresses?: boolean;
  /** Appended to the container's args (after the bind addresses). @default none */
  readonly extraArgs?: readonly string[];
  /** The pod's name (`metadata.name` fieldRef). @default `<deployment name>-5f7c9d8b6-x2x4q`, shaped like a ReplicaSet's pod name */
  readonly podName?: string;
}

/** A running pod process. */
export interface PodProcess {
  readonly pid: number;
  /** The args the process got (the container's, plus the bind addresses and extraArgs). */
  readonly args: readonly string[];
  /** `/metrics` port on 127.0.0.1, when {@link RunAsPodOptions.bindAddresses}. */
  readonly metricsPort?: number;
  /** `/healthz` and `/readyz` port on 127.0.0.1, when {@link RunAsPodOptions.bindAddresses}. */
  readonly healthProbePort?: number;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) once the process ends. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, as the kubelet sends it, then waits for the exit; SIGKILL after `graceMs` (default 30000, terminationGracePeriodSeconds). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * A token for ServiceAccount `namespace/name` from the TokenRequest API, for the API server's
 * default audiences, as the kubelet projects it into a pod.
 * @see https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
 */
export async function requestServiceAccountToken(kubeConfig: KubeConfig, namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
  const client = new ApiClient({ kubeConfig });
  try {
    const answer = await client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
    });
    return answer.status.token;
  } finally {
    client.close();
  }
}

/** The env of `container` with fieldRefs resolved as the kubelet does (only the fields a pod has here). */
function resolveEnv(container: ContainerLike, pod: { namespace: string; name: string; serviceAccountName: string }): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.namespace': pod.namespace, 'metadata.name': pod.name, 'spec.serviceAccountName': pod.serviceAccountName };
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef && fields[variable.valueFrom.fieldRef.fieldPath] !== undefined) env[variable.name] = fields[variable.valueFrom.fieldRef.fieldPath]!;
    else throw new Error(`runContainerAsPod: env ${variable.name}: only values and fieldRefs to ${Object.keys(fields).join(', ')} are supported`);
  }
  return env;
}

/** The args with `--metrics-bind-address` / `--health-probe-bind-address` values replaced. */
function withBindAddresses(args: readonly string[], metrics: string, probes: string): string[] {
  return args.map((arg) => {
    if (arg.startsWith('--metrics-bind-address=')) return `--metrics-bind-address=${metrics}`;
    if (arg.startsWith('--health-probe-bind-address=')) return `--health-probe-bind-address=${probes}`;
    if (arg.startsWith('--webhook-bind-address=')) return '--webhook-bind-address=127.0.0.1:0'; // a free port; the API server does not call it here
    return arg;
  });
}

// $1: staged files, $2: working directory, then the command. /var/run is a symlink to /run on most
// systems; mounting over it mounts over its target, which the private mount namespace keeps local.
const POD_SHELL = [
  'set -e',
  'mount -t tmpfs -o mode=0755 tmpfs /var/run',
  `mkdir -p ${SERVICE_ACCOUNT_DIR}`,
  `cp "$1"/token "$1"/ca.crt "$1"/namespace ${SERVICE_ACCOUNT_DIR}/`,
  'cd "$2"',
  'shift 2',
  'exec "$@"',
].join('\n');

/**
 * Starts the Deployment's first container as a process, as its pod would run it (see the file header).
 *
 * @throws Error when the Deployment has no container or command, the kubeconfig has no CA data or
 *   file, or an env var uses a source other than a value or a supported fieldRef
 */
export async function runContainerAsPod(options: RunAsPodOptions): Promise<PodProcess> {
  const pod = options.deployment.spec.template.spec;
  const container = pod.containers[0];
  if (!container?.command?.length) throw new Error('runContainerAsPod: the Deployment has no container with a command');
  const namespace = options.deployment.metadata.namespace ?? 'default';
  const serviceAccountName = pod.serviceAccountName ?? 'default';
  const cluster = options.kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('runContainerAsPod: the kubeconfig has no current cluster');
  const server = new URL(cluster.server);
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : undefined;
  if (!ca && !cluster.caFile) throw new Error('runContainerAsPod: the kubeconfig has no certificate-authority(-data)');

  const stage = await mkdtemp(join(tmpdir(), 'run-as-pod-'));
  await writeFile(join(stage, 'token'), await requestServiceAccountToken(options.kubeConfig, namespace, serviceAccountName));
  await writeFile(join(stage, 'ca.crt'), ca ?? (await readFile(cluster.caFile!, 'utf8')));
  await writeFile(join(stage, 'namespace'), namespace);

  let args = [...(container.args ?? [])];
  let metricsPort: number | undefined;
  let healthProbePort: number | undefined;
  if (options.bindAddresses ?? true) {
    metricsPort = await freePort();
    healthProbePort = await freePort();
    args = withBindAddresses(args, `127.0.0.1:${metricsPort}`, `127.0.0.1:${healthProbePort}`);
  }
  args.push(...(options.extraArgs ?? []));

  const env = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    ...resolveEnv(container, { namespace, name: options.podName ?? `${options.deployment.metadata.name}-5f7c9d8b6-x2x4q`, serviceAccountName }),
    // What the kubelet sets for the `kubernetes` Service; here, the API server itself.
    KUBERNETES_SERVICE_HOST: server.hostname.replace(/^\[|\]$/g, ''),
    KUBERNETES_SERVICE_PORT: server.port || '443',
  };
  const child = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', POD_SHELL, 'sh', stage, options.workingDir, ...container.command, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  }).finally(() => rm(stage, { recursive: true, force: true }));

  return {
    pid: child.pid!,
    args,
    metricsPort,
    healthProbePort,
    output: () => output,
    exited,
    async stop(graceMs = 30_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
