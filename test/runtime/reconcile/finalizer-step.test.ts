/**
 * FinalizerStep: adding our finalizer and running the operator's hook once, with the memory that keeps
 * a reconcile before the cache caught up from writing (or finalizing) again.
 */
import { ObjectRef } from '../../../lib/operator/object-ref.js';
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ReconcileError } from '../../../lib/runtime/errors.js';
import { silentLogger } from '../../../lib/runtime/logger.js';
import { FinalizerStep, type FinalizingOperator } from '../../../lib/runtime/reconcile/finalizer-step.js';
import { OutcomeReporter } from '../../../lib/runtime/reconcile/outcome-reporter.js';
import { ReconcileStatsLog } from '../../../lib/runtime/reconcile/reconcile-stats.js';
import { reconcileScope } from '../../../lib/runtime/reconcile/reconcile-scope.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const crRef = { group: 'x.io', version: 'v1', plural: 'widgets', namespaced: true };
const FINALIZER = 'operator.cdk8s.io/widget-operator';
const CR_PATH = '/apis/x.io/v1/namespaces/ns/widgets/w';
const cr = (resourceVersion: string, extra: { finalizers?: string[]; deletionTimestamp?: string } = {}): KubeObject => ({
  apiVersion: 'x.io/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', resourceVersion, ...extra },
});

function setup(operator: FinalizingOperator) {
  const client = new FakeKubeClient();
  const reporter = new OutcomeReporter({ client, crRef, fieldManager: operator.operatorName });
  const step = new FinalizerStep({ client, crRef, operator, reporter });
  const stats = new ReconcileStatsLog().begin('ns/w');
  return { client, step, stats };
}

describe('FinalizerStep', () => {
  test('GIVEN an operator without finalize THEN no finalizer name, and neither step writes', async () => {
    const { client, step, stats } = setup({ operatorName: 'widget-operator' });
    expect(step.name).toBeUndefined();
    await step.ensure(reconcileScope(cr('1'), silentLogger));
    await step.finalize(reconcileScope(cr('1', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [FINALIZER] }), silentLogger, { stats }));
    expect(client.calls).toEqual([]);
  });

  test('GIVEN a CR without our finalizer THEN it is added once per resourceVersion (the cache lags our patch), and again on a newer one', async () => {
    const { client, step } = setup({ operatorName: 'widget-operator', finalize: async () => undefined });
    expect(step.name).toBe(FINALIZER);
    await step.ensure(reconcileScope(cr('1'), silentLogger));
    await step.ensure(reconcileScope(cr('1'), silentLogger));
    expect(client.calls.map((c) => `${c.method} ${c.path} ${c.body.metadata.resourceVersion}`)).toEqual([`PATCH ${CR_PATH} 1`]);
    await step.ensure(reconcileScope(cr('2'), silentLogger));
    expect(client.calls).toHaveLength(2);
    await step.ensure(reconcileScope(cr('3', { finalizers: [FINALIZER] }), silentLogger));
    expect(client.calls).toHaveLength(2);
  });

  test('GIVEN a CR being deleted THEN the hook runs once and our finalizer is removed; a forgotten CR is finalized anew', async () => {
    const runs: string[] = [];
    const { client, step, stats } = setup({ operatorName: 'widget-operator', finalize: async (obj: never) => void runs.push((obj as KubeObject).metadata?.resourceVersion ?? '') });
    const deleting = cr('5', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['a.io/x', FINALIZER] });
    await step.finalize(reconcileScope(deleting, silentLogger, { stats }));
    await step.finalize(reconcileScope(deleting, silentLogger, { stats }));
    expect(runs).toEqual(['5']);
    expect(client.calls.map((c) => c.body.metadata.finalizers)).toEqual([['a.io/x']]);
    step.forget('uid-1');
    await step.finalize(reconcileScope(deleting, silentLogger, { stats }));
    expect(runs).toEqual(['5', '5']);
  });

  test('GIVEN the hook fails THEN ReconcileError FinalizeFailed (step finalize, the hook\'s error as cause, the CR\'s ObjectRef), Stalled written, the finalizer kept', async () => {
    const boom = new Error('bucket not empty');
    const { client, step, stats } = setup({ operatorName: 'widget-operator', finalize: async () => { throw boom; } });
    const failure = step.finalize(reconcileScope(cr('5', { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [FINALIZER] }), silentLogger, { stats }));
    await expect(failure).rejects.toBeInstanceOf(ReconcileError);
    await expect(failure).rejects.toMatchObject({ reason: 'FinalizeFailed', step: 'finalize', cause: boom, message: 'finalize Widget ns/w: bucket not empty' });
    const objectRef = ((await failure.catch((err: unknown) => err)) as ReconcileError).objectRef;
    expect(objectRef).toBeInstanceOf(ObjectRef);
    expect(objectRef?.toString()).toBe('Widget ns/w');
    expect(client.calls.map((c) => `${c.method} ${c.path}`)).toEqual([`PATCH ${CR_PATH}/status`]);
    expect(client.calls[0].body.status.conditions).toContainEqual(expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'FinalizeFailed' }));
    expect(stats.statusWritten).toBe(true);
  });
});
