/**
 * Snapshot-testing helpers for SDK users: render an operator's children (or its synthesized install
 * manifests) without a cluster, ready for `expect(...).toMatchSnapshot()`.
 *
 * The CR is checked against the operator's CRD as the API server would check it, CEL rules included,
 * and children of built-in kinds with the API server's own create validation, offline
 * (lib/validator: Kubernetes' code compiled to WebAssembly): a child the server would refuse fails the
 * helper with a ChildRefusedError naming it, the field path and the server's message.
 *
 * A real CR gets its `metadata.uid` from the API server; these helpers supply the fixed
 * {@link STAND_IN_UID} (the one `cdk8s-operator render` uses too) so ownerReferences and the owner-uid
 * label are stable across runs.
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
import { relatedLookupOf, renderCustomResource, type Manifest, type RenderableOperator } from '../operator/render/render-children.js';
import { withOperatorStatus } from '../operator/render/custom-status.js';
import type { KubeResource } from '../operator/render/render-context.js';
import { ObjectRef } from '../operator/object-ref.js';
import { STAND_IN_UID } from '../operator/render/stand-in-uid.js';
import { assertCustomResourceAccepted } from '../validator/assert-custom-resource-accepted.js';
import { assertChildrenAccepted } from '../validator/validate-built-in-objects.js';

export { STAND_IN_UID };

/** Options of {@link renderForSnapshot}. */
export interface RenderForSnapshotOptions {
  /** uid to give the CR when it has none. @default STAND_IN_UID, the uid of every offline render */
  readonly uid?: string;
  /** The CR's children as they exist (render's `context.observed`), e.g. a StatefulSet with its status. @default none */
  readonly observed?: readonly KubeResource[];
  /** Objects that exist in the cluster, where render's `context.related` is looked up. @default none */
  readonly related?: readonly KubeResource[];
  /**
   * Check the children of built-in kinds with the API server's own validation (see the module doc).
   * @default true: a child the server would refuse fails the test where it is rendered
   */
  readonly validateChildren?: boolean;
  /**
   * Check the CR itself as the API server would on create, against the operator's CRD, its CEL rules
   * (`celRule`) included (lib/validator's `validateCustomResource`; operators without a CRD are not checked).
   * @default true: a CR the server would refuse fails with a CustomResourceValidationError naming the
   *   field and the server's message
   */
  readonly validateCustomResource?: boolean;
}

/** Everything one render produced, as plain JSON for a snapshot. */
export interface RenderResultSnapshot {
  /** The children's plain manifests, as {@link renderForSnapshot} returns them. */
  readonly children: Manifest[];
  /** `Kind namespace/name` of a child → the children it waits for (`dependsOn`); only children that wait. */
  readonly waitsFor: Record<string, string[]>;
  /** Children with a `readyWhen` predicate, `Kind namespace/name`. */
  readonly readyWhen: string[];
  /** The operator's own status fields, validated (defaults applied); absent when render returned none. */
  readonly status?: Record<string, unknown>;
  /** The timed requeue in milliseconds (capped); absent when not asked. */
  readonly requeueAfterMs?: number;
}

/**
 * Renders `cr`'s children with `renderChildren` after giving the CR a fixed uid (when it has none).
 * Same validation, stamping and ordering as at run time; `options.observed` and `options.related` are
 * what render sees in `context`.
 *
 * @throws CustomResourceValidationError / RenderError exactly like renderChildren (including
 *   `ReferenceNotFound` when a required related object is not in `options.related`);
 *   CustomResourceValidationError with the server's field paths and messages when the API server
 *   would refuse the CR (a CEL rule it breaks); ChildRefusedError
 *   when the API server would refuse a child; ValidatorLoadError when the validator cannot load
 */
export function renderForSnapshot(operator: RenderableOperator, cr: CustomResource, options: RenderForSnapshotOptions = {}): Manifest[] {
  return renderResultForSnapshot(operator, cr, options).children;
}

/**
 * Like {@link renderForSnapshot}, with everything else render produced: the ordering between children,
 * the status it returned (with the operator's `status()` fields merged in, as `run` writes them) and
 * its requeue delay.
 *
 * @throws CustomResourceValidationError / RenderError like renderCustomResource; ChildRefusedError and
 *   ValidatorLoadError like renderForSnapshot
 */
export function renderResultForSnapshot(operator: RenderableOperator, cr: CustomResource, options: RenderForSnapshotOptions = {}): RenderResultSnapshot {
  const uid = cr.metadata.uid ?? options.uid ?? STAND_IN_UID;
  const withUid = { ...cr, metadata: { ...cr.metadata, uid } };
  if (options.validateCustomResource ?? true) {
    operator.parseCustomResource(withUid); // zod's messages first, as renderCustomResource would throw them
    assertCustomResourceAccepted(operator, withUid);
  }
  const inputs = { observed: options.observed, related: relatedLookupOf(options.related ?? []) };
  const output = withOperatorStatus(operator, withUid, renderCustomResource(operator, withUid, inputs), inputs);
  if (options.validateChildren ?? true) assertChildrenAccepted(output.children);
  const name = (key: string) => ObjectRef.fromKey(key).toString();
  return {
    children: output.children,
    waitsFor: Object.fromEntries([...output.waitsFor].map(([key, deps]) => [name(key), deps.map(name)])),
    readyWhen: [...output.readyWhen.keys()].map(name).sort(),
    ...(output.status === undefined ? {} : { status: output.status }),
    ...(output.requeueAfterMs === undefined ? {} : { requeueAfterMs: output.requeueAfterMs }),
  };
}

/**
 * Renders every example of an operator, keyed by `namespace/name` (or `name` for cluster-scoped
 * examples, with namespace `default` applied to namespaced ones that have none), in `examples` order.
 * `options` apply to every example.
 *
 * @param options.related @default the related objects beside the CRs in the operator's `examples`
 *   (`exampleRelated`): the world the samples were written for
 * @throws CustomResourceValidationError / RenderError for the first example that fails, like renderChildren
 */
export function renderExamplesForSnapshot(
  operator: RenderableOperator & { readonly examples: readonly CustomResource<unknown>[]; readonly exampleRelated?: readonly KubeResource[] },
  options: RenderForSnapshotOptions = {},
): Record<string, Manifest[]> {
  const out: Record<string, Manifest[]> = {};
  const withWorld = { ...options, related: options.related ?? operator.exampleRelated };
  for (const example of operator.examples) {
    const valid = operator.parseCustomResource(example);
    const key = valid.metadata.namespace ? `${valid.metadata.namespace}/${valid.metadata.name}` : valid.metadata.name;
    out[key] = renderForSnapshot(operator, example, withWorld);
  }
  return out;
}

/**
 * The operator's synthesized install manifests (Namespace, CRD, RBAC, Deployment) as plain JSON, in
 * synth order. `operator` is the Operator construct (any cdk8s Chart works).
 *
 * @throws whatever the chart's `toJson()` throws, e.g. OperatorConfigError when `deployment.image` is unset
 */
export function synthForSnapshot(operator: { toJson(): unknown[] }): unknown[] {
  return JSON.parse(JSON.stringify(operator.toJson())) as unknown[];
}
