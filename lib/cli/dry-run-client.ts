/**
 * A {@link KubeClient} that lets only reads and dry-run writes through, for `cdk8s-operator diff`
 * (lib/cli/diff-command.ts): whatever the runtime code it calls does, no write reaches the server.
 *
 * - Reads (GET, and watches) go through as they are.
 * - A write (POST, PUT, PATCH, DELETE) goes through only when its query says `dryRun=All`: the API
 *   server then runs admission and validation and answers as it would, but persists nothing. A DELETE
 *   with a body (`DeleteOptions`) needs `dryRun: ['All']` in the body too: the API server reads a
 *   DELETE's options from its body when it has one and ignores the query then (k8s.io/apiserver
 *   handlers/delete.go).
 * - With `allowReviews`, a POST of a SelfSubjectAccessReview goes through too: the API server answers
 *   whether the caller may do something and persists nothing (`deploy --dry-run` checks its permissions).
 * - Any other write is refused before it is sent, with a {@link DryRunOnlyError} naming it.
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
 */
import { SELF_SUBJECT_ACCESS_REVIEWS as REVIEWS } from '../runtime/client/builtin-resources.js';
import type { KubeClient, RequestOptions, WatchEvent } from '../runtime/client/kube-client.js';
import { resourcePath } from '../runtime/client/resource-path.js';
import { isWriteMethod } from '../runtime/client/write-gate.js';

/** Where SelfSubjectAccessReviews are POSTed (builtin-resources.ts's, as a path). */
export const SELF_SUBJECT_ACCESS_REVIEWS = resourcePath(REVIEWS);

/** A write that would have persisted something, refused before it was sent. */
export class DryRunOnlyError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    command = 'diff',
  ) {
    super(`${method} ${path}: not sent: only reads and dryRun=All writes may leave cdk8s-operator ${command}`);
    this.name = 'DryRunOnlyError';
  }
}

/** Wraps `client`; see the module doc. */
export class DryRunOnlyClient implements KubeClient {
  /**
   * @param options.command the command named in a refusal. @default 'diff'
   * @param options.allowReviews let SelfSubjectAccessReview POSTs through. @default false
   */
  constructor(
    private readonly client: KubeClient,
    private readonly options: { readonly command?: string; readonly allowReviews?: boolean } = {},
  ) {}

  /** @throws DryRunOnlyError for a write without `query.dryRun === 'All'` (and a DELETE body without `dryRun: ['All']`); else what the wrapped client throws */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const review = this.options.allowReviews === true && method === 'POST' && path === SELF_SUBJECT_ACCESS_REVIEWS;
    if (isWriteMethod(method) && (options.query?.dryRun !== 'All' || !bodySaysDryRun(method, options.body)) && !review) return Promise.reject(new DryRunOnlyError(method, path, this.options.command));
    return this.client.request<T>(method, path, options);
  }

  watch<T>(path: string, query: RequestOptions['query'], signal: AbortSignal, onResponse?: () => void): AsyncIterable<WatchEvent<T>> {
    return this.client.watch<T>(path, query, signal, onResponse);
  }

  suspectConnections(): number {
    return this.client.suspectConnections();
  }
}

/** False for a DELETE whose body (DeleteOptions) does not say `dryRun: ['All']`; true for anything else. */
function bodySaysDryRun(method: string, body: unknown): boolean {
  if (method.toUpperCase() !== 'DELETE' || body === undefined || body === null) return true;
  const dryRun = (body as { dryRun?: unknown }).dryRun;
  return Array.isArray(dryRun) && dryRun.includes('All');
}
