// 'cdk8s-operator-sdk/testing': what SDK users test their operators with. Re-exports only.

export { renderForSnapshot, renderExamplesForSnapshot, synthForSnapshot, SNAPSHOT_UID } from './render-snapshot.js';
export {
  startControlPlane,
  installCRDs,
  stopControlPlaneFromState,
  type ControlPlane,
  type ControlPlaneOptions,
  type ControlPlaneComponents,
} from './control-plane.js';
