import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import type { Logger } from '../../lib/runtime/logger.js';

/**
 * A tiny fake API server for one resource (configmaps): list answers come from `list`, watches are
 * held open so the test can push events, end or break them.
 */
export interface WatchConn {
  readonly query: URLSearchParams;
  send(type: string, object: unknown): void;
  /** Ends the response cleanly (like a server timeoutSeconds expiry). */
  end(): void;
  /** Kills the TCP connection mid-stream. */
  reset(): void;
  /** True once the client went away or the server ended it. */
  closed: boolean;
}

/** A list call's answer. */
export interface ListAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export class FakeApiServer {
  readonly requests: { method: string; path: string; query: URLSearchParams; accept?: string }[] = [];
  readonly watches: WatchConn[] = [];
  /** Answers a list call, at once or when the promise settles (a list the test holds); default: 200 with `objects` and `listRv`. */
  list: (query: URLSearchParams) => ListAnswer | Promise<ListAnswer> = () => this.okList();
  /** Answers a watch call before it streams; return undefined to open the stream. */
  watchStart: (query: URLSearchParams) => { status: number; body: unknown } | undefined = () => undefined;
  /** The next this-many watch requests get no answer at all (not even headers). */
  stallWatches = 0;
  objects: KubeObject[] = [];
  listRv = '10';
  private server!: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();

  /** Listens on `port` (default: any free one); also again after stop(), as a restarted API server. */
  async start(port = 0): Promise<string> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  okList(): { status: number; body: unknown } {
    return { status: 200, body: { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: this.listRv }, items: this.objects } };
  }

  /** TCP connections open to this server now. */
  openSockets(): number {
    return this.sockets.size;
  }

  listCalls(): URLSearchParams[] {
    return this.requests.filter((r) => r.query.get('watch') !== 'true').map((r) => r.query);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url!, 'http://x');
    this.requests.push({ method: req.method!, path: url.pathname, query: url.searchParams, accept: req.headers.accept });
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.searchParams.get('watch') !== 'true') {
      void Promise.resolve(this.list(url.searchParams)).then(({ status, body, headers }) => json(status, body, headers));
      return;
    }
    if (this.stallWatches > 0) {
      this.stallWatches--;
      return;
    }
    const early = this.watchStart(url.searchParams);
    if (early) return json(early.status, early.body);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
    const conn: WatchConn = {
      query: url.searchParams,
      closed: false,
      send: (type, object) => res.write(JSON.stringify({ type, object }) + '\n'),
      end: () => res.end(),
      reset: () => req.socket.destroy(),
    };
    res.on('close', () => (conn.closed = true));
    this.watches.push(conn);
  }
}

export function cm(name: string, rv: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, ...extra }, data: { v: rv } };
}

export function event(type: string, name: string, rv: string): { type: string; object: KubeObject } {
  return { type, object: { apiVersion: 'v1', kind: 'ConfigMap', ...cm(name, rv) } };
}

/** Polls until `check` is true; fails the test (not on timing, on never happening) after a generous bound. */
export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never happened: ${what}`);
}

export class RecordingLogger implements Logger {
  readonly lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  debug(fields: object, msg: string) {
    this.lines.push({ level: 'debug', msg, fields: fields as Record<string, unknown> });
  }
  info(fields: object, msg: string) {
    this.lines.push({ level: 'info', msg, fields: fields as Record<string, unknown> });
  }
  warn(fields: object, msg: string) {
    this.lines.push({ level: 'warn', msg, fields: fields as Record<string, unknown> });
  }
  error(fields: object, msg: string) {
    this.lines.push({ level: 'error', msg, fields: fields as Record<string, unknown> });
  }
  messages(level: string): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.msg);
  }
}
