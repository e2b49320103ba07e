/**
 * The HTTP endpoints kubelet and Prometheus read, as controller-runtime serves them:
 * - on `--health-probe-bind-address` (default `:8081`): `/healthz` (liveness) and `/readyz` (readiness);
 * - on `--metrics-bind-address` (default `:8080`): `/metrics` (Prometheus text format); with
 *   {@link ProbesServerOptions.metricsSecureServing} over HTTPS (TLS 1.2+), each scrape authenticated and
 *   authorized by the API server first (metrics-auth.ts: 401 without a valid token, 403 without `get` on
 *   the non-resource URL `/metrics`), as controller-runtime's secure metrics server with
 *   `filters.WithAuthenticationAndAuthorization`. Probes stay plain HTTP: the kubelet calls them.
 *
 * Both probes are independent of leadership, so standbys (warm caches, no writes) are Ready too.
 *
 * Check results: every check runs on every request. All pass → `200 ok`. Any fails → `500` with one line
 * per check (`[+]name ok` / `[-]name failed: message`) and a last line `healthz check failed` (or
 * `readyz …`), like Kubernetes' healthz handlers. `?verbose` lists the checks on success too, and
 * `/healthz/<name>` runs one check. A check fails when it returns `false`, throws or rejects (the message
 * is the thrown error's), or takes longer than `checkTimeoutMs`.
 *
 * Bind addresses: `host:port`, `:port` (all interfaces), `[::1]:port`; port 0 picks a free port (tests);
 * `"0"` disables that server (controller-runtime's convention).
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { systemClock, type Clock, type TimerHandle } from '../clock.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import type { CertificateAndKey } from '../webhook/x509.js';
import type { MetricsAuthDecision, MetricsAuthRequest } from '../metrics/metrics-auth.js';
import { ServerStartError, type ServerStep } from '../server-start-error.js';
import { messageOf } from '../../error-text.js';

/** One health or readiness check: healthy unless it returns `false`, throws or rejects. */
export type ProbeCheck = () => boolean | void | Promise<boolean | void>;

/** Plain-HTTP metrics (controller-runtime's default port). */
export const DEFAULT_METRICS_BIND_ADDRESS = ':8080';
/** Secure metrics (HTTPS, authenticated): Kubebuilder's port. */
export const DEFAULT_SECURE_METRICS_BIND_ADDRESS = ':8443';

/** The metrics bind address when none is given: `:8443` for secure metrics, `:8080` for plain HTTP. */
export function defaultMetricsBindAddress(secure: boolean): string {
  return secure ? DEFAULT_SECURE_METRICS_BIND_ADDRESS : DEFAULT_METRICS_BIND_ADDRESS;
}
export const DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ':8081';

export interface ProbesServerOptions {
  /** `/metrics` server. @default ':8080' (runOperators passes ':8443' for secure metrics); '0' disables it */
  readonly metricsBindAddress?: string;
  /** `/healthz` + `/readyz` server. @default ':8081'; '0' disables it */
  readonly healthProbeBindAddress?: string;
  /** Served at `/metrics`. Required unless the metrics server is disabled. */
  readonly registry?: Registry;
  /** Serve `/metrics` over HTTPS, behind `authorize`. @default undefined: plain HTTP, no authentication */
  readonly metricsSecureServing?: MetricsSecureServing;
  /** Liveness checks by name, e.g. `{ 'event-loop': eventLoopCheck.check, watchers: () => informers.allAlive() }`. @default none (always ok) */
  readonly healthz?: Readonly<Record<string, ProbeCheck>>;
  /** Readiness checks by name, e.g. `{ informers: () => informers.hasSynced() }`. @default none (always ok) */
  readonly readyz?: Readonly<Record<string, ProbeCheck>>;
  /** A check slower than this fails. @default 5000 ms */
  readonly checkTimeoutMs?: number;
  readonly logger?: Logger;
}

/** HTTPS and access control of the metrics server. */
export interface MetricsSecureServing {
  /** The serving certificate to start with (metrics-certificate.ts). */
  readonly certificate: CertificateAndKey;
  /** Decides every request before it is served (`MetricsAuth.check`, metrics-auth.ts). @default none: TLS only, every caller served */
  readonly authorize?: (request: MetricsAuthRequest) => Promise<MetricsAuthDecision>;
}

/** Running servers: the ports actually bound (useful with port 0), and `close()`. */
export interface ProbesServer {
  /** Port of the metrics server, or undefined when disabled. */
  readonly metricsPort: number | undefined;
  /** Whether `/metrics` is served over HTTPS. */
  readonly metricsSecure: boolean;
  /** Serves new TLS connections of the secure metrics server with this certificate from now on; no-op when it is plain HTTP. */
  setMetricsCertificate(certificate: CertificateAndKey): void;
  /** Port of the health probe server, or undefined when disabled. */
  readonly healthProbePort: number | undefined;
  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void>;
}

