// The public surface of cdk8s-operator-sdk. Re-exports only; internals stay unexported.
// Test helpers (local control plane, render snapshots) live in the 'cdk8s-operator-sdk/testing' entry.

export { Operator, type OperatorProps, type FinalizeContext } from './operator/operator.js';
export type { CustomResource, CustomResourceMetadata } from './operator/custom-resource.js';
export type { ChildKind, ResolvedKind } from './operator/kinds.js';
export type { PrinterColumn, Condition } from './operator/crd.js';
export type { OperatorDeploymentProps, OperatorResources, ResourceQuantities } from './operator/operator-deployment.js';
export { renderChildren, type Manifest, type OwnerReference } from './operator/render-children.js';
export { listMap, listSet, celRule, type CelRule } from './operator/structural-schema.js';
export { MANAGED_BY_LABEL, INSTANCE_LABEL, OWNER_UID_LABEL } from './operator/labels.js';
export {
  OperatorError,
  CustomResourceValidationError,
  RenderError,
  StructuralSchemaError,
  OperatorConfigError,
  UnknownKindError,
  type FieldError,
} from './operator/errors.js';

// Run side: the shared reconcile runtime. `cdk8s-operator run` and the operator image use runOperators().
export { Manager, runOperators, type ManagerOptions, type RunOperatorsOptions, type RunnableOperator } from './runtime/manager.js';
export { TerminalError } from './runtime/errors.js';
export type { ReconcileResult } from './runtime/reconciler.js';
export { DESIRED_HASH_ANNOTATION } from './runtime/child-diff.js';
