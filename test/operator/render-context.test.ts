/**
 * renderCustomResource's context: related objects resolved before render (sorted, optional, required),
 * `context.observed` (of/get/list/all), and render purity with the same inputs.
 */
import { ApiObject, App } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { RenderError } from '../../lib/operator/errors.js';
import type { ObjectReferenceInput, RelatedDeclaration } from '../../lib/operator/render/related.js';
import { relatedLookupOf, renderCustomResource } from '../../lib/operator/render/render-children.js';
import { ObservedChildren, emptyRenderContext, type KubeResource, type RenderContext } from '../../lib/operator/render/render-context.js';
import { ContextOperator, configMap, pod, refCr, type ContextScript, type RefSpec } from './fixtures/context-operators.js';
import type { CustomResource } from '../../lib/operator/custom-resource.js';

type Related = Record<string, RelatedDeclaration<CustomResource<RefSpec>>>;

const RELATED: Related = {
  config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' },
  secret: { apiVersion: 'v1', kind: 'Secret', references: 'spec.secretName', optional: true },
  pods: { apiVersion: 'v1', kind: 'Pod', references: (cr) => (cr.spec.podLabels ? [{ selector: cr.spec.podLabels }] : []) },
};

function operatorWith(script: ContextScript<never>, related: Related = RELATED): ContextOperator {
  return new ContextOperator(new App(), { related }, script);
}

