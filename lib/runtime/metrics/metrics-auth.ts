/**
 * Authentication and authorization of `/metrics` scrapes by the API server, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` does it (the filter Kubebuilder scaffolds since it dropped
 * kube-rbac-proxy):
 *
 * 1. **Authentication:** the caller's bearer token (`Authorization: Bearer <token>`) is sent in a
 *    TokenReview (POST /apis/authentication.k8s.io/v1/tokenreviews, the API server's default
 *    audiences). No token, or a token the API server does not authenticate → `401 Unauthorized`.
 * 2. **Authorization:** the user the review returned (name, uid, groups, extra) is checked with a
 *    SubjectAccessReview (POST /apis/authorization.k8s.io/v1/subjectaccessreviews) of the non-resource
 *    URL: verb = the HTTP method in lower case (`get`), path = the request's path (`/metrics`). Denied →
 *    `403 Forbidden`. A ClusterRole with `nonResourceURLs: ["/metrics"], verbs: ["get"]` bound to the
 *    caller allows it (the synthesized `<operator>-metrics-reader`).
 * 3. A review that could not be made (network, 5xx, the operator lacking `create` on the reviews) →
 *    `500`, logged at error; it is not cached, so the next scrape asks again. No retry within a scrape
 *    (controller-runtime retries with backoff; Prometheus scrapes again anyway).
 *
 * The operator's own identity needs `create` on `tokenreviews` (authentication.k8s.io) and
 * `subjectaccessreviews` (authorization.k8s.io): the synthesized ClusterRole grants both.
 *
 * Caches (bounded LRUs from `lru-cache`, so a scrape every few seconds costs no review): controller-runtime's
 * delegating authenticator and authorizer TTLs:
 * - token → review result for {@link MetricsAuthOptions.authenticationCacheTtlMs} (1 min), authenticated or
 *   not; keyed by the token's SHA-256, never the token itself;
 * - (user, verb, path) → allowed for {@link MetricsAuthOptions.allowCacheTtlMs} (5 min), denied for
 *   {@link MetricsAuthOptions.denyCacheTtlMs} (30 s);
 * - at most {@link MetricsAuthOptions.cacheSize} entries each (4096); the least recently used goes first.
 * So a revoked binding may keep allowing for up to 5 minutes, and a new one take up to 30 s to allow.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authentication/#webhook-token-authentication (TokenReview)
 * @see https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access (SubjectAccessReview)
 * @see https://book.kubebuilder.io/reference/metrics.html
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS } from '../client/builtin-resources.js';
import type { KubeClient } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import { type Clock, systemClock } from '../clock.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';

/** controller-runtime's token cache TTL (DelegatingAuthenticatorConfig.CacheTTL). */
export const DEFAULT_AUTHENTICATION_CACHE_TTL_MS = 60_000;
/** controller-runtime's DelegatingAuthorizerConfig.AllowCacheTTL. */
export const DEFAULT_ALLOW_CACHE_TTL_MS = 5 * 60_000;
/** controller-runtime's DelegatingAuthorizerConfig.DenyCacheTTL. */
export const DEFAULT_DENY_CACHE_TTL_MS = 30_000;
/** Entries per cache. */
export const DEFAULT_AUTH_CACHE_SIZE = 4096;
/** How long one review may take (controller-runtime's TokenAccessReviewTimeout). */
export const REVIEW_TIMEOUT_MS = 10_000;

/** The user a TokenReview authenticated (authentication.k8s.io/v1 UserInfo). */
export interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface MetricsAuthOptions {
  /** Sends the reviews, as the operator's own identity. */
  readonly client: Pick<KubeClient, 'request'>;
  /** @default 60000 ms (controller-runtime's) */
  readonly authenticationCacheTtlMs?: number;
  /** @default 300000 ms (controller-runtime's) */
  readonly allowCacheTtlMs?: number;
  /** @default 30000 ms (controller-runtime's) */
  readonly denyCacheTtlMs?: number;
  /** @default 4096 entries per cache */
  readonly cacheSize?: number;
  /** Reads the time the TTLs count in. @default systemClock */
  readonly clock?: Pick<Clock, 'now'>;
  readonly logger?: Logger;
}

/** What to answer a request: `allowed`, or the HTTP code and body to refuse it with. */
export type MetricsAuthDecision = { readonly allowed: true; readonly user: string } | { readonly allowed: false; readonly code: 401 | 403 | 500; readonly message: string };

/** The request fields the check reads. */
export interface MetricsAuthRequest {
  readonly method: string;
  /** The URL path, without the query. */
  readonly path: string;
  /** The `Authorization` header, if any. */
  readonly authorization?: string;
}

