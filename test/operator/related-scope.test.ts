/**
 * A related declaration's `scope` (label selector, field selector, namespaces): the selector syntax
 * checks, the construct-time errors naming the field path, the RBAC it synthesizes, the self-check's
 * requirements, and how a reference to an object the scope hides is reported.
 */
import { ApiObject, App } from 'cdk8s';
import { RenderError } from '../../lib/operator/errors.js';
import type { RelatedDeclaration } from '../../lib/operator/render/related.js';
import { relatedLookupOf, renderCustomResource } from '../../lib/operator/render/render-children.js';
import { fieldSelectorProblem, labelSelectorProblem } from '../../lib/operator/schema/selector-syntax.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';
import { requiredAccess } from '../../lib/runtime/startup/rbac-self-check.js';
import { MemcachedOperator } from '../../operators/memcached/index.js';
import { ContextOperator, configMap, refCr, type RefSpec } from './fixtures/context-operators.js';

type Related = Record<string, RelatedDeclaration<CustomResource<RefSpec>>>;
type Json = Record<string, any>;

function operatorWith(related: Related, deployment: { watchNamespace?: string } = {}): ContextOperator {
  return new ContextOperator(new App(), { related, deployment }, (_cr, scope) => {
    new ApiObject(scope, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
  });
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected the construct to throw');
}

/** resource (group/plural) → verbs of a Role or ClusterRole. */
function grants(role: Json | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const rule of role?.rules ?? []) for (const resource of rule.resources) out[`${rule.apiGroups[0]}/${resource}`] = rule.verbs;
  return out;
}

const pods = (scope: RelatedDeclaration['scope']): Related => ({ pods: { apiVersion: 'v1', kind: 'Pod', references: () => [], scope } });

// The valid and invalid cases below were checked against kube-apiserver (a list of pods with each as the
// query parameter): it accepted every valid one and answered 400 for every invalid one.
describe('labelSelectorProblem', () => {
  test.each([
    '',
    'app.kubernetes.io/name=memcached',
    'app==web',
    'app!=web',
    'app',
    '!app',
    'tier in (front, back)',
    'tier notin (a)',
    'app=web, tier in (a,b), !canary',
    'app=',
    'generation>3',
    'example.com/x<10',
    'tier in(a)',
    'a = b',
    '! a',
    'a in ()',
  ])('GIVEN %j WHEN checked THEN it is a valid label selector', (selector) => {
    expect(labelSelectorProblem(selector)).toBeUndefined();
  });

  test.each([
    ['app=web,', /empty requirement/],
    ['=web', /a requirement is key/],
    ['a=b=c', /value "b=c"/],
    ['a in (b c)', /value "b c"/],
    ['a!', /a requirement is key/],
    ['tier in (a', /a set requirement is key in/],
    ['app web', /a requirement is key/],
    ['-app=web', /key "-app".*alphanumeric/],
    ['app=we b', /value "we b"/],
    ['app=-web', /value "-web"/],
    ['generation>three', /'>' needs an integer value/],
    ['a/b/c=x', /at most one '\/'/],
  ])('GIVEN %j WHEN checked THEN the problem says why', (selector, why) => {
    expect(labelSelectorProblem(selector)).toMatch(why);
  });
});

describe('fieldSelectorProblem', () => {
  test.each(['', 'status.phase=Running', 'metadata.name==web', 'status.phase!=Succeeded,status.phase!=Failed', 'spec.nodeName=', 'metadata.name=a\\,b', 'metadata.name=a\\=b', 'metadata.name=a!b', 'metadata.name=a b'])(
    'GIVEN %j WHEN checked THEN it is a valid field selector',
    (selector) => {
      expect(fieldSelectorProblem(selector)).toBeUndefined();
    },
  );

  test.each([
    ['status.phase', /must be key=value, key==value or key!=value/],
    ['=Running', /the field is empty/],
    ['status phase=Running', /must be a dotted field path/],
    ['status.phase in (Running)', /must be key=value/],
    ['metadata.name=a=b', /unescaped "=" in value "a=b"/],
    ['metadata.name=a\\x', /invalid escape sequence in value/],
  ])('GIVEN %j WHEN checked THEN the problem says why', (selector, why) => {
    expect(fieldSelectorProblem(selector)).toMatch(why);
  });
});

