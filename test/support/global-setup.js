/**
 * Starts one local control plane for the whole jest run (etcd, kube-apiserver, controller manager,
 * scheduler and a kwok fake node). Test files reach it through `test/support/cluster.ts`; each test
 * works in a namespace of its own. Files that restart or break the control plane start their own.
 *
 * Plain JS on purpose: jest loads global setup outside its module mapper, so tsx loads our sources.
 */
import { register } from 'tsx/esm/api';

register();
const { startControlPlane } = await import('../../lib/testing/control-plane.ts');
const { TEST_KUBECONFIG_ENV } = await import('./cluster.ts');

export default async function globalSetup() {
  const started = Date.now();
  const plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  process.env[TEST_KUBECONFIG_ENV] = plane.kubeconfigPath;
  globalThis.__controlPlane = plane;
  console.log(`\nlocal control plane ready in ${Date.now() - started} ms: ${plane.server}`);
}
