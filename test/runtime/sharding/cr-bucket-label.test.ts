import { bucketOf, bucketOfKey } from '../../../lib/runtime/sharding/bucket-hash.js';
import { SHARD_BUCKET_LABEL } from '../../../lib/runtime/sharding/bucket-label.js';
import { UNLABELLED_SELECTOR, crBucketLabelPatch, crBucketLabelVerdict, crBucketsSelector, strayCrSelector } from '../../../lib/runtime/sharding/cr-bucket-label.js';

const cr = (labels?: Record<string, string>, resourceVersion?: string) => ({
  apiVersion: 'example.com/v1',
  kind: 'Site',
  metadata: { namespace: 'ns', name: 'web', ...(labels ? { labels } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
});

describe('CR bucket label', () => {
  const bucket = bucketOf('ns', 'web', 32);

  test('GIVEN a CR with no bucket label THEN it is stamped with the bucket of its namespace/name (the children\'s bucket function)', () => {
    expect(crBucketLabelVerdict(cr(), 32)).toEqual({ action: 'stamp', bucket });
    expect(crBucketLabelVerdict(cr({ other: 'x' }), 32)).toEqual({ action: 'stamp', bucket });
  });

  test('GIVEN the bucket the caller computed already (bucketOfKey) THEN the same verdicts as hashing here', () => {
    const memo = bucketOfKey(32)('ns/web');
    expect(crBucketLabelVerdict(cr(), 32, memo)).toEqual(crBucketLabelVerdict(cr(), 32));
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: String(bucket) }), 32, memo)).toEqual({ action: 'none', bucket });
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: String((bucket + 1) % 32) }), 32, memo).action).toBe('repair');
  });

  test('GIVEN a CR whose label is right THEN nothing is written', () => {
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: String(bucket) }), 32)).toEqual({ action: 'none', bucket });
  });

  test('GIVEN a label edited by hand, malformed, or left by a ring with another bucket count THEN it is repaired to the computed bucket, and the value found is told', () => {
    const wrong = String((bucket + 1) % 32);
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: wrong }), 32)).toEqual({ action: 'repair', bucket, found: wrong });
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: `0${bucket}` }), 32)).toEqual({ action: 'repair', bucket, found: `0${bucket}` });
    const other = bucketOf('ns', 'web', 7);
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: String(other) }), 7)).toEqual({ action: 'none', bucket: other });
    // the same label read by a 32-bucket ring is repaired unless both counts give the same bucket
    expect(crBucketLabelVerdict(cr({ [SHARD_BUCKET_LABEL]: String(other) }), 32).action).toBe(other === bucket ? 'none' : 'repair');
  });

  test('GIVEN an invalid bucket count THEN the verdict throws naming bucketCount', () => {
    expect(() => crBucketLabelVerdict(cr(), 0)).toThrow(/bucketCount/);
  });

  test('GIVEN a CR THEN the merge patch sets only the label, guarded by its resourceVersion when known', () => {
    expect(crBucketLabelPatch(cr({ a: 'b' }, '42'), 5)).toEqual({ metadata: { resourceVersion: '42', labels: { [SHARD_BUCKET_LABEL]: '5' } } });
    expect(crBucketLabelPatch(cr(), 0)).toEqual({ metadata: { labels: { [SHARD_BUCKET_LABEL]: '0' } } });
  });

  test('GIVEN buckets THEN the selector is set-based, sorted, without repeats, ANDed after a base; none is refused', () => {
    expect(crBucketsSelector([7, 1, 4, 1])).toBe('operator.cdk8s.io/shard-bucket in (1,4,7)');
    expect(crBucketsSelector(new Set([3]), 'app=x')).toBe('app=x,operator.cdk8s.io/shard-bucket in (3)');
    expect(() => crBucketsSelector([])).toThrow(/at least one bucket/);
    expect(UNLABELLED_SELECTOR).toBe('!operator.cdk8s.io/shard-bucket');
  });

  test('GIVEN a bucket count THEN the strays selector names every bucket of the ring in notin (which also matches CRs without the label)', () => {
    expect(strayCrSelector(4)).toBe('operator.cdk8s.io/shard-bucket notin (0,1,2,3)');
    expect(strayCrSelector(1)).toBe('operator.cdk8s.io/shard-bucket notin (0)');
  });
});
