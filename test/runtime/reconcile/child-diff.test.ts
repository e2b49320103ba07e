import { DESIRED_HASH_ANNOTATION, decideApply, desiredHash, storedForm, withDesiredHash } from '../../../lib/runtime/reconcile/child-diff.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { type FieldType, QUANTITY_SCHEMA, fieldTypeOfSchema } from '../../../lib/runtime/reconcile/field-type.js';

/**
 * A cut-down OpenAPI v3 `components.schemas` in the API server's shape (`allOf: [{$ref}]` wrappers,
 * quantities as `$ref` to Quantity); the real documents are checked in
 * test/integration/stored-form-differential.test.ts.
 */
const ref = (name: string) => ({ allOf: [{ $ref: `#/components/schemas/${name}` }] });
const schemas = {
  [QUANTITY_SCHEMA]: { type: 'string' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] },
  Deployment: { type: 'object', properties: { spec: ref('DeploymentSpec') } },
  DeploymentSpec: { type: 'object', properties: { replicas: { type: 'integer' }, template: ref('PodTemplateSpec') } },
  PodTemplateSpec: { type: 'object', properties: { spec: ref('PodSpec') } },
  PodSpec: { type: 'object', properties: { containers: { type: 'array', items: ref('Container') }, overhead: { type: 'object', additionalProperties: { $ref: `#/components/schemas/${QUANTITY_SCHEMA}` } } } },
  Container: { type: 'object', properties: { args: { type: 'array', items: { type: 'string' } }, resources: ref('ResourceRequirements') } },
  ResourceRequirements: {
    type: 'object',
    properties: {
      limits: { type: 'object', additionalProperties: { $ref: `#/components/schemas/${QUANTITY_SCHEMA}` } },
      requests: { type: 'object', additionalProperties: { $ref: `#/components/schemas/${QUANTITY_SCHEMA}` } },
    },
  },
  Service: { type: 'object', properties: { spec: ref('ServiceSpec') } },
  ServiceSpec: { type: 'object', properties: { ports: { type: 'array', items: ref('ServicePort') } } },
  ServicePort: { type: 'object', properties: { port: { type: 'integer' }, targetPort: ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString') } },
  ConfigMap: { type: 'object', properties: { data: { type: 'object', additionalProperties: { type: 'string' } } } },
};
const types = (kind: string): FieldType => fieldTypeOfSchema(schemas, kind)!;
const DEPLOYMENT = types('Deployment');

function deployment(overrides: { replicas?: number; memory?: string; cpu?: string; env?: { name: string; value: string }[] } = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'demo', labels: { app: 'web' } },
    spec: {
      ...(overrides.replicas === undefined ? {} : { replicas: overrides.replicas }),
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          automountServiceAccountToken: false,
          hostNetwork: false,
          containers: [
            {
              name: 'web',
              image: 'nginx:1.27',
              ports: [{ containerPort: 8080 }],
              resources: { limits: { memory: overrides.memory ?? '1Gi', cpu: overrides.cpu ?? '500m' } },
              ...(overrides.env ? { env: overrides.env } : {}),
            },
          ],
        },
      },
    },
  };
}

/** What the API server returns for an applied object: canonical quantities, defaults, other managers' fields. */
function asStored(desired: KubeObject, mutate: (o: any) => void = () => undefined): KubeObject {
  const o = JSON.parse(JSON.stringify(desired));
  o.metadata.uid = 'u1';
  o.metadata.resourceVersion = '42';
  o.metadata.annotations['deployment.kubernetes.io/revision'] = '1';
  o.spec.replicas ??= 1;
  o.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
  const pod = o.spec.template.spec;
  delete pod.hostNetwork; // omitempty zero value
  pod.restartPolicy = 'Always';
  pod.containers[0].ports[0].protocol = 'TCP';
  pod.containers[0].terminationMessagePath = '/dev/termination-log';
  const limits = pod.containers[0].resources.limits;
  if (limits.memory === '1073741824') limits.memory = '1Gi';
  if (limits.cpu === '0.5') limits.cpu = '500m';
  if (limits.cpu === '1000m') limits.cpu = '1';
  o.status = { observedGeneration: 1 };
  mutate(o);
  return o;
}

