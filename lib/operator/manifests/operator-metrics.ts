/**
 * The objects of the operator's secure `/metrics` as a child construct of the `Operator` chart: the
 * metrics Service scrapers reach, the `<operator>-metrics-auth` ClusterRole + binding (the reviews of each
 * scrape), the `<operator>-metrics-reader` ClusterRole scrapers are bound to and, with `networkPolicies`,
 * the NetworkPolicies. What each holds: metrics-objects.ts (pure manifests, which the runtime reads names from).
 * @see https://book.kubebuilder.io/reference/metrics.html
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { metricsAuthRules, metricsNames, metricsNetworkPolicies, metricsReaderRules, metricsService } from './metrics-objects.js';
import { roleWithBinding } from './operator-rbac.js';

/** Props of an {@link OperatorMetrics}. */
export interface OperatorMetricsProps {
  /** The operator's name (object names are `<operator>-metrics-…`). */
  readonly operatorName: string;
  /** The operator's namespace (of the Service and NetworkPolicies). */
  readonly namespace: string;
  /** The operator's ServiceAccount, bound to `<operator>-metrics-auth`. */
  readonly serviceAccountName: string;
  /** The labels of the operator's pods (the Service's selector, the NetworkPolicies' podSelector). */
  readonly podLabels: Record<string, string>;
  /** The operator's labels (labels.ts `operatorLabels`). */
  readonly labels: Record<string, string>;
  /** Whether to add the NetworkPolicies (`deployment.networkPolicies`). @default false */
  readonly networkPolicies?: boolean;
  /** The webhook server's container port, when the operator serves webhooks (a NetworkPolicy lets it in). @default no webhooks */
  readonly webhookPort?: number;
}

/** Metrics Service, metrics-auth ClusterRole + binding, metrics-reader ClusterRole, NetworkPolicies. */
export class OperatorMetrics extends Construct {
  constructor(scope: Construct, id: string, props: OperatorMetricsProps) {
    super(scope, id);
    const { operatorName, namespace, podLabels, labels } = props;
    const names = metricsNames(operatorName);
    const subjects = [{ kind: 'ServiceAccount', name: props.serviceAccountName, namespace }];
    new ApiObject(this, 'MetricsService', metricsService(operatorName, namespace, podLabels, labels) as { apiVersion: string; kind: string });
    roleWithBinding(this, 'MetricsAuthClusterRole', 'MetricsAuthClusterRoleBinding', { name: names.auth, labels, rules: metricsAuthRules(), subjects });
    new ApiObject(this, 'MetricsReaderClusterRole', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: names.reader, labels }, rules: metricsReaderRules() });
    if (props.networkPolicies) {
      metricsNetworkPolicies({ operatorName, namespace, podLabels, labels, webhookPort: props.webhookPort }).forEach(
        (policy, i) => new ApiObject(this, i === 0 ? 'MetricsNetworkPolicy' : 'WebhookNetworkPolicy', policy as { apiVersion: string; kind: string }),
      );
    }
  }
}
