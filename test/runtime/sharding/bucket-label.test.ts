import { SHARD_BUCKET_LABEL, bucketLabelOf, bucketSelector, withBucketLabel } from '../../../lib/runtime/sharding/bucket-label.js';

describe('bucket label', () => {
  test('the key is the runtime\'s operator.cdk8s.io/ prefix', () => {
    expect(SHARD_BUCKET_LABEL).toBe('operator.cdk8s.io/shard-bucket');
  });

  test('GIVEN a rendered child THEN a copy carries the bucket in decimal, its other labels kept, render\'s own value overridden, the input untouched', () => {
    const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 'b', [SHARD_BUCKET_LABEL]: '99' } } };
    const labelled = withBucketLabel(child, 7);
    expect(labelled.metadata.labels).toEqual({ a: 'b', [SHARD_BUCKET_LABEL]: '7' });
    expect(child.metadata.labels[SHARD_BUCKET_LABEL]).toBe('99');
    expect(withBucketLabel({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } as { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> } }, 0).metadata.labels).toEqual({ [SHARD_BUCKET_LABEL]: '0' });
  });

  test('GIVEN an owner selector THEN the bucket selector adds the bucket requirement (AND)', () => {
    expect(bucketSelector('app.kubernetes.io/managed-by=app', 3)).toBe('app.kubernetes.io/managed-by=app,operator.cdk8s.io/shard-bucket=3');
    expect(bucketSelector('app.kubernetes.io/managed-by in (a,b)', 12)).toBe('app.kubernetes.io/managed-by in (a,b),operator.cdk8s.io/shard-bucket=12');
    expect(bucketSelector(undefined, 0)).toBe('operator.cdk8s.io/shard-bucket=0');
  });

  test('GIVEN children THEN bucketLabelOf reads a bucket number, and nothing for a missing or malformed label', () => {
    const of = (value?: string) => bucketLabelOf({ metadata: { name: 'x', labels: value === undefined ? {} : { [SHARD_BUCKET_LABEL]: value } } });
    expect(of('5')).toBe(5);
    expect(of('0')).toBe(0);
    expect(of()).toBeUndefined();
    expect(of('05')).toBeUndefined();
    expect(of('-1')).toBeUndefined();
    expect(of('x')).toBeUndefined();
  });
});
