/**
 * Kind → resource table: how a kind's apiVersion + kind map to the REST resource (plural) and scope that
 * RBAC rules, informers and namespace stamping need.
 *
 * The built-in table covers the core groups of Kubernetes 1.28+. Any other kind (another operator's
 * CRD, an unusual built-in) must be declared in the operator's `owns` with `plural` and `namespaced`.
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#standard-api-terminology
 */
import { UnknownKindError } from './errors.js';

/** A kind an operator creates as a child. `plural` and `namespaced` come from the built-in kind table unless given. */
export interface ChildKind {
  /** `group/version`, or `v1` for the core group. */
  readonly apiVersion: string;
  /** CamelCase kind, e.g. `Deployment`. */
  readonly kind: string;
  /** REST resource name, e.g. `deployments`. @default looked up: the operator's `owns`, then the built-in table */
  readonly plural?: string;
  /** Whether objects of this kind live in a namespace. @default looked up: the operator's `owns`, then the built-in table */
  readonly namespaced?: boolean;
}

/** The same, fully resolved. `group` is `''` for the core group. */
export interface ResolvedKind {
  /** `group/version`, or `v1` for the core group. */
  readonly apiVersion: string;
  /** API group, `''` for the core group. */
  readonly group: string;
  /** Version within the group, e.g. `v1`. */
  readonly version: string;
  /** CamelCase kind, e.g. `Deployment`. */
  readonly kind: string;
  /** REST resource name, e.g. `deployments` (RBAC rules and URL paths use it). */
  readonly plural: string;
  /** Whether objects of this kind live in a namespace. */
  readonly namespaced: boolean;
}

/**
 * A kind without its version: what names a kind across the versions of its API group (Kubernetes'
 * `schema.GroupKind`). `group` is `''` for the core group.
 */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

/**
 * The one key of a kind, the same for every version of its group: `group/Kind`, `/ConfigMap` for the
 * core group (e.g. `apps/Deployment`). Neither part contains `/` (a group is a DNS subdomain, a kind a
 * CamelCase identifier), so the key is unambiguous; {@link ObjectRef.key} starts with it.
 */
export function kindKey(kind: GroupKind): string {
  return `${kind.group}/${kind.kind}`;
}

/**
 * The one key of a REST resource, version included: `group/version/plural` (`apps/v1/deployments`,
 * `/v1/configmaps` for the core group). What a watch of one resource is kept by (an informer per
 * resource); the kind of an object is {@link kindKey}.
 */
export function resourceKey(resource: { readonly group: string; readonly version: string; readonly plural: string }): string {
  return `${resource.group}/${resource.version}/${resource.plural}`;
}

/** The {@link GroupKind} of an `apiVersion` (`apps/v1`, `v1`) and a kind. */
export function groupKindOf(apiVersion: string, kind: string): GroupKind {
  return { group: parseApiVersion(apiVersion).group, kind };
}

