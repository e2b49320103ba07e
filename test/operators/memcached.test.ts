import { App } from 'cdk8s';
import { CustomResourceValidationError } from 'cdk8s-operator-sdk';
import { renderExamplesForSnapshot, renderForSnapshot } from 'cdk8s-operator-sdk/testing';
import { find } from '../support/manifests.js';
import { MEMCACHED_IMAGE, MEMCACHED_PORT, MEMCACHED_UID, MemcachedOperator } from '../../operators/memcached/index.js';

const operator = new MemcachedOperator(new App());

function memcached(name: string, replicas: unknown, namespace = 'default') {
  return { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace }, spec: { replicas } };
}

describe('MemcachedOperator', () => {
  test('GIVEN the sample WHEN its children are rendered THEN they match the snapshot', () => {
    expect(renderExamplesForSnapshot(operator)).toMatchSnapshot();
  });

  test('GIVEN the sample WHEN loaded THEN it is the examples, a cache.example.com/v1beta1 Memcached of 3 replicas', () => {
    expect(operator.examples).toHaveLength(1);
    expect(operator.examples[0]).toMatchObject({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', spec: { replicas: 3 } });
    expect(operator.crd).toMatchObject({ group: 'cache.example.com', version: 'v1beta1', kind: 'Memcached', plural: 'memcacheds', namespaced: true });
  });

  test.each([1, 7, 100])('GIVEN replicas %i WHEN rendered THEN a Deployment of that many memcached pods and a Service', (size) => {
    const children = renderForSnapshot(operator, memcached('cache', size));
    expect(children.map((m) => m.kind).sort()).toEqual(['Deployment', 'Service']);
    const deployment = find(children, 'Deployment');
    expect(deployment.spec.replicas).toBe(size);
    const container = deployment.spec.template.spec.containers[0];
    expect(container.image).toBe(MEMCACHED_IMAGE);
    expect(container.args).toEqual(['-m=64', '-o', 'modern', '-v']);
    expect(container.ports).toEqual([{ containerPort: MEMCACHED_PORT, name: 'memcached' }]);
    const service = find(children, 'Service');
    expect(service.spec.ports).toEqual([{ name: 'memcached', port: MEMCACHED_PORT, targetPort: MEMCACHED_PORT }]);
  });

  test('GIVEN a Memcached WHEN rendered THEN the pods meet the restricted Pod Security profile with explicit resources', () => {
    const pod = find(renderForSnapshot(operator, memcached('cache', 2)), 'Deployment').spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: MEMCACHED_UID, runAsGroup: MEMCACHED_UID });
    expect(pod.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsGroup: MEMCACHED_UID,
      runAsNonRoot: true,
      runAsUser: MEMCACHED_UID,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.containers[0].resources).toEqual({ limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '50m', memory: '96Mi' } });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  test('GIVEN two Memcacheds in one namespace WHEN rendered THEN the Deployment and the Service of each select only its own pods, by selectorLabels', () => {
    const [a, b] = ['a', 'b'].map((name) => renderForSnapshot(operator, memcached(name, 1)));
    for (const [name, children] of [['a', a], ['b', b]] as const) {
      const deployment = find(children, 'Deployment');
      const labels = { 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': name };
      expect(deployment.spec.selector).toEqual({ matchLabels: labels });
      expect(find(children, 'Service').spec.selector).toEqual(labels);
      expect(deployment.spec.template.metadata.labels).toMatchObject(labels);
    }
  });

  test('GIVEN the same CR WHEN rendered twice THEN the output is byte-identical', () => {
    expect(JSON.stringify(renderForSnapshot(operator, memcached('cache', 3)))).toBe(JSON.stringify(renderForSnapshot(operator, memcached('cache', 3))));
  });

  test.each([
    [0, 'spec.replicas'],
    [101, 'spec.replicas'],
    [2.5, 'spec.replicas'],
    ['3', 'spec.replicas'],
    [undefined, 'spec.replicas'],
  ])('GIVEN replicas %p WHEN validated THEN %s is reported', (size, path) => {
    let error: unknown;
    try {
      operator.parseCustomResource(memcached('cache', size));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CustomResourceValidationError);
    expect((error as CustomResourceValidationError).fields.map((f) => f.path)).toEqual([path]);
  });
});
