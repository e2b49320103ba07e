import { childReadiness } from '../../../lib/runtime/reconcile/child-readiness.js';

describe('childReadiness', () => {
  test('Deployment: Available with the current generation observed', () => {
    const d = (observedGeneration: number, available: string) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', generation: 2 }, spec: { replicas: 3 },
      status: { observedGeneration, availableReplicas: 1, conditions: [{ type: 'Available', status: available }] },
    });
    expect(childReadiness(d(2, 'True')).ready).toBe(true);
    expect(childReadiness(d(1, 'True'))).toEqual({ ready: false, message: 'Deployment web: generation 2 not yet observed' });
    expect(childReadiness(d(2, 'False'))).toEqual({ ready: false, message: 'Deployment web: 1/3 replicas available' });
  });

  test('StatefulSet: replicas ready', () => {
    const s = (readyReplicas: number) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, readyReplicas } });
    expect(childReadiness(s(2)).ready).toBe(true);
    expect(childReadiness(s(1)).ready).toBe(false);
  });

  test('Job: complete; PVC: bound; others: exist', () => {
    expect(childReadiness({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, status: { conditions: [{ type: 'Complete', status: 'True' }] } }).ready).toBe(true);
    expect(childReadiness({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, status: {} }).ready).toBe(false);
    expect(childReadiness({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'p' }, status: { phase: 'Bound' } }).ready).toBe(true);
    expect(childReadiness({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'p' }, status: { phase: 'Pending' } }).ready).toBe(false);
    expect(childReadiness({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } }).ready).toBe(true);
    expect(childReadiness(undefined, 'ConfigMap c').ready).toBe(false);
  });
});