/** An operator that records the context of each render. */
function recording(related: Related = RELATED) {
  const contexts: RenderContext[] = [];
  const operator = operatorWith((_cr, scope, context) => {
    contexts.push(context);
    new ApiObject(scope, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
  }, related);
  return { operator, contexts };
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

const names = (objects: readonly KubeResource[]) => objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);

describe('renderCustomResource: context.related', () => {
  test('GIVEN a name and a selector reference WHEN rendered THEN context.related holds, per key, the existing objects sorted by namespace and name', () => {
    const { operator, contexts } = recording();
    const objects = [
      pod('web-2', { app: 'web' }),
      pod('db-0', { app: 'db' }),
      configMap('other'),
      pod('web-1', { app: 'web', extra: 'x' }),
      pod('web-0', { app: 'web' }, 'elsewhere'),
      configMap('settings', 'elsewhere'),
      configMap('settings', 'team-a', { a: '1' }),
    ];
    const output = renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' }, podLabels: { app: 'web' } }), { related: relatedLookupOf(objects) });
    expect(contexts).toHaveLength(1);
    const { related } = contexts[0];
    expect(Object.keys(related).sort()).toEqual(['config', 'pods', 'secret']);
    expect(related.config).toEqual([configMap('settings', 'team-a', { a: '1' })]);
    expect(names(related.pods)).toEqual(['team-a/web-1', 'team-a/web-2']);
    expect(related.secret).toEqual([]);
    expect(output.references.map((r) => r.related)).toEqual(['config', 'pods']);
  });

  test('GIVEN two selectors that match the same Pod WHEN rendered THEN the Pod is listed once', () => {
    const related: Related = { pods: { apiVersion: 'v1', kind: 'Pod', references: (): ObjectReferenceInput[] => [{ selector: { app: 'web' } }, { selector: { tier: 'front' } }] } };
    const { operator, contexts } = recording(related);
    renderCustomResource(operator, refCr(), { related: relatedLookupOf([pod('b', { app: 'web', tier: 'front' }), pod('a', { tier: 'front' })]) });
    expect(names(contexts[0].related.pods)).toEqual(['team-a/a', 'team-a/b']);
  });

  test('GIVEN the CR references nothing WHEN rendered without a lookup THEN every declared key maps to []', () => {
    const { operator, contexts } = recording();
    renderCustomResource(operator, refCr());
    expect(contexts[0].related).toEqual({ config: [], secret: [], pods: [] });
  });

  test('GIVEN an optional reference to a missing Secret WHEN rendered THEN render runs and the Secret is absent', () => {
    const { operator, contexts } = recording();
    renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' }, secretName: 'creds' }), { related: relatedLookupOf([configMap('settings')]) });
    expect(contexts).toHaveLength(1);
    expect(contexts[0].related.secret).toEqual([]);
    expect(names(contexts[0].related.config)).toEqual(['team-a/settings']);
  });

  test('GIVEN a required reference to a missing ConfigMap WHEN rendered THEN RenderError ReferenceNotFound names the CR, the kind, namespace/name and the path, and render does not run', () => {
    const { operator, contexts } = recording();
    const error = renderError(() =>
      renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' } }), { related: relatedLookupOf([configMap('settings', 'elsewhere'), configMap('other')]) }),
    );
    expect(error.reason).toBe('ReferenceNotFound');
    expect(error.message).toBe('render Ref team-a/shop: ConfigMap team-a/settings (spec.configMapRef.name) not found');
    expect(error.object).toMatchObject({ kind: 'Ref', namespace: 'team-a', name: 'shop' });
    expect(contexts).toHaveLength(0);
  });

  test('GIVEN two missing required references WHEN rendered THEN the message lists both', () => {
    const related: Related = {
      config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' },
      secret: { apiVersion: 'v1', kind: 'Secret', references: (cr) => [{ name: cr.spec.secretName ?? 'none', namespace: 'vault' }] },
    };
    const error = renderError(() => renderCustomResource(recording(related).operator, refCr({ configMapRef: { name: 'settings' }, secretName: 'creds' })));
    expect(error.reason).toBe('ReferenceNotFound');
    expect(error.message).toContain('ConfigMap team-a/settings (spec.configMapRef.name) not found');
    expect(error.message).toContain('Secret vault/creds (related.secret[0]) not found');
  });

  test('GIVEN a selector that matches nothing WHEN rendered THEN render runs with [] (a selector is never missing)', () => {
    const { operator, contexts } = recording();
    renderCustomResource(operator, refCr({ configMapRef: { name: 'settings' }, podLabels: { app: 'none' } }), { related: relatedLookupOf([configMap('settings')]) });
    expect(contexts[0].related.pods).toEqual([]);
  });

  test('GIVEN a references() function that returns something invalid WHEN rendered THEN RenderError InvalidReference names the declaration', () => {
    const related = { pods: { apiVersion: 'v1', kind: 'Pod', references: () => 'web' } } as unknown as Related;
    const error = renderError(() => renderCustomResource(recording(related).operator, refCr()));
    expect(error.reason).toBe('InvalidReference');
    expect(error.message).toContain('related.pods: references() must return an array');
  });

  test('GIVEN a references() function that throws WHEN rendered THEN RenderError InvalidReference carries the cause', () => {
    const related: Related = {
      pods: {
        apiVersion: 'v1',
        kind: 'Pod',
        references: () => {
          throw new Error('no labels');
        },
      },
    };
    const error = renderError(() => renderCustomResource(recording(related).operator, refCr()));
    expect(error.reason).toBe('InvalidReference');
    expect(error.message).toContain('no labels');
    expect((error.cause as Error).message).toBe('no labels');
  });
});

describe('renderCustomResource: context.observed', () => {
  const labels = { 'app.kubernetes.io/managed-by': 'ref-operator' };
  const observedDeployment: KubeResource = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'shop-web', namespace: 'team-a', labels },
    status: { readyReplicas: 2 },
  };
  const observedConfigMap: KubeResource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-settings', namespace: 'team-a' }, data: { seen: 'yes' } };

  test('GIVEN a cdk8s-plus Deployment and a plain ApiObject that exist WHEN render calls observed.of THEN it finds each cached object', () => {
    const found: Record<string, KubeResource | undefined> = {};
    const operator = operatorWith((_cr, scope, context) => {
      const web = new kplus.Deployment(scope, 'web', { containers: [{ image: 'nginx' }] });
      const settings = new ApiObject(scope, 'settings', { apiVersion: 'v1', kind: 'ConfigMap' });
      const fresh = new ApiObject(scope, 'fresh', { apiVersion: 'v1', kind: 'ConfigMap' });
      found.web = context.observed.of(web);
      found.settings = context.observed.of(settings);
      found.fresh = context.observed.of(fresh);
    }, {});
    renderCustomResource(operator, refCr(), { observed: [observedConfigMap, observedDeployment] });
    expect(found.web).toBe(observedDeployment);
    expect(found.settings).toBe(observedConfigMap);
    expect(found.fresh).toBeUndefined();
  });

  test('GIVEN a construct holding two ApiObjects WHEN render calls observed.of THEN RenderFailed names its path', () => {
    const operator = operatorWith((_cr, scope, context) => {
      const group = new Construct(scope, 'pair');
      new ApiObject(group, 'a', { apiVersion: 'v1', kind: 'ConfigMap' });
      new ApiObject(group, 'b', { apiVersion: 'v1', kind: 'ConfigMap' });
      context.observed.of(group);
    }, {});
    const error = renderError(() => renderCustomResource(operator, refCr()));
    expect(error.reason).toBe('RenderFailed');
    expect(error.message).toContain('shop/pair holds 2 ApiObjects; pass the ApiObject itself');
  });

  test('GIVEN observed objects WHEN render lists them THEN get/list match by group and kind (any version), list and all are sorted', () => {
    const older: KubeResource = { apiVersion: 'apps/v1beta2', kind: 'Deployment', metadata: { name: 'a-old', namespace: 'team-a' } };
    const extensions: KubeResource = { apiVersion: 'extensions/v1beta1', kind: 'Deployment', metadata: { name: 'ext', namespace: 'team-a' } };
    const second: KubeResource = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'b-web', namespace: 'team-a' } };
    let seen: { list: string[]; all: string[]; get?: KubeResource; getOtherGroup?: KubeResource } | undefined;
    const operator = operatorWith((_cr, scope, context) => {
      new ApiObject(scope, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
      seen = {
        list: context.observed.list({ apiVersion: 'apps/v1', kind: 'Deployment' }).map((o) => o.metadata.name),
        all: context.observed.all().map((o) => `${o.apiVersion} ${o.metadata.name}`),
        get: context.observed.get({ apiVersion: 'apps/v1', kind: 'Deployment' }, 'a-old'),
        getOtherGroup: context.observed.get({ apiVersion: 'v1', kind: 'Deployment' }, 'shop-web'),
      };
    }, {});
    renderCustomResource(operator, refCr(), { observed: [observedDeployment, extensions, observedConfigMap, older, second] });
    expect(seen!.all).toEqual(['apps/v1 b-web', 'apps/v1 shop-web', 'apps/v1beta2 a-old', 'extensions/v1beta1 ext', 'v1 shop-settings']);
    // the apps group in any version; extensions/Deployment is another group
    expect([...seen!.list].sort()).toEqual(['a-old', 'b-web', 'shop-web']);
    expect(seen!.get).toBe(older);
    expect(seen!.getOtherGroup).toBeUndefined();
  });

  test('GIVEN observed objects of one version in any order WHEN listed THEN they are sorted by namespace and name', () => {
    const d = (name: string, namespace = 'team-a'): KubeResource => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace } });
    let listed: string[] = [];
    const operator = operatorWith((_cr, scope, context) => {
      new ApiObject(scope, 'marker', { apiVersion: 'v1', kind: 'ConfigMap' });
      listed = context.observed.list({ apiVersion: 'apps/v1', kind: 'Deployment' }).map((o) => o.metadata.name);
    }, {});
    renderCustomResource(operator, refCr(), { observed: [d('c'), d('a'), d('b')] });
    expect(listed).toEqual(['a', 'b', 'c']);
  });

  test('GIVEN an ObservedChildren WHEN the array all() returned is changed THEN it keeps its objects; emptyRenderContext maps every key to []', () => {
    const observed = new ObservedChildren([observedConfigMap]);
    observed.all().pop();
    expect(observed.all()).toEqual([observedConfigMap]);
    expect(emptyRenderContext(['a', 'b']).related).toEqual({ a: [], b: [] });
    expect(emptyRenderContext().observed.all()).toEqual([]);
  });
});

