/**
 * The credentials {@link ApiClient} presents, re-read from their files while the process runs, the way
 * client-go does:
 *
 * - **Client certificate, key and CA files** (kubeconfig `client-certificate`, `client-key`,
 *   `certificate-authority`; in-cluster `ca.crt`) are re-read at most once per `tlsFileRecheckMs`
 *   (default 1 s, like client-go's `cachingCertificateLoader`). When their bytes change, {@link current}
 *   returns a new {@link ClientTls} object, and the client opens new connections with it.
 * - **Bearer token files** (in-cluster `/var/run/secrets/kubernetes.io/serviceaccount/token`, the
 *   projected token the kubelet rotates) are re-read when the token in hand is `tokenFileRereadMs` old
 *   (default 50 s: client-go's `NewCachedFileTokenSource` period of 1 min minus its 10 s leeway), and at
 *   once after the API server answered 401 to a request that carried it (client-go's
 *   `ResetTokenOlderThan`).
 *
 * A file that can't be read, is empty, or (certificate, key and CA together) doesn't make a valid TLS
 * context keeps the material last read, and is tried again at the next check: a certificate and key
 * rewritten one after the other never produce a mismatched pair. On the first read such a file is a
 * {@link CredentialsError} naming the field and the file.
 *
 * Users that authenticate through an exec plugin, an auth provider other than a token file, or a custom
 * authenticator are asked through client-node's `applyToHTTPSOptions` on every request, as before; a
 * client certificate they hand out is compared in the same way.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin/#bound-service-account-token-volume
 * @see https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
 */
import { readFile } from 'node:fs/promises';
import type https from 'node:https';
import { createSecureContext } from 'node:tls';
import type { User } from '@kubernetes/client-node';
import { systemClock, type Clock } from '../clock.js';
import { brandClass } from '../../operator/brand.js';
import { RuntimeError } from '../runtime-error.js';
import type { KubeConfigSource } from './kube-config-source.js';

/**
 * Why the credentials can't be presented: a user's token file, or a certificate, key or CA file, can't be
 * read or is empty; or the certificate, key and CA together don't make a TLS context.
 */
export type CredentialsFailureReason = 'TokenFileUnreadable' | 'CredentialFileUnreadable' | 'InvalidTlsConfig';

/**
 * The kubeconfig user's credentials can't be read the first time (later failures keep the material in
 * hand). The message names the user's field and the file, e.g. `user "u" tokenFile /path: ENOENT …` or
 * `client-certificate /path: the file is empty`. Step `credentials`; branded.
 */
export class CredentialsError extends RuntimeError {
  static {
    brandClass(this, 'CredentialsError');
  }

  override readonly step = 'credentials';
  constructor(
    override readonly reason: CredentialsFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CredentialsError';
  }
}

/** The TLS material of one connection pool. The same object is returned for as long as the bytes don't change. */
export interface ClientTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
  /** False when the cluster says `insecure-skip-tls-verify`. */
  readonly rejectUnauthorized?: boolean;
}

/** What one request presents. */
export interface RequestCredentials {
  readonly tls: ClientTls;
  /** Authorization, Impersonate-User and whatever an auth plugin adds. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  /** The token file read this bearer token came from, when it came from one: hand back to {@link ClientCredentials.rejected} on a 401. */
  readonly tokenRead?: TokenRead;
}

/** One read of a token file. */
export interface TokenRead {
  readonly token: string;
  /** Clock time of the read, in ms. */
  readonly atMs: number;
}

/** Options of {@link ClientCredentials}. */
export interface ClientCredentialsOptions {
  /** Time for the re-read intervals. @default systemClock */
  readonly clock?: Clock;
  /**
   * How long certificate, key and CA files read from disk are used before the next request reads them
   * again. @default 1000 ms, client-go's cache of client certificate files (transport.go `cachingCertificateLoader`)
   */
  readonly tlsFileRecheckMs?: number;
  /**
   * Age at which a token read from a file is read again. @default 50000 ms, client-go's
   * `NewCachedFileTokenSource` (a 1 min period, refreshed 10 s early)
   */
  readonly tokenFileRereadMs?: number;
}

/** Where each piece of the current context's TLS material comes from: a file path, or inline data. */
interface TlsSources {
  readonly ca?: Source;
  readonly cert?: Source;
  readonly key?: Source;
}

type Source = { readonly file: string; readonly field: string } | { readonly data: Buffer };

/**
 * Reads a kubeconfig's current cluster and user (a client-node `KubeConfig` or any other
 * {@link KubeConfigSource}) into request credentials, and reads their files again
 * when they may have changed (see the module doc for the intervals). Not bound to a single client: the
 * current context is read when the object is made.
 *
 * @throws from {@link current}: Error naming the kubeconfig field and path when a file can't be read
 *   the first time, or when the certificate, key and CA don't make a TLS context.
 */
