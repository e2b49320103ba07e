/**
 * The operator's own Deployment, hardened to the Pod Security Standards "restricted" profile.
 *
 * Built as a plain manifest rather than with cdk8s-plus-28, whose Deployment defaults (2 replicas, no
 * service-account token, runAsNonRoot without a uid, 1 CPU / 512Mi requests) are all wrong here.
 *
 * The container runs the user's own image: `command` (the SDK's CLI as `npm ci` installed it in the
 * image) with `run --module <module> --operators <name> …`, in `workingDir`. There is no default image:
 * no image published with the SDK holds the user's code. The container is built lazily, when the
 * Deployment is synthesized, so an operator without `image` can still be constructed and render CRs
 * (`renderChildren`, `renderForSnapshot`, `cdk8s-operator run|dev|render`).
 *
 * Metrics are secure (HTTPS on 8443, each scrape reviewed by the API server; the `run` default, see
 * lib/runtime/metrics/metrics-auth.ts), with a metrics Service and RBAC beside it (metrics-objects.ts).
 * Probes stay plain HTTP on 8081 (the kubelet calls them).
 *
 * @see https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
 * @see https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/
 */
import { ApiObject, Lazy } from 'cdk8s';
import type { Construct } from 'constructs';
import { parseQuantity } from '../schema/quantity.js';
import { OperatorConfigError } from '../errors.js';
import { SECURE_METRICS_PORT } from './metrics-objects.js';
import { messageOf } from '../../error-text.js';

/** CPU and memory as Kubernetes quantity strings (`100m`, `0.5`, `128Mi`, `1Gi`). */
export interface ResourceQuantities {
  /** CPU quantity, e.g. `100m` (0.1 core). @default the {@link OperatorResources} default of the same field */
  readonly cpu?: string;
  /** Memory quantity in bytes with a binary suffix, e.g. `128Mi`. @default the {@link OperatorResources} default of the same field */
  readonly memory?: string;
}

/** Requests and limits of the operator container. */
export interface OperatorResources {
  /** @default { cpu: '100m', memory: '128Mi' }: enough for a few hundred CRs and their informer caches */
  readonly requests?: ResourceQuantities;
  /** @default { cpu: '500m', memory: '256Mi' }: headroom for resyncs; a memory limit makes leaks fail fast */
  readonly limits?: ResourceQuantities;
}

/**
 * The operator's own Deployment (image, module, replicas, resources, namespace).
 *
 * `image` and `module` are required to synthesize it; everything else has a default.
 */
