/**
 * A request that got no answer: the socket stayed silent for the client's `requestTimeoutMs` before the
 * response headers or between two chunks of the body (api-client.ts). Not a refusal: the API server
 * said nothing (it, or its storage, is down or stuck, or the connection is half-open), so there is no
 * server message to quote. The message: `<METHOD> <path>: no answer within <timeoutMs> ms`.
 */
import { brandClass } from '../../operator/brand.js';

export class RequestTimeoutError extends Error {
  static {
    brandClass(this, 'RequestTimeoutError');
  }

  constructor(
    readonly method: string,
    readonly path: string,
    /** The silence waited, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`${method} ${path}: no answer within ${timeoutMs} ms`);
    this.name = 'RequestTimeoutError';
  }
}