export class ClientCredentials {
  private readonly clock: Clock;
  private readonly tlsFileRecheckMs: number;
  private readonly tokenFileRereadMs: number;
  private readonly user: User | undefined;
  private readonly delegated: boolean;
  private readonly sources: TlsSources;
  private readonly tokenFile: string | undefined;
  private readonly baseTls: Pick<ClientTls, 'servername' | 'rejectUnauthorized'>;

  /** True when the CA, certificate or key comes from a file (re-checked every `tlsFileRecheckMs`). */
  private readonly tlsFromFiles: boolean;

  private tls: ClientTls | undefined;
  /** The last credentials handed out, reused while their TLS material and token read are current. */
  private last: RequestCredentials | undefined;
  private tlsCheckedAtMs = Number.NEGATIVE_INFINITY;
  private tlsLoading: Promise<ClientTls> | undefined;
  private token: TokenRead | undefined;
  private tokenLoading: Promise<TokenRead> | undefined;

  constructor(
    private readonly kubeConfig: KubeConfigSource,
    options: ClientCredentialsOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.tlsFileRecheckMs = options.tlsFileRecheckMs ?? 1000;
    this.tokenFileRereadMs = options.tokenFileRereadMs ?? 50_000;
    const cluster = kubeConfig.getCurrentCluster();
    const user = kubeConfig.getCurrentUser() ?? undefined;
    this.user = user;
    const tokenFile = tokenFileOf(user);
    // client-node's KubeConfig keeps `addAuthenticator`'s plugins in this private field; other sources have none.
    const customAuthenticators = (kubeConfig as { custom_authenticators?: unknown[] }).custom_authenticators ?? [];
    this.delegated = Boolean(user?.exec) || (Boolean(user?.authProvider) && !tokenFile) || customAuthenticators.length > 0;
    this.tokenFile = user?.token ? undefined : tokenFile;
    this.baseTls = {
      ...(cluster?.tlsServerName ? { servername: cluster.tlsServerName } : {}),
      ...(cluster?.skipTLSVerify ? { rejectUnauthorized: false } : {}),
    };
    this.sources = {
      ca: sourceOf(cluster?.caFile, cluster?.caData, `cluster "${cluster?.name}" certificate-authority`),
      // client-node reads no client certificate without a current user; neither do we.
      cert: user ? sourceOf(user.certFile, user.certData, `user "${user.name}" client-certificate`) : undefined,
      key: user ? sourceOf(user.keyFile, user.keyData, `user "${user.name}" client-key`) : undefined,
    };
    this.tlsFromFiles = [this.sources.ca, this.sources.cert, this.sources.key].some((s) => s !== undefined && 'file' in s);
  }

  /**
   * The credentials for a request about to be sent when no file is due for a re-read (nothing to wait
   * for): the same object as long as nothing changed; undefined when {@link current} must be awaited
   * (a file is due, nothing was read yet, or an auth plugin is asked on every request).
   */
  fresh(): RequestCredentials | undefined {
    if (this.delegated || !this.tls) return undefined;
    const now = this.clock.now();
    if (this.tlsFromFiles && now - this.tlsCheckedAtMs >= this.tlsFileRecheckMs) return undefined;
    const token = this.tokenFile ? this.token : undefined;
    if (this.tokenFile && (!token || now - token.atMs >= this.tokenFileRereadMs)) return undefined;
    return this.credentialsOf(this.tls, token);
  }

  /** The credentials for a request about to be sent, re-reading files that are due. */
  async current(): Promise<RequestCredentials> {
    if (this.delegated) return this.fromClientNode();
    const [tls, tokenRead] = await Promise.all([this.currentTls(), this.tokenFile ? this.currentToken(this.tokenFile) : undefined]);
    return this.credentialsOf(tls, tokenRead);
  }

