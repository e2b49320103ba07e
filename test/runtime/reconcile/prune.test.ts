import { selectPrunable } from '../../../lib/runtime/reconcile/prune.js';
import type { KubeObject } from '../../../lib/runtime/client/api-client.js';

const uid = 'cr-uid';
function obj(kind: string, name: string, opts: { label?: boolean; ownerRef?: boolean; manager?: string; apiVersion?: string } = {}): KubeObject {
  return {
    apiVersion: opts.apiVersion ?? (kind === 'Deployment' || kind === 'ReplicaSet' ? 'apps/v1' : 'v1'),
    kind,
    metadata: {
      name,
      namespace: 'demo',
      uid: `${kind}-${name}`,
      labels: opts.label === false ? {} : { 'operator.cdk8s.io/owner-uid': uid },
      ownerReferences: opts.ownerRef ? [{ apiVersion: 'x/v1', kind: 'X', name: 'x', uid, controller: true }] : [],
      managedFields: opts.manager ? [{ manager: opts.manager, operation: 'Apply' }] : [],
    },
  };
}

describe('selectPrunable', () => {
  test('only owned, applied by us, and not desired', () => {
    const candidates = [
      obj('ConfigMap', 'keep', { manager: 'op' }),
      obj('ConfigMap', 'dropped', { manager: 'op' }),
      obj('Service', 'dropped-by-ref', { label: false, ownerRef: true, manager: 'op' }),
      obj('ReplicaSet', 'web-123', { label: false, ownerRef: false, manager: 'kube-controller-manager' }),
      obj('ConfigMap', 'not-ours', { manager: 'someone-else' }),
      obj('ConfigMap', 'other-owner', { label: false, manager: 'op' }),
    ];
    const desired = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: 'demo' } }];
    expect(selectPrunable(candidates, desired, uid, 'op').map((o) => o.metadata?.name)).toEqual(['dropped', 'dropped-by-ref']);
  });

  test('a desired child in another API version of the same group/kind is kept', () => {
    const candidates = [obj('HorizontalPodAutoscaler', 'h', { manager: 'op', apiVersion: 'autoscaling/v1' })];
    const desired = [{ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'demo' } }];
    expect(selectPrunable(candidates, desired, uid, 'op')).toEqual([]);
  });
});
