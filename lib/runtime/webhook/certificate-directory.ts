/**
 * The webhook serving certificate read from a directory (`run --webhook-cert-dir DIR`), as
 * controller-runtime's webhook server reads it (`CertDir`, default
 * `/tmp/k8s-webhook-server/serving-certs`, `CertName` `tls.crt`, `KeyName` `tls.key`) and its certwatcher
 * keeps it: whoever issued the certificate (OLM, which mounts its Secret `<deployment>-service-cert` there;
 * cert-manager; an administrator) also wrote its CA into the caBundles, so in this mode the runtime writes
 * no Secret and patches no caBundle.
 *
 * - Start-up ({@link CertificateDirectory.load}): `tls.crt` must be a PEM certificate (chain), `tls.key`
 *   a PEM private key, and the key the certificate's; otherwise a {@link WebhookCertificateError} naming
 *   the file and the reason (`CertificateFileUnreadable`, `CertificateFileInvalid`) stops the start.
 * - Reload ({@link CertificateDirectory.run}): the files are read again when `fs.watch` reports a change
 *   in the directory (the kubelet swaps a mounted Secret's `..data` symlink) and every `checkIntervalMs`
 *   whatever the watch says (the fallback where `fs.watch` is not available or misses a change: network
 *   and overlay file systems, symlinked mounts). A changed pair is handed to `onCertificate` and served to
 *   new TLS connections from then on, without a restart. A pair that does not load (a file missing, not
 *   PEM, or caught half-written so that the key is not the certificate's) is logged at error with the
 *   {@link WebhookCertificateError}, and the previous certificate is kept; the next change or poll tries
 *   again.
 *
 * The same reload serves the metrics server's `--metrics-cert-path` (metrics/metrics-certificate.ts): the
 * options `read` and `subject` give its own reader (its own error type) and the words of its log lines.
 *
 * @see https://github.com/kubernetes-sigs/controller-runtime/blob/main/pkg/certwatcher/certwatcher.go (the model)
 * @see https://kubernetes.io/docs/concepts/configuration/secret/#using-secrets-as-files-from-a-pod (mounted Secrets are updated in place)
 */
import { watch, type FSWatcher } from 'node:fs';
import { sleep } from '../queue/backoff.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { KeyPairFileError, readKeyPairFiles } from './key-pair-files.js';
import { WebhookCertificateError } from './webhook-certificate-error.js';
import type { CertificateAndKey } from './x509.js';

/** controller-runtime's webhook `CertDir`, where OLM mounts the serving certificate it issues. */
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/**
 * Reads `dir/tls.crt` and `dir/tls.key` and checks that they parse and belong together.
 * @throws WebhookCertificateError `CertificateFileUnreadable` (a file can't be read: missing, a
 *   directory, no permission) or `CertificateFileInvalid` (not PEM, empty, or the key is not the
 *   certificate's), its message naming the file
 */
export async function readCertificateDirectory(dir: string): Promise<CertificateAndKey> {
  try {
    return await readKeyPairFiles(dir);
  } catch (err) {
    if (!(err instanceof KeyPairFileError)) throw err;
    throw new WebhookCertificateError(err.problem === 'unreadable' ? 'CertificateFileUnreadable' : 'CertificateFileInvalid', undefined, err.message, { cause: err.cause ?? err });
  }
}

/** Counts of the files' reads (controller-runtime's certwatcher metrics; metrics/metrics.ts). */
export interface CertificateReadMetrics {
  /** One read of the pair, at start, on a change or on a poll. */
  read(): void;
  /** One read that failed. */
  failed(): void;
}

export interface CertificateDirectoryOptions {
  /** The directory holding `tls.crt` and `tls.key`. */
  readonly dir: string;
  /** Called with each changed pair that loads (not with the first: {@link CertificateDirectory.load} returns it). */
  readonly onCertificate?: (certificate: CertificateAndKey) => void;
  /** How often the files are read again whatever `fs.watch` reports. @default 10000 ms: controller-runtime's certwatcher interval */
  readonly checkIntervalMs?: number;
  readonly logger?: Logger;
  /** Reads and checks the pair. @default readCertificateDirectory: its errors are WebhookCertificateErrors */
  readonly read?: (dir: string) => Promise<CertificateAndKey>;
  /** What the log lines call the pair. @default 'webhook serving certificate' */
  readonly subject?: string;
  /** Counts every read and every failed one. @default none */
  readonly metrics?: CertificateReadMetrics;
}

/** A certificate kept from a directory; see the module doc. */
export class CertificateDirectory {
  private readonly options: CertificateDirectoryOptions;
  private readonly logger: Logger;
  private current: CertificateAndKey | undefined;
  private checking: Promise<void> | undefined;
  private again = false;

  constructor(options: CertificateDirectoryOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
  }

  /** The directory read. */
  get dir(): string {
    return this.options.dir;
  }

  /** The pair being served. @throws Error before `load()` */
  certificate(): CertificateAndKey {
    if (!this.current) throw new Error('webhook certificate directory not loaded yet');
    return this.current;
  }

  /**
   * Reads the pair for the start.
   * @throws what `read` throws: by default a WebhookCertificateError naming the file and why (see {@link readCertificateDirectory})
   */
  async load(): Promise<CertificateAndKey> {
    this.current = await this.read();
    this.logger.info({ dir: this.options.dir }, `${this.subject} read from its directory`);
    return this.current;
  }

  /**
   * One reload: reads the files; a changed pair that loads is served (`onCertificate`), one that does not
   * is logged at error and the previous one kept. Never throws. Calls that come while one runs are folded
   * into one more read after it.
   */
  check(): Promise<void> {
    if (this.checking) {
      this.again = true;
      return this.checking;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.checkOnce();
      } while (this.again);
    };
    this.checking = run().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    let next: CertificateAndKey;
    try {
      next = await this.read();
    } catch (err) {
      this.logger.error({ dir: this.options.dir, ...errorFields(err) }, `could not reload the ${this.subject}; serving the previous one`);
      return;
    }
    if (next.certPem === this.current?.certPem && next.keyPem === this.current.keyPem) return;
    this.current = next;
    this.options.onCertificate?.(next);
    this.logger.info({ dir: this.options.dir }, `${this.subject} reloaded`);
  }

  private async read(): Promise<CertificateAndKey> {
    this.options.metrics?.read();
    try {
      return await (this.options.read ?? readCertificateDirectory)(this.options.dir);
    } catch (err) {
      this.options.metrics?.failed();
      throw err;
    }
  }

  private get subject(): string {
    return this.options.subject ?? 'webhook serving certificate';
  }

  /**
   * Until `signal` aborts: reloads on every change `fs.watch` reports in the directory and every
   * `checkIntervalMs` (see the module doc). Resolves once stopped.
   */
  async run(signal: AbortSignal): Promise<void> {
    let watcher: FSWatcher | undefined;
    try {
      watcher = watch(this.options.dir, { persistent: false }, () => void this.check());
      watcher.on('error', (err) => {
        this.logger.debug({ dir: this.options.dir, ...errorFields(err) }, `watching the ${this.subject}'s directory failed; polling only`);
        watcher?.close();
      });
    } catch (err) {
      this.logger.debug({ dir: this.options.dir, ...errorFields(err) }, `cannot watch the ${this.subject}'s directory; polling only`);
    }
    try {
      while (!signal.aborted) {
        await sleep(this.options.checkIntervalMs ?? 10_000, signal).catch(() => undefined);
        if (signal.aborted) break;
        await this.check();
      }
    } finally {
      watcher?.close();
      await this.checking;
    }
  }
}
