/**
 * Webhooks of operators served in this process for a local control plane (what `dev` and integration
 * tests use, like envtest's webhook install options): a fresh CA and a serving certificate for
 * 127.0.0.1 / localhost, held in memory; the webhook server on 127.0.0.1 (a free port by default); and
 * `install()`, which installs the operators' CRDs and webhook configurations pointed at it (`url` +
 * `caBundle` instead of the Service).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfigSource } from '../runtime/client/kube-config-source.js';
import { ApiObject } from 'cdk8s';
import type { Registry } from 'prom-client';
import type { Operator } from '../operator/operator.js';
import { ApiClient } from '../runtime/client/api-client.js';
import type { Logger } from '../runtime/logger.js';
import { type WebhookServer, startWebhookServer } from '../runtime/webhook/webhook-server.js';
import { type CertificateAndKey, createCertificateAuthority, issueServingCertificate } from '../runtime/webhook/x509.js';
import { installCRDs, type LocalWebhookOptions } from './install-crds.js';

const HOSTS = ['127.0.0.1', 'localhost'];
const DAY_MS = 24 * 60 * 60 * 1000;

/** Options of {@link serveWebhooksLocally}. */
export interface LocalWebhooksOptions {
  /** The cluster whose API server calls the webhooks; also what admission hooks' `context.get` reads. */
  readonly kubeConfig: KubeConfigSource;
  /** Operators whose webhooks to serve (those without any are ignored) and whose CRDs `install()` installs. */
  readonly operators: readonly Operator[];
  /**
   * `host:port` the webhook server listens on; port 0 picks a free port.
   * @default '127.0.0.1:0': loopback only, and a free port, so parallel tests never collide
   */
  readonly bindAddress?: string;
  /** Webhook metrics go here. @default none: no metrics */
  readonly registry?: Registry;
  /** Logs of the webhook server (start, failed reviews, TLS handshakes). @default silent */
  readonly logger?: Logger;
  /**
   * The bucket count of a sharded run (`run --sharding-buckets`): mutating hooks then stamp each CR's
   * bucket label at CREATE, as `run --sharding` does (lib/runtime/webhook/webhook-reviews.ts). @default none
   */
  readonly shardBucketCount?: number;
}

/** A running in-process webhook server and how the API server reaches it. */
export interface LocalWebhooks {
  /** The webhook server (its `port`, `paths`, `setCertificate` for rotation tests). */
  readonly server: WebhookServer;
  /** The clientConfig rewrite for {@link installCRDs}: base URL and CA. */
  readonly webhook: LocalWebhookOptions;
  /** The CA (tests sign replacement serving certificates with it). */
  readonly ca: CertificateAndKey;
  /** A new serving certificate from the same CA, for 127.0.0.1 and localhost, valid 30 days (tests of rotation). */
  issueCertificate(): CertificateAndKey;
  /**
   * Installs the operators' CRDs and webhook configurations, pointed at this server (see
   * {@link installCRDs}); waits until the CRDs are served.
   * @param timeoutMs budget of the wait, in ms, shared by all CRDs; default 60000, the budget of a
   *   control plane component's start (`startTimeoutMs`), sized for 2 slow cores
   * @throws Error like {@link installCRDs}
   */
  install(timeoutMs?: number): Promise<void>;
  /** Stops the server (closing its connections) and the API client. */
  close(): Promise<void>;
}

/**
 * Starts the webhook server of `operators` on loopback with an in-memory CA (valid a year) and a
 * serving certificate for 127.0.0.1 and localhost (valid 30 days).
 *
 * @throws ServerStartError (step `webhook-server`, see startWebhookServer): `InvalidBindAddress`,
 *   `ListenFailed` when `bindAddress` can't be bound, `PathConflict`
 */
export async function serveWebhooksLocally(options: LocalWebhooksOptions): Promise<LocalWebhooks> {
  const ca = createCertificateAuthority('cdk8s-operator-local-webhook-ca', { notAfter: new Date(Date.now() + 365 * DAY_MS) });
  const issueCertificate = () => issueServingCertificate(ca, HOSTS, { notAfter: new Date(Date.now() + 30 * DAY_MS) });
  const client = new ApiClient({ kubeConfig: options.kubeConfig, userAgent: 'cdk8s-operator-sdk/webhooks' });
  let server: WebhookServer;
  try {
    server = await startWebhookServer({
      operators: options.operators,
      client,
      bindAddress: options.bindAddress ?? '127.0.0.1:0',
      certificate: issueCertificate(),
      registry: options.registry,
      logger: options.logger,
      shardBucketCount: options.shardBucketCount,
    });
  } catch (err) {
    client.close();
    throw err;
  }
  const webhook: LocalWebhookOptions = { url: `https://127.0.0.1:${server.port}`, caPem: ca.certPem };
  return {
    server,
    webhook,
    ca,
    issueCertificate,
    async install(timeoutMs = 60_000) {
      const dir = await mkdtemp(join(tmpdir(), 'cdk8s-operator-webhooks-'));
      try {
        const files: string[] = [];
        for (const operator of options.operators) {
          const file = join(dir, `${operator.operatorName}.json`);
          // Each object on its own: the chart's toJson() would insist on deployment.image, which dev does not need.
          const objects = operator.node
            .findAll()
            .filter((c): c is ApiObject => ApiObject.isApiObject(c))
            .filter((o) => ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes(o.kind))
            .map((o) => o.toJson());
          await writeFile(file, objects.map((o) => JSON.stringify(o)).join('\n---\n'));
          files.push(file);
        }
        await installCRDs(options.kubeConfig, files, timeoutMs, { webhook });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    async close() {
      await server.close();
      client.close();
    },
  };
}