describe('decideApply', () => {
  test('GIVEN no actual object THEN missing', () => {
    expect(decideApply(withDesiredHash(deployment()), undefined)).toEqual({ reason: 'missing' });
  });

  test('GIVEN nothing changed (defaults, canonical quantities, other annotations) THEN no apply', () => {
    for (const d of [deployment(), deployment({ memory: '1073741824', cpu: '0.5' }), deployment({ cpu: '1000m' })]) {
      const desired = withDesiredHash(d);
      expect(decideApply(desired, asStored(desired), DEPLOYMENT)).toEqual({});
    }
  });

  test('GIVEN a field we set was edited (drift) THEN apply with the path', () => {
    const desired = withDesiredHash(deployment({ replicas: 2 }));
    const actual = asStored(desired, (o) => (o.spec.replicas = 5));
    expect(decideApply(desired, actual, DEPLOYMENT)).toEqual({ reason: 'drift', path: 'spec.replicas' });
    const image = asStored(desired, (o) => (o.spec.template.spec.containers[0].image = 'evil'));
    expect(decideApply(desired, image, DEPLOYMENT).reason).toBe('drift');
    const memory = asStored(desired, (o) => (o.spec.template.spec.containers[0].resources.limits.memory = '2Gi'));
    expect(decideApply(desired, memory, DEPLOYMENT).reason).toBe('drift');
  });

  test('GIVEN render stopped setting a field THEN apply (the hash changed although desired ⊆ actual)', () => {
    const before = withDesiredHash(deployment({ env: [{ name: 'A', value: '1' }] }));
    const after = withDesiredHash(deployment());
    expect(decideApply(after, asStored(before))).toEqual({ reason: 'render-changed' });
  });

  test('GIVEN a field render does not set changed by another manager THEN no apply', () => {
    const desired = withDesiredHash(deployment());
    const actual = asStored(desired, (o) => {
      o.spec.replicas = 7; // HPA
      o.spec.template.metadata.annotations = { 'kubectl.kubernetes.io/restartedAt': 'now' };
      o.spec.template.spec.containers.push({ name: 'sidecar', image: 'envoy' });
      o.spec.template.spec.containers[0].env = [{ name: 'INJECTED', value: 'x' }];
    });
    expect(decideApply(desired, actual, DEPLOYMENT)).toEqual({});
  });

  test('GIVEN a sidecar injected before our container THEN still contained', () => {
    const desired = withDesiredHash(deployment());
    const actual = asStored(desired, (o) => o.spec.template.spec.containers.unshift({ name: 'sidecar', image: 'envoy' }));
    expect(decideApply(desired, actual)).toEqual({});
  });

  test('GIVEN the hash annotation was removed by hand THEN apply', () => {
    const desired = withDesiredHash(deployment());
    const actual = asStored(desired, (o) => delete o.metadata.annotations[DESIRED_HASH_ANNOTATION]);
    expect(decideApply(desired, actual).reason).toBe('render-changed');
  });

  test('GIVEN an item appended to a list of scalars (args) THEN drift', () => {
    const desired = withDesiredHash({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', args: ['-a', '-b'] }] } });
    const actual = { ...desired, spec: { containers: [{ name: 'c', args: ['-a', '-b', '-c'], image: 'x' }] } };
    expect(decideApply(desired, actual)).toEqual({ reason: 'drift', path: 'spec.containers.0' });
    const same = { ...desired, spec: { containers: [{ name: 'c', args: ['-a', '-b'], image: 'x' }] } };
    expect(decideApply(desired, same)).toEqual({});
  });

  test('GIVEN no field types THEN quantities compare exactly (a re-serialised quantity is drift)', () => {
    const desired = withDesiredHash(deployment({ memory: '1073741824' }));
    expect(decideApply(desired, asStored(desired)).reason).toBe('drift');
    expect(decideApply(desired, asStored(desired), DEPLOYMENT)).toEqual({});
  });

  test('GIVEN a Quantity field outside a resources key (overhead) THEN compared by value, found from its type', () => {
    const desired = withDesiredHash(deployment());
    (desired.spec as any).template.spec.overhead = { cpu: '0.25', memory: '0.5Gi' };
    const actual = asStored(desired, (o) => (o.spec.template.spec.overhead = { cpu: '250m', memory: '512Mi' }));
    expect(decideApply(desired, actual, DEPLOYMENT)).toEqual({});
    const other = asStored(desired, (o) => (o.spec.template.spec.overhead = { cpu: '300m', memory: '512Mi' }));
    expect(decideApply(desired, other, DEPLOYMENT)).toEqual({ reason: 'drift', path: 'spec.template.spec.overhead.cpu' });
  });

  test('GIVEN sub-milli quantities THEN a ResourceList value is rounded up to milli (1.5n → 1m), a plain Quantity to nano (1.5n → 2n)', () => {
    const desired = withDesiredHash(deployment({ cpu: '1.5n' }));
    expect(decideApply(desired, asStored(desired, (o) => (o.spec.template.spec.containers[0].resources.limits.cpu = '1m')), DEPLOYMENT)).toEqual({});
    expect(decideApply(desired, asStored(desired, (o) => (o.spec.template.spec.containers[0].resources.limits.cpu = '2m')), DEPLOYMENT).reason).toBe('drift');
    const sizeLimit = fieldTypeOfSchema({ [QUANTITY_SCHEMA]: {}, V: { properties: { sizeLimit: ref(QUANTITY_SCHEMA) } } }, 'V')!;
    const volume = withDesiredHash({ apiVersion: 'v1', kind: 'V', metadata: { name: 'v' }, sizeLimit: '1.5n' });
    expect(decideApply(volume, { ...volume, sizeLimit: '2n' }, sizeLimit)).toEqual({});
    expect(decideApply(volume, { ...volume, sizeLimit: '1m' }, sizeLimit).reason).toBe('drift');
  });

  test('GIVEN a string that reads like a quantity in a plain string field THEN compared exactly', () => {
    const desired = withDesiredHash({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { memory: '1Gi', version: '1.0' } });
    expect(decideApply(desired, { ...desired, data: { memory: '1073741824', version: '1.0' } }, types('ConfigMap'))).toEqual({ reason: 'drift', path: 'data.memory' });
    expect(decideApply(desired, { ...desired, data: { memory: '1Gi', version: '1' } }, types('ConfigMap'))).toEqual({ reason: 'drift', path: 'data.version' });
  });

  test('int-or-string keeps its JSON type: 8080 matches 8080 and "http" matches "http"; 8080 does not match "8080"', () => {
    const desired = withDesiredHash({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 81, targetPort: 'http' }] } });
    const stored = { ...desired, spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }, { port: 81, targetPort: 'http', protocol: 'TCP' }], clusterIP: '10.0.0.1' } };
    expect(decideApply(desired, stored, types('Service'))).toEqual({});
    const retyped = { ...desired, spec: { ports: [{ port: 80, targetPort: '8080', protocol: 'TCP' }, { port: 81, targetPort: 'http' }] } };
    expect(decideApply(desired, retyped, types('Service'))).toEqual({ reason: 'drift', path: 'spec.ports.0' });
  });
});

