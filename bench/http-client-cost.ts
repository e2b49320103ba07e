/**
 * CPU our process spends per API request, by HTTP client, against a real local kube-apiserver.
 *
 *   npx tsx bench/http-client-cost.ts [--requests N] [--rounds R]
 *
 * Clients: `ApiClient` as it ships (node:https, a keep-alive Agent), and bare node:https, undici `Pool`
 * (a devDependency, for this comparison only; see bench/PROFILE.md section 8 for why ApiClient stays on
 * node:https) and node:http2 (one session). Each client sends the same sequence, one request in flight (like one reconcile worker): a
 * server-side apply of a ConfigMap that is already in the desired state (the server answers 200 and
 * stores nothing), then a GET of it. Clients alternate, R rounds of N requests each. Prints one JSON
 * object: per client, the median over rounds of our process's CPU microseconds (utime + stime) per
 * request, and of the wall-clock milliseconds per request.
 */
import https from 'node:https';
import http2 from 'node:http2';
import { type Dispatcher, Pool } from 'undici';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { ClientCredentials } from '../lib/runtime/client/client-credentials.js';
import { startControlPlane } from '../lib/testing/control-plane.js';
import { benchOptions } from './bench-options.js';

const { values, number } = benchOptions({ requests: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' }, only: { type: 'string' } });
const requests = number('requests');
const rounds = number('rounds');
const only = values.only;

const plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
try {
  const path = '/api/v1/namespaces/default/configmaps/bench';
  const query = '?fieldManager=bench&force=true';
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench', labels: { a: 'b' } }, data: { key: 'x'.repeat(512) } });
  const applyType = 'application/apply-patch+yaml';

  const client = new ApiClient({ kubeConfig: plane.kubeConfig });
  await client.request('PATCH', path, { query: { fieldManager: 'bench', force: true }, body, contentType: applyType });

  const credentials = await new ClientCredentials(plane.kubeConfig).current();
  const session = http2.connect(plane.server, { ca: credentials.tls.ca, cert: credentials.tls.cert, key: credentials.tls.key });
  const h2 = (method: string, p: string, payload?: string) =>
    new Promise<unknown>((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': p, accept: 'application/json', ...credentials.headers };
      if (payload !== undefined) headers['content-type'] = applyType;
      const stream = session.request(headers, { endStream: payload === undefined });
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      });
      stream.on('error', reject);
      if (payload !== undefined) stream.end(payload);
    });

  const pool = new Pool(plane.server, { connect: { ca: credentials.tls.ca, cert: credentials.tls.cert, key: credentials.tls.key }, connections: 4 });
  const ud = async (method: Dispatcher.HttpMethod, p: string, payload?: string) => {
    const res = await pool.request({ method, path: p, headers: { accept: 'application/json', ...(payload !== undefined ? { 'content-type': applyType } : {}) }, body: payload });
    return JSON.parse(await res.body.text());
  };
  const agent = new https.Agent({ keepAlive: true, ca: credentials.tls.ca, cert: credentials.tls.cert, key: credentials.tls.key });
  const h1 = (method: string, p: string, payload?: string) =>
    new Promise<unknown>((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (payload !== undefined) headers['content-type'] = applyType;
      const req = https.request(plane.server + p, { method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  const clients: Record<string, (i: number) => Promise<unknown>> = {
    'ApiClient': (i) =>
      i % 2 === 0
        ? client.request('PATCH', path, { query: { fieldManager: 'bench', force: true }, body, contentType: applyType })
        : client.request('GET', path),
    'node:https, keep-alive Agent': (i) => (i % 2 === 0 ? h1('PATCH', path + query, body) : h1('GET', path)),
    'undici Pool': (i) => (i % 2 === 0 ? ud('PATCH', path + query, body) : ud('GET', path)),
    'node:http2, one session': (i) => (i % 2 === 0 ? h2('PATCH', path + query, body) : h2('GET', path)),
  };

  // --only NAME: one client alone (e.g. under --cpu-prof).
  const results: Record<string, { cpuUsPerRequest: number[]; wallMsPerRequest: number[] }> = {};
  for (let round = 0; round < rounds + 1; round++) {
    for (const [name, send] of Object.entries(clients)) {
      if (only && !name.includes(only)) continue;
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < requests; i++) await send(i);
      const cpu = process.cpuUsage(cpu0);
      const wall = performance.now() - t0;
      if (round === 0) continue; // warm-up
      results[name] ??= { cpuUsPerRequest: [], wallMsPerRequest: [] };
      results[name].cpuUsPerRequest.push(Math.round((cpu.user + cpu.system) / requests));
      results[name].wallMsPerRequest.push(Number((wall / requests).toFixed(3)));
    }
  }
  session.close();
  agent.destroy();
  await pool.close();
  client.close();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    JSON.stringify(
      {
        requests,
        rounds,
        clients: Object.fromEntries(
          Object.entries(results).map(([k, v]) => [k, { cpuUsPerRequest: median(v.cpuUsPerRequest), wallMsPerRequest: median(v.wallMsPerRequest), rounds: v }]),
        ),
      },
      null,
      2,
    ),
  );
} finally {
  await plane.stop();
}
