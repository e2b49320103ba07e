/**
 * The runtime's HTTP client for the Kubernetes API: {@link ApiClient}, the implementation of the
 * {@link KubeClient} interface (kube-client.ts) the runtime takes.
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { ClientCredentials, type ClientCredentialsOptions, type ClientTls, type RequestCredentials } from './client-credentials.js';
import { KubeConfigError, type KubeConfigSource } from './kube-config-source.js';
import { ApiError, type KubeClient, type KubeObject, type RequestOptions, type WatchEvent } from './kube-client.js';
import { RequestTimeoutError } from './request-timeout-error.js';
import { type WriteGate, isWriteMethod } from './write-gate.js';
import { destroyIdleConnectionsTo, registerConnectionPool } from './pooled-connections.js';

/**
 * A pooled keep-alive socket idle this long is closed rather than reused. HTTP/1.1 has no ping, so a
 * socket that a middlebox silently dropped while idle would only show it by a request waiting its whole
 * timeout; client-go pings an HTTP/2 connection after the same 30 s without reads (`ReadIdleTimeout`).
 */
export const POOLED_SOCKET_IDLE_MS = 30_000;

/** What the client reports after every request; metrics hang off this (`rest_client_requests_total`). */
export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  /** HTTP status code, or 0 when no response arrived. */
  readonly code: number;
  readonly durationMs: number;
  /** True for a watch stream; its `durationMs` is the time to the response headers. */
  readonly watch: boolean;
}

export interface ApiClientOptions {
  /** The API server and credentials: client-node's `KubeConfig`, or any {@link KubeConfigSource}. */
  readonly kubeConfig: KubeConfigSource;
  /** @default 'cdk8s-operator-sdk' */
  readonly userAgent?: string;
  /**
   * Act as another user through impersonation headers
   * (kubernetes.io/docs/reference/access-authn-authz/authentication/#user-impersonation).
   * @default none
   */
  readonly impersonate?: { readonly user: string; readonly groups?: readonly string[] };
  /** Deadline of one non-watch request. @default 30000 ms, like client-go's typical per-request timeout */
  readonly requestTimeoutMs?: number;
  /** Called after every request, for metrics and tests. */
  readonly onRequest?: (record: RequestRecord) => void;
  /**
   * Aborts every request of this client, in flight or later, once aborted: a fence, e.g. the reconcilers'
   * client when leadership is lost (nothing they send may reach the server after that). @default none
   */
  readonly signal?: AbortSignal;
  /**
   * Consulted synchronously right before a write (POST/PUT/PATCH/DELETE) is written to its socket, once
   * the connection is established; when it throws, nothing of the write is sent and the request rejects
   * with its error. Reads never consult it. See lib/runtime/client/write-gate.ts for what it can promise.
   * @default none: every write is sent
   */
  readonly writeGate?: WriteGate;
  /**
   * How often credential files are read again (client certificate, key, CA, token file): see
   * {@link ClientCredentials}. @default client-go's: TLS files at most once a second, a token file every 50 s and after a 401
   */
  readonly credentials?: ClientCredentialsOptions;
}

/** Options of {@link ApiClient.send}: those of every request, and a deadline for this one. */
export interface SendOptions extends RequestOptions {
  /**
   * Deadline of this request: the socket idle this many milliseconds (no answer yet, or a stalled body).
   * @default the client's `requestTimeoutMs`
   */
  readonly timeoutMs?: number;
}

/** An answer of {@link ApiClient.send}, read whole, whatever its status code. */
export interface RawResponse {
  /** HTTP status code. */
  readonly statusCode: number;
  /** The body as UTF-8 text, not parsed; `''` when there is none. */
  readonly body: string;
  /** The response headers (lower-case names). */
  readonly headers: http.IncomingHttpHeaders;
}

