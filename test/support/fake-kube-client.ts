/**
 * The unit tests' one stand-in for the runtime's client: an in-memory {@link KubeClient}
 * (lib/runtime/client/kube-client.ts) that records every call and answers like a server that stores
 * nothing. What talks to a real API server is tested against one in test/integration/; this fake is for
 * the runtime's decisions on the answers (404, 409, 403, a stuck request, an event in a watch).
 *
 * How a request is answered, in this order:
 * 1. it is recorded in {@link FakeKubeClient.calls};
 * 2. `hold`, when set, is awaited (a request that is slow, stuck, or answered when the test says);
 * 3. `fail`, when it returns an error for the call, rejects the request with it;
 * 4. `respond`, when it returns something other than undefined, is the answer (e.g. a List, a Lease
 *    with optimistic concurrency, an access review); it may also throw;
 * 5. otherwise a GET answers a copy of what `objects` holds at the path (its query is not looked at),
 *    else 404 NotFound ({@link ApiError}); a write (POST, PUT, PATCH, DELETE) answers the request's own
 *    body with a fresh `metadata.resourceVersion`, as a server that just stored it (nothing is kept).
 *
 * A watch is recorded as a call with method `WATCH` (and passes `hold` and `fail` the same way), then
 * serves a {@link FakeWatch} the test pushes events into; aborting its signal makes the iteration throw.
 */
import { isWriteMethod } from '../../lib/runtime/client/write-gate.js';
import { ApiError, type KubeClient, type KubeObject, type RequestOptions, type WatchEvent } from '../../lib/runtime/client/kube-client.js';

/** One request (or watch) as the fake received it. */
export interface FakeCall {
  /** GET, POST, PUT, PATCH, DELETE, or WATCH. */
  readonly method: string;
  readonly path: string;
  readonly query?: RequestOptions['query'];
  /** The request body as sent (any: tests read into it freely). */
  readonly body?: any;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** The request's own write gate ({@link RequestOptions.writeGate}), checked after `hold`. */
  readonly writeGate?: RequestOptions['writeGate'];
}

export class FakeKubeClient implements KubeClient {
  /** Every request and watch, in the order they were sent. */
  readonly calls: FakeCall[] = [];
  /** What a GET finds, by path (a copy is answered, so a test may change what it put here later). */
  readonly objects = new Map<string, unknown>();
  /** The watches opened, oldest first. */
  readonly watches: FakeWatch[] = [];
  /** How many times {@link suspectConnections} was called. */
  suspected = 0;
  /** When set, each request waits for the promise it returns before it is answered (or rejects with its error). */
  hold: ((call: FakeCall) => Promise<unknown>) | undefined;
  /** When it returns an error for a call, that request fails with it. */
  fail: ((call: FakeCall) => Error | undefined) | undefined;
  /** When it returns something other than undefined for a request, that is the answer. */
  respond: ((call: FakeCall) => unknown) | undefined;

  /** @param objects what a GET finds at first, by path (see {@link objects}) */
  constructor(objects: Record<string, unknown> = {}) {
    for (const [path, object] of Object.entries(objects)) this.objects.set(path, object);
  }

  async request<T = KubeObject>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const call: FakeCall = { method, path, ...options };
    await this.admit(call);
    const answer = await this.respond?.(call);
    if (answer !== undefined) return answer as T;
    if (method === 'GET') {
      if (!this.objects.has(path)) throw new ApiError(method, path, 404, 'NotFound', { kind: 'Status', code: 404, reason: 'NotFound' }, `${path} not found`);
      return structuredClone(this.objects.get(path)) as T;
    }
    const body = (options.body ?? {}) as KubeObject;
    return { ...body, metadata: { ...body.metadata, resourceVersion: String(this.calls.length) } } as T;
  }

  async *watch<T = KubeObject>(path: string, query: RequestOptions['query'], signal: AbortSignal, onResponse?: () => void): AsyncGenerator<WatchEvent<T>> {
    await this.admit({ method: 'WATCH', path, query, signal });
    const watch = new FakeWatch(path, query, signal);
    this.watches.push(watch);
    onResponse?.();
    yield* watch.events() as AsyncGenerator<WatchEvent<T>>;
  }

  suspectConnections(): number {
    this.suspected++;
    return 0;
  }

  /**
   * Records the call, waits for `hold` (the request on its way), then, as the real client does when it
   * hands a write to the socket, checks the request's own `writeGate`, then throws what `fail` says.
   */
  private async admit(call: FakeCall): Promise<void> {
    this.calls.push(call);
    await this.hold?.(call);
    if (call.writeGate && isWriteMethod(call.method)) call.writeGate.assertMayWrite(call.method, call.path);
    const err = this.fail?.(call);
    if (err) throw err;
  }
}

/** One open watch of a {@link FakeKubeClient}: the test pushes the server's events into it. */
export class FakeWatch {
  private readonly queue: WatchEvent[] = [];
  private wake: (() => void) | undefined;

  constructor(
    readonly path: string,
    readonly query: RequestOptions['query'],
    readonly signal: AbortSignal,
  ) {}

  /** The server sends `event` on this stream. */
  push(event: WatchEvent): void {
    this.queue.push(event);
    this.wake?.();
  }

  /** Yields what was pushed, in order, until the signal aborts (then throws, as a destroyed stream does). */
  async *events(): AsyncGenerator<WatchEvent> {
    const aborted = new Promise<void>((resolve) => this.signal.addEventListener('abort', () => resolve(), { once: true }));
    for (;;) {
      if (this.signal.aborted) throw new Error(`WATCH ${this.path}: aborted`);
      const event = this.queue.shift();
      if (event) {
        yield event;
        continue;
      }
      await Promise.race([new Promise<void>((resolve) => (this.wake = resolve)), aborted]);
    }
  }
}
