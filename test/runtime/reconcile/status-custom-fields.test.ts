/**
 * status-writer.ts with the operator's own status fields: merged into the runtime's status, compared,
 * and written only when they changed.
 */
import type { KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { StatusWriter, computeStatus, statusChanged } from '../../../lib/runtime/reconcile/status-writer.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

const NOW = '2026-01-01T00:00:00Z';
const cr: KubeObject = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'a', namespace: 'n', uid: 'u', generation: 2, resourceVersion: '5' } };
const ready = { kind: 'ready', message: 'ok' } as const;

describe('computeStatus with custom fields', () => {
  test('GIVEN custom fields THEN they sit next to the runtime fields, which win over a custom field of the same name', () => {
    const status = computeStatus(cr, ready, [], NOW, { nodes: ['a'], observedGeneration: 99, children: 'x' });
    expect(status.nodes).toEqual(['a']);
    expect(status.observedGeneration).toBe(2);
    expect(status.children).toEqual([]);
    expect(Object.keys(status).sort()).toEqual(['children', 'conditions', 'nodes', 'observedGeneration']);
  });
});

describe('statusChanged with custom fields', () => {
  const base = computeStatus(cr, ready, [], NOW, { nodes: ['a'], endpoint: 'e' });

  test('GIVEN the same custom fields (keys in another order) THEN unchanged', () => {
    const current = JSON.parse(JSON.stringify({ endpoint: 'e', ...base }));
    expect(statusChanged(current, base, ['endpoint', 'nodes'])).toBe(false);
  });

  test('GIVEN a custom field with another value THEN changed', () => {
    expect(statusChanged(base, computeStatus(cr, ready, [], NOW, { nodes: ['a', 'b'], endpoint: 'e' }), ['endpoint', 'nodes'])).toBe(true);
  });

  test('GIVEN a custom field that the next status leaves out THEN changed when it is one of ours, ignored when it is not', () => {
    const without = computeStatus(cr, ready, [], NOW, { nodes: ['a'] });
    expect(statusChanged(base, without, ['endpoint', 'nodes'])).toBe(true);
    expect(statusChanged(base, without, [])).toBe(false);
  });

  test('GIVEN a custom field that is new in the next status THEN changed even when not listed as ours', () => {
    const current = computeStatus(cr, ready, [], NOW);
    expect(statusChanged(current, computeStatus(cr, ready, [], NOW, { nodes: [] }))).toBe(true);
  });
});

describe('StatusWriter with custom fields', () => {
  function writer() {
    const client = new FakeKubeClient();
    const statusWriter = new StatusWriter({ client, ref: { group: 'x.io', version: 'v1', plural: 'xs', namespaced: true }, fieldManager: 'x-operator' });
    return { calls: client.calls, statusWriter };
  }

  test('GIVEN the cached status holds the same custom fields THEN nothing is written; GIVEN one of ours changed THEN the whole status is sent', async () => {
    const { calls, statusWriter } = writer();
    const status = computeStatus(cr, ready, [], NOW, { nodes: ['a'] });
    const cached = { ...cr, status: JSON.parse(JSON.stringify(status)) };
    expect(await statusWriter.write(cached, computeStatus(cached, ready, [], NOW, { nodes: ['a'] }), ['nodes'])).toBe(false);
    expect(calls).toEqual([]);
    expect(await statusWriter.write(cached, computeStatus(cached, ready, [], NOW, { nodes: ['b'] }), ['nodes'])).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0].path).toBe('/apis/x.io/v1/namespaces/n/xs/a/status');
    expect(calls[0].body.status).toMatchObject({ nodes: ['b'], observedGeneration: 2 });
  });

  test('GIVEN a field of ours the next status drops THEN a write is sent without it', async () => {
    const { calls, statusWriter } = writer();
    const cached = { ...cr, status: computeStatus(cr, ready, [], NOW, { nodes: ['a'], endpoint: 'e' }) };
    expect(await statusWriter.write(cached, computeStatus(cached, ready, [], NOW, { nodes: ['a'] }), ['endpoint', 'nodes'])).toBe(true);
    expect('endpoint' in calls[0].body.status).toBe(false);
  });
});
