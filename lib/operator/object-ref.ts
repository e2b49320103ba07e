/**
 * `ObjectRef`: the one identity of a Kubernetes object in this SDK (a rendered child, a cached object, an
 * inventory entry in a CR's `status.children`, an object in an Event or a log line), as kube-rs'
 * `ObjectRef` is in kube-runtime.
 *
 * An object is named by its API group, kind, namespace and name; the version is carried when known but
 * is not part of its identity (`autoscaling/v1` and `autoscaling/v2` HorizontalPodAutoscaler `h` are the
 * same object, served in two versions). Two spellings, each with one use:
 * - {@link ObjectRef.key}: `group/Kind/namespace/name`, for maps and sets (`/ConfigMap/ns/web` for the core
 *   group, `rbac.authorization.k8s.io/ClusterRole//admin` for a cluster-scoped object). It starts with the
 *   {@link kindKey}, and parses back ({@link ObjectRef.fromKey}).
 * - {@link ObjectRef.toString}: `Kind namespace/name` (`Kind name` when cluster-scoped), for messages, Events
 *   and logs, as kubectl names objects.
 *
 * Within one resource (an informer cache, a controller's workqueue, a metric label) the group and kind go
 * without saying, and an object is keyed by its cache key alone: `namespace/name`, or `name` when
 * cluster-scoped (client-go's `MetaNamespaceKeyFunc`), made by {@link ObjectRef.cacheKeyOf} and
 * {@link ObjectRef.cacheKey} and split by {@link ObjectRef.splitCacheKey}. These statics allocate nothing
 * but the string: they run per watch event.
 *
 * Lives on the construct side (lib/operator) so render and the offline helpers use it too; the runtime
 * imports it from here.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
 */
import { formatObjectReference } from './errors.js';
import { kindKey, parseApiVersion, type GroupKind } from './kinds.js';

/**
 * metav1.OwnerReference: an object's reference to its owner, the one declaration of it (render writes
 * them, the client reads them, adoption checks them). renderChildren writes one per child, to the CR, with
 * `controller` and `blockOwnerDeletion` true.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/
 */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** Whether the owner is the managing controller (at most one ownerReference is). @default false */
  controller?: boolean;
  /** Whether foreground deletion of the owner waits for this object. @default false */
  blockOwnerDeletion?: boolean;
}

/** The parts of an {@link ObjectRef}. */
export interface ObjectRefParts {
  /** API group, `''` for the core group. */
  readonly group: string;
  /** API version within the group (`v1`), when known. Not part of the identity. @default unknown */
  readonly version?: string;
  readonly kind: string;
  /** Namespace; absent (or `''`) for a cluster-scoped object. @default cluster-scoped */
  readonly namespace?: string;
  readonly name: string;
}

/** What {@link ObjectRef.of} reads: any object with apiVersion, kind and metadata (a manifest, a cached object). */
export interface ObjectLike {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
}

/** The parts of a cache key ({@link ObjectRef.splitCacheKey}). */
export interface CacheKeyParts {
  /** Namespace; undefined when cluster-scoped. */
  readonly namespace: string | undefined;
  readonly name: string;
}

/** What {@link ObjectRef.fromEntry} reads: an inventory entry (`status.children`) or any flat reference. */
export interface ObjectEntry {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** A reference to one object: group, version (optional), kind, namespace (optional), name. Immutable. */
export class ObjectRef implements GroupKind {
  readonly group: string;
  readonly version?: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;

  /** An empty namespace counts as none (cluster-scoped). */
  constructor(parts: ObjectRefParts) {
    this.group = parts.group;
    if (parts.version) this.version = parts.version;
    this.kind = parts.kind;
    if (parts.namespace) this.namespace = parts.namespace;
    this.name = parts.name;
  }

