/**
 * The webhook server's certificate, kept in a Secret in the operator's namespace.
 *
 * Modes:
 * - `self-managed` (no dependency): at start-up the Secret is loaded, or created with a new CA (10 years)
 *   and a serving certificate (90 days) for `hosts`. The CA's PEM is patched into the `caBundle` of
 *   the operator's CRD conversion webhook and its webhook configurations (a JSON patch of the caBundle
 *   fields only), and, while `run()` runs, written back whenever one of them lacks it or holds another
 *   (ca-bundle-injector.ts: they are watched by name). Every `checkIntervalMs` the Secret is read again: a certificate
 *   another replica rotated is served from then on; one within `renewBeforeMs` of expiry (or not for
 *   `hosts`, or not signed by the CA) is replaced, keeping the CA, so the API server trusts the new one
 *   at once and no request fails. Replicas racing to create or rotate resolve through the API server's
 *   optimistic concurrency: the Secret is created with a POST (create-only: 409 AlreadyExists → read it
 *   and use what it holds) and updated with its resourceVersion (409 Conflict → read again). The Secret is
 *   the one source of the CA: before writing a caBundle the injector reads the Secret again (a `check`)
 *   and writes the CA it holds, so replicas that made different CAs (the Secret deleted) never write them
 *   over each other; the first CA stored wins and every replica serves a certificate it signed.
 * - `cert-manager`: the Secret is cert-manager's; it is only read (and read again every
 *   `checkIntervalMs`); cert-manager's CA injector writes the caBundles.
 *
 * Secret keys: `tls.crt`, `tls.key`, `ca.crt` and, self-managed, `ca.key` (type `kubernetes.io/tls`).
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#contacting-the-webhook
 */
import type { ObjectReference } from '../../operator/errors.js';
import type { WebhookCertificates } from '../../operator/manifests/webhook-configurations.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { SECRETS } from '../client/builtin-resources.js';
import { ResourceClient } from '../client/resource-client.js';
import { type CaBundleTarget, type CaBundleTargets, type CaBundleWriteMetrics, CaBundleInjector, caBundlePatch, caBundleTargetList, describeTarget, targetReference } from './ca-bundle-injector.js';
import { sleep } from '../queue/backoff.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { WebhookCertificateError } from './webhook-certificate-error.js';
import { type CertificateAndKey, certificateInfo, createCertificateAuthority, issueServingCertificate } from './x509.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export type { CaBundleTargets } from './ca-bundle-injector.js';

export interface ServingCertificateOptions {
  readonly client: KubeClient;
  readonly mode: WebhookCertificates;
  readonly namespace: string;
  readonly secretName: string;
  /** DNS names and IPs the serving certificate is for (self-managed), e.g. the webhook Service's `svc` names. */
  readonly hosts: readonly string[];
  /** Self-managed only. @default none */
  readonly caBundleTargets?: CaBundleTargets;
  /** Lifetime of a new serving certificate. @default 90 days */
  readonly validityMs?: number;
  /** Renew when less than this is left. @default a third of validityMs (30 days) */
  readonly renewBeforeMs?: number;
  /** How often the Secret is read again. @default 60000 ms */
  readonly checkIntervalMs?: number;
  /** Called with each new certificate to serve (the first one is returned by `load()`). */
  readonly onCertificate?: (certificate: CertificateAndKey) => void;
  /** Counts caBundle writes and undone ones (self-managed). @default none */
  readonly caBundleMetrics?: CaBundleWriteMetrics;
  readonly logger?: Logger;
}

export { WebhookCertificateError, type WebhookCertificateFailureReason } from './webhook-certificate-error.js';

/** The CA and the serving certificate currently in the Secret. */
export interface ServingCertificateState {
  readonly serving: CertificateAndKey;
  readonly caPem: string;
}

/** Keeps the serving certificate in its Secret; see the module doc. */
export class ServingCertificate {
  private readonly options: ServingCertificateOptions;
  private readonly logger: Logger;
  private current: ServingCertificateState | undefined;
  private injector: CaBundleInjector | undefined;
  /** The check running, if any: checks run one at a time. */
  private checking: Promise<void> = Promise.resolve();

  constructor(options: ServingCertificateOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
  }

  /** The Secret, for errors. */
  private get secretRef(): ObjectReference {
    return { apiVersion: 'v1', kind: 'Secret', namespace: this.options.namespace, name: this.options.secretName };
  }

  /** The state last loaded. @throws Error before `load()` */
  state(): ServingCertificateState {
    if (!this.current) throw new Error('serving certificate not loaded yet');
    return this.current;
  }

