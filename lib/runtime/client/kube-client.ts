/**
 * The client the runtime takes: the small interface every runtime module that talks to the API server
 * is written against (controller-runtime's `client.Reader` / `Writer` / `StatusWriter` in
 * pkg/client/interfaces.go play the same part), with the JSON shapes it speaks and the error it throws.
 * `ApiClient` (api-client.ts) implements it over HTTP; the unit tests' one fake
 * (test/support/fake-kube-client.ts) implements it in memory. Nothing here does I/O.
 *
 * Why the request/watch pair and not typed `get`/`list`/`apply`/`patchStatus`/`delete`: every runtime
 * module builds its own paths (resource-path.ts) and bodies, and sends them raw, so that no field
 * is dropped on the way (client-node's typed models drop the fields they do not know).
 */
import type { WriteGate } from './write-gate.js';
import type { OwnerReference } from '../../operator/object-ref.js';
import { firstLineOf } from '../../error-text.js';

/**
 * What the runtime asks of the API server (kubernetes.io/docs/reference/using-api/api-concepts/).
 *
 * Errors: an answer outside 2xx rejects (or, for `watch`, throws) with {@link ApiError}, whose `code`
 * (404, 409, 410, 422, 429 …) and `reason` the runtime branches on ({@link isApiError}); anything else
 * (no answer: a refused or reset connection, a request past the client's deadline, an aborted signal, a
 * write the client's fence or write gate held back) rejects with another Error, which callers treat as
 * "the server did not say".
 *
 * Abort: aborting a request's `signal`, or a watch's, stops it at once: the request rejects, the watch's
 * iteration throws; either way the client sends nothing more of it.
 */
export interface KubeClient {
  /**
   * Sends one request: `method` is GET, POST, PUT, PATCH or DELETE; `path` the API path, e.g.
   * `/apis/apps/v1/namespaces/ns/deployments/web` (see resource-path.ts).
   * @returns the decoded JSON body of a 2xx answer (undefined when it had none)
   * @throws ApiError for an answer outside 2xx; another Error when no answer came (see above)
   */
  request<T = KubeObject>(method: string, path: string, options?: RequestOptions): Promise<T>;

  /**
   * Watches `path` (a collection) from `query.resourceVersion` (`watch=true` is added), yielding the
   * stream's events in order: ADDED, MODIFIED, DELETED, BOOKMARK (only its resourceVersion is
   * meaningful), and ERROR, whose object is a Status (410 Expired: the resourceVersion is too old,
   * list again). Nothing is sent before the iteration starts.
   *
   * The iteration ends when the server ends the stream (e.g. after `timeoutSeconds`), and throws when
   * `signal` aborts or the connection fails. An answer other than 200 throws {@link ApiError} (method
   * `WATCH`). `onResponse` runs once the answer's headers arrive, before any event, whatever its code:
   * the server has said something (a watch's liveness, see watch-heartbeat.ts). `accept` is the
   * `Accept` header, as {@link RequestOptions.accept} (default `application/json`).
   */
  watch<T = KubeObject>(path: string, query: RequestOptions['query'], signal: AbortSignal, onResponse?: () => void, accept?: string): AsyncIterable<WatchEvent<T>>;

  /**
   * Called when a connection to the API server was found dead (a watch that went silent, see
   * watcher.ts): a client that pools connections drops its idle ones to the server, so that the next
   * requests open new ones rather than each waiting for its deadline. Returns how many it dropped (0 for
   * a client that pools nothing).
   */
  suspectConnections(): number;
}

/** A Kubernetes object as JSON, with no field dropped (unlike client-node's typed models). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
    deletionTimestamp?: string;
    managedFields?: unknown[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** One line of a watch stream (kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes). */
export interface WatchEvent<T = KubeObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

/** The options of one {@link KubeClient.request}. */
export interface RequestOptions {
  /** Query parameters (`fieldManager`, `force`, `labelSelector`, `limit`, `continue` …); undefined values are left out. @default none */
  readonly query?: Record<string, string | number | boolean | undefined>;
  /** The request body: an object is sent as JSON, a string as it is. @default none */
  readonly body?: unknown;
  /**
   * The body's media type: `application/apply-patch+yaml` for server-side apply, `application/merge-patch+json`,
   * `application/json-patch+json` (kubernetes.io/docs/reference/using-api/api-concepts/#patch-and-apply).
   * @default 'application/json' when there is a body
   */
  readonly contentType?: string;
  /** Aborts this request: it rejects with the signal's error and nothing more of it is sent. @default none */
  readonly signal?: AbortSignal;
  /**
   * The `Accept` header: the media types the answer may take, in order of preference, e.g.
   * `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json` for metadata only.
   * @default 'application/json'
   * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks (receiving resources as metadata only)
   */
  readonly accept?: string;
  /**
   * A write gate for this request alone, checked (with the client's own, when it has one) at the moment a
   * write's bytes are handed to the socket; reads never consult it. The leader elector's renewals use it,
   * so a renewal started before a freeze is not sent after it. @default none: the client's gate only
   */
  readonly writeGate?: WriteGate;
}

/**
 * A non-2xx answer from the API server, carrying its `Status` object
 * (kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/).
 */
export class ApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    /** HTTP status code, e.g. 404, 409, 410, 422. */
    readonly code: number,
    /** The Status reason, e.g. 'NotFound', 'Conflict', 'Expired', 'Invalid', 'Forbidden'. */
    readonly reason: string,
    readonly status: Record<string, unknown> | undefined,
    message: string,
    /**
     * Seconds the server asked the client to wait before trying again: the `Retry-After` header (or the
     * Status's `details.retryAfterSeconds`) of a 429 or 5xx answer, e.g. 1 for "storage is
     * (re)initializing", 5 for a path not yet installed after a restart; undefined when it gave none.
     * client-go's REST client honours the same two codes (rest.Request, checkWait).
     */
    readonly retryAfterSeconds?: number,
  ) {
    super(`${method} ${path}: ${code} ${reason}: ${message}`);
    this.name = 'ApiError';
  }
}

/** True for an ApiError with one of the given HTTP codes. */
export function isApiError(err: unknown, ...codes: number[]): err is ApiError {
  return err instanceof ApiError && (codes.length === 0 || codes.includes(err.code));
}

/**
 * The API server's own words for a failure: the first {@link ApiError} of `err`'s `cause` chain (itself
 * included) gives its Status `message` (kubernetes.io/docs/reference/kubernetes-api/common-definitions/status/),
 * or `<code> <reason>` when the Status has no message (e.g. `500 InternalError`); any other error gives its
 * message's first line. The one copy: the reconcile error's `serverMessage`, the status writer's log and
 * `diff`'s output use it.
 */
export function serverMessageOf(err: unknown): string {
  const seen = new Set<unknown>();
  for (let cause: unknown = err; cause instanceof Error && !seen.has(cause); cause = cause.cause) {
    seen.add(cause);
    if (cause instanceof ApiError) {
      const message = cause.status?.message;
      return typeof message === 'string' && message !== '' ? message : `${cause.code} ${cause.reason}`;
    }
  }
  return firstLineOf(err);
}