/**
 * A small JSON REST client for the Kubernetes API, on a kubeconfig ({@link KubeConfigSource}) for authentication.
 *
 * Why not client-node's generated APIs: `KubernetesObjectApi` drops fields its typed models don't know
 * (client-node #2962), and every call builds a new agent (no connection reuse). This client keeps one
 * keep-alive agent per process, sends raw JSON both ways, and reports every request to `onRequest`.
 *
 * Credentials follow their files: when the client certificate, key or CA files change on disk, the next
 * requests go out on new connections made with the new material (the old agent's idle connections are
 * closed and its busy ones are closed when their request ends; a watch already open carries on until it
 * ends). A token file is read again as client-go reads it. See {@link ClientCredentials}.
 *
 * Dead connections (HTTP/1.1 has no ping; see lib/runtime/cache/watch-heartbeat.ts for watches): a
 * pooled socket idle for {@link POOLED_SOCKET_IDLE_MS} is closed, not reused; and when one connection is
 * found dead (a request got no answer within `requestTimeoutMs`, or {@link suspectConnections} is called,
 * e.g. by a watch that went silent), every client in the process drops its idle pooled sockets to that
 * server, so the requests after it open new connections instead of each waiting `requestTimeoutMs`.
 *
 * Errors: the constructor throws {@link KubeConfigError} (`NoCurrentCluster`) for a kubeconfig with no
 * current cluster; a non-2xx response rejects with {@link ApiError} (except from {@link send}, which
 * resolves with any status); a transport failure rejects with the
 * underlying Node error; a credential file that can't be read the first time rejects with a
 * `CredentialsError`; a request past `requestTimeoutMs` rejects with a {@link RequestTimeoutError} (no answer, not a refusal).
 */
export class ApiClient implements KubeClient {
  readonly server: string;
  private agent: http.Agent | undefined;
  /** The TLS material `agent` was made with. */
  private agentTls: ClientTls | undefined;
  /** Agents replaced after a credential change, until their last connection closes. */
  private readonly retiredAgents = new Set<http.Agent>();
  private readonly credentials: ClientCredentials;
  /** The server's protocol, host, port (and credentials in its URL), parsed once: see {@link target}. */
  private serverTarget: ServerTarget | undefined;
  /** Requests in flight, destroyed when the fence (`options.signal`) aborts. */
  private readonly fenced = new Set<http.ClientRequest>();
  /** The headers every request carries with `credentials` (user agent, authorization, impersonation). */
  private readonly baseHeaders = new WeakMap<RequestCredentials, Readonly<Record<string, string | string[]>>>();

  constructor(private readonly options: ApiClientOptions) {
    const cluster = options.kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubeConfigError('NoCurrentCluster', 'kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    this.credentials = new ClientCredentials(options.kubeConfig, options.credentials);
    const fence = options.signal;
    if (fence) {
      // Other holders of the fence may listen on it too (more than 10 is normal here, not the leak Node's
      // warning is about); this client listens once, for every request it has in flight.
      setMaxListeners(0, fence);
      fence.addEventListener('abort', () => {
        for (const req of this.fenced) req.destroy(abortError(fence));
      }, { once: true });
    }
    registerConnectionPool(this.server, this);
  }

  /**
   * One {@link send} on a client of its own, closed when the answer is read: for one-off requests (a
   * `/readyz` probe, a scrape of `/metrics`) that must leave no keep-alive socket open behind them.
   * @throws as the constructor and {@link send} do.
   */
  static async sendOnce(clientOptions: ApiClientOptions, method: string, path: string, options: SendOptions = {}): Promise<RawResponse> {
    const client = new ApiClient(clientOptions);
    try {
      return await client.send(method, path, options);
    } finally {
      client.close();
    }
  }

  /**
   * A connection to this server was found dead: destroys the idle pooled sockets of every client to it
   * (sockets in use keep their own deadline). Returns how many were destroyed.
   */
  suspectConnections(): number {
    return destroyIdleConnectionsTo(this.server);
  }

  /** Destroys this client's idle pooled sockets (see {@link suspectConnections}); returns how many. */
  destroyIdleSockets(): number {
    let destroyed = 0;
    for (const agent of [this.agent, ...this.retiredAgents]) {
      for (const sockets of Object.values(agent?.freeSockets ?? {})) {
        for (const socket of sockets ?? []) {
          socket.destroy();
          destroyed++;
        }
      }
    }
    return destroyed;
  }

  /**
   * GET/POST/PATCH/PUT/DELETE `path` (e.g. `/apis/apps/v1/namespaces/ns/deployments/x`); resolves to the decoded JSON body.
   * Built on {@link send}; a non-2xx answer rejects with {@link ApiError}.
   */
  async request<T = KubeObject>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { statusCode: code, body: text, headers } = await this.send(method, path, options);
    const body = text.length > 0 ? safeJson(text) : undefined;
    if (code < 200 || code > 299) throw toApiError(method, path, code, body, text, headers['retry-after']);
    return body as T;
  }

