/**
 * Only changes that matter fan out: the related-change predicate (changed fields against what render
 * read) and the controller's handling of related events, through the reconciler harness (a real
 * Controller and Workqueue on in-memory caches): creations and deletions always reconcile the
 * referencing CRs; updates only when they matter, or when they change which CRs reference the object.
 */
import { RelatedReads } from '../../../lib/operator/render/related-reads.js';
import type { KubeResource } from '../../../lib/operator/render/render-context.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { changedFields, relatedChangeMatters } from '../../../lib/runtime/reconcile/related-change.js';
import { RecordingWorkqueue } from '../../support/recording-workqueue.js';
import { reconcilerHarness } from '../../support/reconciler-harness.js';

const crd = { apiVersion: 'x.io/v1', group: 'x.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const configMapKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const podKind = { apiVersion: 'v1', group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };

type Metadata = NonNullable<KubeObject['metadata']>;
const configMap = (metadata: Partial<Metadata> = {}, data: Record<string, string> = { greeting: 'hi' }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'ns', uid: 'cm-uid', resourceVersion: '1', ...metadata },
  data,
});
const pod = (labels: Record<string, string>, phase = 'Running'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'ns', uid: 'pod-uid', resourceVersion: '1', labels },
  status: { phase },
});
const cr = (name: string): KubeObject => ({ apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 1, resourceVersion: '1' } });

describe('changedFields', () => {
  test('GIVEN updates that differ only in resourceVersion, managedFields or generation WHEN compared THEN nothing changed', () => {
    const updated = configMap({ resourceVersion: '9', generation: 3, managedFields: [{ manager: 'kubectl' }] as never });
    expect([...changedFields(configMap(), updated)]).toEqual([]);
  });

  test('GIVEN a label added, data changed, a field added WHEN compared THEN metadata, data, binaryData', () => {
    expect([...changedFields(configMap(), configMap({ labels: { team: 'a' } }))]).toEqual(['metadata']);
    expect([...changedFields(configMap(), configMap({}, { greeting: 'hello' }))]).toEqual(['data']);
    expect([...changedFields(configMap(), { ...configMap(), binaryData: { b: 'AA==' } })]).toEqual(['binaryData']);
  });

  test('GIVEN the same content in another key order WHEN compared THEN nothing changed', () => {
    expect([...changedFields(configMap({}, { a: '1', b: '2' }), configMap({}, { b: '2', a: '1' }))]).toEqual([]);
  });
});

describe('relatedChangeMatters', () => {
  const labelAdded = [configMap(), configMap({ labels: { team: 'a' }, resourceVersion: '2' })] as const;
  const dataChanged = [configMap(), configMap({ resourceVersion: '2' }, { greeting: 'hello' })] as const;
  const readData = () => {
    const reads = new RelatedReads();
    void reads.track('config', configMap() as KubeResource).data;
    return reads;
  };

  test('GIVEN no render yet WHEN a label is added THEN it matters; WHEN only the resourceVersion moves THEN it does not', () => {
    const rules = [{ related: 'config' }];
    expect(relatedChangeMatters(rules, new RelatedReads(), ...labelAdded)).toBe(true);
    expect(relatedChangeMatters(rules, new RelatedReads(), configMap(), configMap({ resourceVersion: '2' }))).toBe(false);
  });

  test('GIVEN render read only data WHEN a label is added THEN it does not matter; WHEN data changes THEN it does', () => {
    const rules = [{ related: 'config' }];
    expect(relatedChangeMatters(rules, readData(), ...labelAdded)).toBe(false);
    expect(relatedChangeMatters(rules, readData(), ...dataChanged)).toBe(true);
  });

  test('GIVEN render read metadata WHEN a label is added THEN it matters', () => {
    const reads = new RelatedReads();
    void reads.track('config', configMap() as KubeResource).metadata;
    expect(relatedChangeMatters([{ related: 'config' }], reads, ...labelAdded)).toBe(true);
  });

  test('GIVEN a declaration with changeMatters WHEN asked THEN its answer is taken, whatever render read', () => {
    expect(relatedChangeMatters([{ related: 'config', changeMatters: () => true }], readData(), ...labelAdded)).toBe(true);
    expect(relatedChangeMatters([{ related: 'config', changeMatters: () => false }], readData(), ...dataChanged)).toBe(false);
  });

  test('GIVEN two declarations of the kind WHEN one finds the change matters THEN it matters', () => {
    const reads = readData();
    void reads.track('labelled', configMap() as KubeResource).metadata;
    expect(relatedChangeMatters([{ related: 'config' }, { related: 'labelled' }], reads, ...labelAdded)).toBe(true);
  });

  test('GIVEN no declaration known for the kind WHEN asked THEN it matters (conservative)', () => {
    expect(relatedChangeMatters([], readData(), configMap(), configMap({ resourceVersion: '2' }))).toBe(true);
  });
});

