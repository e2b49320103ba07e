import { SHARD_BUCKET_LABEL, bucketLabelOf, bucketSelector, templatePaths, withBucketLabel } from '../../../lib/runtime/sharding/bucket-label.js';

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

  test('GIVEN workloads THEN their pod templates (a CronJob\'s job template too) carry the bucket, the selector is untouched, and a bare Job or a kind without a template is left alone', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [] } } },
    };
    const labelled = withBucketLabel(deployment, 4) as unknown as typeof deployment & { spec: { template: { metadata: { labels: Record<string, string> } } } };
    expect(labelled.metadata).toEqual({ name: 'd', labels: { [SHARD_BUCKET_LABEL]: '4' } });
    expect(labelled.spec.template.metadata.labels).toEqual({ app: 'd', [SHARD_BUCKET_LABEL]: '4' });
    expect(labelled.spec.selector).toEqual({ matchLabels: { app: 'd' } });
    expect(labelled.spec.template.spec).toBe(deployment.spec.template.spec);
    expect(deployment.spec.template.metadata.labels).toEqual({ app: 'd' });
    for (const kind of ['StatefulSet', 'DaemonSet', 'ReplicaSet']) {
      const out = withBucketLabel({ apiVersion: 'apps/v1', kind, metadata: { name: 'x' }, spec: { template: { spec: {} } } }, 2) as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } };
      expect(out.spec.template.metadata.labels).toEqual({ [SHARD_BUCKET_LABEL]: '2' });
    }
    const cronJob = withBucketLabel({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: {} } } } } }, 1) as unknown as {
      spec: { jobTemplate: { metadata: { labels: Record<string, string> }; spec: { template: { metadata: { labels: Record<string, string> } } } } };
    };
    expect(cronJob.spec.jobTemplate.metadata.labels).toEqual({ [SHARD_BUCKET_LABEL]: '1' });
    expect(cronJob.spec.jobTemplate.spec.template.metadata.labels).toEqual({ [SHARD_BUCKET_LABEL]: '1' });
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: {} } } };
    expect((withBucketLabel(job, 3) as unknown as typeof job).spec).toBe(job.spec);
    expect(templatePaths({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'no-template' }, spec: {} } as never)).toEqual([]);
    expect(templatePaths({ apiVersion: 'example.com/v1', kind: 'Deployment', metadata: { name: 'not-apps' }, spec: { template: {} } } as never)).toEqual([]);
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
