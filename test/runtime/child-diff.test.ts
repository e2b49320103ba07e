import { DESIRED_HASH_ANNOTATION, decideApply, desiredHash, withDesiredHash } from '../../lib/runtime/child-diff.js';
import type { KubeObject } from '../../lib/runtime/api-client.js';

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
      expect(decideApply(desired, asStored(desired))).toEqual({});
    }
  });

  test('GIVEN a field we set was edited (drift) THEN apply with the path', () => {
    const desired = withDesiredHash(deployment({ replicas: 2 }));
    const actual = asStored(desired, (o) => (o.spec.replicas = 5));
    expect(decideApply(desired, actual)).toEqual({ reason: 'drift', path: 'spec.replicas' });
    const image = asStored(desired, (o) => (o.spec.template.spec.containers[0].image = 'evil'));
    expect(decideApply(desired, image).reason).toBe('drift');
    const memory = asStored(desired, (o) => (o.spec.template.spec.containers[0].resources.limits.memory = '2Gi'));
    expect(decideApply(desired, memory).reason).toBe('drift');
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
    expect(decideApply(desired, actual)).toEqual({});
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

  test('int-or-string: 8080 matches "8080"', () => {
    const desired = withDesiredHash({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 8080 }] } });
    const actual = { ...desired, spec: { ports: [{ port: 80, targetPort: '8080', protocol: 'TCP' }], clusterIP: '10.0.0.1' } };
    expect(decideApply(desired, actual)).toEqual({});
  });

  test('quantities are compared by value only under resource keys', () => {
    const desired = withDesiredHash({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { version: '1.0' } });
    expect(decideApply(desired, { ...desired, data: { version: '1' } }).reason).toBe('drift');
  });

  test('the hash ignores key order and its own annotation', () => {
    const a = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { a: '1', b: '2' } };
    const b = { kind: 'ConfigMap', data: { b: '2', a: '1' }, metadata: { namespace: 'n', name: 'c' }, apiVersion: 'v1' };
    expect(desiredHash(a)).toBe(desiredHash(b));
    expect(desiredHash(withDesiredHash(a))).toBe(desiredHash(a));
    expect(desiredHash({ ...a, data: { a: '1' } })).not.toBe(desiredHash(a));
  });
});
