/**
 * The HTTPS server the API server calls for conversion and admission, as controller-runtime's webhook
 * server: port 9443 by default, `/convert` for every kind with several versions, and one path per
 * admission hook (`/validate-<group>-<version>-<kind>`, `/mutate-…`). Served by every replica, leader or
 * not (it reads only the request and, for admission hooks, the API server).
 *
 * Requests: POST with a JSON review body (≤ 8 MiB, else 413); anything else is 405/404/400. Answers are
 * reviews with HTTP 200, also for a denial or a failed conversion (the review carries it).
 *
 * Certificates: {@link WebhookServer.setCertificate} swaps the serving certificate for new TLS
 * connections without a restart; connections already open keep theirs, so no request in flight fails.
 *
 * Metrics (controller-runtime's names, label `webhook` = the path):
 * `controller_runtime_webhook_requests_total{webhook,code}`, `controller_runtime_webhook_requests_in_flight{webhook}`,
 * `controller_runtime_webhook_latency_seconds{webhook}`.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
 */
import type { KubeClient } from '../client/kube-client.js';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Operator } from '../../operator/operator.js';
import { CONVERSION_PATH } from '../../operator/manifests/webhook-configurations.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { parseServerBindAddress } from '../probes/probes-server.js';
import { ServerStartError } from '../server-start-error.js';
import { BadReviewError, handleAdmissionReview, handleConversionReview } from './webhook-reviews.js';
import type { CertificateAndKey } from './x509.js';

/** controller-runtime's default webhook port. */
export const DEFAULT_WEBHOOK_BIND_ADDRESS = ':9443';
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface WebhookServerOptions {
  /** Operators whose webhooks to serve (those without any are ignored). */
  readonly operators: readonly Operator[];
  /** Reads objects for admission hooks' `context.get`. */
  readonly client: KubeClient;
  /** `host:port`, `:port`; port 0 picks a free port. @default ':9443' */
  readonly bindAddress?: string;
  /** The serving certificate to start with. */
  readonly certificate: CertificateAndKey;
  /** Registers the webhook metrics here. @default no metrics */
  readonly registry?: Registry;
  readonly logger?: Logger;
  /** Sharded: mutating hooks stamp the CR's bucket label at CREATE (webhook-reviews.ts `shardBucketCount`). @default none */
  readonly shardBucketCount?: number;
}

export interface WebhookServer {
  /** The port bound. */
  readonly port: number;
  /** Paths served, sorted. */
  readonly paths: readonly string[];
  /** Serves new TLS connections with this certificate from now on. */
  setCertificate(certificate: CertificateAndKey): void;
  /** The certificate being served. */
  certificate(): CertificateAndKey;
  /** The `/readyz` check: listening. */
  ready(): boolean;
  /** Stops listening and closes connections. Idempotent. */
  close(): Promise<void>;
}

type Handler = (body: unknown) => Promise<unknown> | unknown;

/**
 * The paths of `operators`' webhooks and what handles each.
 * @throws ServerStartError (`PathConflict`) when two operators claim the same admission path
 */
function routes(operators: readonly Operator[], client: KubeClient, logger: Logger, shardBucketCount: number | undefined): Map<string, Handler> {
  const table = new Map<string, Handler>();
  const withWebhooks = operators.filter((o) => o.webhook);
  const converting = withWebhooks.filter((o) => o.webhook!.conversion);
  // A stored object converted best effort is converted on every read: warn once per distinct message (bounded).
  const warned = new Set<string>();
  const onBestEffort = (message: string) => {
    if (warned.has(message)) return;
    if (warned.size >= 1000) warned.clear();
    warned.add(message);
    logger.warn({ webhook: CONVERSION_PATH }, message);
  };
  if (converting.length > 0) table.set(CONVERSION_PATH, (body) => handleConversionReview(converting, body, { onBestEffort }));
  for (const operator of withWebhooks) {
    for (const [type, path] of [['validate', operator.webhook!.validatePath], ['mutate', operator.webhook!.mutatePath]] as const) {
      if (path === undefined) continue;
      if (table.has(path)) throw new ServerStartError('webhook-server', 'PathConflict', `two operators serve the webhook path ${path}`);
      table.set(path, (body) => handleAdmissionReview(operator, body, { type, client, logger, shardBucketCount }));
    }
  }
  return table;
}