describe('Operator with a related scope', () => {
  test('GIVEN a label selector that is not Kubernetes syntax WHEN constructed THEN the error names related.<key>.scope.labelSelector and the reason', () => {
    expect(configError(() => operatorWith(pods({ labelSelector: 'app in (web' })))).toMatch(
      /related\.pods\.scope\.labelSelector "app in \(web" is not a valid label selector: "app in \(web": a set requirement is key in \(v1,v2\)/,
    );
  });

  test('GIVEN a field selector without an operator WHEN constructed THEN the error names related.<key>.scope.fieldSelector', () => {
    expect(configError(() => operatorWith(pods({ fieldSelector: 'status.phase' })))).toMatch(/related\.pods\.scope\.fieldSelector "status\.phase" is not a valid field selector/);
  });

  test.each([
    [{ namespaces: [] }, /related\.pods\.scope\.namespaces must be a non-empty array/],
    [{ namespaces: ['Shop'] }, /related\.pods\.scope\.namespaces\[0\] "Shop"/],
    [{ namespaces: ['a', 'a'] }, /related\.pods\.scope\.namespaces lists "a" twice/],
    [{ labelSelector: 3 }, /related\.pods\.scope\.labelSelector must be a label selector string, got 3/],
    [{ selector: 'a=b' }, /related\.pods\.scope\.selector is not a scope field/],
    [{ metadataOnly: 'yes' }, /related\.pods\.scope\.metadataOnly must be true or false, got "yes"/],
    [{ transform: { drop: 'spec' } }, /related\.pods\.scope\.transform must be a function/],
    [{ createdFromChildren: 'yes' }, /related\.pods\.scope\.createdFromChildren must be true or false, got "yes"/],
    [{ createdFromChildren: true, namespaces: ['a'] }, /related\.pods\.scope\.namespaces: objects createdFromChildren are where the children are/],
  ])('GIVEN scope %j WHEN constructed THEN the error names the field', (scope, why) => {
    expect(configError(() => operatorWith(pods(scope as never)))).toMatch(why);
  });

  test('GIVEN namespaces for a cluster-scoped kind WHEN constructed THEN the error says it has none', () => {
    const related: Related = { nodes: { apiVersion: 'v1', kind: 'Node', references: () => [], scope: { namespaces: ['a'] } } };
    expect(configError(() => operatorWith(related))).toMatch(/related\.nodes\.scope\.namespaces: Node is cluster-scoped/);
  });

  test('GIVEN only selectors WHEN synthesized THEN the ClusterRole grants the kind as before and no other Role is made', () => {
    const operator = operatorWith(pods({ labelSelector: 'app=web', fieldSelector: 'status.phase=Running' }));
    const json = operator.toJson() as Json[];
    expect(grants(json.find((o) => o.kind === 'ClusterRole'))['/pods']).toEqual(['get', 'list', 'watch']);
    expect(json.filter((o) => o.kind === 'Role').map((o) => o.metadata.name)).toEqual(['ref-operator-leader-election']);
  });

  test('GIVEN namespaces and an operator watching all namespaces WHEN synthesized THEN the kind is granted by a Role in each of them, not by the ClusterRole', () => {
    const json = operatorWith(pods({ namespaces: ['shop', 'blog'] })).toJson() as Json[];
    expect(grants(json.find((o) => o.kind === 'ClusterRole'))['/pods']).toBeUndefined();
    const roles = json.filter((o) => o.kind === 'Role' && o.metadata.name === 'ref-operator-related');
    expect(roles.map((r) => r.metadata.namespace)).toEqual(['blog', 'shop']);
    for (const role of roles) expect(grants(role)).toEqual({ '/pods': ['get', 'list', 'watch'] });
    const bindings = json.filter((o) => o.kind === 'RoleBinding' && o.metadata.name === 'ref-operator-related');
    expect(bindings.map((b) => [b.metadata.namespace, b.roleRef.name, b.subjects[0].name])).toEqual([
      ['blog', 'ref-operator-related', 'ref-operator'],
      ['shop', 'ref-operator-related', 'ref-operator'],
    ]);
  });

  test('GIVEN watchNamespace shop and namespaces shop, blog WHEN synthesized THEN the Role in shop grants the kind and a Role in blog does too', () => {
    const json = operatorWith(pods({ namespaces: ['shop', 'blog'] }), { watchNamespace: 'shop' }).toJson() as Json[];
    const main = json.find((o) => o.kind === 'Role' && o.metadata.name === 'ref-operator');
    expect(main?.metadata.namespace).toBe('shop');
    expect(grants(main)['/pods']).toEqual(['get', 'list', 'watch']);
    expect(json.filter((o) => o.kind === 'Role' && o.metadata.name === 'ref-operator-related').map((r) => r.metadata.namespace)).toEqual(['blog']);
  });

  test('GIVEN namespaces WHEN the self-check lists what the runtime needs THEN the kind is checked in those namespaces only', () => {
    const operator = operatorWith(pods({ namespaces: ['shop', 'blog'] }));
    const podAccess = requiredAccess([operator]).filter((r) => r.resource === 'pods');
    expect(podAccess.map((r) => `${r.verb} ${r.namespace}`).sort()).toEqual(['get blog', 'get shop', 'list blog', 'list shop', 'watch blog', 'watch shop']);
  });

  test('GIVEN the memcached example WHEN constructed THEN its Pods are cached by the label every memcached pod carries, per bucket when sharded (they are the Pods of its Deployments)', () => {
    const operator = new MemcachedOperator(new App());
    expect(operator.related.pods.scope).toEqual({ labelSelector: 'app.kubernetes.io/name=memcached', metadataOnly: true, createdFromChildren: true });
  });
});

