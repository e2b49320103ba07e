/**
 * The fake Node of a local control plane and the kwok Stages that make it and its Pods look alive.
 *
 * kwok (https://kwok.sigs.k8s.io) plays the kubelet's part without running containers: it manages the
 * Nodes that carry {@link KWOK_NODE_ANNOTATION}, keeps their Ready condition and Lease fresh, and moves
 * Pods bound to them through Pending → Running/Ready, Job Pods on to Succeeded, and deletes Pods that
 * are being deleted (as a kubelet would once the containers stopped).
 *
 * The kwok binary has no built-in Stages; they come from the config file written by
 * {@link kwokStagesYaml} (`--config`).
 */

/** Annotation (key=value) that marks Nodes kwok manages; passed as `--manage-nodes-with-annotation-selector`. */
export const KWOK_NODE_ANNOTATION = { key: 'kwok.x-k8s.io/node', value: 'fake' } as const;

/**
 * Allocatable (= capacity) of the fake node, as Kubernetes quantities
 * (kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/). The defaults are roomy, so
 * scheduling never fails for lack of resources: kwok runs no containers, nothing is really used.
 */
export interface FakeNodeResources {
  /** CPU quantity, in cores. @default '32': roomy, nothing really runs */
  readonly cpu?: string;
  /** Memory quantity, in bytes with a binary suffix. @default '256Gi': roomy, nothing really runs */
  readonly memory?: string;
  /** Max Pods. @default '250': roomier than the kubelet's usual ceiling of 110 */
  readonly pods?: string;
}

/** The fake node's allocatable and capacity when {@link fakeNode} is given none (also the Stage's fallback). */
const DEFAULT_NODE_RESOURCES: Required<FakeNodeResources> = { cpu: '32', memory: '256Gi', pods: '250' };

/**
 * The Node object (core/v1, plain JSON) to create for kwok to manage: annotated, labelled like a
 * linux/amd64 node, no taints, with allocatable and capacity in its status (kept on create, as when a
 * kubelet registers).
 *
 * @param resources each given quantity replaces its default (see {@link FakeNodeResources})
 */
export function fakeNode(name: string, resources: FakeNodeResources = {}): Record<string, unknown> {
  const allocatable = { ...DEFAULT_NODE_RESOURCES, ...resources };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION.key]: KWOK_NODE_ANNOTATION.value, 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/worker': '',
        type: 'kwok',
      },
    },
    spec: {},
    status: { allocatable, capacity: allocatable, phase: 'Running' },
  };
}

// Stage templates are Go templates over the object (kwok adds Now, Quote, YAML, NodeIP, NodeName,
// NodeIPsWith, PodIPsWith). Written for this SDK; see kwok's Stage API for the fields.
// Fragments below are written at column 0 and indented where they are used.

/** One Stage document: which objects it selects (matchExpressions, one YAML list item each) and what it does next. */
function stage(spec: { name: string; kind: 'Node' | 'Pod'; match: string[]; delay?: string; next: string }): string {
  return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: ${spec.name}
spec:
  resourceRef: { apiGroup: v1, kind: ${spec.kind} }
  selector:
    matchExpressions:
${spec.match.map((m) => indent(m, 4)).join('\n')}
${spec.delay === undefined ? '' : `${indent(spec.delay, 2)}\n`}  next:
${indent(spec.next, 4)}
`;
}

/** A `next` that writes the status rendered by `template`. */
function statusTemplate(template: string): string {
  return `statusTemplate: |\n${indent(template, 2)}`;
}

const NOT_DELETING = `- key: '.metadata.deletionTimestamp'
  operator: DoesNotExist`;

function phaseIn(phase: string): string {
  return `- key: '.status.phase'
  operator: In
  values: ['${phase}']`;
}

function nodeReadyIs(operator: 'In' | 'NotIn'): string {
  return `- key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
  operator: ${operator}
  values: ['True']`;
}

const nodeConditions = `conditions:
{{ range $c := list (list "Ready" "True" "KubeletReady" "kwok is posting ready status") (list "MemoryPressure" "False" "KubeletHasSufficientMemory" "kwok fake node") (list "DiskPressure" "False" "KubeletHasNoDiskPressure" "kwok fake node") (list "PIDPressure" "False" "KubeletHasSufficientPID" "kwok fake node") (list "NetworkUnavailable" "False" "RouteCreated" "kwok fake node") }}
- type: {{ index $c 0 | Quote }}
  status: {{ index $c 1 | Quote }}
  reason: {{ index $c 2 | Quote }}
  message: {{ index $c 3 | Quote }}
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $since | Quote }}
{{ end }}
addresses:
- type: InternalIP
  address: {{ NodeIP | Quote }}
