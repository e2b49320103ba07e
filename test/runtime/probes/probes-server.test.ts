import http from 'node:http';
import { Counter, Registry } from 'prom-client';
import type { Clock } from '../../../lib/runtime/clock.js';
import { eventLoopCheck, parseBindAddress, startProbesServer, type ProbesServer } from '../../../lib/runtime/probes/probes-server.js';
import { createCertificateAuthority, issueServingCertificate } from '../../../lib/runtime/webhook/x509.js';
import { scrapeMetrics } from '../../support/metrics-scrape.js';

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; body: string; contentType?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, contentType: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

const servers: ProbesServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(options: Parameters<typeof startProbesServer>[0]): Promise<ProbesServer> {
  const server = await startProbesServer({ metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '127.0.0.1:0', ...options });
  servers.push(server);
  return server;
}

describe('parseBindAddress', () => {
  test.each([
    [':8080', { host: undefined, port: 8080 }],
    ['127.0.0.1:8081', { host: '127.0.0.1', port: 8081 }],
    ['[::1]:9000', { host: '::1', port: 9000 }],
    [':0', { host: undefined, port: 0 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
  ])('%s', (address, expected) => {
    expect(parseBindAddress(address)).toEqual(expected);
  });

  test('"0" disables the server', () => {
    expect(parseBindAddress('0')).toBeUndefined();
  });

  test.each(['8080', 'localhost', ':99999', ':http', ''])('GIVEN %j THEN it throws naming the address', (address) => {
    expect(() => parseBindAddress(address)).toThrow(`bind address ${JSON.stringify(address)}`);
  });
});

describe('startProbesServer', () => {
  test('GIVEN passing checks THEN /healthz and /readyz answer 200 ok, and metrics live on their own port', async () => {
    const registry = new Registry();
    new Counter({ name: 'controller_runtime_reconcile_total', help: 'h', labelNames: ['controller', 'result'], registers: [registry] }).inc({ controller: 'c', result: 'success' });
    const server = await start({ registry, healthz: { ping: () => true }, readyz: { informers: () => true } });
    expect(server.metricsPort).toBeGreaterThan(0);
    expect(server.healthProbePort).toBeGreaterThan(0);
    expect(server.metricsPort).not.toBe(server.healthProbePort);

    expect(await get(server.healthProbePort!, '/healthz')).toMatchObject({ status: 200, body: 'ok' });
    expect(await get(server.healthProbePort!, '/readyz')).toMatchObject({ status: 200, body: 'ok' });
    const metrics = await get(server.metricsPort!, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.contentType).toContain('text/plain');
    expect(metrics.body).toContain('controller_runtime_reconcile_total{controller="c",result="success"} 1');
    expect((await get(server.healthProbePort!, '/metrics')).status).toBe(404);
    expect((await get(server.metricsPort!, '/healthz')).status).toBe(404);
  });

  test('GIVEN a failing readiness check WHEN /readyz is read THEN 500 names the failing check, and it flips to 200 once the check passes', async () => {
    let synced = false;
    const server = await start({
      metricsBindAddress: '0',
      readyz: { informers: () => synced, 'cache-memcacheds': () => true },
    });
    expect(server.metricsPort).toBeUndefined();
    const before = await get(server.healthProbePort!, '/readyz');
    expect(before.status).toBe(500);
    expect(before.body).toBe('[-]informers failed: not ok\n[+]cache-memcacheds ok\nreadyz check failed\n');
    expect((await get(server.healthProbePort!, '/healthz')).status).toBe(200); // liveness is independent
    synced = true;
    expect(await get(server.healthProbePort!, '/readyz')).toMatchObject({ status: 200, body: 'ok' });
  });

  test('GIVEN checks that throw, reject or hang THEN each fails with its message', async () => {
    const server = await start({
      metricsBindAddress: '0',
      checkTimeoutMs: 50,
      healthz: {
        watchers: () => {
          throw new Error('watch on deployments.apps stopped');
        },
        rejects: () => Promise.reject(new Error('boom')),
        hangs: () => new Promise<void>(() => undefined),
        fine: () => undefined,
      },
    });
    const res = await get(server.healthProbePort!, '/healthz');
    expect(res.status).toBe(500);
    expect(res.body.split('\n')).toEqual([
      '[-]watchers failed: watch on deployments.apps stopped',
      '[-]rejects failed: boom',
      '[-]hangs failed: no answer within 50 ms',
      '[+]fine ok',
      'healthz check failed',
      '',
    ]);
    expect(await get(server.healthProbePort!, '/healthz/fine')).toMatchObject({ status: 200, body: 'ok' });
    expect((await get(server.healthProbePort!, '/healthz/rejects')).status).toBe(500);
    expect((await get(server.healthProbePort!, '/healthz/nope')).status).toBe(404);
  });

  test('GIVEN ?verbose THEN a passing probe lists its checks', async () => {
    const server = await start({ metricsBindAddress: '0', healthz: { ping: () => true } });
    expect(await get(server.healthProbePort!, '/healthz?verbose')).toMatchObject({ status: 200, body: '[+]ping ok\nhealthz check passed\n' });
  });

  test('GIVEN no checks THEN both probes pass; unknown paths are 404 and writes are 405', async () => {
    const server = await start({ metricsBindAddress: '0' });
    expect((await get(server.healthProbePort!, '/healthz')).status).toBe(200);
    expect((await get(server.healthProbePort!, '/readyz')).status).toBe(200);
    expect((await get(server.healthProbePort!, '/')).status).toBe(404);
    expect((await get(server.healthProbePort!, '/healthz', 'POST')).status).toBe(405);
  });

  test('GIVEN a port in use WHEN starting THEN it rejects naming the address and leaves nothing listening', async () => {
    const first = await start({ metricsBindAddress: '0' });
    await expect(startProbesServer({ metricsBindAddress: '127.0.0.1:0', registry: new Registry(), healthProbeBindAddress: `127.0.0.1:${first.healthProbePort}` })).rejects.toThrow(
      `cannot listen on 127.0.0.1:${first.healthProbePort}`,
    );
  });

  test('GIVEN a metrics address but no registry THEN it throws', async () => {
    await expect(startProbesServer({ metricsBindAddress: '127.0.0.1:0', healthProbeBindAddress: '0' })).rejects.toThrow(/registry is required/);
  });

  test('GIVEN close() WHEN called twice THEN the port is released and the second call is harmless', async () => {
    const server = await startProbesServer({ metricsBindAddress: '0', healthProbeBindAddress: '127.0.0.1:0' });
    await server.close();
    await server.close();
    await expect(get(server.healthProbePort!, '/healthz')).rejects.toThrow(/ECONNREFUSED/);
  });
});

/** A clock whose timers fire only when the test says so, at whatever time the test sets. */
function handClock() {
  let t = 0;
  const timers = new Map<number, () => void>();
  let seq = 0;
  const clock: Clock = {
    now: () => t,
    setTimeout: (fn) => {
      timers.set(++seq, fn);
      return seq;
    },
    clearTimeout: (h) => void timers.delete(h as number),
  };
  return {
    clock,
    set: (ms: number) => void (t = ms),
    fire: () => {
      const pending = [...timers.entries()];
      timers.clear();
      for (const [, fn] of pending) fn();
    },
    pending: () => timers.size,
  };
}

describe('eventLoopCheck', () => {
  test('GIVEN ticks on time THEN the check passes', () => {
    const h = handClock();
    const loop = eventLoopCheck({ clock: h.clock, intervalMs: 1000, maxLagMs: 5000 });
    h.set(1000);
    h.fire();
    h.set(2100);
    h.fire();
    expect(loop.check()).toBe(true);
    expect(loop.lastLagMs()).toBe(100);
    loop.stop();
    expect(h.pending()).toBe(0);
  });

  test('GIVEN a tick that fired 6 s late THEN the check fails with the lag', () => {
    const h = handClock();
    const loop = eventLoopCheck({ clock: h.clock, intervalMs: 1000, maxLagMs: 5000 });
    h.set(7000);
    h.fire();
    expect(() => loop.check()).toThrow('event loop lagged 6000 ms (max 5000 ms)');
    h.set(8000);
    h.fire();
    expect(loop.check()).toBe(true);
    loop.stop();
  });

  test('GIVEN no tick for longer than interval + max lag THEN the check fails as overdue', () => {
    const h = handClock();
    const loop = eventLoopCheck({ clock: h.clock, intervalMs: 1000, maxLagMs: 5000 });
    h.set(5900);
    expect(loop.check()).toBe(true);
    h.set(6100);
    expect(() => loop.check()).toThrow('event loop sample overdue by 5100 ms (max 5000 ms)');
    loop.stop();
  });
});

describe('secure metrics serving', () => {
  const ca = createCertificateAuthority('probes-test-ca', { notAfter: new Date(Date.now() + 86_400_000) });
  const certificate = issueServingCertificate(ca, ['127.0.0.1'], { notAfter: new Date(Date.now() + 86_400_000) });

  test('GIVEN an authorizer THEN /metrics is HTTPS, each request answered as it decides (the header passed on), a throwing authorizer is a 500, and probes stay plain HTTP', async () => {
    const registry = new Registry();
    new Counter({ name: 'secure_test_total', help: 'h', registers: [registry] }).inc();
    const seen: (string | undefined)[] = [];
    const server = await start({
      registry,
      metricsSecureServing: {
        certificate,
        authorize: async (request) => {
          seen.push(request.authorization);
          if (request.authorization === 'Bearer boom') throw new Error('boom');
          if (request.authorization === 'Bearer ok') return { allowed: true, user: 'u' };
          return request.authorization ? { allowed: false, code: 403, message: 'Authorization denied for user x' } : { allowed: false, code: 401, message: 'Unauthorized' };
        },
      },
    });
    expect(server.metricsSecure).toBe(true);
    const port = server.metricsPort!;
    expect(await scrapeMetrics(port, { ca: ca.certPem })).toEqual({ status: 401, body: 'Unauthorized\n' });
    expect(await scrapeMetrics(port, { ca: ca.certPem, token: 'other' })).toEqual({ status: 403, body: 'Authorization denied for user x\n' });
    expect(await scrapeMetrics(port, { ca: ca.certPem, token: 'boom' })).toEqual({ status: 500, body: 'Authorization failed\n' });
    const ok = await scrapeMetrics(port, { ca: ca.certPem, token: 'ok' });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('secure_test_total 1');
    expect(seen).toEqual([undefined, 'Bearer other', 'Bearer boom', 'Bearer ok']);
    // Other paths are refused before any review.
    expect((await scrapeMetrics(port, { ca: ca.certPem, token: 'ok', path: '/other' })).status).toBe(404);
    expect(seen).toHaveLength(4);
    // Plain HTTP to the secure port gets no metrics.
    await expect(get(port, '/metrics')).rejects.toThrow();
    expect(await get(server.healthProbePort!, '/healthz')).toMatchObject({ status: 200, body: 'ok' });
  });
});
