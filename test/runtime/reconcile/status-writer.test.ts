import { StatusWriter, computeStatus, statusChanged } from '../../../lib/runtime/reconcile/status-writer.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

describe('computeStatus', () => {
  const cr = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'a', namespace: 'n', generation: 4 } };
  test('observedGeneration, kstatus conditions and sorted children', () => {
    const status = computeStatus(cr, { kind: 'ready', message: 'all ready' }, [
      { apiVersion: 'v1', kind: 'Service', name: 'b', namespace: 'n', ready: true },
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', namespace: 'n', ready: true },
    ], '2026-01-01T00:00:00Z');
    expect(status.observedGeneration).toBe(4);
    expect(status.children.map((c) => c.kind)).toEqual(['Deployment', 'Service']);
    expect(status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Ready=True', 'Reconciling=False', 'Stalled=False']);
  });

  test('a second computation on top of the written status is unchanged (no write)', () => {
    const first = computeStatus(cr, { kind: 'ready', message: 'ok' }, [], '2026-01-01T00:00:00Z');
    const second = computeStatus({ ...cr, status: JSON.parse(JSON.stringify(first)) }, { kind: 'ready', message: 'ok' }, [], '2026-01-01T01:00:00Z');
    expect(statusChanged(first, second)).toBe(false);
    const stalled = computeStatus({ ...cr, status: first }, { kind: 'stalled', reason: 'RenderFailed', message: 'x' }, undefined, '2026-01-01T01:00:00Z');
    expect(statusChanged(first, stalled)).toBe(true);
  });

  test('fields owned by others in status are ignored by the comparison', () => {
    const mine = computeStatus(cr, { kind: 'ready', message: 'ok' }, [], '2026-01-01T00:00:00Z');
    expect(statusChanged({ ...mine, endpoint: 'x' }, mine)).toBe(false);
    const foreign = { type: 'Available', status: 'True', reason: 'X', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
    expect(statusChanged({ ...mine, conditions: [foreign, ...mine.conditions] }, mine)).toBe(false);
    const next = computeStatus({ ...cr, status: { ...mine, conditions: [foreign, ...mine.conditions] } }, { kind: 'ready', message: 'ok' }, [], '2026-01-02T00:00:00Z');
    expect(next.conditions.map((c) => c.type)).toEqual(['Ready', 'Reconciling', 'Stalled']);
  });
});

describe('StatusWriter: cache lag', () => {
  const ref = { group: 'x.io', version: 'v1', plural: 'xs', namespaced: true };
  const cr = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'a', namespace: 'n', uid: 'u1', generation: 1, resourceVersion: '5' } };
  test('GIVEN a status written on top of resourceVersion 5 WHEN a reconcile a second later, the cache still at 5, computes the same transition THEN nothing is sent; a different status is sent', async () => {
    const client = new FakeKubeClient();
    const writer = new StatusWriter({ client, ref, fieldManager: 'x-operator' });
    const first = computeStatus(cr, { kind: 'ready', message: 'ok' }, [], '2026-01-01T00:00:00Z');
    expect(await writer.write(cr, first)).toBe(true);
    // Computed again on top of the same (cached) status, which has no Ready condition yet: a new lastTransitionTime.
    const again = computeStatus(cr, { kind: 'ready', message: 'ok' }, [], '2026-01-01T00:00:01Z');
    expect(again.conditions[0].lastTransitionTime).not.toBe(first.conditions[0].lastTransitionTime);
    expect(await writer.write(cr, again)).toBe(false);
    const stalled = computeStatus(cr, { kind: 'stalled', reason: 'RenderFailed', message: 'x' }, undefined, '2026-01-01T00:00:02Z');
    expect(await writer.write(cr, stalled)).toBe(true);
    expect(client.calls.filter((c) => c.path.endsWith('/status')).length).toBe(2);
  });
});