  /**
   * Sends one request and reads its whole answer, whatever the status code: for callers that need the
   * code of any answer (201 or 409 on create, 500 while `/readyz` fails) or a body that is not JSON
   * (`/readyz`, `/metrics`, `/openapi/v3/...`). Same transport, credentials, fence, write gates and
   * `onRequest` report as {@link request}; `path` may carry a query string, `options.query` is added to it.
   *
   * @returns the status code, the body as UTF-8 text (not parsed) and the response headers.
   * @throws only when no complete answer arrives: the underlying Node error on a transport failure,
   *   {@link RequestTimeoutError} past `options.timeoutMs` (else the client's `requestTimeoutMs`), a
   *   `CredentialsError`, the fence's or the write gate's error.
   */
  send(method: string, path: string, options: SendOptions = {}): Promise<RawResponse> {
    const started = performance.now();
    // No await while the credentials in hand are current: a request costs its own round trip, not extra ticks.
    const credentials = this.credentials.fresh();
    const answer = credentials ? this.exchange(method, path, options, credentials) : this.credentials.current().then((c) => this.exchange(method, path, options, c));
    return answer.then(
      (response) => {
        this.report(method, path, response.statusCode, started, false);
        return response;
      },
      (err: unknown) => {
        // The status code when the headers arrived and the body failed (client-go counts the code at the headers), else 0.
        this.report(method, path, (err as { statusCode?: number })?.statusCode ?? 0, started, false);
        throw err;
      },
    );
  }