  /** The credentials made of `tls` and `tokenRead`: the last ones handed out when they are the same. */
  private credentialsOf(tls: ClientTls, tokenRead: TokenRead | undefined): RequestCredentials {
    const last = this.last;
    if (last && last.tls === tls && last.tokenRead === tokenRead) return last;
    const headers: Record<string, string> = {};
    const user = this.user;
    if (user?.username) headers.Authorization = 'Basic ' + Buffer.from(`${user.username}:${user.password}`).toString('base64');
    if (tokenRead) headers.Authorization = `Bearer ${tokenRead.token}`;
    if (user?.token) headers.Authorization = `Bearer ${user.token}`;
    if (user?.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
    return (this.last = { tls, headers, ...(tokenRead ? { tokenRead } : {}) });
  }

  /**
   * The API server answered 401 to a request sent with `credentials`: its token, if read from a file,
   * is read again by the next request (unless a newer read already replaced it).
   */
  rejected(credentials: RequestCredentials): void {
    if (credentials.tokenRead && this.token === credentials.tokenRead) this.token = undefined;
  }

  private currentTls(): Promise<ClientTls> {
    if (this.tls && (!this.tlsFromFiles || this.clock.now() - this.tlsCheckedAtMs < this.tlsFileRecheckMs)) return Promise.resolve(this.tls);
    this.tlsLoading ??= this.loadTls().finally(() => (this.tlsLoading = undefined));
    return this.tlsLoading;
  }

  private async loadTls(): Promise<ClientTls> {
    const startedAtMs = this.clock.now();
    let read: { ca?: Buffer; cert?: Buffer; key?: Buffer };
    try {
      const [ca, cert, key] = await Promise.all([readSource(this.sources.ca), readSource(this.sources.cert), readSource(this.sources.key)]);
      read = { ca, cert, key };
      if (this.tls && sameTls(this.tls, read)) {
        this.tlsCheckedAtMs = startedAtMs;
        return this.tls;
      }
      validateTls(read, this.sources);
    } catch (err) {
      if (!this.tls) throw err;
      // Half-written or missing files: keep what works, look again at the next check.
      this.tlsCheckedAtMs = startedAtMs;
      return this.tls;
    }
    this.tls = { ...this.baseTls, ...definedOnly(read) };
    this.tlsCheckedAtMs = startedAtMs;
    return this.tls;
  }

  private currentToken(path: string): Promise<TokenRead> {
    const token = this.token;
    if (token && this.clock.now() - token.atMs < this.tokenFileRereadMs) return Promise.resolve(token);
    this.tokenLoading ??= this.loadToken(path).finally(() => (this.tokenLoading = undefined));
    return this.tokenLoading;
  }

  private async loadToken(path: string): Promise<TokenRead> {
    const atMs = this.clock.now();
    let text: string;
    try {
      text = (await readFile(path, 'utf8')).trim();
      if (text === '') throw new Error(`token file ${path} is empty`);
    } catch (err) {
      // client-go's cachingTokenSource: a failed re-read keeps the token in hand.
      if (this.token) return this.token;
      throw new CredentialsError('TokenFileUnreadable', `user "${this.user?.name}" tokenFile ${path}: ${(err as Error).message}`, { cause: err });
    }
    this.token = { token: text, atMs };
    return this.token;
  }

  private async fromClientNode(): Promise<RequestCredentials> {
    const opts: https.RequestOptions = { headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string | readonly string[]> = {};
    for (const [key, value] of Object.entries(opts.headers ?? {})) {
      if (value !== undefined) headers[key] = Array.isArray(value) ? value : String(value);
    }
    if (opts.auth) headers.Authorization = 'Basic ' + Buffer.from(opts.auth).toString('base64');
    const read = { ca: toBuffer(opts.ca), cert: toBuffer(opts.cert), key: toBuffer(opts.key) };
    if (!this.tls || !sameTls(this.tls, read)) this.tls = { ...this.baseTls, ...definedOnly(read) };
    return { tls: this.tls, headers };
  }
}

/** The token file of a user: client-node's in-cluster user is an auth provider with `config.tokenFile`. */
function tokenFileOf(user: User | undefined): string | undefined {
  const file = (user?.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  return typeof file === 'string' && file !== '' ? file : undefined;
}

function sourceOf(file: string | undefined | null, data: string | undefined | null, field: string): Source | undefined {
  if (file) return { file, field };
  if (data) return { data: Buffer.from(data, 'base64') };
  return undefined;
}

async function readSource(source: Source | undefined): Promise<Buffer | undefined> {
  if (!source) return undefined;
  if ('data' in source) return source.data;
  let bytes: Buffer;
  try {
    bytes = await readFile(source.file);
  } catch (err) {
    throw new CredentialsError('CredentialFileUnreadable', `${source.field} ${source.file}: ${(err as Error).message}`, { cause: err });
  }
  if (bytes.length === 0) throw new CredentialsError('CredentialFileUnreadable', `${source.field} ${source.file}: the file is empty`);
  return bytes;
}

function validateTls(read: { ca?: Buffer; cert?: Buffer; key?: Buffer }, sources: TlsSources): void {
  try {
    createSecureContext(definedOnly(read));
  } catch (err) {
    const names = [sources.ca, sources.cert, sources.key]
      .filter((s): s is Extract<Source, { file: string }> => s !== undefined && 'file' in s)
      .map((s) => `${s.field} ${s.file}`);
    const where = names.length > 0 ? names.join(', ') : 'inline certificate data';
    throw new CredentialsError('InvalidTlsConfig', `${where}: not a usable TLS client configuration: ${(err as Error).message}`, { cause: err });
  }
}

function sameTls(tls: ClientTls, read: { ca?: Buffer; cert?: Buffer; key?: Buffer }): boolean {
  return sameBytes(tls.ca, read.ca) && sameBytes(tls.cert, read.cert) && sameBytes(tls.key, read.key);
}

function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.equals(b));
}

function toBuffer(value: unknown): Buffer | undefined {
  if (value === undefined || value === null) return undefined;
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value);
  return undefined;
}

function definedOnly<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
