/**
 * The secure-metrics manifests of metrics-objects.ts: names, the Service's port, the NetworkPolicies.
 */
import { metricsNames, metricsNetworkPolicies, metricsService, metricsServiceDnsNames } from '../../lib/operator/manifests/metrics-objects.js';

const labels = { 'app.kubernetes.io/name': 'web-operator' };

test('the names of the metrics objects and the metrics Service DNS names follow the operator name', () => {
  expect(metricsNames('web-operator')).toEqual({
    service: 'web-operator-metrics-service',
    reader: 'web-operator-metrics-reader',
    auth: 'web-operator-metrics-auth',
    metricsPolicy: 'web-operator-allow-metrics-traffic',
    webhookPolicy: 'web-operator-allow-webhook-traffic',
  });
  expect(metricsServiceDnsNames('web-operator', 'web-system')).toEqual(['web-operator-metrics-service.web-system.svc', 'web-operator-metrics-service.web-system.svc.cluster.local']);
  expect(metricsService('web-operator', 'web-system', labels, labels)).toMatchObject({ spec: { ports: [{ name: 'https', port: 8443, targetPort: 'metrics' }] } });
});

test('GIVEN a webhook port THEN a second NetworkPolicy admits webhook traffic on it from any source; without, only the metrics one', () => {
  const withWebhook = metricsNetworkPolicies({ operatorName: 'web-operator', namespace: 'web-system', podLabels: labels, labels, webhookPort: 9443 });
  expect(withWebhook.map((p) => (p as { metadata: { name: string } }).metadata.name)).toEqual(['web-operator-allow-metrics-traffic', 'web-operator-allow-webhook-traffic']);
  expect((withWebhook[1] as { spec: unknown }).spec).toEqual({ podSelector: { matchLabels: labels }, policyTypes: ['Ingress'], ingress: [{ ports: [{ port: 9443, protocol: 'TCP' }] }] });
  expect(metricsNetworkPolicies({ operatorName: 'web-operator', namespace: 'web-system', podLabels: labels, labels })).toHaveLength(1);
});