type Authenticated = { readonly authenticated: true; readonly user: ReviewedUser } | { readonly authenticated: false; readonly error?: string };

/** Authenticates and authorizes scrapes; see the module doc. */
export class MetricsAuth {
  private readonly client: Pick<KubeClient, 'request'>;
  private readonly logger: Logger;
  private readonly allowTtlMs: number;
  private readonly denyTtlMs: number;
  private readonly tokens: LRUCache<string, Authenticated>;
  private readonly decisions: LRUCache<string, boolean>;
  private readonly reviews = { tokenReviews: 0, subjectAccessReviews: 0 };

  constructor(options: MetricsAuthOptions) {
    this.client = options.client;
    this.logger = options.logger ?? silentLogger;
    const max = options.cacheSize ?? DEFAULT_AUTH_CACHE_SIZE;
    const clock = options.clock ?? systemClock;
    const perf = { now: () => clock.now() };
    // ttlResolution 0: read the clock on every lookup (lru-cache otherwise reuses a reading for 1 ms).
    const ttlResolution = 0;
    this.tokens = new LRUCache({ max, ttl: options.authenticationCacheTtlMs ?? DEFAULT_AUTHENTICATION_CACHE_TTL_MS, perf, ttlResolution });
    this.allowTtlMs = options.allowCacheTtlMs ?? DEFAULT_ALLOW_CACHE_TTL_MS;
    this.denyTtlMs = options.denyCacheTtlMs ?? DEFAULT_DENY_CACHE_TTL_MS;
    this.decisions = new LRUCache({ max, ttl: this.allowTtlMs, perf, ttlResolution });
  }

  /** Reviews sent so far (cache misses), for tests and debugging. */
  reviewCounts(): { readonly tokenReviews: number; readonly subjectAccessReviews: number } {
    return { ...this.reviews };
  }

  /** Decides one request: 401 without an authenticated token, 403 when not allowed, 500 when a review failed. */
  async check(request: MetricsAuthRequest): Promise<MetricsAuthDecision> {
    const token = bearerToken(request.authorization);
    if (!token) return { allowed: false, code: 401, message: 'Unauthorized' };
    let authn: Authenticated;
    try {
      authn = await this.authenticate(token);
    } catch (err) {
      this.logger.error({ ...errorFields(err) }, 'metrics: TokenReview failed');
      return { allowed: false, code: 500, message: 'Authentication failed' };
    }
    if (!authn.authenticated) {
      this.logger.debug({ reason: authn.error }, 'metrics: token not authenticated');
      return { allowed: false, code: 401, message: 'Unauthorized' };
    }
    const user = authn.user;
    const verb = request.method.toLowerCase();
    let allowed: boolean;
    try {
      allowed = await this.authorize(user, verb, request.path);
    } catch (err) {
      this.logger.error({ user: user.username, ...errorFields(err) }, 'metrics: SubjectAccessReview failed');
      return { allowed: false, code: 500, message: `Authorization for user ${user.username} failed` };
    }
    if (!allowed) {
      this.logger.debug({ user: user.username, verb, path: request.path }, 'metrics: scrape denied');
      return { allowed: false, code: 403, message: `Authorization denied for user ${user.username}` };
    }
    return { allowed: true, user: user.username };
  }

  private async authenticate(token: string): Promise<Authenticated> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.tokens.get(key);
    if (cached) return cached;
    this.reviews.tokenReviews++;
    const review = await new ResourceClient(this.client).create<{ status?: { authenticated?: boolean; user?: ReviewedUser; error?: string } }>(
      TOKEN_REVIEWS,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      { signal: AbortSignal.timeout(REVIEW_TIMEOUT_MS) },
    );
    const status = review?.status;
    const result: Authenticated =
      status?.authenticated === true && status.user?.username ? { authenticated: true, user: status.user } : { authenticated: false, error: status?.error };
    this.tokens.set(key, result);
    return result;
  }

  private async authorize(user: ReviewedUser, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), sortedExtra(user.extra), verb, path]);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    this.reviews.subjectAccessReviews++;
    const review = await new ResourceClient(this.client).create<{ status?: { allowed?: boolean } }>(
      SUBJECT_ACCESS_REVIEWS,
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.groups ? { groups: [...user.groups] } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path, verb },
        },
      },
      { signal: AbortSignal.timeout(REVIEW_TIMEOUT_MS) },
    );
    const allowed = review?.status?.allowed === true;
    this.decisions.set(key, allowed, { ttl: allowed ? this.allowTtlMs : this.denyTtlMs });
    return allowed;
  }
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function sortedExtra(extra: ReviewedUser['extra']): [string, string[]][] {
  return Object.entries(extra ?? {})
    .map(([k, v]): [string, string[]] => [k, [...v].sort()])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