  /**
   * Loads (self-managed: creates or renews as needed) the certificate and, self-managed, writes the CA
   * bundle into the targets. cert-manager mode waits for the Secret until `signal` aborts.
   * @throws WebhookCertificateError naming the Secret (`SecretFailed`, `SecretInvalid`) or the caBundle
   *   target (`CaBundleInjectionFailed`) on a failure that retrying does not fix (403, invalid PEM)
   */
  async load(signal?: AbortSignal): Promise<ServingCertificateState> {
    this.current = await this.reconcileSecret(signal);
    if (this.options.mode === 'self-managed') await this.injectCaBundle(this.current.caPem);
    return this.current;
  }

  /**
   * Until `signal` aborts: re-reads (and, self-managed, renews) every `checkIntervalMs`, errors logged and
   * retried; self-managed, also watches the caBundle targets and writes the CA back into any that lacks or
   * differs from it ({@link CaBundleInjector}: re-applied from YAML, replaced, created after the start).
   */
  async run(signal: AbortSignal): Promise<void> {
    const interval = this.options.checkIntervalMs ?? 60_000;
    const targets = this.options.caBundleTargets;
    if (this.options.mode === 'self-managed' && targets && this.current) {
      this.injector = new CaBundleInjector({
        client: this.options.client,
        targets,
        caPem: this.current.caPem,
        // Before each caBundle write: the Secret read again (created when missing), its CA the one written.
        confirmCa: async () => {
          await this.check(signal);
          return this.state().caPem;
        },
        metrics: this.options.caBundleMetrics,
        logger: this.logger,
      });
      this.injector.start();
    }
    try {
      while (!signal.aborted) {
        await sleep(interval, signal).catch(() => undefined);
        if (signal.aborted) return;
        try {
          await this.check(signal);
        } catch (err) {
          this.logger.warn({ secret: `${this.options.namespace}/${this.options.secretName}`, ...errorFields(err) }, 'could not check the webhook serving certificate');
        }
      }
    } finally {
      await this.injector?.stop();
      this.injector = undefined;
    }
  }

  /**
   * One check: re-read the Secret (self-managed: create it when missing, renew if due), hand a changed
   * certificate to `onCertificate`, and, self-managed, write a changed CA into the caBundles. Checks run
   * one at a time (the rotation loop's and the injector's).
   */
  check(signal?: AbortSignal): Promise<void> {
    const next = this.checking.catch(() => undefined).then(() => this.checkOnce(signal));
    this.checking = next;
    return next;
  }

  private async checkOnce(signal?: AbortSignal): Promise<void> {
    const next = await this.reconcileSecret(signal);
    const changed = next.serving.certPem !== this.current?.serving.certPem;
    const caChanged = next.caPem !== this.current?.caPem;
    this.current = next;
    if (caChanged && this.options.mode === 'self-managed') {
      this.injector?.setCa(next.caPem);
      await this.injectCaBundle(next.caPem);
    }
    if (changed) this.options.onCertificate?.(next.serving);
  }

  /**
   * Self-managed: replaces the serving certificate now (same CA), whatever its expiry, and serves it.
   * What a renewal does when it is due; exposed for operators that rotate on demand and for tests.
   */
  async rotate(): Promise<void> {
    const secret = await this.read();
    if (!secret) throw new WebhookCertificateError('SecretMissing', this.secretRef, 'does not exist');
    const data = decode(secret);
    await this.write(secret, { ca: { certPem: data['ca.crt']!, keyPem: data['ca.key']! } });
    await this.check();
  }

  private async read(signal?: AbortSignal): Promise<KubeObject | undefined> {
    return new ResourceClient(this.options.client).getIfExists(SECRETS, this.options.namespace, this.options.secretName, { signal });
  }

