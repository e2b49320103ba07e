import { observeSample, progressTable, type SampleProgress } from '../../lib/cli/dev-command.js';

/** Where a sample is: not read by these tests. */
const AT = { ref: { group: 'example.com', version: 'v1', plural: 'echoes', namespaced: true }, namespace: 'default', name: 'x' };

test('GIVEN samples THEN the table has CR, READY, CHILDREN (ready/total) and TIME TO READY, aligned', () => {
  const table = progressTable([
    { cr: 'Memcached default/memcached-sample', at: AT, appliedAtMs: 0, ready: true, detail: '', children: { ready: 2, total: 2 }, timeToReadyMs: 1234 },
    { cr: 'Database default/orders', at: AT, appliedAtMs: 0, ready: false, detail: '', children: { ready: 4, total: 6 } },
  ]);
  expect(table).toBe(
    [
      'CR                                   READY   CHILDREN   TIME TO READY',
      'Memcached default/memcached-sample   True    2/2        1.2s',
      'Database default/orders              False   4/6        -',
      '',
    ].join('\n'),
  );
});

function readySample(): SampleProgress {
  return { cr: 'Echo default/hello', at: AT, appliedAtMs: 0, ready: true, detail: 'True Reconciled', children: { ready: 1, total: 1 }, timeToReadyMs: 900 };
}

function readyCr(generation: number, observedGeneration: number): { apiVersion: string; kind: string; metadata: { name: string; generation: number }; status: object } {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Echo',
    metadata: { name: 'hello', generation },
    status: { observedGeneration, conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled' }], children: [{ ready: true }] },
  };
}

test('GIVEN an already-Ready sample WHEN it is read again as Ready (e.g. after a reload) THEN no line is printed and its time to Ready stays', () => {
  const sample = readySample();
  expect(observeSample(sample, readyCr(3, 3))).toBeUndefined();
  expect(sample).toEqual(readySample());
});

test('GIVEN a Ready sample WHEN its spec changed and the operator has not observed it yet THEN one line says it is no longer Ready, and one when it is again', () => {
  const sample = readySample();
  // Same condition text, but observedGeneration is behind: readiness changed, so exactly one line.
  expect(observeSample(sample, readyCr(4, 3))).toBe('Echo default/hello: Ready=True Reconciled');
  expect(sample.ready).toBe(false);
  expect(observeSample(sample, readyCr(4, 3))).toBeUndefined();
  expect(observeSample(sample, readyCr(4, 4))).toBe('Echo default/hello: Ready=True Reconciled');
  expect(sample.ready).toBe(true);
  expect(sample.timeToReadyMs).toBe(900);
});

test('GIVEN a new sample WHEN its Ready condition appears THEN one line with status, reason and message, and the children counted', () => {
  const sample: SampleProgress = { cr: 'Echo default/hello', at: AT, appliedAtMs: Date.now(), ready: false, detail: 'no Ready condition yet', children: { ready: 0, total: 0 } };
  expect(observeSample(sample, { apiVersion: 'example.com/v1', kind: 'Echo', metadata: { name: 'hello', generation: 1 }, status: {} })).toBeUndefined();
  const line = observeSample(sample, {
    apiVersion: 'example.com/v1',
    kind: 'Echo',
    metadata: { name: 'hello', generation: 1 },
    status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False', reason: 'ChildrenNotReady', message: '1 of 2' }], children: [{ ready: true }, { ready: false }] },
  });
  expect(line).toBe('Echo default/hello: Ready=False ChildrenNotReady: 1 of 2');
  expect(sample.children).toEqual({ ready: 1, total: 2 });
  expect(sample.timeToReadyMs).toBeUndefined();
});
