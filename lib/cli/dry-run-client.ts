/**
 * A {@link KubeClient} that lets only reads and dry-run writes through, for `cdk8s-operator diff`
 * (lib/cli/diff-command.ts): whatever the runtime code it calls does, no write reaches the server.
 *
 * - Reads (GET, and watches) go through as they are.
 * - A write (POST, PUT, PATCH, DELETE) goes through only when its query says `dryRun=All`: the API
 *   server then runs admission and validation and answers as it would, but persists nothing.
 * - Any other write is refused before it is sent, with a {@link DryRunOnlyError} naming it.
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
 */
import type { KubeClient, RequestOptions, WatchEvent } from '../runtime/client/kube-client.js';
import { isWriteMethod } from '../runtime/client/write-gate.js';

/** A write that would have persisted something, refused before it was sent. */
export class DryRunOnlyError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: not sent: only reads and dryRun=All writes may leave cdk8s-operator diff`);
    this.name = 'DryRunOnlyError';
  }
}

/** Wraps `client`; see the module doc. */
export class DryRunOnlyClient implements KubeClient {
  constructor(private readonly client: KubeClient) {}

  /** @throws DryRunOnlyError for a write without `query.dryRun === 'All'`; else what the wrapped client throws */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    if (isWriteMethod(method) && options.query?.dryRun !== 'All') return Promise.reject(new DryRunOnlyError(method, path));
    return this.client.request<T>(method, path, options);
  }

  watch<T>(path: string, query: RequestOptions['query'], signal: AbortSignal, onResponse?: () => void): AsyncIterable<WatchEvent<T>> {
    return this.client.watch<T>(path, query, signal, onResponse);
  }

  suspectConnections(): number {
    return this.client.suspectConnections();
  }
}
