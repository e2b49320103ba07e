/**
 * The pager: a LIST read page by page, following `metadata.continue`
 * (kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks).
 * The one copy: the watcher's relist, `diff`, `deploy`'s reads and the storage-version migration all page
 * through it, directly or through {@link ResourceClient.list}.
 */
import { type KubeClient, type KubeObject, type RequestOptions, isApiError } from './kube-client.js';
import { itemKindOf, withTypeMeta } from './type-meta.js';

/** Items per page when none is given: as client-go's pager and the runtime's informers. */
export const DEFAULT_PAGE_SIZE = 500;

/** How to read a LIST. */
export interface ListPagesOptions {
  /** Items per page (the `limit` query parameter). @default 500 */
  readonly limit?: number;
  /** A label selector, e.g. `app=web,tier!=db`; empty or undefined: none. @default none */
  readonly labelSelector?: string;
  /** A field selector, e.g. `metadata.name=web`; empty or undefined: none. @default none */
  readonly fieldSelector?: string;
  /** Other query parameters, sent with every page. @default none */
  readonly query?: RequestOptions['query'];
  /** The `Accept` header (e.g. metadata only), as {@link RequestOptions.accept}. @default 'application/json' */
  readonly accept?: string;
  /** Aborts the LIST: the page in flight rejects and no further page is asked for. @default none */
  readonly signal?: AbortSignal;
  /**
   * What to do when a `continue` token has expired (410 Gone on a page after the first): `'restart'` lists
   * again from the first page (the pages already yielded are yielded again as the server now has them);
   * `'throw'` rejects with the 410 {@link ApiError}, as a 410 on the first page always does.
   * @default 'throw'
   */
  readonly onExpiredContinue?: 'restart' | 'throw';
  /**
   * The `apiVersion` to fill into items that come without one (the List's `kind` minus `List` fills
   * their `kind`); see type-meta.ts. @default none: items keep what the server sent, but their `kind`
   */
  readonly apiVersion?: string;
}

/** One page of a LIST. */
export interface ListPage<T = KubeObject> {
  /** The page's items, each with `apiVersion` (when {@link ListPagesOptions.apiVersion} is given) and `kind` filled in. */
  readonly items: T[];
  /** The List's `metadata.resourceVersion`: the collection's version as of this page's snapshot. */
  readonly resourceVersion?: string;
  /** The List's own `kind`, e.g. `DeploymentList`. */
  readonly kind?: string;
  /** True for the first page of a LIST started again after an expired `continue` token. */
  readonly restarted: boolean;
}

interface ListBody<T> {
  readonly kind?: string;
  readonly metadata?: { resourceVersion?: string; continue?: string };
  readonly items?: T[];
}

/**
 * Reads the collection at `path` (e.g. `/apis/apps/v1/namespaces/ns/deployments`) page by page.
 * Nothing is sent before the iteration starts; ending the iteration early asks for no further page.
 * @throws ApiError for an answer outside 2xx (but a 410 on a later page with `onExpiredContinue: 'restart'`),
 *   another Error when no answer came, as {@link KubeClient.request}
 */
export async function* listPages<T extends KubeObject = KubeObject>(client: Pick<KubeClient, 'request'>, path: string, options: ListPagesOptions = {}): AsyncGenerator<ListPage<T>> {
  let continueToken: string | undefined;
  let restarted = false;
  for (;;) {
    let page: ListBody<T>;
    try {
      page = await client.request<ListBody<T>>('GET', path, {
        query: {
          ...options.query,
          limit: options.limit ?? DEFAULT_PAGE_SIZE,
          continue: continueToken,
          ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
          ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
        },
        signal: options.signal,
        accept: options.accept,
      });
    } catch (err) {
      if (continueToken !== undefined && options.onExpiredContinue === 'restart' && isApiError(err, 410)) {
        continueToken = undefined;
        restarted = true;
        continue;
      }
      throw err;
    }
    const itemKind = itemKindOf(page.kind);
    const items = (page.items ?? []).map((item) => withTypeMeta(item, options.apiVersion, itemKind));
    yield { items, resourceVersion: page.metadata?.resourceVersion, kind: page.kind, restarted };
    restarted = false;
    continueToken = page.metadata?.continue || undefined;
    if (continueToken === undefined) return;
  }
}

/** Every item of the collection at `path`, all pages read (see {@link listPages}), and the last page's resourceVersion. */
export async function listAll<T extends KubeObject = KubeObject>(client: Pick<KubeClient, 'request'>, path: string, options: ListPagesOptions = {}): Promise<{ items: T[]; resourceVersion?: string }> {
  const items: T[] = [];
  let resourceVersion: string | undefined;
  for await (const page of listPages<T>(client, path, options)) {
    if (page.restarted) items.length = 0;
    items.push(...page.items);
    resourceVersion = page.resourceVersion;
  }
  return { items, resourceVersion };
}