interface KindEntry {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

const NS = true;
const CLUSTER = false;

/** group → [kind, plural, namespaced][]; version-independent (autoscaling/v1 and v2 map alike). */
const TABLE: Record<string, readonly (readonly [string, string, boolean])[]> = {
  '': [
    ['ConfigMap', 'configmaps', NS],
    ['Endpoints', 'endpoints', NS],
    ['Event', 'events', NS],
    ['LimitRange', 'limitranges', NS],
    ['Namespace', 'namespaces', CLUSTER],
    ['Node', 'nodes', CLUSTER],
    ['PersistentVolume', 'persistentvolumes', CLUSTER],
    ['PersistentVolumeClaim', 'persistentvolumeclaims', NS],
    ['Pod', 'pods', NS],
    ['PodTemplate', 'podtemplates', NS],
    ['ReplicationController', 'replicationcontrollers', NS],
    ['ResourceQuota', 'resourcequotas', NS],
    ['Secret', 'secrets', NS],
    ['Service', 'services', NS],
    ['ServiceAccount', 'serviceaccounts', NS],
  ],
  'admissionregistration.k8s.io': [
    ['MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', CLUSTER],
    ['ValidatingAdmissionPolicy', 'validatingadmissionpolicies', CLUSTER],
    ['ValidatingAdmissionPolicyBinding', 'validatingadmissionpolicybindings', CLUSTER],
    ['ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', CLUSTER],
  ],
  'apiextensions.k8s.io': [['CustomResourceDefinition', 'customresourcedefinitions', CLUSTER]],
  'apiregistration.k8s.io': [['APIService', 'apiservices', CLUSTER]],
  apps: [
    ['ControllerRevision', 'controllerrevisions', NS],
    ['DaemonSet', 'daemonsets', NS],
    ['Deployment', 'deployments', NS],
    ['ReplicaSet', 'replicasets', NS],
    ['StatefulSet', 'statefulsets', NS],
  ],
  autoscaling: [['HorizontalPodAutoscaler', 'horizontalpodautoscalers', NS]],
  batch: [
    ['CronJob', 'cronjobs', NS],
    ['Job', 'jobs', NS],
  ],
  'certificates.k8s.io': [['CertificateSigningRequest', 'certificatesigningrequests', CLUSTER]],
  'coordination.k8s.io': [['Lease', 'leases', NS]],
  'discovery.k8s.io': [['EndpointSlice', 'endpointslices', NS]],
  'events.k8s.io': [['Event', 'events', NS]],
  'networking.k8s.io': [
    ['Ingress', 'ingresses', NS],
    ['IngressClass', 'ingressclasses', CLUSTER],
    ['NetworkPolicy', 'networkpolicies', NS],
  ],
  'node.k8s.io': [['RuntimeClass', 'runtimeclasses', CLUSTER]],
  policy: [['PodDisruptionBudget', 'poddisruptionbudgets', NS]],
  'rbac.authorization.k8s.io': [
    ['ClusterRole', 'clusterroles', CLUSTER],
    ['ClusterRoleBinding', 'clusterrolebindings', CLUSTER],
    ['Role', 'roles', NS],
    ['RoleBinding', 'rolebindings', NS],
  ],
  'scheduling.k8s.io': [['PriorityClass', 'priorityclasses', CLUSTER]],
  'storage.k8s.io': [
    ['CSIDriver', 'csidrivers', CLUSTER],
    ['CSINode', 'csinodes', CLUSTER],
    ['CSIStorageCapacity', 'csistoragecapacities', NS],
    ['StorageClass', 'storageclasses', CLUSTER],
    ['VolumeAttachment', 'volumeattachments', CLUSTER],
  ],
};

const BY_GROUP_KIND = new Map<string, KindEntry>(
  Object.entries(TABLE).flatMap(([group, rows]) =>
    rows.map(([kind, plural, namespaced]) => [kindKey({ group, kind }), { group, kind, plural, namespaced }] as const),
  ),
);

/** Splits `apps/v1` into `{ group: 'apps', version: 'v1' }` and `v1` into `{ group: '', version: 'v1' }`. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Looks a kind up in the built-in table only; `undefined` when it is not there. */
export function lookupBuiltInKind(apiVersion: string, kind: string): ResolvedKind | undefined {
  const { group, version } = parseApiVersion(apiVersion);
  const entry = BY_GROUP_KIND.get(kindKey({ group, kind }));
  return entry && { apiVersion, group, version, kind, plural: entry.plural, namespaced: entry.namespaced };
}

/**
 * Resolves a kind: its own `plural`/`namespaced` first, then a matching entry (same group and kind) of
 * `declared` (the operator's `owns`), then the built-in table.
 *
 * @param declared the operator's `owns`; default `[]`: the built-in table only
 * @throws UnknownKindError when plural or scope is still unknown.
 */
export function resolveKind(child: ChildKind, declared: readonly ChildKind[] = []): ResolvedKind {
  const { group, version } = parseApiVersion(child.apiVersion);
  const match = declared.find((d) => d.kind === child.kind && parseApiVersion(d.apiVersion).group === group);
  const builtIn = BY_GROUP_KIND.get(kindKey({ group, kind: child.kind }));
  const plural = child.plural ?? match?.plural ?? builtIn?.plural;
  const namespaced = child.namespaced ?? match?.namespaced ?? builtIn?.namespaced;
  if (plural === undefined || namespaced === undefined) throw new UnknownKindError(child.apiVersion, child.kind);
  return { apiVersion: child.apiVersion, group, version, kind: child.kind, plural, namespaced };
}

/** Orders kinds by group, kind, version (deterministic RBAC and informer order). */
export function compareKinds(a: ResolvedKind, b: ResolvedKind): number {
  return cmp(a.group, b.group) || cmp(a.kind, b.kind) || cmp(a.version, b.version);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
