/**
 * How the example operators run in a cluster: from this repository's own image (the Dockerfile at its
 * root, WORKDIR /app), which holds the repository itself rather than a project that installed the SDK.
 * So the command is the CLI of the checkout (`bin/cdk8s-operator.js`, not
 * `node_modules/cdk8s-operator-sdk/bin/…`) and the module is operators/index.ts, which tsx loads.
 */
import type { OperatorDeploymentProps } from 'cdk8s-operator-sdk';

/** `deployment` of every example operator. */
export const EXAMPLE_DEPLOYMENT: OperatorDeploymentProps = {
  image: 'cdk8s-operator-sdk-examples:0.1.0',
  module: 'operators/index.ts',
  command: ['node', 'bin/cdk8s-operator.js'],
};
