/**
 * A {@link KubeClient} that sends every write as a dry run: POST, PUT, PATCH and DELETE go with
 * `dryRun=All` added to their query, reads as they are. The API server runs admission and validation
 * and answers as it would, persisting nothing. `cdk8s-operator diff` runs the runtime's reconciler on it
 * (lib/cli/upgrade-plan/custom-resource-plan.ts), over a {@link DryRunOnlyClient} that refuses any
 * write without `dryRun=All` should one slip past. A DELETE with a body (`DeleteOptions`) gets
 * `dryRun: ['All']` in the body too: the API server decodes a DELETE's options from its body when it
 * has one, and ignores the query then (k8s.io/apiserver handlers/delete.go).
 *
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
 */
import type { KubeClient, RequestOptions, WatchEvent } from '../runtime/client/kube-client.js';
import { isWriteMethod } from '../runtime/client/write-gate.js';
import { isJsonObject } from '../json-object.js';

/** Wraps `client`; see the module doc. */
export class DryRunWrites implements KubeClient {
  constructor(private readonly client: KubeClient) {}

  /** A write with `dryRun=All` set; a read as it is. @throws what the wrapped client throws */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    if (!isWriteMethod(method)) return this.client.request<T>(method, path, options);
    // A DELETE with a body (DeleteOptions) is read from the body alone: the API server ignores its query.
    const body = method.toUpperCase() === 'DELETE' && isJsonObject(options.body) ? { ...options.body, dryRun: ['All'] } : options.body;
    return this.client.request<T>(method, path, { ...options, query: { ...options.query, dryRun: 'All' }, ...(body === undefined ? {} : { body }) });
  }

  watch<T>(path: string, query: RequestOptions['query'], signal: AbortSignal, onResponse?: () => void, accept?: string): AsyncIterable<WatchEvent<T>> {
    return this.client.watch<T>(path, query, signal, onResponse, accept);
  }

  suspectConnections(): number {
    return this.client.suspectConnections();
  }
}
