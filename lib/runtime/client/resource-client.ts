/**
 * The typed client: reads and writes of one resource kind, each taking the resource ({@link ResourceRef})
 * and the object or its namespace/name, over a {@link KubeClient} (so the unit tests' one fake serves it
 * too). controller-runtime's `client.Reader`/`Writer`/`StatusWriter` (pkg/client/interfaces.go) and
 * kube-rs' `Api<K>` play the same part.
 *
 * Requests (kubernetes.io/docs/reference/using-api/api-concepts/):
 * - get: GET `…/{name}`; list: GET the collection, page by page (list-pages.ts); watch: the collection
 *   with `watch=true`;
 * - create: POST the collection; update / updateStatus: PUT `…/{name}` (`/status`);
 * - apply / applyStatus: server-side apply, PATCH `application/apply-patch+yaml` with `fieldManager`
 *   (and `force`); patch: PATCH `application/json-patch+json` or `application/merge-patch+json`;
 * - delete: DELETE `…/{name}` with `DeleteOptions` (propagation, preconditions) when any is given.
 * `dryRun: true` sends `dryRun=All`: the server validates and answers, stores nothing.
 *
 * Errors, mapped once, in the client: an answer outside 2xx rejects with {@link ApiError} (its `code`,
 * `reason`, and the server's message: {@link serverMessageOf}); no answer rejects with another Error. A
 * namespaced resource addressed by name without a namespace throws (resource-path.ts).
 */
import type { KubeClient, KubeObject, RequestOptions, WatchEvent } from './kube-client.js';
import { isApiError } from './kube-client.js';
import { type ListPage, type ListPagesOptions, listAll, listPages } from './list-pages.js';
import { type ResourceRef, resourcePath } from './resource-path.js';
import { apiVersionOf } from './type-meta.js';
import type { WriteGate } from './write-gate.js';

/** Server-side apply's content type (kubernetes.io/docs/reference/using-api/server-side-apply/). */
export const APPLY_PATCH = 'application/apply-patch+yaml';
/** JSON Patch, RFC 6902. */
export const JSON_PATCH = 'application/json-patch+json';
/** JSON Merge Patch, RFC 7386. */
export const MERGE_PATCH = 'application/merge-patch+json';

/** Options every request takes. */
export interface ReadOptions {
  /** Aborts the request (see {@link RequestOptions.signal}). @default none */
  readonly signal?: AbortSignal;
}