  /**
   * The reference of an object (a manifest, a `KubeObject`, a `KubeResource`): its apiVersion's group and
   * version, kind, `metadata.namespace` and `metadata.name`. Missing fields read as `''`; never throws.
   */
  static of(obj: ObjectLike): ObjectRef {
    const { group, version } = parseApiVersion(obj.apiVersion ?? '');
    return new ObjectRef({ group, version, kind: obj.kind ?? '', namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' });
  }

  /** The reference of a flat entry with an `apiVersion` (a `status.children` entry). Never throws. */
  static fromEntry(entry: ObjectEntry): ObjectRef {
    const { group, version } = parseApiVersion(entry.apiVersion);
    return new ObjectRef({ group, version, kind: entry.kind, namespace: entry.namespace, name: entry.name });
  }

  /**
   * The reference a {@link ObjectRef.key} stands for (without version: a key has none).
   * @throws Error when `key` has fewer than four `/`-separated parts
   */
  static fromKey(key: string): ObjectRef {
    const parts = key.split('/');
    if (parts.length < 4) throw new Error(`invalid object key ${JSON.stringify(key)}: expected group/Kind/namespace/name`);
    const [group, kind, namespace] = parts;
    return new ObjectRef({ group, kind, namespace, name: parts.slice(3).join('/') });
  }

  /**
   * The cache and queue key of an object within its resource: `namespace/name`, or `name` when
   * cluster-scoped (client-go's `MetaNamespaceKeyFunc`); a missing name reads as `''`. Never throws.
   * @see https://pkg.go.dev/k8s.io/client-go/tools/cache#MetaNamespaceKeyFunc
   */
  static cacheKeyOf(obj: ObjectLike): string {
    const name = obj.metadata?.name ?? '';
    const namespace = obj.metadata?.namespace;
    return namespace ? `${namespace}/${name}` : name;
  }

  /** The cache key of `name` in `namespace` (undefined or `''`: cluster-scoped); the inverse of {@link ObjectRef.splitCacheKey}. */
  static cacheKey(namespace: string | undefined, name: string): string {
    return namespace ? `${namespace}/${name}` : name;
  }

  /** Splits a cache key ({@link ObjectRef.cacheKeyOf}) into namespace (undefined when cluster-scoped) and name. Never throws. */
  static splitCacheKey(key: string): CacheKeyParts {
    const slash = key.indexOf('/');
    return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
  }

  /**
   * The key of one incarnation of an object: its `metadata.uid` (a deleted and recreated object is another
   * incarnation), or its {@link ObjectRef.cacheKeyOf} when it has no uid (an object not yet created, a
   * stand-in). The status writer and the event recorder keep their per-object state by it.
   */
  static incarnationKeyOf(obj: ObjectLike): string {
    return obj.metadata?.uid ?? ObjectRef.cacheKeyOf(obj);
  }

  /** `group/version`, or the bare version for the core group; undefined when the version is unknown. */
  get apiVersion(): string | undefined {
    if (this.version === undefined) return undefined;
    return this.group ? `${this.group}/${this.version}` : this.version;
  }

  /**
   * The identity as one string, the same for every version: `group/Kind/namespace/name` (namespace `''`
   * when cluster-scoped). Group, kind and namespace never contain `/`, and neither does a valid name (a
   * path segment), so two objects have the same key exactly when they are the same object.
   */
  key(): string {
    return `${kindKey(this)}/${this.namespace ?? ''}/${this.name}`;
  }

  /** This reference's cache key within its resource: `namespace/name`, or `name` when cluster-scoped ({@link ObjectRef.cacheKeyOf}). */
  cacheKey(): string {
    return ObjectRef.cacheKey(this.namespace, this.name);
  }

  /** True when both name the same object (same {@link key}; versions may differ). */
  equals(other: ObjectRef): boolean {
    return this.key() === other.key();
  }

  /** `Kind namespace/name`, or `Kind name` when cluster-scoped: how messages, Events and logs name an object. */
  toString(): string {
    return formatObjectReference(this);
  }
}
