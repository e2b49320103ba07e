/**
 * ApiClient with a fence signal (the reconcilers' writer): many requests in flight at once listen on
 * the one signal, which must not trip Node's MaxListenersExceededWarning (a leak warning users would see
 * in `dev` and `run` output), and aborting the fence still ends every request in flight.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../../../lib/runtime/client/api-client.js';
import { localKubeConfig } from '../../support/local-kube-config.js';
import { runCommand } from '../../support/run-command.js';

const IN_FLIGHT = 25;

describe('ApiClient fence', () => {
  let server: http.Server;
  let client: ApiClient;
  const held: http.ServerResponse[] = [];

  beforeEach(async () => {
    held.length = 0;
    server = http.createServer((_req, res) => held.push(res)); // answers only when the test says so
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    client?.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function clientWith(signal: AbortSignal): ApiClient {
    return new ApiClient({ kubeConfig: localKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), signal });
  }

  test(`GIVEN ${IN_FLIGHT} writes in flight on one fence THEN they all complete and Node prints no MaxListenersExceededWarning`, async () => {
    // Its own process: Node's process warnings do not reach a jest test.
    const fixture = fileURLToPath(new URL('./fixtures/fence-requests.ts', import.meta.url));
    const result = await runCommand(process.execPath, ['--import', 'tsx', fixture, String(IN_FLIGHT)], { cwd: process.cwd(), timeoutMs: 120_000 });
    expect(result.stderr).not.toContain('MaxListenersExceededWarning');
    expect({ code: result.code, stdout: result.stdout.trim() }).toEqual({ code: 0, stdout: `answered ${IN_FLIGHT}` });
  });

  test(`GIVEN ${IN_FLIGHT} writes in flight WHEN the fence aborts THEN every one of them fails`, async () => {
    const fence = new AbortController();
    client = clientWith(fence.signal);
    const writes = Array.from({ length: IN_FLIGHT }, (_, i) => client.request('POST', `/api/v1/namespaces/ns/configmaps`, { body: { metadata: { name: `c${i}` } } }).then(() => 'answered', () => 'failed'));
    while (held.length < IN_FLIGHT) await new Promise((resolve) => setImmediate(resolve));
    fence.abort();
    expect(await Promise.all(writes)).toEqual(Array(IN_FLIGHT).fill('failed'));
  });
});
