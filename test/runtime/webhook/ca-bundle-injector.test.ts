import { caBundlePatch, caBundleTargetList } from '../../../lib/runtime/webhook/ca-bundle-injector.js';

const [crd, validating] = caBundleTargetList({ customResourceDefinitions: ['widgets.example.com'], validatingWebhookConfigurations: ['w'], mutatingWebhookConfigurations: [] });

describe('caBundlePatch', () => {
  test('GIVEN a CRD whose conversion clientConfig lacks the CA THEN one add of that field only; WHEN it holds it THEN nothing', () => {
    const obj = { spec: { conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { name: 's', namespace: 'n' } } } } } };
    expect(caBundlePatch(crd!.resource, obj, 'Q0E=')).toEqual([{ op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: 'Q0E=' }]);
    obj.spec.conversion.webhook.clientConfig = { ...obj.spec.conversion.webhook.clientConfig, caBundle: 'Q0E=' } as never;
    expect(caBundlePatch(crd!.resource, obj, 'Q0E=')).toEqual([]);
  });

  test('GIVEN a CRD without a conversion webhook THEN nothing (its conversion is not ours to add)', () => {
    expect(caBundlePatch(crd!.resource, { spec: { conversion: { strategy: 'None' } } }, 'Q0E=')).toEqual([]);
  });

  test('GIVEN a configuration with one webhook lacking and one holding the CA THEN a guarded add for the first only', () => {
    const obj = { webhooks: [{ name: 'a.example.com', clientConfig: { url: 'https://x' } }, { name: 'b.example.com', clientConfig: { caBundle: 'Q0E=' } }] };
    expect(caBundlePatch(validating!.resource, obj, 'Q0E=')).toEqual([
      { op: 'test', path: '/webhooks/0/name', value: 'a.example.com' },
      { op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: 'Q0E=' },
    ]);
  });
});