- type: Hostname
  address: {{ .metadata.name | Quote }}`;

/** `allocatable` or `capacity`: the Node's own (from {@link fakeNode}), else {@link DEFAULT_NODE_RESOURCES}. */
function resourceList(field: 'allocatable' | 'capacity'): string {
  const { cpu, memory, pods } = DEFAULT_NODE_RESOURCES;
  return `${field}:
{{ with .status.${field} }}{{ YAML . 1 }}{{ else }}
  cpu: "${cpu}"
  memory: ${memory}
  pods: "${pods}"
{{ end }}`;
}

const RUNNING = 'state: { running: { startedAt: {{ $now | Quote }} } }';
const COMPLETED = 'state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }';

/** `containerStatuses`: one entry per container of the spec, all in the same state. */
function containerStatuses(ready: boolean, state: string): string {
  return `containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: ${ready}
  started: ${ready}
  restartCount: 0
  ${state}
{{ end }}`;
}

/** Pod conditions of the given types, all with one status (and reason). */
function podConditions(types: string[], status: 'True' | 'False', reason?: string): string {
  return `conditions:
{{ range $type := list ${types.map((t) => `"${t}"`).join(' ')} }}
- type: {{ $type | Quote }}
  status: "${status}"
${reason === undefined ? '' : `  reason: ${reason}\n`}  lastTransitionTime: {{ $now | Quote }}
{{ end }}`;
}

/** `hostIP`/`hostIPs` or `podIP`/`podIPs` from one of kwok's IP functions (`call`), when it returns any. */
function ips(call: string, field: 'hostIP' | 'podIP'): string {
  return `{{ with ${call} }}
${field}: {{ index . 0 | Quote }}
${field}s:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}`;
}

const nodeReadyStage = stage({
  name: 'fake-node-ready',
  kind: 'Node',
  match: [nodeReadyIs('NotIn')],
  next: statusTemplate(`{{ $now := Now }}
{{ $since := $now }}
${nodeConditions}
${resourceList('allocatable')}
${resourceList('capacity')}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: fake
  kubeProxyVersion: fake
  containerRuntimeVersion: kwok
  kernelVersion: kwok
  osImage: kwok
  machineID: ""
  bootID: ""
  systemUUID: ""
phase: Running`),
});

const nodeHeartbeatStage = stage({
  name: 'fake-node-heartbeat',
  kind: 'Node',
  match: [nodeReadyIs('In')],
  delay: `delay:
  durationMilliseconds: 20000
  jitterDurationMilliseconds: 25000`,
  next: statusTemplate(`{{ $now := Now }}
{{ $since := or .metadata.creationTimestamp $now }}
${nodeConditions}`),
});

const podRunningStage = stage({
  name: 'fake-pod-running',
  kind: 'Pod',
  match: [NOT_DELETING, phaseIn('Pending')],
  next: statusTemplate(`{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
${podConditions(['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'], 'True')}
{{ range .spec.readinessGates }}
- type: {{ .conditionType | Quote }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  restartCount: 0
  {{ if eq (or .restartPolicy "") "Always" }}
  ready: true
  started: true
  ${RUNNING}
  {{ else }}
  ready: true
  ${COMPLETED}
  {{ end }}
{{ end }}
${containerStatuses(true, RUNNING)}
${ips('NodeIPsWith .spec.nodeName', 'hostIP')}
${ips('PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" )', 'podIP')}`),
});

const jobPodSucceededStage = stage({
  name: 'fake-job-pod-succeeded',
  kind: 'Pod',
  match: [
    NOT_DELETING,
    phaseIn('Running'),
    `- key: '.metadata.ownerReferences.[].kind'
  operator: In
  values: ['Job']`,
  ],
  next: statusTemplate(`{{ $now := Now }}
phase: Succeeded
${podConditions(['Ready', 'ContainersReady'], 'False', 'PodCompleted')}
${containerStatuses(false, COMPLETED)}`),
});

const podDeleteStage = stage({
  name: 'fake-pod-delete',
  kind: 'Pod',
  match: [
    `- key: '.metadata.deletionTimestamp'
  operator: Exists`,
  ],
  next: 'delete: true',
});

function indent(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

/**
 * kwok `--config` content (multi-document YAML of kwok.x-k8s.io/v1alpha1 Stages):
 * - Node: `fake-node-ready` (not Ready → Ready with allocatable, addresses, nodeInfo) and
 *   `fake-node-heartbeat` (refreshes conditions every 20–45 s).
 * - Pod: `fake-pod-running` (Pending → Running, all conditions True, pod IP from `--cidr`),
 *   `fake-job-pod-succeeded` (a Job's running Pod → Succeeded) and `fake-pod-delete` (a Pod with a
 *   deletionTimestamp is deleted, as a kubelet does after its containers stop).
 */
export function kwokStagesYaml(): string {
  return [nodeReadyStage, nodeHeartbeatStage, podRunningStage, jobPodSucceededStage, podDeleteStage].join('---\n');
}
