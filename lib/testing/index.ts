// `cdk8s-operator-sdk/testing`: pure helpers SDK users snapshot-test their operators with. Re-exports only.
// Loads from CommonJS and ESM (no HTTP client). The local control plane is in
// `cdk8s-operator-sdk/testing/control-plane` (ESM only).

export {
  renderForSnapshot,
  renderResultForSnapshot,
  renderExamplesForSnapshot,
  synthForSnapshot,
  STAND_IN_UID,
  type RenderForSnapshotOptions,
  type RenderResultSnapshot,
} from './render-snapshot.js';
export { ChildRefusedError, refusedChildrenProblems } from '../validator/child-refused-error.js';
export { ValidatorLoadError } from '../validator/validator-instance.js';
export {
  assertChildrenAccepted,
  validateBuiltInObjects,
  builtInValidatorKubernetesVersion,
  type BuiltInFieldError,
  type BuiltInVerdict,
} from '../validator/validate-built-in-objects.js';
export {
  validateCustomResource,
  validateCustomResources,
  type CustomResourceFieldError,
  type CustomResourceValidationInput,
  type CustomResourceVerdict,
} from '../validator/validate-custom-resource.js';
