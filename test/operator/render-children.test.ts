import { ApiObject, App } from 'cdk8s';
import type { Construct } from 'constructs';
import { CustomResourceValidationError, RenderError } from '../../lib/operator/errors.js';
import { INSTANCE_LABEL, MANAGED_BY_LABEL, OWNER_UID_LABEL } from '../../lib/operator/render/labels.js';
import { renderChildren } from '../../lib/operator/render/render-children.js';
import { nameProblem, nameRuleFor } from '../../lib/operator/schema/names.js';
import fc from 'fast-check';
import { EchoOperator } from '../cli/fixtures/echo-operator.js';
import { rawObject, ScriptedOperator, WebOperator, webCr } from './fixtures/test-operators.js';

const UID = '11111111-2222-4333-8444-555555555555';

/** The API server's own rule for CR names: these tests name children after CRs of every valid name. */
const ANY_CR_NAME = { crNameRule: { format: 'dns1123-subdomain', maxLength: 253 } } as const;

function scripted(script: (scope: Construct) => void, props = {}): ScriptedOperator {
  return new ScriptedOperator(new App(), 'x-operator', { ...ANY_CR_NAME, ...props }, (_cr, scope) => script(scope));
}

function renderError(fn: () => unknown): RenderError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RenderError);
    return e as RenderError;
  }
  throw new Error('expected a RenderError');
}