export interface OperatorDeploymentProps {
  /**
   * The image that holds your operator's code and its `node_modules` (the SDK included), e.g.
   * `registry.example.com/team/memcached-operator:1.4.0`, built with the Dockerfile that
   * `cdk8s-operator init` generates.
   * @default none: required to synthesize the Deployment. Synthesis (`toJson()`, `cdk8s synth`) fails
   *   with OperatorConfigError without it; constructing the operator and rendering CRs work without it.
   */
  readonly image?: string;
  /**
   * Path of the module inside the image that exports `addOperators(scope)`, relative to `workingDir`,
   * e.g. `operators.ts` (tsx loads TypeScript) or `dist/operators.js`. Passed as `run --module <module>`.
   * @default none: required together with `image` (OperatorConfigError at synthesis without it)
   */
  readonly module?: string;
  /**
   * The container's working directory: where the image holds your project (`module` and a relative
   * `command` resolve against it).
   * @default '/app': the WORKDIR of the Dockerfile that `cdk8s-operator init` generates
   */
  readonly workingDir?: string;
  /**
   * The container's command (it replaces the image's ENTRYPOINT); the args follow it.
   * @default `['node', 'node_modules/cdk8s-operator-sdk/bin/cdk8s-operator.js']`: the SDK's CLI as
   *   `npm ci` installs it in `workingDir`, so the image needs no particular ENTRYPOINT
   */
  readonly command?: string[];
  /**
   * @default 'IfNotPresent': Kubernetes' own default for a tag other than `:latest`. Give `image` an
   *   immutable tag or a digest (a node keeps a cached tag); set 'Always' for a moving tag.
   * @see https://kubernetes.io/docs/concepts/containers/images/#image-pull-policy
   */
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /**
   * Replicas. More than 1 turns leader election on (`--leader-elect`): only the leader reconciles, the
   * others wait as hot standbys.
   * @default 1: one reconciler is enough; leader election only adds failover
   */
  readonly replicas?: number;
  /**
   * Shard the CRs across the replicas (`--sharding`; docs/how-to/sharding.md) instead of electing a
   * leader. Each replica keeps its own Lease in the operator's namespace (the leader-election Role then
   * grants delete on leases too: a replica deletes its Lease when it stops) and reconciles the CRs of its
   * buckets; webhooks are served by every replica as without it. With 1 replica it is a ring of one,
   * which shards as soon as the Deployment is scaled (`kubectl scale`, an autoscaler).
   * @default false: leader election when replicas > 1, one replica reconciles
   */
  readonly sharding?: boolean;
  /** CPU and memory requests and limits of the operator container. @default see {@link OperatorResources} */
  readonly resources?: OperatorResources;
  /**
   * Namespace the operator runs in (Deployment, ServiceAccount, leader-election Role and Lease).
   * @default `<operatorName>-system`, the kubebuilder convention, so operators don't share a namespace
   */
  readonly namespace?: string;
  /**
   * Emit the Namespace object too. Turn off when the namespace is managed elsewhere.
   * @default true: the namespace is the operator's own (`<operatorName>-system` unless `namespace` says
   *   otherwise), so its install creates it
   */
  readonly createNamespace?: boolean;
  /**
   * Watch a single namespace: RBAC becomes a Role + RoleBinding in that namespace instead of a
   * ClusterRole, and the args get `--namespace=<ns>`. Requires a namespaced kind and namespaced children.
   * @default undefined: all namespaces, with a ClusterRole
   */
  readonly watchNamespace?: string;
  /**
   * Emit NetworkPolicies for the operator's pods: `/metrics` (8443) only from namespaces labelled
   * `metrics: enabled`, and webhook traffic (9443) for an operator with webhooks (metrics-objects.ts).
   * @default false: as Kubebuilder (its config/network-policy is opt-in); a NetworkPolicy needs a network
   *   plugin that enforces it, and drops any other ingress to the pods
   */
  readonly networkPolicies?: boolean;
  /**
   * Pass `--validate-children`: each render's children are checked by Kubernetes' own validation, offline,
   * before they are applied (a refused one is Stalled=True `ChildRefused`). The validator about doubles
   * the process's peak memory at the first reconcile (bench/validate-children-memory.ts: 252–271 MiB with
   * it, 113–118 MiB without; in a cluster pod 320–328 MiB against 155–161 MiB, issue 37), so the container's memory defaults become
   * {@link VALIDATE_CHILDREN_MEMORY} (request 384Mi, limit 512Mi) instead of 128Mi / 256Mi; a
   * `resources.limits.memory` set below {@link VALIDATE_CHILDREN_MIN_MEMORY_LIMIT} (384Mi) is refused at
   * synth (OperatorConfigError naming the field), since the pod would be OOMKilled at its first reconcile.
   * @default false: the API server validates each apply anyway (a refusal is Stalled=True `ApplyFailed`)
   */
  readonly validateChildren?: boolean;
}

