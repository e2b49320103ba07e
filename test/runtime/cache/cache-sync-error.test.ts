import { CacheSyncError } from '../../../lib/runtime/cache/cache-sync-error.js';
import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import type { Informer } from '../../../lib/runtime/cache/informer.js';

const informer = (resource: string, synced: boolean, lastError?: unknown) => ({ describe: () => resource, hasSynced: () => synced, lastError: () => lastError }) as unknown as Informer;

test('GIVEN informers of which two never synced WHEN the wait timed out THEN the error leads with the reason and names each with its last list error', () => {
  const cause = new Error('timeout');
  const notFound = new ApiError('GET', '/apis/cache.example.com/v1beta1/memcacheds', 404, 'NotFound', undefined, 'the server could not find the requested resource');
  const err = CacheSyncError.of('CacheSyncTimeout', [informer('memcacheds.cache.example.com', false, notFound), informer('configmaps', true), informer('services with a=b', false)], 5000, cause);
  expect(err).toBeInstanceOf(CacheSyncError);
  expect(err.reason).toBe('CacheSyncTimeout');
  expect(err.cause).toBe(cause);
  expect(err.informers.map((i) => i.resource)).toEqual(['memcacheds.cache.example.com', 'services with a=b']);
  expect(err.message).toBe(
    'caches did not sync within 5000 ms (CacheSyncTimeout): memcacheds.cache.example.com (list failed: GET /apis/cache.example.com/v1beta1/memcacheds: 404 NotFound: the server could not find the requested resource); services with a=b (no list answered yet)',
  );
});
