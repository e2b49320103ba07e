import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { OperatorConfigError } from '../../lib/operator/errors.js';
import { Operator, type FieldViolation } from '../../lib/operator/operator.js';
import { spokeVersion } from '../../lib/operator/versions/versions.js';
import type { WebhookProps } from '../../lib/operator/manifests/webhook-configurations.js';

const Hub = z.object({ replicas: z.int() });
const V1 = spokeVersion({ hubSpec: Hub, name: 'v1alpha1', spec: z.object({ size: z.int() }), toHub: (o) => ({ spec: { replicas: o.spec.size } }), fromHub: (h) => ({ spec: { size: h.spec.replicas } }) });

class Guarded extends Operator<typeof Hub> {
  constructor(scope: Construct, webhook?: WebhookProps, versions = [V1]) {
    super(scope, 'guarded', { group: 'demo.example.com', version: 'v1', kind: 'Guarded', spec: Hub, versions, webhook });
  }
  render(): void {}
  override validateAdmission(): FieldViolation[] {
    return [];
  }
}

type Obj = { kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; spec?: Record<string, unknown>; webhooks?: Record<string, unknown>[]; rules?: unknown[] };
/** The synthesized objects, but the Deployment (which needs deployment.image, not the point here). */
const objects = (operator: Operator) =>
  operator.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c) && c.kind !== 'Deployment').map((o) => o.toJson() as Obj);

describe('operator webhooks at synth', () => {
  test('GIVEN cert-manager certificates WHEN synthesized THEN an Issuer and a Certificate for the webhook Service, and inject-ca-from on the CRD and configuration', () => {
    const all = objects(new Guarded(new App(), { certificates: 'cert-manager', failurePolicy: 'Ignore', timeoutSeconds: 5 }));
    const certificate = all.find((o) => o.kind === 'Certificate')!;
    expect(certificate.spec).toMatchObject({
      secretName: 'guarded-operator-webhook-tls',
      dnsNames: ['guarded-operator-webhook.guarded-operator-system.svc', 'guarded-operator-webhook.guarded-operator-system.svc.cluster.local'],
      issuerRef: { kind: 'Issuer', name: 'guarded-operator-webhook' },
    });
    expect(all.find((o) => o.kind === 'Issuer')!.spec).toEqual({ selfSigned: {} });
    const inject = { 'cert-manager.io/inject-ca-from': 'guarded-operator-system/guarded-operator-webhook' };
    expect(all.find((o) => o.kind === 'CustomResourceDefinition')!.metadata.annotations).toEqual(inject);
    const validating = all.find((o) => o.kind === 'ValidatingWebhookConfiguration')!;
    expect(validating.metadata.annotations).toEqual(inject);
    expect(validating.webhooks![0]).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 5, clientConfig: { service: { path: '/validate-demo-example-com-v1-guarded' } } });
    expect(all.some((o) => o.kind === 'MutatingWebhookConfiguration')).toBe(false);
    // cert-manager writes the Secret and the caBundles: the operator only reads its Secret.
    expect(all.find((o) => o.kind === 'Role' && o.metadata.name === 'guarded-operator-webhook')!.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['guarded-operator-webhook-tls'], verbs: ['get'] },
    ]);
    expect(all.some((o) => o.kind === 'ClusterRole' && o.metadata.name === 'guarded-operator-webhook')).toBe(false);
  });

  test('GIVEN self-managed certificates WHEN synthesized THEN RBAC allows exactly the Secret and the caBundle writes', () => {
    const all = objects(new Guarded(new App()));
    expect(all.some((o) => o.kind === 'Certificate')).toBe(false);
    expect(all.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'guarded-operator-webhook')!.rules).toEqual([
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['guardeds.demo.example.com'], verbs: ['get', 'list', 'patch', 'watch'] },
      { apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: ['guarded-operator-webhook'], verbs: ['get', 'list', 'patch', 'watch'] },
    ]);
  });

  test.each([
    [{ timeoutSeconds: 31 }, /webhook.timeoutSeconds must be an integer from 1 to 30, got 31/],
    [{ certificates: 'vault' as never }, /webhook.certificates must be 'self-managed' or 'cert-manager'/],
    [{ reads: [{ apiVersion: 'example.com/v1', kind: 'Thing' }] }, /webhook.reads\[0\]: kind Thing/],
  ])('GIVEN bad webhook props %p WHEN built THEN an OperatorConfigError names the prop', (webhook, message) => {
    expect(() => new Guarded(new App(), webhook)).toThrow(OperatorConfigError);
    expect(() => new Guarded(new App(), webhook)).toThrow(message);
  });
});
