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

/** Allocatable (= capacity) of the fake node. Roomy, so scheduling never fails for lack of resources. */
export interface FakeNodeResources {
  /** CPU quantity. Default `32`. */
  readonly cpu?: string;
  /** Memory quantity. Default `256Gi`. */
  readonly memory?: string;
  /** Max Pods. Default `250`. */
  readonly pods?: string;
}

/**
 * The Node object to create for kwok to manage: annotated, labelled like a linux/amd64 node, no taints,
 * with allocatable and capacity in its status (kept on create, as when a kubelet registers).
 */
export function fakeNode(name: string, resources: FakeNodeResources = {}): Record<string, unknown> {
  const allocatable = { cpu: resources.cpu ?? '32', memory: resources.memory ?? '256Gi', pods: resources.pods ?? '250' };
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

const nodeConditions = `
conditions:
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

const nodeReadyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: fake-node-ready
spec:
  resourceRef: { apiGroup: v1, kind: Node }
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $since := $now }}
${indent(nodeConditions, 6)}
      allocatable:
      {{ with .status.allocatable }}{{ YAML . 1 }}{{ else }}
        cpu: "32"
        memory: 256Gi
        pods: "250"
      {{ end }}
      capacity:
      {{ with .status.capacity }}{{ YAML . 1 }}{{ else }}
        cpu: "32"
        memory: 256Gi
        pods: "250"
      {{ end }}
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
      phase: Running
`;

const nodeHeartbeatStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: fake-node-heartbeat
spec:
  resourceRef: { apiGroup: v1, kind: Node }
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: In
      values: ['True']
  delay:
    durationMilliseconds: 20000
    jitterDurationMilliseconds: 25000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $since := or .metadata.creationTimestamp $now }}
${indent(nodeConditions, 6)}
`;

const podRunningStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: fake-pod-running
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Pending']
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Running
      startTime: {{ $now | Quote }}
      conditions:
      {{ range $type := list "PodScheduled" "Initialized" "ContainersReady" "Ready" }}
      - type: {{ $type | Quote }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
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
        state: { running: { startedAt: {{ $now | Quote }} } }
        {{ else }}
        ready: true
        state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }
        {{ end }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        started: true
        restartCount: 0
        state: { running: { startedAt: {{ $now | Quote }} } }
      {{ end }}
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
`;

const jobPodSucceededStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: fake-job-pod-succeeded
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: ['Running']
    - key: '.metadata.ownerReferences.[].kind'
      operator: In
      values: ['Job']
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Succeeded
      conditions:
      {{ range $type := list "Ready" "ContainersReady" }}
      - type: {{ $type | Quote }}
        status: "False"
        reason: PodCompleted
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: false
        started: false
        restartCount: 0
        state: { terminated: { exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }} } }
      {{ end }}
`;

const podDeleteStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: fake-pod-delete
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: Exists
  next:
    delete: true
`;

function indent(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .trim()
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
