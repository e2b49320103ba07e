/**
 * The memcached example's two versions: conversion round trips (property-based, fast-check), the
 * v1alpha1 update that must keep the v1beta1-only field, and the multi-version CRD and webhook objects
 * it synthesizes.
 */
import { App } from 'cdk8s';
import fc from 'fast-check';
import { CONVERSION_DATA_ANNOTATION } from 'cdk8s-operator-sdk';
import { MemcachedOperator } from '../../operators/memcached/index.js';

const operator = new MemcachedOperator(new App());
const V1ALPHA1 = 'cache.example.com/v1alpha1';
const V1BETA1 = 'cache.example.com/v1beta1';

// No empty maps: the API server omits empty labels and annotations (Go's omitempty), so objects never carry them.
const metadata = fc.record(
  {
    name: fc.stringMatching(/^[a-z]([a-z0-9-]{0,20}[a-z0-9])?$/),
    namespace: fc.constantFrom('default', 'team-a'),
    labels: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z0-9]{0,8}$/), { minKeys: 1, maxKeys: 2 }),
    annotations: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}\.io\/[a-z]{1,8}$/), fc.string({ maxLength: 10 }), { minKeys: 1, maxKeys: 2 }),
  },
  { requiredKeys: ['name', 'namespace'] },
);
// The runtime's status fields and the hub's own (nodes): every version holds both as they are.
const conditions = fc.option(
  fc.record(
    { observedGeneration: fc.nat(), conditions: fc.constant([{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }]), nodes: fc.array(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { maxLength: 3 }) },
    { requiredKeys: ['observedGeneration', 'conditions'] },
  ),
  { nil: undefined },
);
const hub = fc.record(
  { apiVersion: fc.constant(V1BETA1), kind: fc.constant('Memcached'), metadata, spec: fc.record({ replicas: fc.integer({ min: 1, max: 100 }), cache: fc.record({ memoryMiB: fc.integer({ min: 16, max: 64 }) }) }), status: conditions },
  { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'] },
);
const spoke = fc.record(
  { apiVersion: fc.constant(V1ALPHA1), kind: fc.constant('Memcached'), metadata, spec: fc.record({ size: fc.integer({ min: 1, max: 100 }) }), status: conditions },
  { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'] },
);

describe('Memcached versions', () => {
  test('GIVEN any v1beta1 Memcached WHEN converted to v1alpha1 and back THEN it is the same object', () => {
    fc.assert(
      fc.property(hub, (obj) => {
        const down = operator.convert(obj, V1ALPHA1);
        expect(down.apiVersion).toBe(V1ALPHA1);
        expect(down.status).toEqual(obj.status); // v1alpha1 holds the hub's status as it is
        expect(operator.convert(down, V1BETA1)).toEqual(obj);
      }),
    );
  });

  test('GIVEN any v1alpha1 Memcached WHEN converted to v1beta1 and back THEN it is the same object', () => {
    fc.assert(
      fc.property(spoke, (obj) => {
        const up = operator.convert(obj, V1BETA1);
        expect(up.apiVersion).toBe(V1BETA1);
        expect(operator.convert(up, V1ALPHA1)).toEqual(obj);
      }),
    );
  });

  test('GIVEN any v1beta1 Memcached read as v1alpha1 WHEN a v1alpha1 client changes size THEN the hub gets the new replicas and keeps cache.memoryMiB', () => {
    fc.assert(
      fc.property(hub, fc.integer({ min: 1, max: 100 }), (obj, size) => {
        const read = operator.convert(obj, V1ALPHA1) as { spec: { size: number } };
        const written = { ...read, spec: { ...read.spec, size } };
        const stored = operator.convert(written, V1BETA1) as { spec: { replicas: number; cache: { memoryMiB: number } }; metadata: { annotations?: Record<string, string> } };
        expect(stored.spec).toEqual({ replicas: size, cache: obj.spec.cache });
        expect(stored.metadata.annotations?.[CONVERSION_DATA_ANNOTATION]).toBeUndefined();
      }),
    );
  });

  test('GIVEN a v1beta1 Memcached with the default cache WHEN read as v1alpha1 THEN no conversion-data annotation is added (nothing is lost)', () => {
    const obj = { apiVersion: V1BETA1, kind: 'Memcached', metadata: { name: 'a', namespace: 'default' }, spec: { replicas: 2, cache: { memoryMiB: 64 } } };
    expect(operator.convert(obj, V1ALPHA1)).toEqual({ apiVersion: V1ALPHA1, kind: 'Memcached', metadata: { name: 'a', namespace: 'default' }, spec: { size: 2 } });
  });

  test('GIVEN a v1beta1 Memcached with memoryMiB 32 WHEN read as v1alpha1 THEN the hub spec travels in the conversion-data annotation', () => {
    const obj = { apiVersion: V1BETA1, kind: 'Memcached', metadata: { name: 'a', namespace: 'default' }, spec: { replicas: 2, cache: { memoryMiB: 32 } } };
    const down = operator.convert(obj, V1ALPHA1) as { metadata: { annotations: Record<string, string> }; spec: unknown };
    expect(down.spec).toEqual({ size: 2 });
    expect(JSON.parse(down.metadata.annotations[CONVERSION_DATA_ANNOTATION]!)).toEqual({ spec: { cache: { memoryMiB: 32 }, replicas: 2 } });
  });

  test('GIVEN a stored v1alpha1 object that today\'s rules reject WHEN converted THEN it converts best effort (defaults, no validation) and the warning names the object, the version and the field', () => {
    const bad = { apiVersion: V1ALPHA1, kind: 'Memcached', metadata: { name: 'bad', namespace: 'default' }, spec: { size: 0 } };
    const warnings: string[] = [];
    const up = operator.convert(bad, V1BETA1, { onBestEffort: (m) => warnings.push(m) });
    expect(up.spec).toEqual({ replicas: 0, cache: { memoryMiB: 64 } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Memcached default\/bad: converted to cache.example.com\/v1beta1 best effort: cache.example.com\/v1alpha1 spec read without validation: spec.size: Too small/);
    expect(operator.convert(up, V1ALPHA1)).toEqual(bad);
  });

  test('GIVEN the operator WHEN synthesized THEN one CRD lists both versions with webhook conversion, v1beta1 stored and v1alpha1 deprecated', () => {
    const crd = operator.customResourceDefinition.toJson() as { spec: { versions: Record<string, unknown>[]; conversion: unknown } };
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false])).toEqual([
      ['v1beta1', true, true, false],
      ['v1alpha1', true, false, true],
    ]);
    expect(crd.spec.versions[1]!.deprecationWarning).toMatch(/use cache.example.com\/v1beta1/);
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { service: { namespace: 'memcached-operator-system', name: 'memcached-operator-webhook', path: '/convert', port: 443 } },
      },
    });
    const columns = crd.spec.versions.map((v) => (v.additionalPrinterColumns as { name: string; jsonPath: string }[])[0]);
    expect(columns).toEqual([expect.objectContaining({ name: 'Replicas', jsonPath: '.spec.replicas' }), expect.objectContaining({ name: 'Size', jsonPath: '.spec.size' })]);
  });

  test('GIVEN the operator WHEN synthesized THEN the webhook configurations use matchPolicy Equivalent, sideEffects None, failurePolicy Fail on the hub version', () => {
    const objects = operator.toJson() as { kind: string; metadata: { name: string }; webhooks?: Record<string, unknown>[]; spec?: { template?: { spec: { containers: { ports: unknown[] }[] } } } }[];
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const config = objects.find((o) => o.kind === kind)!;
      expect(config.webhooks).toHaveLength(1);
      expect(config.webhooks![0]).toMatchObject({
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        admissionReviewVersions: ['v1'],
        rules: [{ apiGroups: ['cache.example.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['memcacheds'] }],
      });
    }
    expect(objects.find((o) => o.kind === 'Service' && o.metadata.name === 'memcached-operator-webhook')).toBeDefined();
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    expect(deployment.spec!.template!.spec.containers[0]!.ports).toContainEqual({ name: 'webhook-server', containerPort: 9443, protocol: 'TCP' });
    const clusterRole = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'memcached-operator-webhook') as unknown as { rules: unknown[] };
    expect(clusterRole.rules).toContainEqual({ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['memcacheds.cache.example.com'], verbs: ['get', 'list', 'patch', 'watch'] });
  });

  test('GIVEN the operator WHEN synthesized THEN the webhook Service routes to Ready pods only, and the pod is Ready by /readyz (which, serving /convert, waits for the webhook server, not the caches)', () => {
    const objects = operator.toJson() as { kind: string; metadata: { name: string }; spec?: Record<string, any> }[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'memcached-operator-webhook')!;
    // No publishNotReadyAddresses: a starting or terminating pod gets no conversion or admission traffic.
    expect(service.spec).toEqual({ selector: expect.any(Object), ports: [{ name: 'webhook', port: 443, targetPort: 9443, protocol: 'TCP' }] });
    const container = objects.find((o) => o.kind === 'Deployment')!.spec!.template.spec.containers[0];
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'probes' });
    expect(container.args).toEqual(expect.arrayContaining(['--webhook-bind-address=:9443', '--health-probe-bind-address=:8081']));
    const podLabels = objects.find((o) => o.kind === 'Deployment')!.spec!.template.metadata.labels as Record<string, string>;
    expect(podLabels).toMatchObject(service.spec!.selector as Record<string, string>);
  });
});

describe('Memcached versions with a damaged conversion-data annotation', () => {
  test.each([['not json'], ['{"spec":{"replicas":0}}'], ['{"nospec":1}']])('GIVEN annotation %p WHEN a v1alpha1 object converts to v1beta1 THEN the spoke alone decides and the annotation is dropped', (saved) => {
    const obj = { apiVersion: V1ALPHA1, kind: 'Memcached', metadata: { name: 'a', namespace: 'default', annotations: { [CONVERSION_DATA_ANNOTATION]: saved } }, spec: { size: 4 } };
    expect(operator.convert(obj, V1BETA1)).toEqual({ apiVersion: V1BETA1, kind: 'Memcached', metadata: { name: 'a', namespace: 'default' }, spec: { replicas: 4, cache: { memoryMiB: 64 } } });
  });
});