/**
 * A controller whose CRs `cr-0` … `cr-{n-1}` reference ConfigMap ns/settings by name (`config`), and whose
 * CR `selecting` selects the Pods labelled app=web (`pods`); the ConfigMap exists unless `configMap` is
 * false. What the setup queued is cleared.
 */
function setup(n: number, options: { config?: { changeMatters?: (a: KubeResource, b: KubeResource) => boolean }; configMap?: boolean } = {}) {
  const queue = new RecordingWorkqueue({ name: 'test' });
  const related = {
    config: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name', ...options.config },
    pods: { apiVersion: 'v1', kind: 'Pod', references: () => [] },
  };
  const harness = reconcilerHarness({
    operator: { operatorName: 'widget-operator', crd, childKinds: () => [], relatedKinds: { config: configMapKind, pods: podKind }, related: related as never },
    render: () => [],
    events: false,
    controller: {
      queue,
      references: (o) =>
        o.metadata?.name === 'selecting'
          ? [{ related: 'pods', kind: podKind, namespace: 'ns', selector: { app: 'web' }, optional: true, source: 'related.pods' }]
          : [{ related: 'config', kind: configMapKind, namespace: 'ns', name: 'settings', optional: false, source: 'spec.configMapRef.name' }],
    },
  });
  const controller = harness.controller!;
  const { crs } = harness;
  for (let i = 0; i < n; i++) crs.put(cr(`cr-${i}`));
  const configMaps = harness.cache('configmaps');
  if (options.configMap !== false) configMaps.put(configMap());
  queue.adds.length = 0;
  /** What render does when it reads `field` of the ConfigMap it is handed. */
  const renderReads = (field: string) => void (controller.relatedReads.track('config', configMap() as KubeResource) as unknown as Record<string, unknown>)[field];
  return { controller, queue, crs, configMaps, pods: harness.cache('pods'), renderReads };
}

describe('Controller: related events', () => {
  test('GIVEN 20 CRs referencing a ConfigMap whose data alone render read WHEN a label is added THEN no CR is queued; WHEN its data changes THEN all 20', () => {
    const { queue, configMaps, renderReads } = setup(20);
    renderReads('data');
    configMaps.put(configMap({ labels: { team: 'a' }, resourceVersion: '2' }));
    expect(queue.addedKeys()).toEqual([]);
    configMaps.put(configMap({ labels: { team: 'a' }, resourceVersion: '3' }, { greeting: 'hello' }));
    expect(queue.addedKeys().sort()).toEqual(Array.from({ length: 20 }, (_, i) => `ns/cr-${i}`).sort());
  });

  test('GIVEN no render yet WHEN a label is added THEN every referencing CR is queued; WHEN only the resourceVersion moves THEN none', () => {
    const { queue, configMaps } = setup(3);
    configMaps.put(configMap({ resourceVersion: '2' }));
    expect(queue.addedKeys()).toEqual([]);
    configMaps.put(configMap({ labels: { team: 'a' }, resourceVersion: '3' }));
    expect(queue.addedKeys().sort()).toEqual(['ns/cr-0', 'ns/cr-1', 'ns/cr-2']);
  });

  test('GIVEN render read only data WHEN the ConfigMap is created or deleted THEN every referencing CR is queued', () => {
    const { queue, configMaps, renderReads } = setup(2, { configMap: false });
    renderReads('data');
    configMaps.put(configMap());
    configMaps.delete(configMap());
    expect(queue.addedKeys()).toEqual(['ns/cr-0', 'ns/cr-1', 'ns/cr-0', 'ns/cr-1']);
  });

  test('GIVEN a changeMatters that returns true WHEN a label is added after render read only data THEN every CR is queued (the fan-out before)', () => {
    const { queue, configMaps, renderReads } = setup(5, { config: { changeMatters: () => true } });
    renderReads('data');
    configMaps.put(configMap({ labels: { team: 'a' }, resourceVersion: '2' }));
    expect(queue.addedKeys()).toHaveLength(5);
  });

  test('GIVEN a changeMatters that throws WHEN an update arrives THEN the CRs are queued (conservative)', () => {
    const { queue, configMaps } = setup(2, {
      config: {
        changeMatters: () => {
          throw new Error('boom');
        },
      },
    });
    configMaps.put(configMap({ resourceVersion: '2' }));
    expect(queue.addedKeys().sort()).toEqual(['ns/cr-0', 'ns/cr-1']);
  });

  test('GIVEN a CR selecting Pods by label and render that read no Pod field WHEN a Pod gains or loses the label THEN the CR is queued; WHEN its status changes THEN not', () => {
    const { controller, queue, crs, pods } = setup(0);
    crs.put(cr('selecting'));
    void controller.relatedReads.track('pods', pod({ app: 'web' }) as KubeResource);
    pods.put(pod({}, 'Pending'));
    queue.adds.length = 0;
    pods.put(pod({ app: 'web' }, 'Pending'));
    pods.put(pod({ app: 'web' }, 'Running'));
    pods.put(pod({ app: 'db' }, 'Running'));
    expect(queue.addedKeys()).toEqual(['ns/selecting', 'ns/selecting']);
  });
});
