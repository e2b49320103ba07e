/**
 * The help of `--bin-dir` (`env up`, `dev`): where the control plane's binaries come from without it,
 * in the terms a user of the package has (flags, variables, the cache dir), not this repository's paths.
 * The order is resolveControlPlaneBinaries' (lib/testing/control-plane-binaries.ts).
 */
import { join } from 'node:path';
import { controlPlaneCacheRoot } from '../testing/control-plane-binaries.js';

/**
 * `--bin-dir`'s help text.
 * @param env read for `CDK8S_OPERATOR_SDK_CACHE` and `HOME`, to name the cache dir; default `process.env`
 */
export function binDirHelp(env: NodeJS.ProcessEnv = process.env): string {
  return (
    'directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok ' +
    '(default: etcd and kube-apiserver from KUBEBUILDER_ASSETS when set, the rest from the cache ' +
    `${join(controlPlaneCacheRoot(env), 'bin')}/ (CDK8S_OPERATOR_SDK_CACHE), used without a download when it holds them; ` +
    'what it lacks is downloaded, or built when Go is installed: CDK8S_OPERATOR_SDK_BINARIES=download|build chooses)'
  );
}