/** A parsed bind address; `host` undefined means all interfaces. */
export interface BindAddress {
  readonly host: string | undefined;
  readonly port: number;
}

/**
 * Parses `host:port`, `:port`, `[v6]:port`; returns undefined for `"0"` (disabled).
 * @throws Error naming the address when it has no valid port (0–65535)
 */
export function parseBindAddress(address: string): BindAddress | undefined {
  if (address === '0') return undefined;
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = match ? Number(match[3]) : NaN;
  if (!match || !(port >= 0 && port <= 65535)) {
    throw new Error(`bind address ${JSON.stringify(address)}: expected host:port, :port or [ipv6]:port (or "0" to disable)`);
  }
  const host = match[1] ?? match[2];
  return { host: host === '' ? undefined : host, port };
}

/**
 * {@link parseBindAddress} for the server of `step`.
 * @throws ServerStartError (`InvalidBindAddress`) naming the server and the address
 */
export function parseServerBindAddress(address: string, step: ServerStep): BindAddress | undefined {
  try {
    return parseBindAddress(address);
  } catch (err) {
    throw new ServerStartError(step, 'InvalidBindAddress', (err as Error).message, { cause: err });
  }
}

/**
 * Starts the metrics and health probe servers (each on its own address, as controller-runtime does).
 * Resolves once both listen.
 * @throws ServerStartError (step `metrics-server` or `probes-server`) when an address is invalid
 *   (`InvalidBindAddress`) or cannot be bound (`ListenFailed`, e.g. EADDRINUSE), or `/metrics` has no
 *   registry (`MissingRegistry`); nothing is left listening then
 */
