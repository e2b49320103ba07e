// The root entry, `cdk8s-operator-sdk`: the construct side. Re-exports only; internals stay unexported.
//
// Pure: no HTTP client, no `import.meta`, no top-level await, so it loads from CommonJS (`require`,
// ts-node, ts-jest) and from ESM alike. The run side is `cdk8s-operator-sdk/runtime`; test helpers are
// `cdk8s-operator-sdk/testing` (render snapshots) and `cdk8s-operator-sdk/testing/control-plane`.

export { Operator, type OperatorProps, type FinalizeContext, type AdoptionPolicy } from './operator/operator.js';
export { spokeVersion, type SpokeVersion, type SpokeVersionProps, type ConvertibleObject, type ConvertedParts } from './operator/versions/versions.js';
export { ConversionError, CONVERSION_DATA_ANNOTATION } from './operator/versions/conversion.js';
export type { AdmissionContext, AdmissionObjectReference, FieldViolation } from './operator/admission.js';
export type { WebhookProps, WebhookCertificates } from './operator/manifests/webhook-configurations.js';
export type { CustomResource, CustomResourceMetadata } from './operator/custom-resource.js';
export type { ChildKind, ResolvedKind } from './operator/kinds.js';
export type { PrinterColumn, Condition } from './operator/schema/crd.js';
export type { OperatorDeploymentProps, OperatorResources, ResourceQuantities } from './operator/manifests/operator-deployment.js';
export {
  renderChildren,
  renderCustomResource,
  relatedLookupOf,
  type Manifest,
  type OwnerReference,
  type RenderInputs,
  type RenderOutput,
  type RelatedLookup,
} from './operator/render/render-children.js';
export { ObjectRef, type ObjectRefParts, type ObjectLike, type ObjectEntry, type CacheKeyParts } from './operator/object-ref.js';
export { ObservedChildren, type RenderContext, type KubeResource, type KindSelector } from './operator/render/render-context.js';
export { type RenderResult, type RequeueDelay, MIN_REQUEUE_AFTER_MS, MAX_REQUEUE_AFTER_MS } from './operator/render/render-result.js';
export { dependsOn, readyWhen, type ReadyPredicate } from './operator/render/child-ordering.js';
export type { RelatedDeclaration, RelatedCacheScope, NameReference, SelectorReference, ObjectReferenceInput, ResolvedReference } from './operator/render/related.js';
export { listMap, listSet, celRule, type CelRule } from './operator/schema/structural-schema.js';
export { MANAGED_BY_LABEL, INSTANCE_LABEL, NAME_LABEL, OWNER_UID_LABEL } from './operator/render/labels.js';
export { selectorLabels } from './operator/render/selector-labels.js';
export {
  OperatorError,
  CustomResourceValidationError,
  RenderError,
  StructuralSchemaError,
  OperatorConfigError,
  UnknownKindError,
  TerminalError,
  type FieldError,
} from './operator/errors.js';
