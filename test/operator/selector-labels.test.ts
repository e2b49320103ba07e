import { App } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { INSTANCE_LABEL, NAME_LABEL, toLabelValue } from '../../lib/operator/render/labels.js';
import { selectorLabels } from '../../lib/operator/render/selector-labels.js';
import { renderForSnapshot } from '../../lib/testing/render-snapshot.js';
import { find } from '../support/manifests.js';
import { ScriptedOperator, webCr } from './fixtures/test-operators.js';

const Spec = z.object({});

/**
 * An operator of kind `kind` whose render is a cdk8s-plus Deployment `id` and a Service: as cdk8s-plus makes
 * them by default (exposeViaService), or selecting by selectorLabels as its module doc shows.
 */
function serverOperator(kind: string, id: string, select: 'cdk8s-plus default' | 'selectorLabels') {
  return new ScriptedOperator<typeof Spec>(new App(), `${kind.toLowerCase()}-operator`, { kind, spec: Spec }, (cr, scope: Construct) => {
    const labels = selectorLabels(cr, kind.toLowerCase());
    const deployment = new kplus.Deployment(scope, id, {
      ...(select === 'selectorLabels' ? { select: false, podMetadata: { labels } } : {}),
      containers: [{ image: 'hashicorp/http-echo:1.0', portNumber: 5678 }],
    });
    const ports = [{ port: 80, targetPort: 5678 }];
    if (select === 'cdk8s-plus default') {
      deployment.exposeViaService({ ports });
      return;
    }
    deployment.select(kplus.LabelSelector.of({ labels }));
    new kplus.Service(scope, 'service', { selector: kplus.Pods.select(scope, 'pods', { labels }), ports });
  });
}

function render(kind: string, id: string, select: 'cdk8s-plus default' | 'selectorLabels', name = 'hello') {
  const cr = { ...webCr({ name }), kind, spec: {} };
  const children = renderForSnapshot(serverOperator(kind, id, select), cr);
  return { selector: find(children, 'Deployment').spec.selector.matchLabels, service: find(children, 'Service').spec.selector, pod: find(children, 'Deployment').spec.template.metadata.labels };
}

describe('selectorLabels', () => {
  test('GIVEN a CR and an application name WHEN asked THEN the name and instance labels, and nothing else', () => {
    expect(selectorLabels({ metadata: { name: 'shop' } }, 'memcached')).toEqual({ [NAME_LABEL]: 'memcached', [INSTANCE_LABEL]: 'shop' });
  });

  test('GIVEN a CR name too long for a label value WHEN asked THEN the instance is the short form the SDK stamps on every child', () => {
    const name = `a${'b.c-'.repeat(63)}`;
    const labels = selectorLabels({ metadata: { name } }, 'app');
    expect(labels[INSTANCE_LABEL]).toBe(toLabelValue(name));
    expect(labels[INSTANCE_LABEL].length).toBeLessThanOrEqual(63);
  });

  test.each([
    ['', /name "" is not a valid label value: must not be empty/],
    ['My App', /name "My App" is not a valid label value: a valid label must/],
    ['-app', /name "-app" is not a valid label value/],
    ['x'.repeat(64), /must be no more than 63 characters \(got 64\)/],
  ])('GIVEN the name %j WHEN asked THEN it throws naming the argument and the reason', (name, message) => {
    expect(() => selectorLabels({ metadata: { name: 'shop' } }, name)).toThrow(message);
  });

  test('GIVEN CRs of one name under two operators with a construct of the same id WHEN cdk8s-plus selects by default THEN their Services select the same pods (the reason selectorLabels exists)', () => {
    const cache = render('Cache', 'server', 'cdk8s-plus default');
    const web = render('Website', 'server', 'cdk8s-plus default');
    expect(Object.keys(cache.selector)).toEqual(['cdk8s.io/metadata.addr']);
    expect(cache.service).toEqual(web.service);
  });

  test('GIVEN the same two operators WHEN they select by selectorLabels THEN the workload and its Service select exactly those labels, apart per operator', () => {
    const cache = render('Cache', 'server', 'selectorLabels');
    const web = render('Website', 'server', 'selectorLabels');
    expect(cache.selector).toEqual({ [NAME_LABEL]: 'cache', [INSTANCE_LABEL]: 'hello' });
    expect(cache.service).toEqual(cache.selector);
    expect(cache.pod).toMatchObject(cache.selector);
    expect(web.service).toEqual({ [NAME_LABEL]: 'website', [INSTANCE_LABEL]: 'hello' });
  });

  test('GIVEN a construct renamed WHEN selecting by default THEN the (immutable) selector changes; by selectorLabels THEN it stays', () => {
    expect(render('Cache', 'server', 'cdk8s-plus default').selector).not.toEqual(render('Cache', 'web-server', 'cdk8s-plus default').selector);
    expect(render('Cache', 'server', 'selectorLabels').selector).toEqual(render('Cache', 'web-server', 'selectorLabels').selector);
  });
});
