/**
 * The webhooks of the operators `run` runs, in a cluster: their serving certificate and the HTTPS server
 * (webhook-server.ts). Independent of leader election: every replica serves, and its readiness includes
 * the server (with a conversion webhook, readiness is the server alone: lib/runtime/probes/readiness-checks.ts).
 *
 * The certificate comes from one of two places:
 * - the operator's Secret (serving-certificate.ts), the mode of `webhook.certificates`: self-managed (the
 *   CA kept in the caBundles while the rotation loop runs, ca-bundle-injector.ts) or cert-manager's.
 *   Operators run together share one server and one certificate, kept in the Secret of the first operator
 *   with webhooks (its mode and namespace); the certificate holds every operator's webhook Service names;
 * - with `certDir` (`run --webhook-cert-dir`), files in a directory that someone else keeps and whose CA
 *   they inject (OLM, see certificate-directory.ts): no Secret is read or written, no caBundle patched,
 *   whatever `webhook.certificates` says.
 */
import type { KubeClient } from '../client/kube-client.js';
import type { Registry } from 'prom-client';
import type { Operator } from '../../operator/operator.js';
import { webhookDnsNames } from '../../operator/manifests/webhook-configurations.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import type { CaBundleWriteMetrics } from './ca-bundle-injector.js';
import { CertificateDirectory, type CertificateReadMetrics } from './certificate-directory.js';
import { ServingCertificate } from './serving-certificate.js';
import { type WebhookServer, startWebhookServer } from './webhook-server.js';

export interface RunWebhooksOptions {
  readonly operators: readonly Operator[];
  readonly client: KubeClient;
  /** `host:port` / `:port`. */
  readonly bindAddress: string;
  /** Hosts the serving certificate holds besides the webhook Services' names (e.g. `127.0.0.1` when the API server calls a url). @default none */
  readonly extraHosts?: readonly string[];
  /**
   * Serve `certDir/tls.crt` + `certDir/tls.key`, reloaded when they change, instead of the operators'
   * Secret (certificate-directory.ts); `extraHosts` is then unused.
   * @default none: the Secret of `webhook.certificates`
   */
  readonly certDir?: string;
  /** How often the Secret (or `certDir`) is checked for rotation. @default 60000 ms for the Secret, 10000 ms for `certDir` */
  readonly checkIntervalMs?: number;
  readonly registry?: Registry;
  /** With `certDir`: counts the files' reads and failed reads. @default none */
  readonly certificateMetrics?: CertificateReadMetrics;
  /** Self-managed: counts caBundle writes and undone ones. @default none */
  readonly caBundleMetrics?: CaBundleWriteMetrics;
  readonly logger?: Logger;
  /** Sharded: the ring's bucket count; mutating hooks stamp each CR's bucket label at CREATE (webhook-reviews.ts). @default none */
  readonly shardBucketCount?: number;
  /** Stops the rotation loop when aborted. */
  readonly signal: AbortSignal;
}

/** Serving webhooks; `undefined` from {@link startRunWebhooks} when no operator has any. */
export interface RunWebhooks {
  readonly server: WebhookServer;
  /** Where the served certificate comes from. */
  readonly certificate: ServingCertificate | CertificateDirectory;
  close(): Promise<void>;
}

/**
 * Loads (or creates) the certificate, writes caBundles (self-managed), starts the server and the
 * rotation loop (which, self-managed, also writes the CA back into a caBundle target that lacks it); with
 * `certDir`, reads the files and starts their reload loop instead.
 * Returns undefined when none of `operators` has webhooks. `close()` returns once `signal` aborted.
 * @throws WebhookCertificateError (step `webhook-certificate`) when the Secret can't be read or written
 *   (e.g. missing RBAC) or a caBundle can't be patched, or `certDir`'s files can't be read or don't make a
 *   pair (the message names the file); ServerStartError (step `webhook-server`) when the address is
 *   invalid or can't be bound
 */
export async function startRunWebhooks(options: RunWebhooksOptions): Promise<RunWebhooks | undefined> {
  const logger = options.logger ?? silentLogger;
  const serving = options.operators.filter((o) => o.webhook);
  const first = serving[0];
  if (!first?.webhook) return undefined;
  if (options.certDir !== undefined) return startFromDirectory(options.certDir, serving, options, logger);
  const hosts = [...new Set([...serving.flatMap((o) => webhookDnsNames(o.webhook!.namespace, o.operatorName)), ...(options.extraHosts ?? [])])];
  let server: WebhookServer | undefined;
  const certificate = new ServingCertificate({
    client: options.client,
    mode: first.webhook.certificates,
    namespace: first.webhook.namespace,
    secretName: first.webhook.names.secret,
    hosts,
    caBundleTargets: {
      customResourceDefinitions: serving.filter((o) => o.webhook!.conversion).map((o) => `${o.crd.plural}.${o.crd.group}`),
      validatingWebhookConfigurations: serving.filter((o) => o.webhook!.validatePath).map((o) => o.webhook!.names.configuration),
      mutatingWebhookConfigurations: serving.filter((o) => o.webhook!.mutatePath).map((o) => o.webhook!.names.configuration),
    },
    checkIntervalMs: options.checkIntervalMs,
    caBundleMetrics: options.caBundleMetrics,
    onCertificate: (next) => server?.setCertificate(next),
    logger,
  });
  const state = await certificate.load(options.signal);
  server = await startWebhookServer({ operators: serving, client: options.client, bindAddress: options.bindAddress, certificate: state.serving, registry: options.registry, logger, shardBucketCount: options.shardBucketCount });
  return running(server, certificate, 'webhook certificate loop stopped', options.signal, logger);
}

/** {@link startRunWebhooks} with `certDir`: the files, their reload loop, the server. */
async function startFromDirectory(dir: string, serving: readonly Operator[], options: RunWebhooksOptions, logger: Logger): Promise<RunWebhooks> {
  let server: WebhookServer | undefined;
  const certificate = new CertificateDirectory({ dir, checkIntervalMs: options.checkIntervalMs, onCertificate: (next) => server?.setCertificate(next), logger, metrics: options.certificateMetrics });
  const first = await certificate.load();
  server = await startWebhookServer({ operators: serving, client: options.client, bindAddress: options.bindAddress, certificate: first, registry: options.registry, logger, shardBucketCount: options.shardBucketCount });
  return running(server, certificate, 'webhook certificate reload loop stopped', options.signal, logger);
}

/** The started `server` with `certificate`'s loop running until `signal` aborts (its end logged as `stopped`); `close()` awaits both. */
function running(server: WebhookServer, certificate: ServingCertificate | CertificateDirectory, stopped: string, signal: AbortSignal, logger: Logger): RunWebhooks {
  const loop = certificate.run(signal).catch((err: unknown) => logger.error({ ...errorFields(err) }, stopped));
  return {
    server,
    certificate,
    async close() {
      await server.close();
      await loop;
    },
  };
}
