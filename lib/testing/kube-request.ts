/**
 * A raw HTTPS request to the API server of a KubeConfig's current context.
 *
 * Used where the typed clients of @kubernetes/client-node get in the way: applying a CRD exactly as
 * written (its serializer drops `x-kubernetes-*` keys of raw objects), discovery, /readyz.
 *
 * Why not the runtime's `ApiClient` (lib/runtime/client/api-client.ts), which also sends raw JSON: it throws on
 * every non-2xx answer and decodes the body as JSON, while the callers here need the status code of any
 * answer (201 or 409 on create, 500 while /readyz fails) and plain-text bodies (`/readyz`, `/metrics`).
 * It also keeps a keep-alive agent per client; these are one-off requests.
 */
import { request } from 'node:https';
import type { KubeConfigSource } from '../runtime/client/kube-config-source.js';

/** One request. */
export interface KubeRequest {
  /** HTTP method, e.g. `GET`, `PATCH`. */
  readonly method: string;
  /** Path and query, e.g. `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x?fieldManager=y`. */
  readonly path: string;
  /** Request body; a string is sent as it is, an object as JSON. @default none: no body, no Content-Type */
  readonly body?: string | object;
  /** Content-Type of the body, e.g. `application/apply-patch+yaml` for server-side apply. @default 'application/json' */
  readonly contentType?: string;
  /**
   * Abort when the connection stays idle this many milliseconds (no answer yet, or a stalled body).
   * @default 10000 ms: a local API server answers in milliseconds; ten seconds means it is stuck
   */
  readonly timeoutMs?: number;
}

/** A response: status code and body text (not parsed). */
export interface KubeResponse {
  readonly statusCode: number;
  readonly body: string;
}

/**
 * Sends `req` to the current cluster of `kubeConfig` with its credentials.
 * Resolves with any HTTP status (the caller decides); rejects only on connection errors and timeouts.
 *
 * @throws Error when the KubeConfig has no current cluster, on network errors and on timeout.
 */
export async function kubeRequest(kubeConfig: KubeConfigSource, req: KubeRequest): Promise<KubeResponse> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('kubeRequest: the KubeConfig has no current cluster');
  const url = new URL(req.path, cluster.server);
  const payload = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (payload !== undefined) {
    headers['Content-Type'] = req.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(payload));
  }
  const options: import('node:https').RequestOptions = {
    method: req.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port,
    path: url.pathname + url.search,
    headers,
  };
  await kubeConfig.applyToHTTPSOptions(options);
  const timeoutMs = req.timeoutMs ?? 10_000;
  return await new Promise<KubeResponse>((resolve, reject) => {
    const outgoing = request(options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`${req.method} ${url.pathname}: no response within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}
