/**
 * OutcomeReporter, the status step: what a reconcile's outcome writes (conditions, inventory), which
 * Events it records, and what the apply and prune steps' failures throw.
 */
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ObjectRef } from '../../../lib/operator/object-ref.js';
import { ConflictError, ReconcileError, TerminalError } from '../../../lib/runtime/errors.js';
import { silentLogger } from '../../../lib/runtime/logger.js';
import { EventRecorder } from '../../../lib/runtime/events/events.js';
import { OutcomeReporter, childrenOutcome } from '../../../lib/runtime/reconcile/outcome-reporter.js';
import { ReconcileStatsLog } from '../../../lib/runtime/reconcile/reconcile-stats.js';
import { reconcileScope } from '../../../lib/runtime/reconcile/reconcile-scope.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const crRef = { group: 'x.io', version: 'v1', plural: 'widgets', namespaced: true };
const cr: KubeObject = { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'uid-1', resourceVersion: '3', generation: 2 } };
const child = { apiVersion: 'v1', kind: 'ConfigMap', name: 'w-config', namespace: 'ns', ready: true };

function setup() {
  const client = new FakeKubeClient();
  const events = new EventRecorder({ client, reportingController: 'cdk8s.io/widget-operator' });
  const reporter = new OutcomeReporter({ client, crRef, fieldManager: 'widget-operator', events, now: () => new Date('2026-01-01T00:00:00Z') });
  const statusWrites = () => client.calls.filter((c) => c.path.endsWith('/status'));
  const eventNotes = async () => {
    await events.flush();
    return client.calls.filter((c) => c.path.includes('/events')).map((c) => `${c.body.type} ${c.body.reason}: ${c.body.note}`);
  };
  return { client, reporter, statusWrites, eventNotes, stats: new ReconcileStatsLog().begin('ns/w') };
}

describe('childrenOutcome', () => {
  test('GIVEN no child waits THEN ready, counting the children; GIVEN some wait THEN progressing ChildrenNotReady saying why', () => {
    expect(childrenOutcome([child], [])).toEqual({ kind: 'ready', message: '1 child ready' });
    expect(childrenOutcome([child, child], [])).toEqual({ kind: 'ready', message: '2 children ready' });
    expect(childrenOutcome([child], ['Job ns/m waits for StatefulSet ns/db', 'Deployment ns/web: 1/2 replicas available'])).toEqual({
      kind: 'progressing',
      reason: 'ChildrenNotReady',
      message: 'Job ns/m waits for StatefulSet ns/db; Deployment ns/web: 1/2 replicas available',
    });
  });
});

describe('OutcomeReporter', () => {
  test('GIVEN an outcome THEN the status is written with the inventory, once: the same status on the same resourceVersion is not sent again', async () => {
    const { reporter, statusWrites } = setup();
    await expect(reporter.write(cr, childrenOutcome([child], []), [child], undefined, silentLogger)).resolves.toBe(true);
    await expect(reporter.write(cr, childrenOutcome([child], []), [child], undefined, silentLogger)).resolves.toBe(false);
    expect(statusWrites()).toHaveLength(1);
    expect(statusWrites()[0].body.status).toMatchObject({ observedGeneration: 2, children: [child] });
  });

  test('GIVEN applied and pruned children THEN one Applied and one Pruned Normal event naming them; none when nothing changed', async () => {
    const { reporter, eventNotes } = setup();
    const web = ObjectRef.of({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'w-web', namespace: 'ns' } });
    const old = ObjectRef.fromEntry({ apiVersion: 'v1', kind: 'Secret', name: 'w-old', namespace: 'ns' });
    reporter.changed(cr, [web, ObjectRef.fromEntry(child)], [old]);
    reporter.changed(cr, [], []);
    expect(await eventNotes()).toEqual(['Normal Applied: applied Deployment ns/w-web, ConfigMap ns/w-config', 'Normal Pruned: pruned Secret ns/w-old (no longer rendered)']);
  });

  test('GIVEN the children reconciled THEN stats count them and the ready status goes out; GIVEN a 409 THEN ConflictError, no status write, no Warning', async () => {
    const web = ObjectRef.of({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns' } });
    const applied = { children: [child], applied: [web], updated: [web], waiting: [], failures: [] };
    const pruned = { pruned: [], retained: [], failures: [] };
    const ok = setup();
    await ok.reporter.childrenReconciled(reconcileScope(cr, silentLogger, { stats: ok.stats }), { applied, pruned, inventory: [child] });
    expect(ok.stats).toEqual({ applied: 1, pruned: 0, statusWritten: true });
    expect(ok.statusWrites()[0].body.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True', message: '1 child ready' }));

    const conflicting = setup();
    const conflict = new ConflictError('delete Secret ns/w-old: conflict');
    await expect(conflicting.reporter.childrenReconciled(reconcileScope(cr, silentLogger, { stats: conflicting.stats }), { applied, pruned: { ...pruned, conflict }, inventory: [child] })).rejects.toMatchObject({
      name: 'ConflictError',
      cause: conflict,
    });
    expect(conflicting.statusWrites()).toEqual([]);
    expect(await conflicting.eventNotes()).toEqual(['Normal Applied: applied ConfigMap ns/w-config']);
  });

  test('GIVEN failures of both steps THEN Stalled with the first one\'s reason and the inventory, and ReconcileError of the apply step naming the CR', async () => {
    const { reporter, statusWrites, eventNotes, stats } = setup();
    const apply = new ReconcileError('Forbidden', 'ConfigMap ns/w-config: cannot patch configmaps');
    const prune = new ReconcileError('PruneFailed', 'delete Secret ns/w-old: 500');
    const thrown = reporter.childrenFailed(cr, stats, { apply: [apply], prune: [prune] }, [child], silentLogger);
    await expect(thrown).rejects.toMatchObject({ reason: 'Forbidden', step: 'apply', cause: apply, message: `${apply.message}; ${prune.message}` });
    const objectRef = ((await thrown.catch((err: unknown) => err)) as ReconcileError).objectRef;
    expect(objectRef).toBeInstanceOf(ObjectRef);
    expect(objectRef?.key()).toBe(ObjectRef.of(cr).key());
    expect(statusWrites()[0].body.status.children).toEqual([child]);
    expect(statusWrites()[0].body.status.conditions).toContainEqual(expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'Forbidden' }));
    expect(stats.statusWritten).toBe(true);
    expect(await eventNotes()).toEqual([expect.stringMatching(/^Warning Forbidden: ConfigMap ns\/w-config: cannot patch configmaps; delete Secret ns\/w-old: 500/)]);
  });

  test('GIVEN only prune failures THEN step prune; GIVEN only terminal failures THEN TerminalError; a plain Error counts as ApplyFailed', async () => {
    const prune = setup().reporter.childrenFailed(cr, setup().stats, { apply: [], prune: [new ReconcileError('PruneFailed', 'delete: 500')] }, [], silentLogger);
    await expect(prune).rejects.toMatchObject({ reason: 'PruneFailed', step: 'prune' });
    const terminal = setup().reporter.childrenFailed(cr, setup().stats, { apply: [new TerminalError('kind not owned')], prune: [] }, [], silentLogger);
    await expect(terminal).rejects.toBeInstanceOf(TerminalError);
    const plain = setup().reporter.childrenFailed(cr, setup().stats, { apply: [new Error('socket hang up')], prune: [] }, [], silentLogger);
    await expect(plain).rejects.toMatchObject({ reason: 'ApplyFailed', step: 'apply' });
  });
});