export async function startProbesServer(options: ProbesServerOptions = {}): Promise<ProbesServer> {
  const logger = options.logger ?? silentLogger;
  const metricsAddress = parseServerBindAddress(options.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS, 'metrics-server');
  const probeAddress = parseServerBindAddress(options.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS, 'probes-server');
  if (metricsAddress && !options.registry) throw new ServerStartError('metrics-server', 'MissingRegistry', 'a registry is required to serve /metrics');

  const servers: (http.Server | https.Server)[] = [];
  const closeAll = async () => {
    await Promise.all(servers.map((s) => closeServer(s)));
  };
  try {
    let metricsPort: number | undefined;
    let healthProbePort: number | undefined;
    let secureMetrics: https.Server | undefined;
    if (metricsAddress) {
      const registry = options.registry!;
      const secure = options.metricsSecureServing;
      const serve = (res: http.ServerResponse) => {
        registry.metrics().then(
          (text) => send(res, 200, text, registry.contentType),
          (err: unknown) => {
            logger.error({ ...errorFields(err) }, 'could not collect metrics');
            send(res, 500, 'could not collect metrics\n');
          },
        );
      };
      const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
        const path = new URL(req.url ?? '/', 'http://localhost').pathname;
        if (path !== '/metrics') return send(res, 404, 'not found\n');
        if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n');
        if (!secure?.authorize) return serve(res);
        secure.authorize({ method: req.method, path, authorization: req.headers.authorization }).then(
          (decision) => (decision.allowed ? serve(res) : send(res, decision.code, `${decision.message}\n`)),
          (err: unknown) => {
            logger.error({ ...errorFields(err) }, 'could not authorize a metrics scrape');
            send(res, 500, 'Authorization failed\n');
          },
        );
      };
      let server: http.Server | https.Server;
      if (secure) {
        secureMetrics = https.createServer({ key: secure.certificate.keyPem, cert: secure.certificate.certPem, minVersion: 'TLSv1.2' }, handler);
        secureMetrics.on('tlsClientError', (err) => logger.debug({ ...errorFields(err) }, 'metrics TLS handshake failed'));
        server = secureMetrics;
      } else {
        server = http.createServer(handler);
      }
      servers.push(server);
      metricsPort = await listen(server, metricsAddress, 'metrics-server');
      logger.info({ address: options.metricsBindAddress ?? DEFAULT_METRICS_BIND_ADDRESS, port: metricsPort, secure: !!secure, authorized: !!secure?.authorize }, 'serving metrics');
    }
    if (probeAddress) {
      const timeoutMs = options.checkTimeoutMs ?? 5000;
      const server = http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        const [, endpoint, single, ...rest] = url.pathname.split('/');
        const checks = endpoint === 'healthz' ? (options.healthz ?? {}) : endpoint === 'readyz' ? (options.readyz ?? {}) : undefined;
        if (!checks || rest.length > 0) return send(res, 404, 'not found\n');
        if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n');
        let selected = Object.entries(checks);
        if (single) {
          selected = selected.filter(([name]) => name === single);
          if (selected.length === 0) return send(res, 404, `no check ${JSON.stringify(single)}\n`);
        }
        void runChecks(selected, timeoutMs).then((results) => {
          const failed = results.filter((r) => !r.ok);
          const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.message}`));
          if (failed.length > 0) {
            logger.info({ endpoint, failed: failed.map((r) => r.name) }, `${endpoint} check failed`);
            return send(res, 500, [...lines, `${endpoint} check failed`].join('\n') + '\n');
          }
          if (url.searchParams.has('verbose')) return send(res, 200, [...lines, `${endpoint} check passed`].join('\n') + '\n');
          send(res, 200, 'ok');
        });
      });
      servers.push(server);
      healthProbePort = await listen(server, probeAddress, 'probes-server');
      logger.info({ address: options.healthProbeBindAddress ?? DEFAULT_HEALTH_PROBE_BIND_ADDRESS, port: healthProbePort }, 'serving health probes');
    }
    let closed: Promise<void> | undefined;
    return {
      metricsPort,
      healthProbePort,
      metricsSecure: secureMetrics !== undefined,
      setMetricsCertificate: (certificate) => secureMetrics?.setSecureContext({ key: certificate.keyPem, cert: certificate.certPem, minVersion: 'TLSv1.2' }),
      close: () => (closed ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

export interface EventLoopCheckOptions {
  /** How often the loop is sampled. @default 1000 ms */
  readonly intervalMs?: number;
  /**
   * Unhealthy when a sample fired this much later than scheduled, or no sample fired for this long past
   * its due time. @default 5000 ms: a relist's JSON parse may block a second; a five-second stall means stuck.
   */
  readonly maxLagMs?: number;
  /** @default systemClock (timers are unref'd: the check never keeps the process alive) */
  readonly clock?: Clock;
}

/** A liveness check of the event loop; see {@link eventLoopCheck}. */
export interface EventLoopCheck {
  /** The `/healthz` check: throws with the measured lag when the loop is stalled. */
  readonly check: ProbeCheck;
  /** Lag of the last sample, in ms. */
  lastLagMs(): number;
  stop(): void;
}

/**
 * Samples event-loop lag with a repeating timer: each tick measures how late it fired. The check fails
 * when the last tick was late by more than `maxLagMs`, or when the next tick is overdue by more than that.
 */
export function eventLoopCheck(options: EventLoopCheckOptions = {}): EventLoopCheck {
  const clock = options.clock ?? systemClock;
  const intervalMs = options.intervalMs ?? 1000;
  const maxLagMs = options.maxLagMs ?? 5000;
  let due = clock.now() + intervalMs;
  let lag = 0;
  let handle: TimerHandle | undefined;
  let stopped = false;
  const tick = () => {
    lag = Math.max(0, clock.now() - due);
    due = clock.now() + intervalMs;
    if (!stopped) handle = clock.setTimeout(tick, intervalMs);
  };
  handle = clock.setTimeout(tick, intervalMs);
  return {
    check: () => {
      const overdue = clock.now() - due;
      if (lag > maxLagMs) throw new Error(`event loop lagged ${Math.round(lag)} ms (max ${maxLagMs} ms)`);
      if (overdue > maxLagMs) throw new Error(`event loop sample overdue by ${Math.round(overdue)} ms (max ${maxLagMs} ms)`);
      return true;
    },
    lastLagMs: () => lag,
    stop: () => {
      stopped = true;
      if (handle !== undefined) clock.clearTimeout(handle);
    },
  };
}

interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly message?: string;
}

async function runChecks(checks: [string, ProbeCheck][], timeoutMs: number): Promise<CheckResult[]> {
  return Promise.all(
    checks.map(async ([name, check]): Promise<CheckResult> => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
          timer.unref();
        });
        const result = await Promise.race([Promise.resolve().then(check), timeout]);
        return result === false ? { name, ok: false, message: 'not ok' } : { name, ok: true };
      } catch (err) {
        return { name, ok: false, message: messageOf(err) };
      } finally {
        if (timer) clearTimeout(timer);
      }
    }),
  );
}

function send(res: http.ServerResponse, code: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function listen(server: http.Server | https.Server, address: BindAddress, step: ServerStep): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(new ServerStartError(step, 'ListenFailed', `cannot listen on ${address.host ?? ''}:${address.port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(address.port, address.host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: http.Server | https.Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
