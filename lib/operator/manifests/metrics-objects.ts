/**
 * The objects that make the operator's `/metrics` secure and scrapable, as Kubebuilder scaffolds them
 * (config/rbac/metrics_*.yaml, config/default/metrics_service.yaml, config/network-policy):
 *
 * - `<operator>-metrics-service`: a Service in the operator's namespace, port `https` 8443 → the
 *   container's `metrics` port; a Prometheus ServiceMonitor selects it and scrapes port `https`;
 * - `<operator>-metrics-auth`: a ClusterRole (+ ClusterRoleBinding to the operator's ServiceAccount) with
 *   create on `tokenreviews` (authentication.k8s.io) and `subjectaccessreviews` (authorization.k8s.io),
 *   what the runtime's metrics server sends to review each scrape (lib/runtime/metrics/metrics-auth.ts). A
 *   ClusterRole of its own, not rules in the operator's role: both resources are cluster-scoped, which
 *   the Role of an operator with `watchNamespace` cannot grant;
 * - `<operator>-metrics-reader`: a ClusterRole with `get` on the non-resource URL `/metrics`, bound to
 *   nobody: bind it to the scraper's ServiceAccount (Prometheus's);
 * - with `networkPolicies`: `<operator>-allow-metrics-traffic`, ingress to the operator's pods on 8443
 *   only from namespaces labelled `metrics: enabled`; and, for an operator with webhooks,
 *   `<operator>-allow-webhook-traffic` on 9443 from anywhere (the API server calls it, and is no pod a
 *   selector can name; narrow it with an `ipBlock` where the API server's addresses are known). Once a
 *   NetworkPolicy selects the pods, other ingress to them is dropped (the kubelet's probes excepted by
 *   most network plugins).
 *
 * Pure manifests (no cdk8s), so that the runtime can import the names.
 *
 * @see https://book.kubebuilder.io/reference/metrics.html
 * @see https://kubernetes.io/docs/reference/access-authn-authz/rbac/#role-and-clusterrole (nonResourceURLs)
 * @see https://kubernetes.io/docs/concepts/services-networking/network-policies/
 */

/** Port of the secure `/metrics` (Kubebuilder's). */
export const SECURE_METRICS_PORT = 8443;
/** The non-resource URL a scraper needs `get` on. */
export const METRICS_PATH = '/metrics';

/** Names of the metrics objects of operator `operatorName`. */
export function metricsNames(operatorName: string): { service: string; reader: string; auth: string; metricsPolicy: string; webhookPolicy: string } {
  return {
    service: `${operatorName}-metrics-service`,
    reader: `${operatorName}-metrics-reader`,
    auth: `${operatorName}-metrics-auth`,
    metricsPolicy: `${operatorName}-allow-metrics-traffic`,
    webhookPolicy: `${operatorName}-allow-webhook-traffic`,
  };
}

/** DNS names of the metrics Service, which a self-signed metrics certificate holds. */
export function metricsServiceDnsNames(operatorName: string, namespace: string): string[] {
  const service = metricsNames(operatorName).service;
  return [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];
}

/** The metrics Service: port `https` 8443 to the container port named `metrics`. */
export function metricsService(operatorName: string, namespace: string, selector: Record<string, string>, labels: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: metricsNames(operatorName).service, namespace, labels: { ...labels } },
    spec: { selector: { ...selector }, ports: [{ name: 'https', port: SECURE_METRICS_PORT, targetPort: 'metrics', protocol: 'TCP' }] },
  };
}

/** Rules of `<operator>-metrics-auth`: create TokenReviews and SubjectAccessReviews. */
export function metricsAuthRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}

/** Rules of `<operator>-metrics-reader`: get on `/metrics`. */
export function metricsReaderRules(): { nonResourceURLs: string[]; verbs: string[] }[] {
  return [{ nonResourceURLs: [METRICS_PATH], verbs: ['get'] }];
}

/**
 * The NetworkPolicies of `networkPolicies`: metrics from namespaces labelled `metrics: enabled`; with
 * `webhookPort`, webhook traffic from anywhere.
 */
export function metricsNetworkPolicies(options: {
  readonly operatorName: string;
  readonly namespace: string;
  readonly podLabels: Record<string, string>;
  readonly labels: Record<string, string>;
  readonly webhookPort?: number;
}): Record<string, unknown>[] {
  const names = metricsNames(options.operatorName);
  const policy = (name: string, ingress: Record<string, unknown>) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: options.namespace, labels: { ...options.labels } },
    spec: { podSelector: { matchLabels: { ...options.podLabels } }, policyTypes: ['Ingress'], ingress: [ingress] },
  });
  const policies = [
    policy(names.metricsPolicy, { from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }], ports: [{ port: SECURE_METRICS_PORT, protocol: 'TCP' }] }),
  ];
  if (options.webhookPort !== undefined) policies.push(policy(names.webhookPolicy, { ports: [{ port: options.webhookPort, protocol: 'TCP' }] }));
  return policies;
}
