/**
 * The query a scoped informer sends (label and field selectors on both the list and the watch), the
 * sharing key, and the informers a controller asks for a scoped related declaration.
 */
import { InformerFactory } from '../../../lib/runtime/cache/informer-factory.js';
import type { ResourceRef } from '../../../lib/runtime/client/resource-path.js';
import type { RelatedDeclaration } from '../../../lib/operator/render/related.js';
import { eventually } from '../../support/eventually.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const PODS: ResourceRef = { group: '', version: 'v1', plural: 'pods', namespaced: true };

/** The one fake client (test/support), answering every list with an empty one; its watches stay open until aborted. */
function listingClient(): FakeKubeClient {
  const client = new FakeKubeClient();
  client.respond = (call) => (call.method === 'GET' ? { kind: 'List', metadata: { resourceVersion: '7' }, items: [] } : undefined);
  return client;
}

describe('InformerFactory with a field selector', () => {
  test('GIVEN a namespace, a label and a field selector WHEN the informer starts THEN the list and the watch both send them, on the namespace path', async () => {
    const client = listingClient();
    const factory = new InformerFactory({ client });
    const informer = factory.informerFor(PODS, { namespace: 'shop', labelSelector: 'app.kubernetes.io/name=memcached', fieldSelector: 'status.phase!=Succeeded' });
    factory.start();
    try {
      await eventually('the watch', async () => client.watches.length > 0);
      const list = client.calls.find((call) => call.method === 'GET')!;
      expect(list.path).toBe('/api/v1/namespaces/shop/pods');
      expect(list.query).toMatchObject({ labelSelector: 'app.kubernetes.io/name=memcached', fieldSelector: 'status.phase!=Succeeded' });
      expect(client.watches[0].path).toBe('/api/v1/namespaces/shop/pods');
      expect(client.watches[0].query).toMatchObject({ labelSelector: 'app.kubernetes.io/name=memcached', fieldSelector: 'status.phase!=Succeeded' });
      expect(informer.fieldSelector).toBe('status.phase!=Succeeded');
      expect(informer.describe()).toBe('pods in shop with app.kubernetes.io/name=memcached with fields status.phase!=Succeeded');
    } finally {
      await factory.stop();
    }
  });

  test('GIVEN the same selectors THEN one informer is shared; a different field selector gets its own', () => {
    const factory = new InformerFactory({ client: listingClient() });
    const a = factory.informerFor(PODS, { labelSelector: 'a=b', fieldSelector: 'status.phase=Running' });
    const b = factory.informerFor(PODS, { labelSelector: 'a=b', fieldSelector: 'status.phase=Running' });
    const c = factory.informerFor(PODS, { labelSelector: 'a=b' });
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(factory.all()).toHaveLength(2);
  });
});

describe('Controller with a scoped related declaration', () => {
  const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
  const podKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };

  /** The options of the Pod informers a real Controller asks for (test/support/reconciler-harness.ts records them). */
  function informersAskedFor(related: Record<string, RelatedDeclaration<never>>, namespace?: string) {
    const operator = { operatorName: 'widget-operator', crd, childKinds: () => [], relatedKinds: Object.fromEntries(Object.keys(related).map((k) => [k, podKind])), related };
    const { informerRequests } = reconcilerHarness({ operator, render: () => [], controller: { namespace } });
    return informerRequests.filter((request) => request.kind.plural === 'pods').map((request) => request.options);
  }

  test('GIVEN a label selector and no namespaces WHEN wired THEN one Pod informer in the watched namespace with that selector', () => {
    const declaration = { apiVersion: 'v1', kind: 'Pod', references: () => [], scope: { labelSelector: 'app.kubernetes.io/name=memcached' } } as RelatedDeclaration<never>;
    expect(informersAskedFor({ pods: declaration }, 'team-a')).toEqual([{ namespace: 'team-a', labelSelector: 'app.kubernetes.io/name=memcached', fieldSelector: undefined }]);
  });

  test('GIVEN namespaces and a field selector WHEN wired THEN one Pod informer per namespace, each with the field selector', () => {
    const declaration = { apiVersion: 'v1', kind: 'Pod', references: () => [], scope: { namespaces: ['shop', 'blog'], fieldSelector: 'status.phase=Running' } } as RelatedDeclaration<never>;
    expect(informersAskedFor({ pods: declaration })).toEqual([
      { namespace: 'shop', labelSelector: undefined, fieldSelector: 'status.phase=Running' },
      { namespace: 'blog', labelSelector: undefined, fieldSelector: 'status.phase=Running' },
    ]);
  });

  test('GIVEN no scope WHEN wired THEN one unselected Pod informer in the watched namespace, as before', () => {
    const declaration = { apiVersion: 'v1', kind: 'Pod', references: () => [] } as RelatedDeclaration<never>;
    expect(informersAskedFor({ pods: declaration })).toEqual([{ namespace: undefined, labelSelector: undefined, fieldSelector: undefined }]);
  });
});

describe('Informer stopped while its first list runs', () => {
  test('GIVEN stop() during the list THEN it resolves as soon as the list answers, and no watch is opened (not after the watch timeout)', async () => {
    const client = listingClient();
    let answer: () => void = () => undefined;
    const listed = new Promise<void>((resolve) => (answer = resolve));
    client.hold = (call) => (call.method === 'GET' ? listed : Promise.resolve());
    const factory = new InformerFactory({ client });
    factory.informerFor(PODS, { labelSelector: 'a=b' });
    factory.start();
    await eventually('the list sent', async () => client.calls.some((c) => c.method === 'GET'));
    let stopped = false;
    const stopping = factory.stop().then(() => (stopped = true));
    answer();
    await eventually('stop() resolved', async () => stopped, { timeoutMs: 10_000 });
    await stopping;
    expect(client.watches).toHaveLength(0);
  });
});
