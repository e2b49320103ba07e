/**
 * ApiClient against a local HTTP server standing in for the API server: what goes on the wire (path
 * prefix, query, headers, body) and what comes back (decoded JSON, ApiError, the request deadline).
 * The same client against a real kube-apiserver: every integration test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiClient, type RequestRecord } from '../../../lib/runtime/client/api-client.js';
import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import { localKubeConfig } from '../../support/local-kube-config.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Polls until `check` holds; fails (on never happening, not on timing) after a generous bound. */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`never happened: ${what}`);
}

describe('ApiClient', () => {
  let server: http.Server;
  let client: ApiClient | undefined;
  const seen: Seen[] = [];
  let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void;

  beforeEach(async () => {
    seen.length = 0;
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        answer(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    client?.close();
    client = undefined;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const base = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  test('GIVEN a server URL with a path prefix and a query THEN the request goes to prefix + path with the query encoded, and the JSON answer is decoded', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"ConfigMap","metadata":{"name":"a b"}}');
    const records: RequestRecord[] = [];
    client = new ApiClient({ kubeConfig: localKubeConfig(`${base()}/k8s/clusters/c1/`), onRequest: (r) => records.push(r) });
    const body = await client.request('PATCH', '/api/v1/namespaces/ns/configmaps/a%20b', {
      query: { fieldManager: 'm&n', force: true, dryRun: undefined },
      body: { metadata: { name: 'a b' } },
      contentType: 'application/apply-patch+yaml',
    });
    expect(body).toEqual({ kind: 'ConfigMap', metadata: { name: 'a b' } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'PATCH', url: '/k8s/clusters/c1/api/v1/namespaces/ns/configmaps/a%20b?fieldManager=m%26n&force=true', body: '{"metadata":{"name":"a b"}}' });
    expect(seen[0]?.headers).toMatchObject({ accept: 'application/json', 'content-type': 'application/apply-patch+yaml', 'user-agent': 'cdk8s-operator-sdk' });
    expect(records).toEqual([expect.objectContaining({ method: 'PATCH', path: '/api/v1/namespaces/ns/configmaps/a%20b', code: 200, watch: false })]);
  });

  test('GIVEN paths that are not plain (a query of their own, a space, a dot segment) THEN each goes out as URL would write it, the query set over the path\'s own', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    client = new ApiClient({ kubeConfig: localKubeConfig(`${base()}/prefix`) });
    await client.request('GET', '/openapi/v3/apis/apps/v1?hash=abc&limit=1', { query: { limit: 5, labelSelector: 'a in (x,y)' } });
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/a b');
    await client.request('GET', '/api/v1/namespaces/ns/../configmaps');
    await client.request('GET', '/api/v1/namespaces/ns/configmaps', { query: { watch: undefined } });
    expect(seen.map((s) => s.url)).toEqual([
      '/prefix/openapi/v3/apis/apps/v1?hash=abc&limit=5&labelSelector=a+in+%28x%2Cy%29',
      '/prefix/api/v1/namespaces/ns/configmaps/a%20b',
      '/prefix/api/v1/namespaces/configmaps',
      '/prefix/api/v1/namespaces/ns/configmaps',
    ]);
  });

  test('GIVEN a request\'s own signal aborted while it waits, and one aborted before it is sent THEN both reject with AbortError naming the reason, and onRequest records code 0', async () => {
    answer = () => undefined; // never answers
    const records: RequestRecord[] = [];
    client = new ApiClient({ kubeConfig: localKubeConfig(base()), onRequest: (r) => records.push(r) });
    const controller = new AbortController();
    const waiting = client.request('GET', '/api/v1/namespaces', { signal: controller.signal });
    await waitFor(() => seen.length === 1, 'the request reached the server');
    controller.abort(new Error('stop now'));
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', message: 'The operation was aborted', cause: new Error('stop now') });
    await expect(client.request('GET', '/api/v1/namespaces', { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
    expect(records.map((r) => r.code)).toEqual([0, 0]);
  });

  test('GIVEN a 409 with a Status body THEN ApiError carries the code, the reason and the message', async () => {
    answer = (_req, res) => res.writeHead(409, { 'content-type': 'application/json' }).end('{"kind":"Status","reason":"Conflict","message":"the object has been modified"}');
    client = new ApiClient({ kubeConfig: localKubeConfig(base()) });
    const err = await client.request('PUT', '/api/v1/namespaces/ns/configmaps/a', { body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 409, reason: 'Conflict', message: 'PUT /api/v1/namespaces/ns/configmaps/a: 409 Conflict: the object has been modified' });
  });

  test('GIVEN send() and answers of 201, 409 and a plain-text 500 THEN each resolves with its code, its body text and its headers, and onRequest records each code', async () => {
    const answers: [number, string, string][] = [
      [201, 'application/json', '{"kind":"Node"}'],
      [409, 'application/json', '{"kind":"Status","reason":"AlreadyExists"}'],
      [500, 'text/plain', '[-]etcd failed: reason withheld\nreadyz check failed'],
    ];
    answer = (_req, res) => {
      const [code, type, body] = answers[seen.length - 1]!;
      res.writeHead(code, { 'content-type': type }).end(body);
    };
    const records: RequestRecord[] = [];
    client = new ApiClient({ kubeConfig: localKubeConfig(base()), onRequest: (r) => records.push(r) });
    const created = await client.send('POST', '/api/v1/nodes?fieldManager=m', { body: { kind: 'Node' } });
    const conflict = await client.send('POST', '/api/v1/nodes', { body: '{"kind":"Node"}' });
    const readyz = await client.send('GET', '/readyz');
    expect([created, conflict, readyz].map((r) => [r.statusCode, r.body, r.headers['content-type']])).toEqual(answers.map(([code, type, body]) => [code, body, type]));
    expect(seen.map((s) => [s.method, s.url, s.body, s.headers['content-type']])).toEqual([
      ['POST', '/api/v1/nodes?fieldManager=m', '{"kind":"Node"}', 'application/json'],
      ['POST', '/api/v1/nodes', '{"kind":"Node"}', 'application/json'],
      ['GET', '/readyz', '', undefined],
    ]);
    expect(records.map((r) => [r.method, r.path, r.code])).toEqual([
      ['POST', '/api/v1/nodes?fieldManager=m', 201],
      ['POST', '/api/v1/nodes', 409],
      ['GET', '/readyz', 500],
    ]);
  });

  test('GIVEN send() with timeoutMs and a server that never answers THEN it rejects after that deadline, not the client\'s', async () => {
    answer = () => undefined; // holds the request
    client = new ApiClient({ kubeConfig: localKubeConfig(base()), requestTimeoutMs: 60_000 });
    await expect(client.send('GET', '/readyz', { timeoutMs: 200 })).rejects.toThrow('GET /readyz: no answer within 200 ms');
  });

  test('GIVEN ApiClient.sendOnce THEN it answers like send() and leaves no connection open behind it', async () => {
    const connections: import('node:net').Socket[] = [];
    server.on('connection', (s) => connections.push(s));
    answer = (_req, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('not ready');
    const res = await ApiClient.sendOnce({ kubeConfig: localKubeConfig(base()) }, 'GET', '/readyz');
    expect([res.statusCode, res.body]).toEqual([503, 'not ready']);
    expect(connections).toHaveLength(1);
    await waitFor(() => connections.every((s) => s.destroyed || s.closed), 'the connection closed');
  });

  test('GIVEN ApiClient.sendOnce on a kubeconfig with no current cluster THEN it rejects (does not throw synchronously) with NoCurrentCluster', async () => {
    const sent = ApiClient.sendOnce({ kubeConfig: new KubeConfig() }, 'GET', '/readyz');
    await expect(sent).rejects.toMatchObject({ reason: 'NoCurrentCluster' });
  });

  test.each([
    ['429 with a Retry-After header', 429, { 'retry-after': '1' }, {}, 1],
    ['503 with Status details only', 503, {}, { details: { retryAfterSeconds: 5 } }, 5],
    ['503 with neither', 503, {}, {}, undefined],
    ['a header that is an HTTP date', 503, { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' }, {}, undefined],
    ['404 with a Retry-After header (not a code to retry)', 404, { 'retry-after': '1' }, {}, undefined],
  ])('GIVEN %s THEN ApiError.retryAfterSeconds is what the server asked for', async (_name, code, headers, status, expected) => {
    answer = (_req, res) => res.writeHead(code, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ kind: 'Status', code, reason: 'X', message: 'm', ...status }));
    client = new ApiClient({ kubeConfig: localKubeConfig(base()) });
    const request = await client.request('GET', '/api/v1/namespaces/ns/configmaps').catch((e: unknown) => e);
    expect(request).toBeInstanceOf(ApiError);
    const iterator = client.watch('/api/v1/namespaces/ns/configmaps', {}, new AbortController().signal);
    const watch = await iterator.next().catch((e: unknown) => e);
    expect([(request as ApiError).retryAfterSeconds, (watch as ApiError).retryAfterSeconds]).toEqual([expected, expected]);
  });

  test('GIVEN a server that never answers THEN the request fails after requestTimeoutMs with a message naming it, and onRequest records code 0', async () => {
    answer = () => undefined; // holds the request
    const records: RequestRecord[] = [];
    client = new ApiClient({ kubeConfig: localKubeConfig(base()), requestTimeoutMs: 200, onRequest: (r) => records.push(r) });
    await expect(client.request('GET', '/api/v1/namespaces')).rejects.toThrow('GET /api/v1/namespaces: no answer within 200 ms');
    expect(records).toEqual([expect.objectContaining({ method: 'GET', code: 0 })]);
  });

  test('GIVEN a request that gets no answer (a dead connection) THEN the idle pooled sockets of every client to that server are closed, so the next request opens a new connection', async () => {
    const connections: import('node:net').Socket[] = [];
    server.on('connection', (s) => connections.push(s));
    answer = (req, res) => (req.url?.includes('hang') ? undefined : res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    client = new ApiClient({ kubeConfig: localKubeConfig(base()), requestTimeoutMs: 200 });
    const other = new ApiClient({ kubeConfig: localKubeConfig(base()) }); // e.g. the informers' client
    try {
      await client.request('GET', '/api/v1/a');
      await other.request('GET', '/api/v1/b');
      expect(connections).toHaveLength(2); // one idle pooled socket per client
      await expect(client.request('GET', '/api/v1/hang')).rejects.toThrow('no answer within 200 ms'); // reuses client's socket
      await waitFor(() => connections.every((s) => s.destroyed || s.closed), 'both pooled connections closed');
      await other.request('GET', '/api/v1/c');
      expect(connections).toHaveLength(3);
    } finally {
      other.close();
    }
  });

  test('GIVEN suspectConnections() THEN the idle pooled sockets to that server are closed and counted; a client to another server keeps its own', async () => {
    const elsewhere = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    client = new ApiClient({ kubeConfig: localKubeConfig(base()) });
    const far = new ApiClient({ kubeConfig: localKubeConfig(`http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`) });
    try {
      await client.request('GET', '/api/v1/a');
      await far.request('GET', '/api/v1/a');
      expect(client.suspectConnections()).toBe(1);
      expect(far.destroyIdleSockets()).toBe(1);
    } finally {
      far.close();
      elsewhere.closeAllConnections();
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  test('GIVEN a server that sends headers and then stalls the body THEN the request fails with the same deadline message', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"kind":');
    };
    client = new ApiClient({ kubeConfig: localKubeConfig(base()), requestTimeoutMs: 200 });
    await expect(client.request('GET', '/api/v1/namespaces')).rejects.toThrow('GET /api/v1/namespaces: no answer within 200 ms');
  });

  test('GIVEN a watch split across chunks mid-line and mid-character THEN every event is decoded whole', async () => {
    const events = [
      { type: 'ADDED', object: { metadata: { name: 'é-1' } } },
      { type: 'MODIFIED', object: { metadata: { name: 'ü-2' } } },
    ];
    const wire = Buffer.from(events.map((e) => JSON.stringify(e)).join('\n') + '\n', 'utf8');
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Cut inside the two-byte 'é' and inside the first line; end without waiting.
      const cut = wire.indexOf(Buffer.from('é', 'utf8')) + 1;
      res.write(wire.subarray(0, cut));
      setImmediate(() => res.end(wire.subarray(cut)));
    };
    client = new ApiClient({ kubeConfig: localKubeConfig(base()) });
    const got = [];
    for await (const event of client.watch('/api/v1/pods', { resourceVersion: '5' }, new AbortController().signal)) got.push(event);
    expect(got).toEqual(events);
    expect(seen[0]?.url).toBe('/api/v1/pods?resourceVersion=5&watch=true');
  });

  test('GIVEN a watch whose line spans three chunks, an empty line, and a last line without a newline THEN each event is decoded once, whole', async () => {
    const events = [
      { type: 'ADDED', object: { metadata: { name: 'a', annotations: { note: 'ß'.repeat(50) } } } },
      { type: 'MODIFIED', object: { metadata: { name: 'b' } } },
      { type: 'DELETED', object: { metadata: { name: 'c' } } },
    ];
    const [first, second, third] = events.map((e) => Buffer.from(JSON.stringify(e), 'utf8'));
    const pieces = [first!.subarray(0, 10), first!.subarray(10, 41), Buffer.concat([first!.subarray(41), Buffer.from('\n\n'), second!, Buffer.from('\n'), third!.subarray(0, 5)]), third!.subarray(5)];
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const next = (i: number): void => {
        if (i === pieces.length) return void res.end();
        res.write(pieces[i]);
        setImmediate(() => next(i + 1));
      };
      next(0);
    };
    client = new ApiClient({ kubeConfig: localKubeConfig(base()) });
    const got = [];
    for await (const event of client.watch('/api/v1/pods', {}, new AbortController().signal)) got.push(event);
    expect(got).toEqual(events);
  });
});
