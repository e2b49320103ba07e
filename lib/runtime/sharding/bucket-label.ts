/**
 * The bucket label of a sharded run: every child a sharded replica applies carries its owner's bucket
 * as the label `operator.cdk8s.io/shard-bucket: "<n>"`, so that each replica lists and watches only the
 * children of the buckets it holds or is taking (one watch per kind with `…,operator.cdk8s.io/shard-bucket
 * in (…)`, each bucket listed alone with `…,operator.cdk8s.io/shard-bucket=<n>`: bucket-child-caches.ts).
 *
 * The runtime stamps the label on render's output before the desired-hash annotation is computed
 * (child-diff.ts), never render itself. Server-side apply makes the operator's field manager the owner of
 * the label, so turning sharding on or off is one apply of each child by that manager: sharding on, the
 * hash changes and the apply adds the label; sharding off, the hash changes back and the apply, which no
 * longer sets the label, removes it (a field its manager owned alone and stopped applying).
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 */
import type { KubeObject } from '../client/kube-client.js';
import { isJsonObject } from '../../json-object.js';

/** Value: the owning CR's bucket (bucket-hash.ts), in decimal. Only on children of a sharded run. */
export const SHARD_BUCKET_LABEL = 'operator.cdk8s.io/shard-bucket';

/**
 * A copy of `child` carrying `bucket` in {@link SHARD_BUCKET_LABEL} (whatever render set there), and so
 * do the objects the cluster makes from it ({@link templatePaths}): the pod template's labels of an apps/v1
 * Deployment, StatefulSet, DaemonSet or ReplicaSet, and a batch/v1 CronJob's `spec.jobTemplate` and its
 * pod template, so that their Pods (and Jobs) carry the bucket too and a related scope of them can be
 * cached per bucket (`RelatedCacheScope.createdFromChildren`). Only template labels: a `spec.selector`
 * is never touched (it is immutable on a Deployment), and adding the label to a pod template rolls the
 * workload out once (its template changed). A bare Job is left alone: its pod template is immutable.
 */
export function withBucketLabel<T extends KubeObject>(child: T, bucket: number): T {
  const labelled = labelAt(child as Record<string, unknown>, ['metadata'], String(bucket)) as T;
  return templatePaths(child).reduce((object, path) => labelAt(object as Record<string, unknown>, path, String(bucket)) as T, labelled);
}

/**
 * The paths (from the object's root) of the templates' `metadata` whose labels the objects made from
 * `child` inherit: `spec.template.metadata` of apps/v1 Deployment, StatefulSet, DaemonSet, ReplicaSet;
 * `spec.jobTemplate.metadata` and `spec.jobTemplate.spec.template.metadata` of a batch/v1 CronJob; none
 * for other kinds, and none when the template is absent (render's output is left as it is).
 * @see https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#pod-template
 */
export function templatePaths(child: KubeObject): string[][] {
  const group = typeof child.apiVersion === 'string' && child.apiVersion.includes('/') ? child.apiVersion.slice(0, child.apiVersion.indexOf('/')) : '';
  const paths: string[][] =
    group === 'apps' && ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet'].includes(String(child.kind))
      ? [['spec', 'template', 'metadata']]
      : group === 'batch' && child.kind === 'CronJob'
        ? [['spec', 'jobTemplate', 'metadata'], ['spec', 'jobTemplate', 'spec', 'template', 'metadata']]
        : [];
  // A template must be there (its parent an object): the label never makes one up.
  return paths.filter((path) => isJsonObject(at(child as Record<string, unknown>, path.slice(0, -1))));
}

function at(object: Record<string, unknown>, path: readonly string[]): unknown {
  let here: unknown = object;
  for (const key of path) here = isJsonObject(here) ? here[key] : undefined;
  return here;
}

/** A copy of `object` whose `path` (a metadata object, made when absent) has the bucket label; copies along the path only. */
function labelAt(object: Record<string, unknown>, path: readonly string[], value: string): Record<string, unknown> {
  const [key, ...rest] = path;
  if (key === undefined) {
    const labels = isJsonObject(object.labels) ? object.labels : {};
    return { ...object, labels: { ...labels, [SHARD_BUCKET_LABEL]: value } };
  }
  const next = isJsonObject(object[key]) ? object[key] : {};
  return { ...object, [key]: labelAt(next, rest, value) };
}

/**
 * The label selector of one bucket's children: `base` (e.g. `app.kubernetes.io/managed-by=app`) and
 * `operator.cdk8s.io/shard-bucket=<bucket>`.
 */
export function bucketSelector(base: string | undefined, bucket: number): string {
  const own = `${SHARD_BUCKET_LABEL}=${bucket}`;
  return base ? `${base},${own}` : own;
}

/** The bucket a child's label names, or undefined (no label, or not a bucket number). */
export function bucketLabelOf(child: KubeObject): number | undefined {
  const value = child.metadata?.labels?.[SHARD_BUCKET_LABEL];
  if (value === undefined || !/^(0|[1-9]\d*)$/.test(value)) return undefined;
  return Number(value);
}
