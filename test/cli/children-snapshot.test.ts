import { MAX_DIFF_LINES, childChanges } from '../../lib/cli/children-snapshot.js';
import { crdChanges } from '../../lib/cli/dev-reload.js';
import type { OperatorDescription } from '../../lib/cli/operator-description.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';

const configMap = (labels: Record<string, string>, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'ns', labels, resourceVersion: '1', annotations: { 'operator.cdk8s.io/desired-hash': 'aaa' } },
  data: { a: '1' },
  ...extra,
});

test('GIVEN a child whose labels changed THEN `changed <child>:` and its +/- lines, without the desired hash, status or resourceVersion', () => {
  const before = new Map([['ConfigMap ns/c', configMap({ tier: 'one' })]]);
  const now = configMap({ tier: 'one', color: 'blue' });
  now.metadata!.resourceVersion = '2';
  now.metadata!.annotations = { 'operator.cdk8s.io/desired-hash': 'bbb' };
  (now as { status?: unknown }).status = { x: 1 };
  expect(childChanges(before, new Map([['ConfigMap ns/c', now]]))).toEqual(['changed ConfigMap ns/c:', '  +    color: blue']);
});

test('GIVEN a Deployment whose managedFields name the operator\'s apply WHEN another controller changed its fields too THEN only the operator\'s change is shown', () => {
  const deployment = (image: string, revision: string): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'ns',
      annotations: { 'deployment.kubernetes.io/revision': revision },
      managedFields: [
        { manager: 'web-operator', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:name': {}, 'f:image': {} } } } } } } },
        { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:deployment.kubernetes.io/revision': {} } } } },
      ],
    } as KubeObject['metadata'],
    spec: { template: { spec: { containers: [{ name: 'app', image, terminationMessagePath: '/dev/termination-log' }] } } },
  });
  expect(childChanges(new Map([['Deployment ns/web', deployment('app:1', '1')]]), new Map([['Deployment ns/web', deployment('app:2', '2')]]))).toEqual([
    'changed Deployment ns/web:',
    '  -          image: app:1',
    '  +          image: app:2',
  ]);
});

test('GIVEN children created, deleted and unchanged THEN one line each for the first two, sorted by child', () => {
  const same = configMap({});
  const before = new Map([['ConfigMap ns/b', configMap({})], ['ConfigMap ns/same', same]]);
  const after = new Map([['ConfigMap ns/a', configMap({})], ['ConfigMap ns/same', { ...same, metadata: { ...same.metadata, resourceVersion: '9' } }]]);
  expect(childChanges(before, after)).toEqual(['created ConfigMap ns/a', 'deleted ConfigMap ns/b']);
});

test('GIVEN a change of many lines THEN the first MAX_DIFF_LINES and a count of the rest', () => {
  const data = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']));
  const lines = childChanges(new Map([['ConfigMap ns/c', configMap({})]]), new Map([['ConfigMap ns/c', configMap({}, { data })]]));
  expect(lines[0]).toBe('changed ConfigMap ns/c:');
  expect(lines.length).toBe(1 + MAX_DIFF_LINES + 1);
  expect(lines[lines.length - 1]).toBe(`  … ${21 - MAX_DIFF_LINES} more lines`); // 20 added, 1 removed
});

test('GIVEN two versions of the operators THEN the CRDs added, changed and no longer loaded', () => {
  const op = (plural: string, crd: unknown): OperatorDescription =>
    ({ crd: { plural, group: 'g.io' }, customResourceDefinition: crd }) as unknown as OperatorDescription;
  expect(crdChanges([op('as', { v: 1 }), op('bs', { v: 1 }), op('cs', { v: 1 })], [op('as', { v: 1 }), op('bs', { v: 2 }), op('ds', {})])).toEqual([
    'CRD bs.g.io changed: re-applied',
    'CRD ds.g.io added',
    'CRD cs.g.io no longer loaded (left installed)',
  ]);
});