/**
 * Starts the server; resolves once it listens.
 * @throws ServerStartError (step `webhook-server`): `InvalidBindAddress` (also for `"0"`: a caller that
 *   disables the server does not call this), `ListenFailed` when the address can't be bound, `PathConflict`
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const logger = options.logger ?? silentLogger;
  const table = routes(options.operators, options.client, logger, options.shardBucketCount);
  const address = parseServerBindAddress(options.bindAddress ?? DEFAULT_WEBHOOK_BIND_ADDRESS, 'webhook-server');
  if (!address) throw new ServerStartError('webhook-server', 'InvalidBindAddress', 'a bind address is required ("0" disables the server, not this function)');
  const metrics = options.registry ? webhookMetrics(options.registry) : undefined;
  let current = options.certificate;

  const server = https.createServer({ key: current.keyPem, cert: current.certPem, minVersion: 'TLSv1.2' }, (req, res) => {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    const handler = table.get(path);
    const started = performance.now();
    const finish = (code: number, body: string, contentType = 'application/json') => {
      res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      if (handler) {
        metrics?.inFlight.dec({ webhook: path });
        metrics?.requests.inc({ webhook: path, code: String(code) });
        metrics?.latency.observe({ webhook: path }, (performance.now() - started) / 1000);
      }
    };
    if (!handler) return finish(404, `no webhook at ${path}\n`, 'text/plain; charset=utf-8');
    metrics?.inFlight.inc({ webhook: path });
    if (req.method !== 'POST') return finish(405, 'POST only\n', 'text/plain; charset=utf-8');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return finish(413, `request body over ${MAX_BODY_BYTES} bytes\n`, 'text/plain; charset=utf-8');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return finish(400, 'request body is not JSON\n', 'text/plain; charset=utf-8');
      }
      Promise.resolve()
        .then(() => handler(body))
        .then(
          (answer) => finish(200, JSON.stringify(answer)),
          (err: unknown) => {
            if (err instanceof BadReviewError) return finish(400, `${err.message}\n`, 'text/plain; charset=utf-8');
            logger.error({ webhook: path, ...errorFields(err) }, 'webhook failed');
            finish(500, 'webhook failed\n', 'text/plain; charset=utf-8');
          },
        );
    });
  });
  server.on('tlsClientError', (err) => logger.debug({ ...errorFields(err) }, 'webhook TLS handshake failed'));

  const port = await new Promise<number>((resolve, reject) => {
    const onError = (err: Error) => reject(new ServerStartError('webhook-server', 'ListenFailed', `cannot listen on ${address.host ?? ''}:${address.port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(address.port, address.host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
  logger.info({ port, paths: [...table.keys()].sort() }, 'serving webhooks');
  let closed: Promise<void> | undefined;
  return {
    port,
    paths: [...table.keys()].sort(),
    setCertificate(certificate) {
      server.setSecureContext({ key: certificate.keyPem, cert: certificate.certPem, minVersion: 'TLSv1.2' });
      current = certificate;
      logger.info({}, 'webhook serving certificate reloaded');
    },
    certificate: () => current,
    ready: () => server.listening,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

interface WebhookMetricSet {
  requests: Counter<'webhook' | 'code'>;
  inFlight: Gauge<'webhook'>;
  latency: Histogram<'webhook'>;
}

function webhookMetrics(registry: Registry): WebhookMetricSet {
  const existing = registry.getSingleMetric('controller_runtime_webhook_requests_total');
  if (existing) {
    return {
      requests: existing as Counter<'webhook' | 'code'>,
      inFlight: registry.getSingleMetric('controller_runtime_webhook_requests_in_flight') as Gauge<'webhook'>,
      latency: registry.getSingleMetric('controller_runtime_webhook_latency_seconds') as Histogram<'webhook'>,
    };
  }
  return {
    requests: new Counter({ name: 'controller_runtime_webhook_requests_total', help: 'Total number of admission requests by HTTP status code.', labelNames: ['webhook', 'code'], registers: [registry] }),
    inFlight: new Gauge({ name: 'controller_runtime_webhook_requests_in_flight', help: 'Current number of admission requests being served.', labelNames: ['webhook'], registers: [registry] }),
    latency: new Histogram({ name: 'controller_runtime_webhook_latency_seconds', help: 'Histogram of the latency of processing admission requests', labelNames: ['webhook'], registers: [registry] }),
  };
}
