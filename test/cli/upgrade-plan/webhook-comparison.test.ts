import { compareWebhooks } from '../../../lib/cli/upgrade-plan/webhook-comparison.js';

const next = (operations: string[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'widget-operator' },
  webhooks: [{ name: 'widgets.example.com', clientConfig: { service: { name: 'widget-operator-webhook', namespace: 'ops', path: '/validate' } }, rules: [{ operations, apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] }] }],
});
/** As the API server returns it: defaults filled in, the CA bundle the operator wrote. */
const installed = (operations: string[]) => {
  const object = next(operations);
  return { ...object, webhooks: object.webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: 'LS0t' }, failurePolicy: 'Fail', timeoutSeconds: 10, sideEffects: 'None' })) };
};

test('GIVEN the installed configuration with server defaults and a CA bundle THEN unchanged; GIVEN another rule THEN update naming the path; GIVEN none THEN create', () => {
  expect(compareWebhooks(next(['CREATE']), installed(['CREATE']))).toEqual({ kind: 'ValidatingWebhookConfiguration', name: 'widget-operator', action: 'unchanged' });
  expect(compareWebhooks(next(['CREATE', 'UPDATE']), installed(['CREATE']))).toEqual({ kind: 'ValidatingWebhookConfiguration', name: 'widget-operator', action: 'update', path: 'webhooks.0' }); // the first webhook not found among the installed ones
  expect(compareWebhooks(next(['CREATE']), undefined)).toMatchObject({ action: 'create' });
});