  /**
   * Opens a watch (`watch=true` is added) and yields its events until the server ends the stream,
   * `signal` aborts, or the connection fails (then the iterator throws). A non-200 answer throws ApiError.
   * An `ERROR` event is yielded as is: its object is a Status (410 Expired means: relist).
   * `onResponse` runs when the response headers arrive (before any event), whatever the code.
   * `accept`: the `Accept` header (e.g. PartialObjectMetadata). @default 'application/json'
   */
  async *watch<T = KubeObject>(path: string, query: RequestOptions['query'], signal: AbortSignal, onResponse?: () => void, accept?: string): AsyncGenerator<WatchEvent<T>> {
    const started = performance.now();
    let res: http.IncomingMessage;
    try {
      const credentials = this.credentials.fresh() ?? (await this.credentials.current());
      res = await new Promise<http.IncomingMessage>((resolve, reject) => this.issue('GET', path, { query: { ...query, watch: true }, signal, accept }, credentials, true, resolve, reject));
    } catch (err) {
      this.report('WATCH', path, 0, started, true);
      throw err;
    }
    onResponse?.();
    const code = res.statusCode ?? 0;
    this.report('WATCH', path, code, started, true);
    if (code !== 200) {
      const text = await readBody(res);
      throw toApiError('WATCH', path, code, safeJson(text), text, res.headers['retry-after']);
    }
    // Read the body ourselves rather than through readline: a readline iterator over a response destroyed
    // without an error (which is what aborting `signal` does) neither ends nor throws, so a caller that
    // aborts a silent stream (idle watchdog, stop) would hang forever. Iterating the response itself throws
    // on destroy (ERR_STREAM_PREMATURE_CLOSE) and on a reset connection.
    const onAbort = () => res.destroy();
    if (signal.aborted) res.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      // Lines are split on the bytes, each decoded once: a newline byte is never part of a multi-byte
      // UTF-8 character, and the bytes of a line not yet complete wait in `pending` (no string is built
      // of a partial line, none copied again with each chunk).
      const pending: Buffer[] = [];
      for await (const chunk of res as AsyncIterable<Buffer>) {
        let start = 0;
        let newline: number;
        while ((newline = chunk.indexOf(NEWLINE, start)) >= 0) {
          const line = pending.length === 0 ? chunk.toString('utf8', start, newline) : Buffer.concat([...pending.splice(0), chunk.subarray(start, newline)]).toString('utf8');
          start = newline + 1;
          if (line.trim() !== '') yield parseWatchLine<T>(line, path);
        }
        if (start < chunk.length) pending.push(chunk.subarray(start));
      }
      const last = Buffer.concat(pending).toString('utf8');
      if (last.trim() !== '') yield parseWatchLine<T>(last, path);
    } finally {
      signal.removeEventListener('abort', onAbort);
      res.destroy();
    }
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
    this.agentTls = undefined;
    for (const agent of this.retiredAgents) agent.destroy();
    this.retiredAgents.clear();
  }

  /** Sends one request and reads its whole answer (see {@link send}); a body that fails carries its `statusCode`. */
  private exchange(method: string, path: string, options: SendOptions, credentials: RequestCredentials): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      this.issue(method, path, options, credentials, false, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, body: (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'), headers: res.headers }));
        res.on('error', (err) => reject(Object.assign(err, { statusCode: res.statusCode })));
      }, reject);
    });
  }

  /**
   * Opens the request; `onResponse` gets the response once its headers arrive (the body still unread),
   * `onError` a failure before that (and, through the response, after it).
   */
  private issue(method: string, path: string, options: SendOptions, credentials: RequestCredentials, watch: boolean, onResponse: (res: http.IncomingMessage) => void, onError: (err: Error) => void): void {
    const fence = this.options.signal;
    const own = options.signal;
    const aborted = fence?.aborted ? fence : own?.aborted ? own : undefined;
    if (aborted) return onError(abortError(aborted));
    let target: ServerTarget;
    let requestPath: string;
    try {
      target = this.target();
      requestPath = this.requestPath(path, options.query);
    } catch (err) {
      return onError(err as Error);
    }
    const payload = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const headers = this.headersFor(credentials, options.accept, payload === undefined ? undefined : (options.contentType ?? 'application/json'), payload);
    const agent = this.agentFor(target.secure, credentials.tls);
    const transport = target.secure ? https : http;
    let response: http.IncomingMessage | undefined;
    const req = transport.request({ ...target.options, path: requestPath, method, headers, agent }, (res) => {
      response = res;
      // client-go's tokenSourceTransport: a 401 makes the next request read the token file again.
      if (res.statusCode === 401) this.credentials.rejected(credentials);
      onResponse(res);
    });
    req.on('error', onError);
    const fail = (error: Error) => {
      response?.destroy(error);
      req.destroy(error);
    };
    if (fence || own) {
      // The fence listens once for all requests (constructor); a request's own signal, for this one.
      if (fence) this.fenced.add(req);
      const onAbort = own ? () => fail(abortError(own)) : undefined;
      if (onAbort) own!.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => {
        if (fence) this.fenced.delete(req);
        if (onAbort) own!.removeEventListener('abort', onAbort);
      });
    }
    if (!watch) {
      // The socket idle for `timeoutMs`, before the headers or between two chunks of the body: the
      // error names the request, whichever of the two is waiting (the body's reader gets it too).
      const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? 30_000;
      req.setTimeout(timeoutMs, () => {
        fail(new RequestTimeoutError(method, path, timeoutMs));
        // The connection is dead (or the server is stuck): the other pooled ones went the same way.
        this.suspectConnections();
      });
    }
    const gates = this.options.writeGate || options.writeGate ? [this.options.writeGate, options.writeGate].filter((g): g is WriteGate => g !== undefined) : NO_GATES;
    if (gates.length === 0 || !isWriteMethod(method)) {
      req.end(payload);
      return;
    }
    // Nothing is written before end(): wait for a ready connection, then check and write in one step.
    const issue = () => {
      try {
        for (const gate of gates) gate.assertMayWrite(method, path);
      } catch (err) {
        req.destroy(err as Error);
        return;
      }
      req.end(payload);
    };
    // A pooled socket is ready; a new one is still connecting when 'socket' is emitted (a tick later).
    req.once('socket', (socket) => (socket.connecting ? socket.once(target.secure ? 'secureConnect' : 'connect', issue) : issue()));
  }

  /** The server's URL parsed once (a malformed `server` fails each request, as a URL parsed per request did). */
  private target(): ServerTarget {
    if (this.serverTarget) return this.serverTarget;
    const url = new URL(this.server);
    const { protocol, hostname, port, auth } = urlToHttpOptions(url);
    this.serverTarget = {
      secure: url.protocol === 'https:',
      options: { protocol, hostname, ...(port !== undefined ? { port } : {}), ...(auth !== undefined ? { auth } : {}) },
      pathPrefix: url.pathname === '/' ? '' : url.pathname,
    };
    return this.serverTarget;
  }

  /**
   * The request line's path: the server's own path, `path`, and `query` (set over any of the same name
   * in `path`). A path of plain URL characters is taken as it is; any other goes through `URL`, which
   * escapes and normalizes it.
   */
  private requestPath(path: string, query: RequestOptions['query']): string {
    if (PLAIN_PATH.test(path)) {
      const params = query === undefined ? '' : queryOf(query);
      return this.target().pathPrefix + path + (params ? `?${params}` : '');
    }
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.pathname + url.search;
  }

  /** The request's headers: the ones of `credentials` (made once per credentials), then Accept and the body's. */
  private headersFor(credentials: RequestCredentials, accept: string | undefined, contentType: string | undefined, payload: string | undefined): Record<string, string | string[]> {
    let base = this.baseHeaders.get(credentials);
    if (!base) {
      const made: Record<string, string | string[]> = { Accept: 'application/json', 'User-Agent': this.options.userAgent ?? 'cdk8s-operator-sdk' };
      for (const [key, value] of Object.entries(credentials.headers)) made[key] = typeof value === 'string' ? value : [...value];
      if (this.options.impersonate) {
        made['Impersonate-User'] = this.options.impersonate.user;
        if (this.options.impersonate.groups?.length) made['Impersonate-Group'] = [...this.options.impersonate.groups];
      }
      this.baseHeaders.set(credentials, (base = made));
    }
    // Node copies the headers it is given: the shared object is never changed.
    if (accept === undefined && payload === undefined) return base as Record<string, string | string[]>;
    const headers: Record<string, string | string[]> = { ...base };
    if (accept !== undefined) headers.Accept = accept;
    if (payload !== undefined) {
      headers['Content-Type'] = contentType!;
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    return headers;
  }

  /**
   * The keep-alive agent for `tls`: the current one while the material is the same object, else a new
   * one. The replaced agent closes its idle sockets now and every other socket when its request ends, so
   * no later request goes out with the old certificate or trusts the old CA.
   */
  private agentFor(secure: boolean, tls: ClientTls): http.Agent {
    if (this.agent && (!secure || this.agentTls === tls)) return this.agent;
    if (this.agent) this.retire(this.agent);
    this.agent = secure
      ? new TlsMaterialAgent({
          keepAlive: true,
          timeout: POOLED_SOCKET_IDLE_MS,
          ca: tls.ca,
          cert: tls.cert,
          key: tls.key,
          servername: tls.servername,
          rejectUnauthorized: tls.rejectUnauthorized,
        })
      : new http.Agent({ keepAlive: true, timeout: POOLED_SOCKET_IDLE_MS });
    this.agentTls = tls;
    return this.agent;
  }

  private retire(agent: http.Agent): void {
    // A socket that finishes its request is destroyed instead of going back to the pool.
    agent.keepSocketAlive = () => false;
    for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    for (const retired of this.retiredAgents) {
      if (Object.values(retired.sockets).every((s) => !s?.length)) this.retiredAgents.delete(retired);
    }
    this.retiredAgents.add(agent);
  }

  private report(method: string, path: string, code: number, started: number, watch: boolean): void {
    this.options.onRequest?.({ method, path, code, durationMs: performance.now() - started, watch });
  }
}

