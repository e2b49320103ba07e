/**
 * A recording stand-in for ApiClient in unit tests of pure reconcile logic (the same flows run against a
 * real API server in test/integration/). It answers every write with the request's own body plus a
 * fresh resourceVersion, like a server that just stored it, and a GET with `get`'s answer, else 404
 * (it stores nothing).
 */
import type { ApiClient } from '../../lib/runtime/client/api-client.js';
import { ApiError, type KubeObject } from '../../lib/runtime/client/kube-client.js';

export interface FakeCall {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  body?: any;
  contentType?: string;
}

export class FakeApiClient {
  readonly calls: FakeCall[] = [];
  /** When it returns an error for a call, that request fails with it. */
  fail: ((call: FakeCall) => Error | undefined) | undefined;
  /** When set, each request waits for the promise it returns before it is answered. */
  hold: ((call: FakeCall) => Promise<void>) | undefined;
  /** The object a GET finds; undefined answers 404 Not Found. */
  get: ((call: FakeCall) => KubeObject | undefined) | undefined;

  async request(method: string, path: string, options: { query?: Record<string, unknown>; body?: unknown; contentType?: string } = {}): Promise<KubeObject> {
    const call = { method, path, ...options } as FakeCall;
    this.calls.push(call);
    await this.hold?.(call);
    const err = this.fail?.(call);
    if (err) throw err;
    if (method === 'GET') {
      const found = this.get?.(call);
      if (!found) throw new ApiError(method, path, 404, 'NotFound', { kind: 'Status', code: 404, reason: 'NotFound' }, `${path} not found`);
      return found;
    }
    const body = (options.body ?? {}) as KubeObject;
    return { ...body, metadata: { ...body.metadata, resourceVersion: String(this.calls.length) } };
  }

  /** This fake typed as the ApiClient the runtime takes. */
  asApiClient(): ApiClient {
    return this as unknown as ApiClient;
  }
}
