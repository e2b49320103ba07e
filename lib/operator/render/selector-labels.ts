/**
 * `selectorLabels(cr, name)`: the labels that identify the pods of one custom resource, for a workload's
 * selector, its pod template, the Service in front of it and a `related` Pod selector.
 *
 * Why not cdk8s-plus's default: a cdk8s-plus workload selects its pods by `cdk8s.io/metadata.addr`, a
 * label derived from the construct path. Under `render` that path is `<CR name>/<construct ids>`, so
 * (1) two operators whose CRs share a name and whose constructs share an id (`hello/server`) render the
 * same label in one namespace, and each Service then routes to the other's pods; and (2) renaming a
 * construct changes the selector, which is immutable on Deployments, StatefulSets and DaemonSets, so the
 * next apply of every existing CR's workload is refused. These labels depend on the CR and a name you
 * choose, not on the construct tree.
 *
 * With cdk8s-plus (any 2.x; the SDK does not depend on it), select by them in the workload and in
 * every selector that means its pods:
 * ```ts
 * const labels = selectorLabels(cr, 'memcached');
 * const deployment = new kplus.Deployment(scope, 'server', { select: false, podMetadata: { labels }, ... });
 * deployment.select(kplus.LabelSelector.of({ labels }));
 * new kplus.Service(scope, 'service', { selector: kplus.Pods.select(scope, 'pods', { labels }), ports: [...] });
 * ```
 * `select: false` only changes the workload's own selector: wherever the workload itself is given as a
 * pod selector (`deployment.exposeViaService()`, a Service's `selector: deployment`, NetworkPolicy peers,
 * pod affinity), cdk8s-plus selects by the construct-path label, so give `kplus.Pods.select(...)` there.
 * That label stays on the pod template (not in the selector): renaming the construct rolls the pods once.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
 * @see https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#label-selector-updates
 */
import { INSTANCE_LABEL, NAME_LABEL, toLabelValue } from './labels.js';
import { labelValueProblem } from '../schema/metadata-limits.js';

/**
 * The selector labels of `cr`'s pods of the application `name`:
 * `{ 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': <CR name> }`.
 *
 * The instance value is the CR's name when it is a valid label value, else its deterministic short form
 * (≤ 63 characters, `<prefix>-<8 hex of sha256>`; CR names may have 253), the same value the SDK stamps
 * as `app.kubernetes.io/instance` on every child. Same CR and name in, same labels out: the result is
 * stable across reconciles and SDK runs, as a selector must be.
 *
 * Unique per namespace as long as each operator names its applications apart (`memcached`, `postgres`):
 * two CRs of one kind in a namespace differ by name.
 *
 * @param cr the custom resource (only `metadata.name` is read)
 * @param name the application, e.g. `memcached`: a label value (≤ 63 characters of `[A-Za-z0-9._-]`,
 *   alphanumeric at both ends), not empty
 * @returns a new object with exactly those two labels
 * @throws Error naming `name` and the reason when it is empty or not a valid label value
 */
export function selectorLabels(cr: { readonly metadata: { readonly name: string } }, name: string): Record<string, string> {
  const problem = name === '' ? 'must not be empty' : labelValueProblem(name);
  if (problem !== undefined) throw new Error(`selectorLabels: name ${JSON.stringify(name)} is not a valid label value: ${problem}`);
  return { [NAME_LABEL]: name, [INSTANCE_LABEL]: toLabelValue(cr.metadata.name) };
}