/** The server as http.request takes it, parsed once per client. */
interface ServerTarget {
  readonly secure: boolean;
  readonly options: Pick<http.RequestOptions, 'protocol' | 'hostname' | 'port' | 'auth'>;
  /** The path of the server's URL (a proxy's prefix), '' when none. */
  readonly pathPrefix: string;
}

const NO_GATES: readonly WriteGate[] = [];

/** A request path of unreserved, sub-delim, ':', '@', '/' and '%' characters only, with no dot segment (RFC 3986 path-absolute). */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@%]*)+$/;

/** `query` as URL-encoded form (what `URL.searchParams.set` writes), '' for none. */
function queryOf(query: NonNullable<RequestOptions['query']>): string {
  const params = new URLSearchParams();
  for (const key in query) {
    const value = query[key];
    if (value !== undefined) params.set(key, String(value));
  }
  return params.toString();
}

/** The error a request aborted by `signal` rejects with: Node's own for an aborted `http.request` (name `AbortError`, code `ABORT_ERR`, the signal's reason as cause). */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}

function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/**
 * An https.Agent whose pool key leaves its TLS material out. Node's `https.Agent.getName` appends the CA,
 * certificate and key to host and port, decoding each Buffer to text, on every request; this client makes
 * one agent per set of material ({@link ApiClient}'s `agentFor`), so host, port and local address say
 * which pooled connection (and TLS session) fits.
 */
