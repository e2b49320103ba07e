/**
 * MetricsAuth's decisions and caches with a recording client standing for the API server (pure logic:
 * the reviews against a real API server are in test/integration/secure-metrics.test.ts).
 */
import { MetricsAuth, bearerToken } from '../../../lib/runtime/metrics/metrics-auth.js';
import { selfSignedMetricsCertificate } from '../../../lib/runtime/metrics/metrics-certificate.js';
import { certificateInfo } from '../../../lib/runtime/webhook/x509.js';

interface Sent {
  readonly path: string;
  readonly body: { spec: Record<string, unknown> };
}

/** Answers TokenReviews from `users` (token → username) and SubjectAccessReviews from `readers`. */
function reviewer(users: Record<string, string>, readers: Set<string>, fail?: { tokenReview?: boolean; subjectAccessReview?: boolean }) {
  const sent: Sent[] = [];
  const client = {
    async request<T>(method: string, path: string, options?: { body?: unknown }): Promise<T> {
      expect(method).toBe('POST');
      const body = options!.body as Sent['body'];
      sent.push({ path, body });
      if (path.endsWith('/tokenreviews')) {
        if (fail?.tokenReview) throw new Error('connection refused');
        const username = users[body.spec.token as string];
        return (username ? { status: { authenticated: true, user: { username, uid: `uid-${username}`, groups: ['system:authenticated'] } } } : { status: { authenticated: false, error: 'invalid token' } }) as T;
      }
      if (fail?.subjectAccessReview) throw new Error('503 Service Unavailable');
      return { status: { allowed: readers.has(body.spec.user as string) } } as T;
    },
  };
  return { client, sent };
}

const GET = (authorization?: string) => ({ method: 'GET', path: '/metrics', authorization });

test('bearerToken reads the token of a Bearer header (scheme in any case) and nothing else', () => {
  expect(bearerToken('Bearer abc.def')).toBe('abc.def');
  expect(bearerToken('bearer abc')).toBe('abc');
  expect(bearerToken('Basic dXNlcjpwdw==')).toBeUndefined();
  expect(bearerToken('Bearer')).toBeUndefined();
  expect(bearerToken(undefined)).toBeUndefined();
});

test('GIVEN no token, an unknown one, one without the role and one with it THEN 401 (no review sent), 401, 403 and allowed; the reviews carry the user and the non-resource attributes', async () => {
  const { client, sent } = reviewer({ 'tok-reader': 'reader', 'tok-other': 'other' }, new Set(['reader']));
  const auth = new MetricsAuth({ client });
  expect(await auth.check(GET())).toEqual({ allowed: false, code: 401, message: 'Unauthorized' });
  expect(sent).toEqual([]);
  expect(await auth.check(GET('Bearer nope'))).toEqual({ allowed: false, code: 401, message: 'Unauthorized' });
  expect(await auth.check(GET('Bearer tok-other'))).toEqual({ allowed: false, code: 403, message: 'Authorization denied for user other' });
  expect(await auth.check(GET('Bearer tok-reader'))).toEqual({ allowed: true, user: 'reader' });
  const sar = sent.filter((s) => s.path === '/apis/authorization.k8s.io/v1/subjectaccessreviews').at(-1)!;
  expect(sar.body.spec).toEqual({ user: 'reader', uid: 'uid-reader', groups: ['system:authenticated'], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  expect(sent.filter((s) => s.path === '/apis/authentication.k8s.io/v1/tokenreviews').map((s) => s.body.spec)).toEqual([{ token: 'nope' }, { token: 'tok-other' }, { token: 'tok-reader' }]);
});

test('GIVEN answers cached WHEN asked again within the TTLs THEN no review is sent; after the deny TTL the denial is asked again, the allowance not', async () => {
  let now = 1_000_000;
  const clock = { now: () => now };
  {
    const { client, sent } = reviewer({ 'tok-reader': 'reader', 'tok-other': 'other' }, new Set(['reader']));
    const auth = new MetricsAuth({ client, clock, authenticationCacheTtlMs: 60_000, allowCacheTtlMs: 300_000, denyCacheTtlMs: 30_000 });
    await auth.check(GET('Bearer tok-reader'));
    await auth.check(GET('Bearer tok-other'));
    expect(auth.reviewCounts()).toEqual({ tokenReviews: 2, subjectAccessReviews: 2 });
    await auth.check(GET('Bearer tok-reader'));
    await auth.check(GET('Bearer tok-other'));
    expect(auth.reviewCounts()).toEqual({ tokenReviews: 2, subjectAccessReviews: 2 });
    now += 31_000; // past the deny TTL, within the others
    expect((await auth.check(GET('Bearer tok-other'))).allowed).toBe(false);
    expect((await auth.check(GET('Bearer tok-reader'))).allowed).toBe(true);
    expect(auth.reviewCounts()).toEqual({ tokenReviews: 2, subjectAccessReviews: 3 });
    now += 30_000; // past the token TTL: the tokens are reviewed again
    await auth.check(GET('Bearer tok-reader'));
    expect(auth.reviewCounts()).toEqual({ tokenReviews: 3, subjectAccessReviews: 3 });
    expect(sent.length).toBe(6);
  }
});

test('GIVEN a bounded cache WHEN more users than it holds scrape THEN the least recently used are reviewed again', async () => {
  const users = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`tok-${i}`, `user-${i}`]));
  const { client } = reviewer(users, new Set(Object.values(users)));
  const auth = new MetricsAuth({ client, cacheSize: 2 });
  for (const token of ['tok-0', 'tok-1', 'tok-2']) await auth.check(GET(`Bearer ${token}`));
  expect(auth.reviewCounts()).toEqual({ tokenReviews: 3, subjectAccessReviews: 3 });
  await auth.check(GET('Bearer tok-2')); // still held
  expect(auth.reviewCounts()).toEqual({ tokenReviews: 3, subjectAccessReviews: 3 });
  await auth.check(GET('Bearer tok-0')); // evicted
  expect(auth.reviewCounts()).toEqual({ tokenReviews: 4, subjectAccessReviews: 4 });
});

test('GIVEN a review that fails THEN 500, and the failure is not cached', async () => {
  const failing = reviewer({ tok: 'reader' }, new Set(['reader']), { tokenReview: true });
  const authn = new MetricsAuth({ client: failing.client });
  expect(await authn.check(GET('Bearer tok'))).toEqual({ allowed: false, code: 500, message: 'Authentication failed' });
  expect(await authn.check(GET('Bearer tok'))).toMatchObject({ code: 500 });
  expect(authn.reviewCounts().tokenReviews).toBe(2);

  const denying = reviewer({ tok: 'reader' }, new Set(['reader']), { subjectAccessReview: true });
  const authz = new MetricsAuth({ client: denying.client });
  expect(await authz.check(GET('Bearer tok'))).toEqual({ allowed: false, code: 500, message: 'Authorization for user reader failed' });
  expect(await authz.check(GET('Bearer tok'))).toMatchObject({ code: 500 });
  expect(authz.reviewCounts()).toEqual({ tokenReviews: 1, subjectAccessReviews: 2 });
});

test('the self-signed metrics certificate is for localhost, 127.0.0.1 and the names given, valid about a year', async () => {
  const cert = await selfSignedMetricsCertificate(['web-operator-metrics-service.web-system.svc']);
  const info = certificateInfo(cert.certPem);
  expect(info.hosts).toEqual(['localhost', '127.0.0.1', 'web-operator-metrics-service.web-system.svc']);
  const days = (info.notAfter.getTime() - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(364);
  expect(days).toBeLessThan(366);
});
