/**
 * ApiClient's write gate (lib/runtime/client/write-gate.ts), on a local HTTP server: the gate is a
 * client-side check, so what matters is what reaches a socket, which a server of the test's own counts
 * exactly. The real API server and real processes are in test/integration/leader-fencing.test.ts.
 */
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { ApiClient } from '../../../lib/runtime/client/api-client.js';
import { WriteFencedError, type WriteGate } from '../../../lib/runtime/client/write-gate.js';
import { createCertificateAuthority, issueServingCertificate } from '../../../lib/runtime/webhook/x509.js';
import { localKubeConfig } from '../../support/local-kube-config.js';

/** A gate the test opens and closes; it records every write it was asked about. */
function testGate(): WriteGate & { open: boolean; asked: string[] } {
  const gate = {
    open: true,
    asked: [] as string[],
    assertMayWrite(method: string, path: string) {
      gate.asked.push(`${method} ${path}`);
      if (!gate.open) throw new WriteFencedError(method, path, 'closed by the test');
    },
  };
  return gate;
}

describe('ApiClient write gate', () => {
  let server: http.Server;
  let client: ApiClient | undefined;
  const received: string[] = [];

  beforeEach(async () => {
    received.length = 0;
    server = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    client?.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function gated(): { gate: WriteGate & { open: boolean; asked: string[] }; client: ApiClient } {
    const gate = testGate();
    client = new ApiClient({ kubeConfig: localKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), writeGate: gate });
    return { gate, client };
  }

  test('GIVEN a closed gate THEN every write (POST, PUT, PATCH, DELETE) rejects with WriteFencedError and none reaches the server; reads pass without asking the gate', async () => {
    const { gate, client } = gated();
    gate.open = false;
    const path = '/api/v1/namespaces/n/configmaps/c';
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      await expect(client.request(method, path, { body: { a: 1 } })).rejects.toThrow(WriteFencedError);
    }
    await expect(client.request('patch', path, { body: {} })).rejects.toMatchObject({ reason: 'WriteFenced', message: `patch ${path}: not sent: closed by the test` });
    expect(received).toEqual([]);
    await expect(client.request('GET', path)).resolves.toEqual({});
    expect(received).toEqual([`GET ${path}`]);
    expect(gate.asked).toEqual(['POST', 'PUT', 'PATCH', 'DELETE', 'patch'].map((m) => `${m} ${path}`));
  });

  test('GIVEN an open gate THEN writes are sent, each asked once, on new and on pooled connections alike', async () => {
    const { gate, client } = gated();
    await client.request('POST', '/a', { body: {} }); // a new connection
    await client.request('PUT', '/b', { body: {} }); // the pooled one
    await client.request('DELETE', '/c');
    expect(received).toEqual(['POST /a', 'PUT /b', 'DELETE /c']);
    expect(gate.asked).toEqual(['POST /a', 'PUT /b', 'DELETE /c']);
  });

  test('GIVEN a write asked while the gate is open WHEN the gate closes before the write goes out THEN it is not sent (checked when sent, not when asked)', async () => {
    const { gate, client } = gated();
    const write = client.request('PATCH', '/d', { body: { spec: 1 } });
    gate.open = false; // the caller's promise chain asked; the process may have frozen since
    await expect(write).rejects.toThrow(WriteFencedError);
    expect(received).toEqual([]);
    gate.open = true;
    await client.request('PATCH', '/d', { body: { spec: 2 } }); // the client still works once allowed again
    expect(received).toEqual(['PATCH /d']);
  });

  test('GIVEN a request with its own write gate WHEN it or the client\'s gate is closed THEN the write is not sent; reads never ask it', async () => {
    const { gate: clientGate, client } = gated();
    const own = testGate();
    own.open = false;
    await expect(client.request('PUT', '/lease', { body: {}, writeGate: own })).rejects.toThrow(WriteFencedError);
    await expect(client.request('GET', '/lease', { writeGate: own })).resolves.toEqual({});
    own.open = true;
    clientGate.open = false;
    await expect(client.request('PUT', '/lease', { body: {}, writeGate: own })).rejects.toThrow(WriteFencedError);
    clientGate.open = true;
    await client.request('PUT', '/lease', { body: {}, writeGate: own });
    expect(received).toEqual(['GET /lease', 'PUT /lease']);
    expect(own.asked).toEqual(['PUT /lease', 'PUT /lease']);
  });

  test('GIVEN a client without a gate WHEN a request brings its own, closed THEN the write is not sent', async () => {
    client = new ApiClient({ kubeConfig: localKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) });
    const own = testGate();
    own.open = false;
    await expect(client.request('POST', '/x', { body: {}, writeGate: own })).rejects.toThrow(WriteFencedError);
    expect(received).toEqual([]);
  });
});

describe('ApiClient write gate on a new TLS connection', () => {
  let server: https.Server;
  let proxy: net.Server;
  let client: ApiClient | undefined;
  const received: string[] = [];
  /** Client connections the proxy accepted and holds: nothing is forwarded until the test says so. */
  const held: net.Socket[] = [];
  const upstreams: net.Socket[] = [];

  beforeAll(async () => {
    const validity = { notAfter: new Date(Date.now() + 3_600_000) };
    const serving = issueServingCertificate(createCertificateAuthority('write-gate-test', validity), ['127.0.0.1'], validity);
    server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      received.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = net.createServer((socket) => {
      socket.pause();
      held.push(socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    client?.close();
    for (const socket of [...held, ...upstreams]) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => proxy.close(resolve));
  });

  /** Lets the held connections through to the TLS server (the handshake can then complete). */
  function release(): void {
    for (const socket of held.splice(0)) {
      const upstream = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      upstreams.push(upstream);
      socket.pipe(upstream).pipe(socket);
      socket.resume();
    }
  }

  test('GIVEN a write that must open a TLS connection WHEN the gate closes during the handshake THEN it is asked once the connection is ready, and nothing is sent', async () => {
    const gate = testGate();
    client = new ApiClient({ kubeConfig: localKubeConfig(`https://127.0.0.1:${(proxy.address() as AddressInfo).port}`), writeGate: gate });
    const write = client.request('POST', '/e', { body: { spec: 1 } });
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve)); // TCP is up, TLS is not
    expect(gate.asked).toEqual([]); // not asked while the connection is not ready
    gate.open = false;
    release();
    await expect(write).rejects.toThrow(WriteFencedError);
    expect(gate.asked).toEqual(['POST /e']);
    expect(received).toEqual([]);
    gate.open = true;
    const allowed = client.request('POST', '/e', { body: { spec: 2 } });
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    release();
    await allowed;
    expect(received).toEqual(['POST /e']);
  });
});
