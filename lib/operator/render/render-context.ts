/**
 * The third argument of `render(cr, scope, context)`: a read-only view of what exists in the cluster,
 * taken from the runtime's cache (or, offline, from the objects a test or `render -f` gives). Render
 * stays a pure function of `cr` and `context`: the same inputs give byte-identical children.
 */
import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { parseApiVersion } from '../kinds.js';

/**
 * A Kubernetes object as the API server returns it (JSON form: strings for times and quantities).
 * `spec`, `status` and `data` are typed loosely so a render can read them without casts; treat them as
 * read-only.
 */
export interface KubeResource {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly [key: string]: unknown;
  };
  readonly spec?: any;
  readonly status?: any;
  readonly data?: Readonly<Record<string, string>>;
  readonly [key: string]: unknown;
}

/** A kind, as in `{ apiVersion: 'apps/v1', kind: 'Deployment' }`; the version is not compared. */
export interface KindSelector {
  readonly apiVersion: string;
  readonly kind: string;
}

/** This CR's children as they exist (owned by it, from the cache). */
export class ObservedChildren {
  private readonly objects: readonly KubeResource[];
  private readonly onRead: (() => void) | undefined;

  /**
   * @param objects the children, in the order `list` and `all` return them (renderCustomResource sorts them with {@link sortResources})
   * @param onRead called on every read (`of`, `get`, `list`, `all`): the runtime's render memo then
   *   counts the observed children among render's inputs. @default none
   */
  constructor(objects: readonly KubeResource[], onRead?: () => void) {
    this.objects = objects;
    this.onRead = onRead;
  }

  /**
   * The existing object behind a child construct built in this render: an `ApiObject`, or a construct
   * with exactly one `ApiObject` below it (a cdk8s-plus `Deployment`, `Secret` …). Matched by API group,
   * kind and name; undefined while it does not exist yet.
   *
   * @throws Error when `construct` holds no ApiObject or several
   */
  of(construct: IConstruct): KubeResource | undefined {
    const apiObject = singleApiObject(construct);
    return this.get(apiObject, apiObject.name);
  }

  /** The existing child of this kind (any version of its group) and name; undefined while it does not exist. */
  get(kind: KindSelector, name: string): KubeResource | undefined {
    return this.list(kind).find((o) => o.metadata.name === name);
  }

  /** The existing children of this kind (any version of its group), sorted by apiVersion, namespace and name. */
  list(kind: KindSelector): KubeResource[] {
    this.onRead?.();
    const group = parseApiVersion(kind.apiVersion).group;
    return this.objects.filter((o) => o.kind === kind.kind && parseApiVersion(o.apiVersion).group === group);
  }

  /** Every existing child, sorted by apiVersion, kind, namespace, name. */
  all(): KubeResource[] {
    this.onRead?.();
    return [...this.objects];
  }
}

/**
 * What `render` is given besides the CR.
 * - `observed`: this CR's children as they exist now;
 * - `related`: for every key of `OperatorProps.related`, the objects the CR references that exist,
 *   sorted by namespace and name (a missing optional object is simply absent).
 */
export interface RenderContext {
  readonly observed: ObservedChildren;
  readonly related: Readonly<Record<string, readonly KubeResource[]>>;
}

/**
 * An empty context: nothing observed, nothing related (every declared key maps to `[]`).
 * @param relatedKeys the keys of the operator's `related`; default `[]`
 */
export function emptyRenderContext(relatedKeys: readonly string[] = []): RenderContext {
  return { observed: new ObservedChildren([]), related: Object.fromEntries(relatedKeys.map((k) => [k, []])) };
}

/** The single ApiObject of a construct (itself, or the only one below it). */
export function singleApiObject(construct: IConstruct): ApiObject {
  if (ApiObject.isApiObject(construct)) return construct;
  const found = construct.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c));
  if (found.length !== 1) {
    throw new Error(`${construct.node.path} holds ${found.length} ApiObjects; pass the ApiObject itself`);
  }
  return found[0];
}

/** Sorts objects by apiVersion, kind, namespace, name (deterministic input to render). */
export function sortResources<T extends KubeResource>(objects: readonly T[]): T[] {
  const key = (o: T) => [o.apiVersion, o.kind, o.metadata?.namespace ?? '', o.metadata?.name ?? ''].join('\u0000');
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
