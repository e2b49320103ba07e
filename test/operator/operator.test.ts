import { App, Testing } from 'cdk8s';
import { z } from 'zod';
import { OperatorConfigError, StructuralSchemaError } from '../../lib/operator/errors.js';
import { kebabCase, pluralize } from '../../lib/operator/operator.js';
import { ScriptedOperator, WebOperator } from './fixtures/test-operators.js';

type Json = Record<string, any>;

describe('Operator defaults', () => {
  test.each([
    ['Memcached', 'memcacheds'],
    ['Policy', 'policies'],
    ['Ingress', 'ingresses'],
    ['Box', 'boxes'],
    ['Batch', 'batches'],
    ['Gateway', 'gateways'],
  ])('GIVEN kind %s WHEN pluralized THEN it is %s', (kind, plural) => {
    expect(pluralize(kind.toLowerCase())).toBe(plural);
  });

  test('GIVEN CamelCase kinds WHEN kebab-cased THEN acronyms stay together', () => {
    expect(kebabCase('MemcachedCluster')).toBe('memcached-cluster');
    expect(kebabCase('HTTPRoute')).toBe('http-route');
  });

  test('GIVEN only group, version, kind and spec WHEN constructed THEN names, scope, operator name and namespace are derived', () => {
    const operator = new WebOperator(new App());
    expect(operator.operatorName).toBe('web-operator');
    expect(operator.operatorNamespace).toBe('web-operator-system');
    expect(operator.crd).toEqual({ apiVersion: 'demo.example.com/v1alpha1', group: 'demo.example.com', version: 'v1alpha1', kind: 'Web', plural: 'webs', namespaced: true });
    expect(operator.namespace).toBeUndefined();
  });

  test('GIVEN an operator WHEN synthesized THEN it emits Namespace, CRD, ServiceAccount, RBAC and Deployment, with namespaces only on namespaced objects', () => {
    const out = new WebOperator(new App()).toJson() as Json[];
    expect(out.map((o) => `${o.kind}/${o.metadata.namespace ?? '-'}/${o.metadata.name}`)).toEqual([
      'Namespace/-/web-operator-system',
      'CustomResourceDefinition/-/webs.demo.example.com',
      'ServiceAccount/web-operator-system/web-operator',
      'ClusterRole/-/web-operator',
      'ClusterRoleBinding/-/web-operator',
      'Role/web-operator-system/web-operator-leader-election',
      'RoleBinding/web-operator-system/web-operator-leader-election',
      'Deployment/web-operator-system/web-operator',
      'Service/web-operator-system/web-operator-metrics-service',
      'ClusterRole/-/web-operator-metrics-auth',
      'ClusterRoleBinding/-/web-operator-metrics-auth',
      'ClusterRole/-/web-operator-metrics-reader',
    ]);
  });

  test('GIVEN an operator WHEN synthesized THEN the metrics Service reaches the container\'s secure metrics port and the metrics-auth binding names its ServiceAccount', () => {
    const out = new WebOperator(new App()).toJson() as Json[];
    const deployment = out.find((o) => o.kind === 'Deployment')!;
    const container = deployment.spec.template.spec.containers[0];
    const service = out.find((o) => o.kind === 'Service' && o.metadata.name === 'web-operator-metrics-service')!;
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    expect(service.spec.ports).toEqual([{ name: 'https', port: 8443, targetPort: 'metrics', protocol: 'TCP' }]);
    expect(container.ports).toContainEqual({ name: 'metrics', containerPort: 8443, protocol: 'TCP' });
    expect(container.args).toContain('--metrics-bind-address=:8443');
    expect(container.args.some((a: string) => a.startsWith('--metrics-secure'))).toBe(false); // secure is run's default
    const binding = out.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'web-operator-metrics-auth')!;
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'web-operator-metrics-auth' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'web-operator', namespace: 'web-operator-system' }]);
    expect(out.some((o) => o.kind === 'NetworkPolicy')).toBe(false);
  });

  test('GIVEN deployment.networkPolicies WHEN synthesized THEN a NetworkPolicy admits metrics traffic to the operator pods only from namespaces labelled metrics: enabled', () => {
    const out = new WebOperator(new App(), 'web-operator', { deployment: { networkPolicies: true } }).toJson() as Json[];
    const deployment = out.find((o) => o.kind === 'Deployment')!;
    const policies = out.filter((o) => o.kind === 'NetworkPolicy');
    expect(policies).toEqual([
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'web-operator-allow-metrics-traffic', namespace: 'web-operator-system', labels: deployment.metadata.labels },
        spec: {
          podSelector: { matchLabels: deployment.spec.selector.matchLabels },
          policyTypes: ['Ingress'],
          ingress: [{ from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }], ports: [{ port: 8443, protocol: 'TCP' }] }],
        },
      },
    ]);
  });

  test('GIVEN createNamespace false WHEN synthesized THEN no Namespace object is emitted', () => {
    const out = new WebOperator(new App(), 'web-operator', { deployment: { createNamespace: false } }).toJson() as Json[];
    expect(out.some((o) => o.kind === 'Namespace')).toBe(false);
  });

  test('GIVEN the same operator in two apps WHEN synthesized THEN the YAML is byte-identical', () => {
    const a = Testing.synth(new WebOperator(Testing.app()));
    const b = Testing.synth(new WebOperator(Testing.app()));
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});