describe('renderChildren', () => {
  const web = new WebOperator(new App());

  test('GIVEN a namespaced CR WHEN rendered THEN every child carries its namespace, a controller ownerReference and the three labels', () => {
    const children = renderChildren(web, webCr({ spec: { config: { a: 'b' } } }));

    expect(children.length).toBe(3);
    for (const child of children) {
      expect(child.metadata.namespace).toBe('team-a');
      expect(child.metadata.ownerReferences).toEqual([
        { apiVersion: 'demo.example.com/v1alpha1', blockOwnerDeletion: true, controller: true, kind: 'Web', name: 'shop', uid: UID },
      ]);
      expect(child.metadata.labels).toMatchObject({ [MANAGED_BY_LABEL]: 'web-operator', [INSTANCE_LABEL]: 'shop', [OWNER_UID_LABEL]: UID });
    }
  });

  test('GIVEN a child whose toJson returns keys out of order (and one cdk8s sorted) WHEN rendered THEN every object of each has apiVersion, kind, metadata first and the rest sorted, nothing left undefined', () => {
    class Unsorted extends ApiObject {
      override toJson(): any {
        return { spec: { selector: { b: '1', a: '2' }, ports: [{ port: 80, protocol: undefined, name: 'web' }], clusterIP: 'None' }, metadata: { name: 'u', labels: { b: '1', a: '2' } }, kind: 'Service', apiVersion: 'v1' };
      }
    }
    const operator = scripted((scope) => {
      new Unsorted(scope, 'u', { apiVersion: 'v1', kind: 'Service' });
      rawObject(scope, 'd', 'apps/v1', 'Deployment', { name: 'd', annotations: { z: '1', a: '2' } }, { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } }, replicas: 1 } });
    });
    const inOrder = (value: unknown, top: boolean): boolean => {
      if (Array.isArray(value)) return value.every((v) => inOrder(v, false));
      if (typeof value !== 'object' || value === null) return value !== undefined;
      const keys = Object.keys(value);
      const rest = keys.filter((k) => !top || !['apiVersion', 'kind', 'metadata'].includes(k));
      const head = top ? keys.slice(0, keys.length - rest.length) : [];
      return JSON.stringify(head) === JSON.stringify(top ? ['apiVersion', 'kind', 'metadata'].filter((k) => k in value) : []) && JSON.stringify(rest) === JSON.stringify([...rest].sort()) && Object.values(value).every((v) => inOrder(v, false));
    };
    const children = renderChildren(operator, webCr());
    expect(children.map((c) => c.kind)).toEqual(['Deployment', 'Service']);
    for (const child of children) expect({ kind: child.kind, inOrder: inOrder(child, true) }).toEqual({ kind: child.kind, inOrder: true });
    expect(children[1]!.spec).toEqual({ clusterIP: 'None', ports: [{ name: 'web', port: 80 }], selector: { a: '2', b: '1' } });
    expect(Object.keys((children[1]!.spec as { ports: object[] }).ports[0]!)).toEqual(['name', 'port']);
  });

  test('GIVEN children created in any order WHEN rendered THEN they are sorted by apiVersion, kind, namespace, name', () => {
    const operator = scripted((scope) => {
      rawObject(scope, 'z', 'v1', 'Service', { name: 'z-svc' }, { spec: { ports: [{ port: 80 }] } });
      rawObject(scope, 'b', 'v1', 'ConfigMap', { name: 'b' });
      rawObject(scope, 'd', 'apps/v1', 'Deployment', { name: 'd' });
      rawObject(scope, 'a', 'v1', 'ConfigMap', { name: 'a' });
    });
    expect(renderChildren(operator, webCr()).map((m) => `${m.apiVersion} ${m.kind} ${m.metadata.name}`)).toEqual([
      'apps/v1 Deployment d',
      'v1 ConfigMap a',
      'v1 ConfigMap b',
      'v1 Service z-svc',
    ]);
  });

  test('GIVEN the same CR WHEN rendered twice THEN the JSON is byte-identical; GIVEN another uid THEN only owner fields differ', () => {
    const first = JSON.stringify(renderChildren(web, webCr()));
    const second = JSON.stringify(renderChildren(web, webCr()));
    expect(second).toBe(first);
    const other = JSON.stringify(renderChildren(web, webCr({ uid: 'aaaaaaaa-2222-4333-8444-555555555555' })));
    expect(other.replaceAll('aaaaaaaa-', '11111111-')).toBe(first);
  });

  test('GIVEN objects without explicit names WHEN rendered THEN names are <cr name>-<construct ids>, without hash', () => {
    const operator = scripted((scope) => {
      rawObject(scope, 'config', 'v1', 'ConfigMap');
      rawObject(scope, 'Cache', 'apps/v1', 'Deployment');
    });
    const names = renderChildren(operator, webCr({ name: 'shop.eu' })).map((m) => m.metadata.name);
    expect(names).toEqual(['shop.eu-cache', 'shop.eu-config']);
  });

  test('GIVEN a long CR name WHEN a Service name is generated THEN it is cut to 63 with a stable hash suffix', () => {
    const operator = scripted((scope) => rawObject(scope, 'web', 'v1', 'Service', {}, { spec: { ports: [{ port: 80 }] } }));
    const longName = `a${'b'.repeat(80)}`;
    const [a] = renderChildren(operator, webCr({ name: longName }));
    const [b] = renderChildren(operator, webCr({ name: longName }));
    expect(a.metadata.name.length).toBeLessThanOrEqual(63);
    expect(a.metadata.name).toMatch(/^ab+-[0-9a-f]{8}$/);
    expect(b.metadata.name).toBe(a.metadata.name);
    expect(a.metadata.labels![INSTANCE_LABEL].length).toBeLessThanOrEqual(63);
  });

  test('GIVEN the Render page Echo operator (default crNameRule) and CRs named 2-pea or a.b WHEN rendered THEN refused at metadata.name, as its CRD refuses them', () => {
    const echo = new EchoOperator(new App());
    for (const name of ['2-pea', 'a.b', `a${'b'.repeat(63)}`]) {
      const cr = { apiVersion: 'demo.example.com/v1', kind: 'Echo', metadata: { name, namespace: 'ns', uid: UID }, spec: { text: 'hi' } };
      expect(() => renderChildren(echo, cr)).toThrow(CustomResourceValidationError);
      expect(() => renderChildren(echo, cr)).toThrow(`metadata.name: Invalid value: ${JSON.stringify(name)}: must be a DNS-1035 label of at most 63 characters, because the operator's children carry the name (the Operator's crNameRule)`);
    }
  });

  test('GIVEN a relaxed crNameRule and a CR named 2-pea WHEN a Service and a Deployment are generated THEN the Service name starts with a letter (DNS-1035); the other keeps the CR name', () => {
    const operator = scripted((scope) => {
      rawObject(scope, 'server', 'apps/v1', 'Deployment');
      rawObject(scope, 'web', 'v1', 'Service', {}, { spec: { ports: [{ port: 80 }] } });
    });
    const children = renderChildren(operator, webCr({ name: '2-pea' }));
    expect(children.map((c) => `${c.kind} ${c.metadata.name}`)).toEqual(['Deployment 2-pea-server', 'Service service-2-pea-web']);
  });

  test('GIVEN any valid CR name and construct id WHEN names are generated THEN each is valid for its kind, and names of CRs starting with a letter are <cr name>-<id>', () => {
    const kinds = [['v1', 'Service'], ['v1', 'ConfigMap'], ['apps/v1', 'StatefulSet'], ['batch/v1', 'Job'], ['batch/v1', 'CronJob'], ['rbac.authorization.k8s.io/v1', 'Role']] as const;
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    const crName = fc.array(label, { minLength: 1, maxLength: 12 }).map((parts) => parts.join('.')).filter((n) => n.length <= 253);
    fc.assert(
      fc.property(crName, fc.constantFrom(...kinds), fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/), (name, [apiVersion, kind], id) => {
        const operator = scripted((scope) => rawObject(scope, id, apiVersion, kind), { owns: [{ apiVersion, kind }] });
        const [child] = renderChildren(operator, webCr({ name }));
        expect(nameProblem(child.metadata.name, nameRuleFor({ group: apiVersion.includes('/') ? apiVersion.split('/')[0] : '', kind }))).toBeUndefined();
        if (/^[a-z]/.test(name) && name.length < 40 && kind === 'ConfigMap') expect(child.metadata.name.startsWith(`${name}-`)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  test('GIVEN a container listing env LOG_LEVEL twice WHEN rendered THEN InvalidChild names the list and the key', () => {
    const container = { name: 'app', image: 'app:1', env: [{ name: 'LOG_LEVEL', value: 'info' }, { name: 'PORT', value: '80' }, { name: 'LOG_LEVEL', value: 'debug' }] };
    const operator = scripted((scope) => rawObject(scope, 'app', 'apps/v1', 'Deployment', {}, { spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [container] } } } }));
    const error = renderError(() => renderChildren(operator, webCr()));
    expect(error.reason).toBe('InvalidChild');
    expect(error.message).toContain('spec.template.spec.containers[0].env: duplicate entries for key name="LOG_LEVEL" (items 0 and 2)');
  });

  test('GIVEN Service ports 80 and 80/TCP WHEN rendered THEN they are the same key (protocol defaults to TCP); 80/UDP is another', () => {
    const service = (ports: object[]) => scripted((scope) => rawObject(scope, 'web', 'v1', 'Service', {}, { spec: { ports } }));
    expect(renderError(() => renderChildren(service([{ port: 80 }, { port: 80, protocol: 'TCP' }]), webCr())).message).toContain('spec.ports: duplicate entries for key port=80,protocol="TCP"');
    expect(renderChildren(service([{ port: 80 }, { port: 80, protocol: 'UDP' }]), webCr())).toHaveLength(1);
  });

  test('GIVEN an invalid label value or annotations over 256 KiB WHEN rendered THEN InvalidChild names the field', () => {
    const labelled = scripted((scope) => rawObject(scope, 'cm', 'v1', 'ConfigMap', { labels: { tier: 'not valid!' } }));
    expect(renderError(() => renderChildren(labelled, webCr())).message).toContain('metadata.labels["tier"]: value "not valid!"');
    const annotated = scripted((scope) => rawObject(scope, 'cm', 'v1', 'ConfigMap', { annotations: { big: 'x'.repeat(256 * 1024) } }));
    expect(renderError(() => renderChildren(annotated, webCr())).message).toMatch(/metadata\.annotations: may not be more than \d+ bytes in total/);
  });

  test('GIVEN a long CR name WHEN a StatefulSet name is generated THEN it is cut to 52, so its pods\' controller-revision-hash label fits in 63', () => {
    const operator = scripted((scope) => rawObject(scope, 'db', 'apps/v1', 'StatefulSet', {}, { spec: {} }));
    const [statefulSet] = renderChildren(operator, webCr({ name: 'c'.repeat(60) }));
    expect(statefulSet.metadata.name).toMatch(/^c{43}-[0-9a-f]{8}$/);
  });

  test('GIVEN a child in another namespace WHEN rendered THEN it fails naming the construct path (no cross-namespace ownerReference)', () => {
    const operator = scripted((scope) => rawObject(scope, 'cm', 'v1', 'ConfigMap', { name: 'cm', namespace: 'elsewhere' }));
    const error = renderError(() => renderChildren(operator, webCr()));
    expect(error.reason).toBe('InvalidChild');
    expect(error.message).toBe(
      'render Web team-a/shop: ConfigMap cm at shop/cm: namespace "elsewhere" differs from the custom resource\'s "team-a"; an ownerReference cannot cross namespaces',
    );
  });

  test('GIVEN a cluster-scoped child under a namespaced CR WHEN rendered THEN it fails instead of writing an invalid ownerReference', () => {
    const operator = scripted((scope) => rawObject(scope, 'role', 'rbac.authorization.k8s.io/v1', 'ClusterRole', { name: 'reader' }, { rules: [] }));
    const error = renderError(() => renderChildren(operator, webCr()));
    expect(error.reason).toBe('InvalidChild');
    expect(error.message).toContain('ClusterRole reader at shop/role: ClusterRole is cluster-scoped and cannot be owned by the namespaced Web');
  });

  test('GIVEN a cluster-scoped CR WHEN rendering cluster-scoped and explicitly namespaced children THEN both are owned; a namespaced child without namespace fails', () => {
    const operator = new ScriptedOperator(new App(), 'x-operator', { scope: 'Cluster' }, (_cr, scope) => {
      rawObject(scope, 'ns', 'v1', 'Namespace', { name: 'tenant' });
      rawObject(scope, 'cm', 'v1', 'ConfigMap', { name: 'cm', namespace: 'tenant' });
    });
    const cr = { ...webCr(), metadata: { name: 'tenant', uid: UID } };
    const children = renderChildren(operator, cr);
    expect(children.map((m) => [m.kind, m.metadata.namespace])).toEqual([
      ['ConfigMap', 'tenant'],
      ['Namespace', undefined],
    ]);
    expect(children.every((m) => m.metadata.ownerReferences![0].uid === UID)).toBe(true);

    const unplaced = new ScriptedOperator(new App(), 'x-operator', { scope: 'Cluster' }, (_cr, scope) => rawObject(scope, 'cm', 'v1', 'ConfigMap', { name: 'cm' }));
    expect(renderError(() => renderChildren(unplaced, cr)).message).toContain('a namespaced child of the cluster-scoped Web must set metadata.namespace');
  });

  test.each([
    ['v1', 'ConfigMap', 'Bad_Name', 'a lowercase RFC 1123 subdomain'],
    ['v1', 'Service', '1web', 'a DNS-1035 label must'],
    ['apps/v1', 'StatefulSet', 'db.primary', 'a lowercase RFC 1123 label'],
    ['v1', 'Service', 's'.repeat(64), 'must be no more than 63 characters (got 64)'],
    ['apps/v1', 'StatefulSet', 's'.repeat(53), 'must be no more than 52 characters (got 53)'],
  ])('GIVEN an explicit %s %s named %s WHEN rendered THEN it fails with the construct path', (apiVersion, kind, name, message) => {
    const operator = scripted((scope) => rawObject(scope, 'child', apiVersion, kind, { name }, { spec: {} }));
    const error = renderError(() => renderChildren(operator, webCr()));
    expect(error.reason).toBe('InvalidChild');
    expect(error.message).toContain(`${kind} ${name} at shop/child: invalid name "${name}": ${message}`);
  });

  test('GIVEN a CR without uid WHEN rendered THEN it fails with MissingUid', () => {
    const error = renderError(() => renderChildren(web, { ...webCr(), metadata: { name: 'shop', namespace: 'team-a' } }));
    expect(error.reason).toBe('MissingUid');
    expect(error.message).toMatch(/^render Web team-a\/shop: metadata.uid is required/);
  });

  test('GIVEN an invalid CR WHEN rendered THEN validation fails before render() runs', () => {
    let calls = 0;
    const operator = new ScriptedOperator(new App(), 'x-operator', {}, () => {
      calls++;
    });
    expect(() => renderChildren(operator, webCr({ spec: { replicas: 11 } }))).toThrow(CustomResourceValidationError);
    expect(calls).toBe(0);
  });

  test('GIVEN render() throws WHEN rendered THEN RenderError RenderFailed keeps the cause', () => {
    const boom = new Error('boom');
    const operator = scripted(() => {
      throw boom;
    });
    const error = renderError(() => renderChildren(operator, webCr()));
    expect(error.reason).toBe('RenderFailed');
    expect(error.cause).toBe(boom);
    expect(error.message).toBe('render Web team-a/shop: render() threw: boom');
  });

  test('GIVEN an unknown kind WHEN rendered THEN it fails with UnknownKind; GIVEN it in owns THEN it renders', () => {
    const script = (scope: Construct) => rawObject(scope, 'mon', 'monitoring.coreos.com/v1', 'ServiceMonitor', { name: 'mon' });
    expect(renderError(() => renderChildren(scripted(script), webCr())).reason).toBe('UnknownKind');
    const owned = scripted(script, { owns: [{ apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', plural: 'servicemonitors', namespaced: true }] });
    expect(renderChildren(owned, webCr())[0].metadata.namespace).toBe('team-a');
  });

  test('GIVEN two children with the same kind and name WHEN rendered THEN it fails with DuplicateChild naming both paths', () => {
    const operator = scripted((scope) => {
      rawObject(scope, 'one', 'v1', 'ConfigMap', { name: 'cm' });
      rawObject(scope, 'two', 'v1', 'ConfigMap', { name: 'cm' });
    });
    const error = renderError(() => renderChildren(operator, webCr()));
    expect(error.reason).toBe('DuplicateChild');
    expect(error.message).toContain('shop/');
  });

  test('GIVEN a child that sets its own labels WHEN rendered THEN they are kept and ours override the managed keys', () => {
    const operator = scripted((scope) => rawObject(scope, 'cm', 'v1', 'ConfigMap', { name: 'cm', labels: { team: 'a', [MANAGED_BY_LABEL]: 'helm' } }));
    expect(renderChildren(operator, webCr())[0].metadata.labels).toEqual({
      team: 'a',
      [MANAGED_BY_LABEL]: 'web-operator',
      [INSTANCE_LABEL]: 'shop',
      [OWNER_UID_LABEL]: UID,
    });
  });
});