/** Options of a write (create, update, apply, patch, delete). */
export interface WriteOptions extends ReadOptions {
  /** The field manager recorded in `managedFields` (required by apply). @default none: the server's default */
  readonly fieldManager?: string;
  /** `dryRun=All`: validated and answered, nothing stored. @default false */
  readonly dryRun?: boolean;
  /** A write gate for this request alone ({@link RequestOptions.writeGate}). @default none */
  readonly writeGate?: WriteGate;
  /**
   * `fieldValidation`: what the server does with unknown or duplicate fields: `Strict` fails the write,
   * `Warn` answers with a warning, `Ignore` drops them. @default none: the server's (`Warn`)
   * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
   */
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

/** Options of a server-side apply. */
export interface ApplyOptions extends WriteOptions {
  readonly fieldManager: string;
  /** `force=true`: take over fields another manager owns. @default false (a conflict answers 409) */
  readonly force?: boolean;
}

/** A patch and its kind: `json` (RFC 6902 operations) or `merge` (RFC 7386 object). */
export type Patch = { readonly type: 'json'; readonly body: readonly unknown[] } | { readonly type: 'merge'; readonly body: unknown };

/** Options of a delete. */
export interface DeleteOptions extends WriteOptions {
  /** `Foreground`, `Background` or `Orphan` (kubernetes.io/docs/concepts/architecture/garbage-collection/). @default the resource's default */
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Deletes only the object with this UID (a 409 for another one under the same name). @default none */
  readonly uid?: string;
  /** Deletes only while the object has this resourceVersion (409 otherwise). @default none */
  readonly resourceVersion?: string;
}

/** Options of a watch: as {@link KubeClient.watch}, with the query's usual parameters named. */
export interface WatchOptions {
  readonly signal: AbortSignal;
  readonly resourceVersion?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Other query parameters (`allowWatchBookmarks`, `timeoutSeconds` …). @default none */
  readonly query?: RequestOptions['query'];
  readonly onResponse?: () => void;
  readonly accept?: string;
}

/** Where an object lives: its namespace (for a namespaced resource) and name. */
function placeOf(ref: ResourceRef, obj: KubeObject): { namespace?: string; name: string } {
  return { namespace: ref.namespaced ? obj.metadata?.namespace : undefined, name: obj.metadata?.name ?? '' };
}

/** A query with `fieldManager`, `force` and `dryRun` as set; undefined when none is. */
function writeQuery(options: WriteOptions & { force?: boolean }): RequestOptions['query'] {
  if (options.fieldManager === undefined && !options.force && !options.dryRun && options.fieldValidation === undefined) return undefined;
  return { fieldManager: options.fieldManager, force: options.force || undefined, dryRun: options.dryRun ? 'All' : undefined, fieldValidation: options.fieldValidation };
}

/** The typed client over `client` (see the module's docs). Stateless: make one where needed. */
export class ResourceClient {
  /** @param client the transport; one without `watch` serves every verb but {@link watch} (which then throws) */
  constructor(readonly client: Pick<KubeClient, 'request'> & Partial<Pick<KubeClient, 'watch'>>) {}

  /** GET one object (or its `subresource`, e.g. `status`, `scale`). @throws ApiError (404 when absent) */
  get<T = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, options: ReadOptions & { subresource?: string } = {}): Promise<T> {
    return this.client.request<T>('GET', resourcePath(ref, namespace, name, options.subresource), options.signal ? { signal: options.signal } : undefined);
  }