describe('what render sees of a scoped kind outside the runtime (snapshot tests, render, diff)', () => {
  function seenBy(scope: RelatedDeclaration['scope'], lookup: ReturnType<typeof relatedLookupOf>): unknown[] {
    let seen: unknown[] = [];
    const related: Related = { config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name', scope } };
    const operator = new ContextOperator(new App(), { related }, (_cr, chart, context) => {
      seen = context.related.config.map((o) => structuredClone(o));
      new ApiObject(chart, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
    });
    renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' } }), { related: lookup });
    return seen;
  }

  test('GIVEN metadataOnly WHEN whole objects are given THEN render sees apiVersion, kind and metadata only, as the runtime caches them', () => {
    const [seen] = seenBy({ metadataOnly: true }, relatedLookupOf([configMap('settings', 'team-a', { color: 'blue' })]));
    expect(seen).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: configMap('settings').metadata });
  });

  test('GIVEN a transform THEN render sees what it returns; GIVEN a lookup of the runtime\'s caches (cached: true) THEN objects are taken as they are', () => {
    const transform = (o: Record<string, any>) => ({ ...o, data: { kept: o.data.color } });
    expect(seenBy({ transform } as never, relatedLookupOf([configMap('settings', 'team-a', { color: 'blue' })]))).toEqual([{ ...configMap('settings'), data: { kept: 'blue' } }]);
    const whole = configMap('settings', 'team-a', { color: 'blue' });
    const cached = { ...relatedLookupOf([whole]), cached: true };
    expect(seenBy({ metadataOnly: true, transform } as never, cached)).toEqual([whole]);
  });
});

describe('a reference hidden by the scope', () => {
  const config = (scope: RelatedDeclaration['scope']): Related => ({ config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name', scope } });

  function renderError(related: Related): RenderError {
    try {
      renderCustomResource(operatorWith(related), refCr({ configMapRef: { name: 'settings' } }), { related: relatedLookupOf([configMap('other')]) });
    } catch (e) {
      expect(e).toBeInstanceOf(RenderError);
      return e as RenderError;
    }
    throw new Error('expected a RenderError');
  }

  test('GIVEN a selector scope and a named ConfigMap not cached WHEN rendered THEN ReferenceNotFound says it may be outside the scope, naming it', () => {
    const error = renderError(config({ labelSelector: 'team=a' }));
    expect(error.reason).toBe('ReferenceNotFound');
    expect(error.message).toBe(
      'render Ref team-a/shop: ConfigMap team-a/settings (spec.configMapRef.name) not found, or outside related.config.scope (labelSelector "team=a"): objects that do not match it are not cached',
    );
  });

  test('GIVEN namespaces that leave out the CR namespace WHEN rendered THEN ReferenceNotFound says the namespace is outside the scope', () => {
    const error = renderError(config({ namespaces: ['shared'] }));
    expect(error.reason).toBe('ReferenceNotFound');
    expect(error.message).toBe('render Ref team-a/shop: ConfigMap team-a/settings (spec.configMapRef.name) not visible: namespace team-a is outside related.config.scope (namespaces shared)');
  });

  test('GIVEN no scope WHEN rendered THEN the message is the plain not found, as before', () => {
    expect(renderError(config(undefined)).message).toBe('render Ref team-a/shop: ConfigMap team-a/settings (spec.configMapRef.name) not found');
  });
});
