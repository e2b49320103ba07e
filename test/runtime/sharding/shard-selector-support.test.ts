import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import { FULL_SHARD_SELECTOR, detectShardSelector } from '../../../lib/runtime/sharding/shard-selector-support.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const MEMCACHEDS = { group: 'cache.example.com', version: 'v1beta1', plural: 'memcacheds', namespaced: true };

describe('detectShardSelector (KEP-5866)', () => {
  test('GIVEN a server that echoes metadata.shardInfo THEN supported; the probe is one list, limit 1, selecting the whole uid hash space', async () => {
    const client = new FakeKubeClient();
    client.respond = (call) => ({ kind: 'MemcachedList', metadata: { resourceVersion: '1', shardInfo: { selector: call.query?.shardSelector } }, items: [] });
    const support = await detectShardSelector(client, MEMCACHEDS, 'shop');
    expect(support.supported).toBe(true);
    expect(client.calls).toHaveLength(1);
    expect(client.calls[0]).toMatchObject({ method: 'GET', path: '/apis/cache.example.com/v1beta1/namespaces/shop/memcacheds', query: { limit: 1, shardSelector: FULL_SHARD_SELECTOR } });
    expect(FULL_SHARD_SELECTOR).toBe("shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')");
  });

  test('GIVEN a server that ignores the parameter (no shardInfo) THEN unsupported, saying why', async () => {
    const client = new FakeKubeClient();
    client.respond = () => ({ kind: 'MemcachedList', metadata: { resourceVersion: '1' }, items: [] });
    const support = await detectShardSelector(client, MEMCACHEDS);
    expect(support).toEqual({ supported: false, detail: expect.stringContaining('no metadata.shardInfo') });
    expect(client.calls[0]!.path).toBe('/apis/cache.example.com/v1beta1/memcacheds');
  });

  test('GIVEN the list fails THEN unsupported with the error, never a throw', async () => {
    const client = new FakeKubeClient();
    client.fail = (call) => new ApiError('GET', call.path, 403, 'Forbidden', { kind: 'Status', code: 403, reason: 'Forbidden', message: 'no' }, 'no');
    const support = await detectShardSelector(client, MEMCACHEDS);
    expect(support.supported).toBe(false);
    expect(support.detail).toMatch(/^the list with a shardSelector failed: /);
  });
});