/** Where the image holds the user's project (the generated Dockerfile's WORKDIR). */
export const DEFAULT_WORKING_DIR = '/app';
/** The SDK's CLI as `npm ci` installs it in {@link DEFAULT_WORKING_DIR}. */
export const DEFAULT_OPERATOR_COMMAND: readonly string[] = ['node', 'node_modules/cdk8s-operator-sdk/bin/cdk8s-operator.js'];
/** The numeric uid/gid the container runs as (distroless `nonroot`). */
export const OPERATOR_UID = 65532;
/** Port of the secure `/metrics` (Kubebuilder's; `run` serves HTTPS there by default). */
export const METRICS_PORT = SECURE_METRICS_PORT;
/** Port of `/healthz` and `/readyz` (controller-runtime's default). */
export const PROBES_PORT = 8081;
/** The operator container's requests when {@link OperatorResources.requests} leaves a field out. */
export const DEFAULT_REQUESTS: Required<ResourceQuantities> = { cpu: '100m', memory: '128Mi' };
/** The operator container's limits when {@link OperatorResources.limits} leaves a field out. */
export const DEFAULT_LIMITS: Required<ResourceQuantities> = { cpu: '500m', memory: '256Mi' };

/**
 * The operator container's memory request and limit with `validateChildren` when `resources` leaves them
 * out: the highest measured peak at the first reconcile (320–328 MiB in a cluster pod, issue 37;
 * 252–271 MiB in bench/validate-children-memory.ts) under the request's 384Mi, and the limit keeping the same headroom over it as the default 256Mi keeps
 * over the 155–161 MiB peak without validation.
 */
export const VALIDATE_CHILDREN_MEMORY = { request: '384Mi', limit: '512Mi' } as const;
/** The lowest `resources.limits.memory` accepted with `validateChildren`: the highest measured peak (328 MiB, in a cluster pod) and some headroom. */
export const VALIDATE_CHILDREN_MIN_MEMORY_LIMIT = '384Mi';

/** Inputs of {@link operatorDeploymentManifest}, all resolved. */
export interface OperatorDeploymentOptions {
  readonly operatorName: string;
  /** Construct path of the operator, named by errors. @default operatorName */
  readonly constructPath?: string;
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly labels: Record<string, string>;
  readonly props: OperatorDeploymentProps;
}

/**
 * The container args: `run --module <module> --operators <name> --metrics-bind-address=:8443
 * --health-probe-bind-address=:8081`, plus `--sharding` with `sharding` (any replicas), else `--leader-elect` when replicas > 1,
 * `--namespace=<ns>` when the operator watches one namespace, and `--validate-children` when asked.
 */