describe('renderCustomResource: purity', () => {
  /** Children built from the context: one ConfigMap per related Pod, the config's data, observed replicas. */
  const operator = operatorWith((cr, scope, context) => {
    const settings = context.related.config[0];
    for (const p of context.related.pods) new ApiObject(scope, `for-${p.metadata.name}`, { apiVersion: 'v1', kind: 'ConfigMap', data: { pod: p.metadata.name } });
    const web = new kplus.Deployment(scope, 'web', { replicas: cr.spec.replicas, containers: [{ image: settings?.data?.image ?? 'nginx' }] });
    const seen = context.observed.of(web);
    new ApiObject(scope, 'summary', { apiVersion: 'v1', kind: 'ConfigMap', data: { ready: String(seen?.status?.readyReplicas ?? 0), pods: context.related.pods.map((p) => p.metadata.name).join(',') } });
  });
  const cr = refCr({ configMapRef: { name: 'settings' }, podLabels: { app: 'web' }, replicas: 3 });
  const related = [configMap('settings', 'team-a', { image: 'web:2' }), pod('web-b', { app: 'web' }), pod('web-a', { app: 'web' }), pod('db', { app: 'db' })];
  const observed: KubeResource[] = [
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'shop-web', namespace: 'team-a' }, status: { readyReplicas: 2 } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop-summary', namespace: 'team-a' } },
  ];

  test('GIVEN the same CR, related and observed objects WHEN rendered twice, inputs in another order THEN the output JSON is identical', () => {
    const first = renderCustomResource(operator, cr, { related: relatedLookupOf(related), observed });
    const second = renderCustomResource(operator, cr, { related: relatedLookupOf([...related].reverse()), observed: [...observed].reverse() });
    expect(JSON.stringify(second.children)).toBe(JSON.stringify(first.children));
    const summary = first.children.find((c) => c.metadata.name === 'shop-summary') as unknown as { data: Record<string, string> };
    expect(summary.data).toEqual({ ready: '2', pods: 'web-a,web-b' });
    const deployment = first.children.find((c) => c.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(deployment.spec.template.spec.containers[0].image).toBe('web:2');
  });

  test('GIVEN another observed status WHEN rendered THEN only what render derives from it changes', () => {
    const first = renderCustomResource(operator, cr, { related: relatedLookupOf(related), observed });
    const changed = renderCustomResource(operator, cr, { related: relatedLookupOf(related), observed: [{ ...observed[0], status: { readyReplicas: 3 } }, observed[1]] });
    expect(JSON.stringify(changed.children).replace('"ready":"3"', '"ready":"2"')).toBe(JSON.stringify(first.children));
  });
});
