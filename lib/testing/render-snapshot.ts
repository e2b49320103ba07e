/**
 * Snapshot-testing helpers for SDK users: render an operator's children (or its synthesized install
 * manifests) without a cluster, ready for `expect(...).toMatchSnapshot()`.
 *
 * A real CR gets its `metadata.uid` from the API server; these helpers supply the fixed
 * {@link SNAPSHOT_UID} so ownerReferences and the owner-uid label are stable across runs.
 *
 * @example
 * import { App } from 'cdk8s';
 * import { renderForSnapshot, synthForSnapshot } from 'cdk8s-operator-sdk/testing';
 *
 * test('GIVEN a sample Memcached WHEN rendered THEN the children match the snapshot', () => {
 *   const operator = new MemcachedOperator(new App());
 *   expect(renderForSnapshot(operator, sample)).toMatchSnapshot();
 *   expect(synthForSnapshot(operator)).toMatchSnapshot();
 * });
 */
import type { CustomResource } from '../operator/custom-resource.js';
import { renderChildren, type Manifest, type RenderableOperator } from '../operator/render-children.js';

/** The fake uid given to CRs rendered for a snapshot (a valid RFC 4122 v4 UUID that no server issues in practice). */
export const SNAPSHOT_UID = '00000000-0000-4000-8000-00000000c0de';

/** Options of {@link renderForSnapshot}. */
export interface RenderForSnapshotOptions {
  /** uid to give the CR when it has none. @default SNAPSHOT_UID */
  readonly uid?: string;
}

/**
 * Renders `cr`'s children with `renderChildren` after giving the CR a fixed uid (when it has none).
 * Same validation, stamping and ordering as at run time.
 *
 * @throws CustomResourceValidationError / RenderError exactly like renderChildren
 */
export function renderForSnapshot(operator: RenderableOperator, cr: CustomResource, options: RenderForSnapshotOptions = {}): Manifest[] {
  const uid = cr.metadata.uid ?? options.uid ?? SNAPSHOT_UID;
  return renderChildren(operator, { ...cr, metadata: { ...cr.metadata, uid } });
}

/**
 * Renders every example of an operator, keyed by `namespace/name` (or `name` for cluster-scoped
 * examples, with namespace `default` applied to namespaced ones that have none), in `examples` order.
 *
 * @throws CustomResourceValidationError / RenderError for the first example that fails, like renderChildren
 */
export function renderExamplesForSnapshot(
  operator: RenderableOperator & { readonly examples: readonly CustomResource<unknown>[] },
  options: RenderForSnapshotOptions = {},
): Record<string, Manifest[]> {
  const out: Record<string, Manifest[]> = {};
  for (const example of operator.examples) {
    const valid = operator.parseCustomResource(example);
    const key = valid.metadata.namespace ? `${valid.metadata.namespace}/${valid.metadata.name}` : valid.metadata.name;
    out[key] = renderForSnapshot(operator, example, options);
  }
  return out;
}

/**
 * The operator's synthesized install manifests (Namespace, CRD, RBAC, Deployment) as plain JSON, in
 * synth order. `operator` is the Operator construct (any cdk8s Chart works).
 */
export function synthForSnapshot(operator: { toJson(): unknown[] }): unknown[] {
  return JSON.parse(JSON.stringify(operator.toJson())) as unknown[];
}