export function operatorArgs(operatorName: string, module: string, props: OperatorDeploymentProps): string[] {
  const args = [
    'run',
    '--module',
    module,
    '--operators',
    operatorName,
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--health-probe-bind-address=:${PROBES_PORT}`,
  ];
  if (props.sharding) args.push('--sharding');
  else if ((props.replicas ?? 1) > 1) args.push('--leader-elect');
  if (props.watchNamespace) args.push(`--namespace=${props.watchNamespace}`);
  if (props.validateChildren) args.push('--validate-children');
  return args;
}

/** Bytes of a memory quantity (`512Mi`, `1G`, `400000000`, `1e9`); undefined when it is not one (the API server names that itself). */
function memoryBytes(quantity: string): number | undefined {
  const value = parseQuantity(quantity);
  return value === undefined ? undefined : Number(value.coefficient) * 10 ** value.exponent;
}

/** The Deployment manifest (apps/v1). */
export function operatorDeploymentManifest(options: OperatorDeploymentOptions): Record<string, unknown> {
  const { props } = options;
  const replicas = props.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`deployment.replicas must be an integer >= 1, got ${replicas}`);
  const runAs = { runAsNonRoot: true, runAsUser: OPERATOR_UID, runAsGroup: OPERATOR_UID };
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
          securityContext: { ...runAs, fsGroup: OPERATOR_UID, seccompProfile: { type: 'RuntimeDefault' } },
          terminationGracePeriodSeconds: 30,
          // Lazy: only synthesizing the Deployment needs image and module (see the file header).
          containers: Lazy.any({ produce: () => [operatorContainer(options)] }),
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
        },
      },
    },
  };
}

/** The messages {@link operatorContainer} would throw, for a construct validation; empty when it is fine. */
export function operatorContainerProblems(options: OperatorDeploymentOptions): string[] {
  try {
    operatorContainer(options);
    return [];
  } catch (error) {
    return [messageOf(error)];
  }
}

/**
 * The operator container of {@link operatorDeploymentManifest}.
 *
 * @throws OperatorConfigError when `image` or `module` is missing, or `command` is empty
 */
export function operatorContainer(options: OperatorDeploymentOptions): Record<string, unknown> {
  const { props } = options;
  const fail = (detail: string): never => {
    throw new OperatorConfigError(options.constructPath ?? options.operatorName, detail);
  };
  const workingDir = props.workingDir ?? DEFAULT_WORKING_DIR;
  const image = props.image || fail("deployment.image is required: the image that holds your operator's code (build it with the Dockerfile that `cdk8s-operator init` generates)");
  const module = props.module || fail(`deployment.module is required with deployment.image: the path, relative to deployment.workingDir (${workingDir}), of the module in the image that exports addOperators(scope), e.g. operators.ts`);
  if (props.command !== undefined && props.command.length === 0) fail('deployment.command must not be empty');
  const validating = props.validateChildren === true;
  const requests = { ...DEFAULT_REQUESTS, ...(validating ? { memory: VALIDATE_CHILDREN_MEMORY.request } : {}), ...props.resources?.requests };
  const limits = { ...DEFAULT_LIMITS, ...(validating ? { memory: VALIDATE_CHILDREN_MEMORY.limit } : {}), ...props.resources?.limits };
  const userLimit = props.resources?.limits?.memory;
  if (validating && userLimit !== undefined && (memoryBytes(userLimit) ?? Infinity) < memoryBytes(VALIDATE_CHILDREN_MIN_MEMORY_LIMIT)!) {
    fail(
      `deployment.resources.limits.memory is ${userLimit}, below the ${VALIDATE_CHILDREN_MIN_MEMORY_LIMIT} that deployment.validateChildren needs (run --validate-children peaks at about 328 MiB at its first reconcile, and would be OOMKilled): raise the limit to at least ${VALIDATE_CHILDREN_MIN_MEMORY_LIMIT} (leave it out for ${VALIDATE_CHILDREN_MEMORY.limit}), or turn validateChildren off`,
    );
  }
  const runAs = { runAsNonRoot: true, runAsUser: OPERATOR_UID, runAsGroup: OPERATOR_UID };
  const seccompProfile = { type: 'RuntimeDefault' };
  return {
    name: 'operator',
    image,
    imagePullPolicy: props.imagePullPolicy ?? 'IfNotPresent',
    workingDir,
    command: [...(props.command ?? DEFAULT_OPERATOR_COMMAND)],
    args: operatorArgs(options.operatorName, module, props),
    env: [
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      // Set here too, not only in the image: dependencies skip development-only code paths with it.
      { name: 'NODE_ENV', value: 'production' },
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
  };
}

/**
 * The operator's Deployment as a child construct of the `Operator` chart: {@link operatorDeploymentManifest}
 * of its props. Its container's problems (no image, no module, too little memory) are construct
 * validations, reported by `cdk8s synth` before the Deployment is serialized (which would wrap the same
 * error in cdk8s's "Failed serializing construct"); rendering CRs needs no image.
 */
export class OperatorDeployment extends ApiObject {
  /** The labels its pods carry and its selector matches (`spec.selector.matchLabels`). */
  readonly podLabels: Record<string, string>;

  constructor(scope: Construct, id: string, props: OperatorDeploymentOptions) {
    const manifest = operatorDeploymentManifest(props) as { apiVersion: string; kind: string; spec?: { selector?: { matchLabels?: Record<string, string> } } };
    super(scope, id, manifest);
    this.podLabels = manifest.spec?.selector?.matchLabels ?? props.labels;
    this.node.addValidation({ validate: () => operatorContainerProblems(props) });
  }
}
