/**
 * ApiClient's write gate (lib/runtime/client/write-gate.ts), on a local HTTP server: the gate is a
 * client-side check, so what matters is what reaches a socket, which a server of the test's own counts
 * exactly. The real API server and real processes are in test/integration/leader-fencing.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../../lib/runtime/client/api-client.js';
import { WriteFencedError, type WriteGate } from '../../../lib/runtime/client/write-gate.js';
import { localKubeConfig } from '../../support/local-kube-config.js';

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
    const gate = {
      open: true,
      asked: [] as string[],
      assertMayWrite(method: string, path: string) {
        gate.asked.push(`${method} ${path}`);
        if (!gate.open) throw new WriteFencedError(method, path, 'closed by the test');
      },
    };
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
});