class TlsMaterialAgent extends https.Agent {
  override getName(options?: https.RequestOptions): string {
    return http.Agent.prototype.getName.call(this, options);
  }
}

/** The byte that ends each event of a watch stream (one JSON object per line). */
const NEWLINE = 0x0a;

function parseWatchLine<T>(line: string, path: string): WatchEvent<T> {
  try {
    return JSON.parse(line) as WatchEvent<T>;
  } catch {
    throw new Error(`WATCH ${path}: undecodable line in the stream: ${line.slice(0, 200)}`);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toApiError(method: string, path: string, code: number, body: unknown, text: string, retryAfterHeader: string | undefined): ApiError {
  const status = body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
  const reason = typeof status?.reason === 'string' && status.reason ? status.reason : `HTTP${code}`;
  const message = typeof status?.message === 'string' ? status.message : text.slice(0, 500);
  return new ApiError(method, path, code, reason, status, message, retryAfterOf(code, retryAfterHeader, status));
}

/** The delay in seconds a 429 or 5xx answer asks for (header, else Status details), or undefined. */
function retryAfterOf(code: number, header: string | undefined, status: Record<string, unknown> | undefined): number | undefined {
  if (code !== 429 && (code < 500 || code > 599)) return undefined;
  if (header !== undefined && /^\d+$/.test(header.trim())) return Number(header.trim());
  const details = status?.details as { retryAfterSeconds?: unknown } | undefined;
  const seconds = details?.retryAfterSeconds;
  return typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 0 ? seconds : undefined;
}