  /** {@link syncSecret}, a failure told as a {@link WebhookCertificateError} naming the Secret. */
  private async reconcileSecret(signal?: AbortSignal): Promise<ServingCertificateState> {
    try {
      return await this.syncSecret(signal);
    } catch (err) {
      if (err instanceof WebhookCertificateError || signal?.aborted) throw err;
      throw new WebhookCertificateError('SecretFailed', this.secretRef, `could not be read or written: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Reads the Secret; self-managed, creates it or renews its serving certificate when due. */
  private async syncSecret(signal?: AbortSignal): Promise<ServingCertificateState> {
    for (let attempt = 0; ; attempt++) {
      const secret = await this.read(signal);
      if (this.options.mode === 'cert-manager') {
        const data = secret ? decode(secret) : {};
        if (data['tls.crt'] && data['tls.key']) return { serving: { certPem: data['tls.crt'], keyPem: data['tls.key'] }, caPem: data['ca.crt'] ?? data['tls.crt'] };
        this.logger.info({ secret: `${this.options.namespace}/${this.options.secretName}` }, 'waiting for cert-manager to issue the webhook certificate');
        await sleep(Math.min(5000, 200 * 2 ** attempt), signal);
        continue;
      }
      try {
        if (!secret) return await this.create();
        const data = decode(secret);
        if (!data['ca.crt'] || !data['ca.key']) throw new WebhookCertificateError('SecretInvalid', this.secretRef, 'has no ca.crt / ca.key: it is not a self-managed webhook Secret');
        const state = { serving: { certPem: data['tls.crt'] ?? '', keyPem: data['tls.key'] ?? '' }, caPem: data['ca.crt'] };
        if (this.renewalDue(state)) return await this.write(secret, { ca: { certPem: data['ca.crt'], keyPem: data['ca.key'] } });
        return state;
      } catch (err) {
        if (isApiError(err, 409) && attempt < 5) continue; // another replica created or rotated it: read again
        throw err;
      }
    }
  }

  private renewalDue(state: ServingCertificateState): boolean {
    if (!state.serving.certPem || !state.serving.keyPem) return true;
    const validity = this.options.validityMs ?? 90 * DAY_MS;
    const renewBefore = this.options.renewBeforeMs ?? validity / 3;
    try {
      const info = certificateInfo(state.serving.certPem, state.caPem);
      if (!info.signedByIssuer) return true;
      if (this.options.hosts.some((h) => !info.hosts.includes(h))) return true;
      return info.notAfter.getTime() - Date.now() < renewBefore;
    } catch {
      return true;
    }
  }

  private issue(ca: CertificateAndKey): CertificateAndKey {
    return issueServingCertificate(ca, this.options.hosts, { notAfter: new Date(Date.now() + (this.options.validityMs ?? 90 * DAY_MS)) });
  }

  private async create(): Promise<ServingCertificateState> {
    const ca = createCertificateAuthority(`${this.options.secretName}-ca`, { notAfter: new Date(Date.now() + 3650 * DAY_MS) });
    const serving = this.issue(ca);
    const secret = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: this.options.secretName, namespace: this.options.namespace }, data: encode(ca, serving) };
    await new ResourceClient(this.options.client).create(SECRETS, secret);
    this.logger.info({ secret: `${this.options.namespace}/${this.options.secretName}` }, 'created the webhook CA and serving certificate');
    return { serving, caPem: ca.certPem };
  }

  private async write(secret: KubeObject, keep: { ca: CertificateAndKey }): Promise<ServingCertificateState> {
    const serving = this.issue(keep.ca);
    await new ResourceClient(this.options.client).update(SECRETS, { ...secret, type: 'kubernetes.io/tls', data: encode(keep.ca, serving) });
    this.logger.info({ secret: `${this.options.namespace}/${this.options.secretName}` }, 'renewed the webhook serving certificate');
    return { serving, caPem: keep.ca.certPem };
  }

  /**
   * Writes `caPem` into every target's clientConfig.caBundle that lacks or differs from it, once (GET, then a
   * JSON patch of the caBundle fields only, see ca-bundle-injector.ts; read again when its guard fails). A
   * missing target is logged and skipped: {@link run} writes it when it is created.
   * @throws WebhookCertificateError (`CaBundleInjectionFailed`) naming the target, e.g. on a 403
   */
  async injectCaBundle(caPem: string): Promise<void> {
    const targets = this.options.caBundleTargets;
    if (!targets) return;
    const caBundle = Buffer.from(caPem).toString('base64');
    for (const target of caBundleTargetList(targets)) {
      const resources = new ResourceClient(this.options.client);
      for (let attempt = 0; ; attempt++) {
        let obj: KubeObject;
        try {
          obj = await resources.get(target.resource, undefined, target.name);
        } catch (err) {
          if (!isApiError(err, 404)) throw caBundleError(target, 'read', err);
          this.logger.warn({ object: describeTarget(target) }, 'not found: no caBundle written yet (it is written when the object is created)');
          break;
        }
        const ops = caBundlePatch(target.resource, obj, caBundle);
        if (ops.length === 0) break;
        try {
          await resources.patch(target.resource, undefined, target.name, { type: 'json', body: ops });
          this.logger.info({ object: describeTarget(target) }, 'wrote the webhook caBundle');
          break;
        } catch (err) {
          if (!isApiError(err, 422, 409) || attempt >= 5) throw caBundleError(target, 'patched', err); // 422: a guard failed, the object changed: read again
        }
      }
    }
  }
}

function caBundleError(target: CaBundleTarget, what: 'read' | 'patched', cause: unknown): WebhookCertificateError {
  return new WebhookCertificateError('CaBundleInjectionFailed', targetReference(target), `caBundle not written: could not be ${what}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
}

function decode(secret: KubeObject): Record<string, string | undefined> {
  const data = (secret.data ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

function encode(ca: CertificateAndKey, serving: CertificateAndKey): Record<string, string> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return { 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem), 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem) };
}