describe('storedForm', () => {
  const secret = (fields: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' }, ...fields });

  test('GIVEN a Secret with stringData THEN it is folded into base64 data, over a data entry of the same key', () => {
    const folded = storedForm(secret({ data: { a: 'eA==', b: 'eQ==' }, stringData: { b: 'pässword', c: '' } }));
    expect(folded).toEqual(secret({ data: { a: 'eA==', b: Buffer.from('pässword', 'utf8').toString('base64'), c: '' } }));
    expect(folded).not.toHaveProperty('stringData');
  });

  test('GIVEN a Secret child with stringData stored by the server (data only) THEN no drift; GIVEN data edited THEN drift', () => {
    const desired = withDesiredHash(secret({ stringData: { password: 'hunter2' } }));
    const stored = { ...secret({ data: { password: 'aHVudGVyMg==' }, type: 'Opaque' }), metadata: { ...desired.metadata, uid: 'u' } };
    expect(decideApply(desired, stored)).toEqual({});
    const edited = { ...stored, data: { password: Buffer.from('other').toString('base64') } };
    expect(decideApply(desired, edited)).toEqual({ reason: 'drift', path: 'data.password' });
  });

  test('GIVEN another kind with a stringData field THEN left alone', () => {
    const cr = { apiVersion: 'example.com/v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: 'b' } };
    expect(storedForm(cr)).toBe(cr);
  });
});

describe('hash', () => {
  test('the hash ignores key order and its own annotation', () => {
    const a = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { a: '1', b: '2' } };
    const b = { kind: 'ConfigMap', data: { b: '2', a: '1' }, metadata: { namespace: 'n', name: 'c' }, apiVersion: 'v1' };
    expect(desiredHash(a)).toBe(desiredHash(b));
    expect(desiredHash(withDesiredHash(a))).toBe(desiredHash(a));
    expect(desiredHash({ ...a, data: { a: '1' } })).not.toBe(desiredHash(a));
  });
});