describe('Operator configuration errors', () => {
  test.each([
    [{ kind: 'web' }, /kind "web" must be CamelCase/],
    [{ group: 'example' }, /group "example" must be a DNS subdomain with at least one dot/],
    [{ version: '1.0' }, /version "1.0" must look like v1/],
    [{ shortNames: ['W'] }, /shortNames "W" must be a lowercase DNS-1123 label/],
    [{ scope: 'Cluster' as const, deployment: { watchNamespace: 'a' } }, /watchNamespace requires a Namespaced kind/],
    [{ deployment: { replicas: 0 } }, /deployment.replicas must be an integer >= 1/],
    [{ owns: [{ apiVersion: 'x.example.com/v1', kind: 'Thing' }] }, /owns: kind Thing \(x.example.com\/v1\) is not a built-in kind/],
    [{ adoption: 'always' as never }, /adoption "always" must be 'refuse' or 'adopt'/],
  ])('GIVEN props %j WHEN constructed THEN it throws OperatorConfigError with the construct path', (props, message) => {
    const construct = () => new ScriptedOperator(new App(), 'bad-operator', props, () => undefined);
    expect(construct).toThrow(OperatorConfigError);
    expect(construct).toThrow(message);
    expect(construct).toThrow(/^operator bad-operator: /);
  });

  test("GIVEN no adoption prop THEN it is 'refuse'; 'adopt' is kept", () => {
    expect(new ScriptedOperator(new App(), 'a-operator', {}, () => undefined).adoption).toBe('refuse');
    expect(new ScriptedOperator(new App(), 'b-operator', { adoption: 'adopt' }, () => undefined).adoption).toBe('adopt');
  });

  test('GIVEN a spec that is not structural WHEN constructed THEN it throws naming the field, so synth fails', () => {
    const spec = z.object({ when: z.date() });
    expect(() => new ScriptedOperator(new App(), 'bad-operator', { spec: spec as never }, () => undefined)).toThrow(StructuralSchemaError);
    expect(() => new ScriptedOperator(new App(), 'bad-operator', { spec: spec as never }, () => undefined)).toThrow(/^spec\.when: a date/);
  });
});

describe('Operator.instance', () => {
  test('GIVEN a valid spec WHEN an instance is added to another chart THEN it is a CR of the operator kind with the spec as given', () => {
    const app = new App();
    const operator = new WebOperator(app);
    const chart = Testing.chart();
    operator.instance(chart, 'shop', { metadata: { name: 'shop', namespace: 'team-a' }, spec: { image: 'nginx' } });
    expect(Testing.synth(chart)).toEqual([
      { apiVersion: 'demo.example.com/v1alpha1', kind: 'Web', metadata: { name: 'shop', namespace: 'team-a' }, spec: { image: 'nginx' } },
    ]);
  });

  test('GIVEN an invalid spec WHEN an instance is added THEN it throws with the field path', () => {
    const operator = new WebOperator(new App());
    expect(() => operator.instance(Testing.chart(), 'shop', { metadata: { name: 'shop' }, spec: { image: '', replicas: 50 } })).toThrow(
      'Web shop is invalid: spec.image: Too small: expected string to have >=1 characters; spec.replicas: Too big: expected number to be <=10',
    );
  });
});
