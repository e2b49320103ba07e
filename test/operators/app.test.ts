import { App } from 'cdk8s';
import { CustomResourceValidationError, type Manifest } from 'cdk8s-operator-sdk';
import { renderExamplesForSnapshot, renderForSnapshot } from 'cdk8s-operator-sdk/testing';
import { AppOperator, CONFIG_HASH_ANNOTATION, CONFIG_MOUNT_PATH } from '../../operators/app/index.js';
import { canonicalJson, contentHash } from '../../operators/app/config-hash.js';
import { find, kinds } from '../support/manifests.js';

const operator = new AppOperator(new App());

function app(spec: Record<string, unknown>, name = 'web') {
  return { apiVersion: 'apps.example.com/v1alpha1', kind: 'App', metadata: { name, namespace: 'shop' }, spec };
}

function configHash(manifests: Manifest[]): string | undefined {
  return find(manifests, 'Deployment').spec.template.metadata.annotations?.[CONFIG_HASH_ANNOTATION];
}

function invalidPaths(cr: unknown): string[] {
  try {
    operator.parseCustomResource(cr);
  } catch (error) {
    if (error instanceof CustomResourceValidationError) return error.fields.map((f) => f.path);
    throw error;
  }
  return [];
}

describe('AppOperator', () => {
  test('GIVEN the sample WHEN its children are rendered THEN they match the snapshot', () => {
    expect(renderExamplesForSnapshot(operator)).toMatchSnapshot();
  });

  test('GIVEN only an image WHEN rendered THEN a Deployment and a Service with the defaults, and no Ingress or ConfigMap', () => {
    const children = renderForSnapshot(operator, app({ image: 'nginx:1.27' }));
    expect(kinds(children)).toEqual(['Deployment', 'Service']);
    const deployment = find(children, 'Deployment');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.template.spec.containers[0]).toMatchObject({
      image: 'nginx:1.27',
      imagePullPolicy: 'IfNotPresent',
      ports: [{ containerPort: 8080, name: 'http' }],
    });
    expect(configHash(children)).toBeUndefined();
    expect(find(children, 'Service').spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 8080 }]);
  });

  test('GIVEN an ingress host WHEN rendered THEN an Ingress routes the host to the Service', () => {
    const children = renderForSnapshot(operator, app({ image: 'nginx:1.27', port: 80, ingress: { host: 'shop.example.com', className: 'nginx' } }));
    expect(kinds(children)).toEqual(['Deployment', 'Ingress', 'Service']);
    const ingress = find(children, 'Ingress');
    expect(ingress.spec.ingressClassName).toBe('nginx');
    expect(ingress.spec.rules).toEqual([{
      host: 'shop.example.com',
      http: { paths: [{ backend: { service: { name: 'web', port: { number: 80 } } }, path: '/', pathType: 'Prefix' }] },
    }]);
  });

  test('GIVEN config data WHEN rendered THEN a ConfigMap is mounted read-only and its hash annotates the pod template', () => {
    const config = { 'a.conf': 'x=1\n', 'b.conf': 'y=2\n' };
    const children = renderForSnapshot(operator, app({ image: 'nginx:1.27', config }));
    expect(kinds(children)).toEqual(['ConfigMap', 'Deployment', 'Service']);
    expect(find(children, 'ConfigMap')).toMatchObject({ metadata: { name: 'web-config', namespace: 'shop' }, data: config });
    const pod = find(children, 'Deployment').spec.template.spec;
    expect(pod.containers[0].volumeMounts).toContainEqual({ mountPath: CONFIG_MOUNT_PATH, name: 'config', readOnly: true });
    expect(pod.volumes).toContainEqual({ configMap: { name: 'web-config' }, name: 'config' });
    expect(configHash(children)).toBe(contentHash(config));
    expect(configHash(children)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('GIVEN config data WHEN the data changes THEN the hash changes, and WHEN anything else changes THEN it does not', () => {
    const base = { image: 'nginx:1.27', config: { 'a.conf': 'x=1\n', 'b.conf': 'y=2\n' } };
    const hash = configHash(renderForSnapshot(operator, app(base)));
    expect(configHash(renderForSnapshot(operator, app(base)))).toBe(hash);
    expect(configHash(renderForSnapshot(operator, app({ ...base, config: { 'a.conf': 'x=2\n', 'b.conf': 'y=2\n' } })))).not.toBe(hash);
    expect(configHash(renderForSnapshot(operator, app({ ...base, config: { 'a.conf': 'x=1\n' } })))).not.toBe(hash);
    // Same content, other key order; other fields changed.
    expect(configHash(renderForSnapshot(operator, app({ ...base, config: { 'b.conf': 'y=2\n', 'a.conf': 'x=1\n' } })))).toBe(hash);
    expect(configHash(renderForSnapshot(operator, app({ ...base, replicas: 5, image: 'nginx:1.28', env: [{ name: 'A', value: 'b' }] })))).toBe(hash);
  });

  test('GIVEN env variables WHEN rendered THEN the container gets them in order, values defaulting to ""', () => {
    const children = renderForSnapshot(operator, app({ image: 'nginx:1.27', env: [{ name: 'B', value: '2' }, { name: 'A' }] }));
    expect(find(children, 'Deployment').spec.template.spec.containers[0].env).toEqual([{ name: 'B', value: '2' }, { name: 'A', value: '' }]);
  });

  test.each([
    ['ghcr.io/x/y:1.0', 'IfNotPresent'],
    ['ghcr.io/x/y@sha256:0123', 'IfNotPresent'],
    ['localhost:5000/y', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx', 'Always'],
  ])('GIVEN image %s WHEN rendered THEN imagePullPolicy is %s', (image, policy) => {
    expect(find(renderForSnapshot(operator, app({ image })), 'Deployment').spec.template.spec.containers[0].imagePullPolicy).toBe(policy);
  });

  test('GIVEN the pods WHEN rendered THEN they meet the restricted profile with a writable /tmp', () => {
    const pod = find(renderForSnapshot(operator, app({ image: 'nginx:1.27', runAsUser: 101 })), 'Deployment').spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 101 });
    expect(pod.containers[0].securityContext).toMatchObject({
      runAsNonRoot: true, runAsUser: 101, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers[0].volumeMounts).toContainEqual({ mountPath: '/tmp', name: 'tmp' });
  });

  test('GIVEN bad fields WHEN validated THEN each is reported by path', () => {
    expect(invalidPaths(app({}))).toEqual(['spec.image']);
    expect(invalidPaths(app({ image: 'x', port: 70000 }))).toEqual(['spec.port']);
    expect(invalidPaths(app({ image: 'x', env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }] }))).toEqual(['spec.env[1]']);
    expect(invalidPaths(app({ image: 'x', env: [{ name: '1=A' }] }))).toEqual(['spec.env[0].name']);
    expect(invalidPaths(app({ image: 'x', ingress: { host: 'Not A Host' } }))).toEqual(['spec.ingress.host']);
    expect(invalidPaths(app({ image: 'x', config: { '../etc/passwd': 'x' } }))).toEqual(['spec.config["../etc/passwd"]']);
  });
});

describe('contentHash', () => {
  test('GIVEN objects with the same content in another key order WHEN hashed THEN the hashes are equal', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 0 }], a: 1 })).toBe('{"a":1,"b":[2,{"c":0,"d":1}]}');
    expect(contentHash({ b: 1, a: 2 })).toBe(contentHash({ a: 2, b: 1 }));
    expect(contentHash({ a: '1' })).not.toBe(contentHash({ a: 1 }));
  });
});
