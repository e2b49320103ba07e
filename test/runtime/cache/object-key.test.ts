/**
 * incarnationKey, the key the status writer and the event recorder keep per-object state by: the uid
 * when the object has one, else its namespace/name cache key.
 */
import { incarnationKey } from '../../../lib/runtime/cache/object-key.js';

describe('incarnationKey', () => {
  test('GIVEN an object with a uid WHEN keyed THEN the uid (a recreated object is another incarnation)', () => {
    expect(incarnationKey({ metadata: { name: 'web', namespace: 'shop', uid: 'u-1' } })).toBe('u-1');
  });

  test('GIVEN objects without a uid WHEN keyed THEN namespace/name, or the name when cluster-scoped', () => {
    expect(incarnationKey({ metadata: { name: 'web', namespace: 'shop' } })).toBe('shop/web');
    expect(incarnationKey({ metadata: { name: 'admin' } })).toBe('admin');
  });
});
