/**
 * The operator's own Namespace as a child construct of the `Operator` chart, labelled
 * `pod-security.kubernetes.io/enforce: restricted` (the operator's pods meet the "restricted" Pod Security
 * Standard).
 * @see https://kubernetes.io/docs/concepts/security/pod-security-admission/
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';

/** Props of an {@link OperatorNamespace}. */
export interface OperatorNamespaceProps {
  /** The namespace's name (`deployment.namespace` of the operator), a DNS-1123 label. */
  readonly name: string;
  /** The operator's labels (labels.ts `operatorLabels`). */
  readonly labels: Record<string, string>;
}

/** The v1 Namespace the operator runs in. */
export class OperatorNamespace extends ApiObject {
  constructor(scope: Construct, id: string, props: OperatorNamespaceProps) {
    super(scope, id, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: props.name, labels: { ...props.labels, 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
  }
}