  /** As {@link get}, but undefined when the object is absent (404). */
  async getIfExists<T = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, options: ReadOptions & { subresource?: string } = {}): Promise<T | undefined> {
    try {
      return await this.get<T>(ref, namespace, name, options);
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * Every object of `ref` in `namespace` (all namespaces when undefined), all pages read, each with its
   * `apiVersion` and `kind` filled in; and the List's resourceVersion.
   */
  list<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace?: string, options: ListPagesOptions = {}): Promise<{ items: T[]; resourceVersion?: string }> {
    return listAll<T>(this.client, resourcePath(ref, namespace), { apiVersion: apiVersionOf(ref), ...options });
  }

  /** The pages of {@link list}, one at a time (see list-pages.ts). */
  pages<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace?: string, options: ListPagesOptions = {}): AsyncGenerator<ListPage<T>> {
    return listPages<T>(this.client, resourcePath(ref, namespace), { apiVersion: apiVersionOf(ref), ...options });
  }

  /** Watches `ref` in `namespace` (all when undefined) from `options.resourceVersion`, as {@link KubeClient.watch}. */
  watch<T = KubeObject>(ref: ResourceRef, namespace: string | undefined, options: WatchOptions): AsyncIterable<WatchEvent<T>> {
    const query = { ...options.query, resourceVersion: options.resourceVersion, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
    if (!this.client.watch) throw new Error(`WATCH ${resourcePath(ref, namespace)}: this client cannot watch`);
    return this.client.watch<T>(resourcePath(ref, namespace), query, options.signal, options.onResponse, options.accept);
  }

  /** POST `obj` to its collection (its namespace's, for a namespaced resource). @returns the object as stored. @throws ApiError (409 when it exists) */
  create<T = KubeObject>(ref: ResourceRef, obj: KubeObject, options: WriteOptions = {}): Promise<T> {
    return this.write<T>('POST', resourcePath(ref, placeOf(ref, obj).namespace), obj, undefined, writeQuery(options), options);
  }

  /** PUT `obj` in place (a 409 when its resourceVersion is stale). @returns the object as stored */
  update<T = KubeObject>(ref: ResourceRef, obj: KubeObject, options: WriteOptions = {}): Promise<T> {
    const { namespace, name } = placeOf(ref, obj);
    return this.write<T>('PUT', resourcePath(ref, namespace, name), obj, undefined, writeQuery(options), options);
  }

  /** PUT `obj` to its `status` subresource. @returns the object as stored */
  updateStatus<T = KubeObject>(ref: ResourceRef, obj: KubeObject, options: WriteOptions = {}): Promise<T> {
    const { namespace, name } = placeOf(ref, obj);
    return this.write<T>('PUT', resourcePath(ref, namespace, name, 'status'), obj, undefined, writeQuery(options), options);
  }

  /** Server-side applies `obj` (its namespace and name locate it). @returns the object as stored (or as it would be, in a dry run) */
  apply<T = KubeObject>(ref: ResourceRef, obj: KubeObject, options: ApplyOptions): Promise<T> {
    const { namespace, name } = placeOf(ref, obj);
    return this.write<T>('PATCH', resourcePath(ref, namespace, name), obj, APPLY_PATCH, writeQuery(options), options);
  }

  /** Server-side applies `obj`'s status, to the `status` subresource. */
  applyStatus<T = KubeObject>(ref: ResourceRef, obj: KubeObject, options: ApplyOptions): Promise<T> {
    const { namespace, name } = placeOf(ref, obj);
    return this.write<T>('PATCH', resourcePath(ref, namespace, name, 'status'), obj, APPLY_PATCH, writeQuery(options), options);
  }

  /** PATCHes one object (or its `subresource`) with a JSON Patch or a merge patch. @returns the object as stored */
  patch<T = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, patch: Patch, options: WriteOptions & { subresource?: string } = {}): Promise<T> {
    const contentType = patch.type === 'json' ? JSON_PATCH : MERGE_PATCH;
    return this.write<T>('PATCH', resourcePath(ref, namespace, name, options.subresource), patch.body, contentType, writeQuery(options), options);
  }

  /**
   * DELETEs one object; `DeleteOptions` (propagation, UID and resourceVersion preconditions) are sent as
   * the body when any is given, and then `dryRun` in it too: the API server reads a DELETE's options
   * from its body when there is one, and a `dryRun=All` in the query alone would be ignored (the object
   * deleted). @returns the server's answer (the object being deleted, or a Status)
   * @throws ApiError (404 when absent, 409 when a precondition fails)
   */
  delete<T = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, options: DeleteOptions = {}): Promise<T> {
    const preconditions = options.uid !== undefined || options.resourceVersion !== undefined ? { uid: options.uid, resourceVersion: options.resourceVersion } : undefined;
    for (const key of ['uid', 'resourceVersion'] as const) if (preconditions && preconditions[key] === undefined) delete preconditions[key];
    const body =
      options.propagationPolicy !== undefined || preconditions !== undefined
        ? { apiVersion: 'v1', kind: 'DeleteOptions', ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}), ...(preconditions ? { preconditions } : {}), ...(options.dryRun ? { dryRun: ['All'] } : {}) }
        : undefined;
    return this.write<T>('DELETE', resourcePath(ref, namespace, name), body, undefined, writeQuery(options), options);
  }

  private write<T>(method: string, path: string, body: unknown, contentType: string | undefined, query: RequestOptions['query'], options: WriteOptions): Promise<T> {
    const request: { -readonly [K in keyof RequestOptions]: RequestOptions[K] } = {};
    if (query) request.query = query;
    if (body !== undefined) request.body = body;
    if (contentType) request.contentType = contentType;
    if (options.signal) request.signal = options.signal;
    if (options.writeGate) request.writeGate = options.writeGate;
    return this.client.request<T>(method, path, request);
  }
}
