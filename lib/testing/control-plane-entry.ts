// `cdk8s-operator-sdk/testing/control-plane`: a real etcd + kube-apiserver (+ controller manager,
// scheduler and a kwok fake node) for integration tests. Re-exports only. ESM only (client-node 1.4).

export {
  startControlPlane,
  installCRDs,
  stopControlPlaneFromState,
  type ControlPlane,
  type ControlPlaneOptions,
  type ControlPlaneComponents,
} from './control-plane.js';
export { serveWebhooksLocally, type LocalWebhooks, type LocalWebhooksOptions } from './local-webhooks.js';
export type { InstallCrdsOptions, LocalWebhookOptions } from './install-crds.js';
