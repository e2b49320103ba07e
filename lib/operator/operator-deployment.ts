/**
 * The operator's own Deployment, hardened to the Pod Security Standards "restricted" profile.
 *
 * Built as a plain manifest rather than with cdk8s-plus-28, whose Deployment defaults (2 replicas, no
 * service-account token, runAsNonRoot without a uid, 1 CPU / 512Mi requests) are all wrong here.
 *
 * @see https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
 * @see https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
 */

/** CPU and memory as Kubernetes quantity strings (`100m`, `0.5`, `128Mi`, `1Gi`). */
export interface ResourceQuantities {
  /** CPU quantity, e.g. `100m` (0.1 core). */
  readonly cpu?: string;
  /** Memory quantity in bytes with a binary suffix, e.g. `128Mi`. */
  readonly memory?: string;
}

/** Requests and limits of the operator container. */
export interface OperatorResources {
  /** @default { cpu: '100m', memory: '128Mi' }: enough for a few hundred CRs and their informer caches */
  readonly requests?: ResourceQuantities;
  /** @default { cpu: '500m', memory: '256Mi' }: headroom for resyncs; a memory limit makes leaks fail fast */
  readonly limits?: ResourceQuantities;
}

/** The operator's own Deployment (image, replicas, resources, namespace). */
export interface OperatorDeploymentProps {
  /** Operator image (built from the repository's Dockerfile). @default DEFAULT_OPERATOR_IMAGE */
  readonly image?: string;
  /** @default 'IfNotPresent': the default image is a pinned tag */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /**
   * Replicas. More than 1 turns leader election on (`--leader-elect`): only the leader reconciles, the
   * others wait as hot standbys.
   * @default 1: one reconciler is enough; leader election only adds failover
   */
  readonly replicas?: number;
  /** CPU and memory requests and limits of the operator container. @default see {@link OperatorResources} */
  readonly resources?: OperatorResources;
  /**
   * Namespace the operator runs in (Deployment, ServiceAccount, leader-election Role and Lease).
   * @default `<operatorName>-system`, the kubebuilder convention, so operators don't share a namespace
   */
  readonly namespace?: string;
  /**
   * Emit the Namespace object too. Turn off when the namespace is managed elsewhere.
   * @default true
   */
  readonly createNamespace?: boolean;
  /**
   * Watch a single namespace: RBAC becomes a Role + RoleBinding in that namespace instead of a
   * ClusterRole, and the args get `--namespace=<ns>`. Requires a namespaced kind and namespaced children.
   * @default undefined: all namespaces, with a ClusterRole
   */
  readonly watchNamespace?: string;
}

/** Default operator image (see the repository's Dockerfile). */
export const DEFAULT_OPERATOR_IMAGE = 'cdk8s-operator-sdk:0.1.0';
/** The numeric uid/gid the container runs as (distroless `nonroot`). */
export const OPERATOR_UID = 65532;
/** Port of `/metrics` (controller-runtime's default). */
export const METRICS_PORT = 8080;
/** Port of `/healthz` and `/readyz` (controller-runtime's default). */
export const PROBES_PORT = 8081;
export const DEFAULT_REQUESTS: Required<ResourceQuantities> = { cpu: '100m', memory: '128Mi' };
export const DEFAULT_LIMITS: Required<ResourceQuantities> = { cpu: '500m', memory: '256Mi' };

/** Inputs of {@link operatorDeploymentManifest}, all resolved. */
export interface OperatorDeploymentOptions {
  readonly operatorName: string;
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly labels: Record<string, string>;
  readonly props: OperatorDeploymentProps;
}

/**
 * The container args: `run --operators <name> --metrics-bind-address=:8080
 * --health-probe-bind-address=:8081`, plus `--leader-elect` when replicas > 1 and
 * `--namespace=<ns>` when the operator watches one namespace.
 */
export function operatorArgs(operatorName: string, props: OperatorDeploymentProps): string[] {
  const args = [
    'run',
    '--operators',
    operatorName,
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--health-probe-bind-address=:${PROBES_PORT}`,
  ];
  if ((props.replicas ?? 1) > 1) args.push('--leader-elect');
  if (props.watchNamespace) args.push(`--namespace=${props.watchNamespace}`);
  return args;
}

/** The Deployment manifest (apps/v1). */
export function operatorDeploymentManifest(options: OperatorDeploymentOptions): Record<string, unknown> {
  const { props } = options;
  const replicas = props.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`deployment.replicas must be an integer >= 1, got ${replicas}`);
  const requests = { ...DEFAULT_REQUESTS, ...props.resources?.requests };
  const limits = { ...DEFAULT_LIMITS, ...props.resources?.limits };
  const runAs = { runAsNonRoot: true, runAsUser: OPERATOR_UID, runAsGroup: OPERATOR_UID };
  const seccompProfile = { type: 'RuntimeDefault' };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: options.operatorName, namespace: options.namespace, labels: { ...options.labels } },
    spec: {
      replicas,
      selector: { matchLabels: { ...options.labels } },
      template: {
        metadata: { labels: { ...options.labels } },
        spec: {
          serviceAccountName: options.serviceAccountName,
          automountServiceAccountToken: true,
          securityContext: { ...runAs, fsGroup: OPERATOR_UID, seccompProfile },
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: 'operator',
              image: props.image ?? DEFAULT_OPERATOR_IMAGE,
              imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
              args: operatorArgs(options.operatorName, props),
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              ports: [
                { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
                { name: 'probes', containerPort: PROBES_PORT, protocol: 'TCP' },
              ],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'probes' },
                initialDelaySeconds: 15,
                periodSeconds: 20,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'probes' },
                initialDelaySeconds: 5,
                periodSeconds: 10,
              },
              resources: { requests, limits },
              securityContext: {
                ...runAs,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
                seccompProfile,
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
        },
      },
    },
  };
}
