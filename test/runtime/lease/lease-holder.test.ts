/**
 * LeaseHolder's pure parts on a ManualClock and the fake client: the renew deadline, the write fence,
 * "deposed before replaced", which of its own Lease writes carry the gate, and renewTime stamps. Its
 * behaviour against a real API server is covered through leader election and sharding membership
 * (test/integration/leader-election.test.ts, leader-fencing.test.ts, shard-membership.test.ts).
 */
import { ManualClock, type Clock } from '../../../lib/runtime/clock.js';
import { WriteFencedError } from '../../../lib/runtime/client/write-gate.js';
import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import { LeaseHolder, leaseRecord } from '../../../lib/runtime/lease/lease-holder.js';
import { LeaderElectionConfigError, nextMicroTime } from '../../../lib/runtime/lease/lease-timing.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';

function holder(overrides: { renewDeadlineMs?: number } = {}) {
  const manual = new ManualClock(1_000);
  let frozenMs = 0;
  // The manual clock, plus time that passed while the process was frozen (no timer ran for it).
  const clock = {
    now: () => manual.now() + frozenMs,
    setTimeout: (fn, ms) => manual.setTimeout(fn, ms),
    clearTimeout: (handle) => manual.clearTimeout(handle),
    advance: (ms: number) => manual.advance(ms),
    freeze: (ms: number) => (frozenMs += ms),
    pending: () => manual.pending(),
  } satisfies Clock & Record<string, unknown>;
  const client = new FakeKubeClient();
  const lost: string[] = [];
  const lostAt: number[] = [];
  const h = new LeaseHolder({
    client,
    namespace: 'ops',
    name: 'my-lock',
    identity: 'a',
    leaseDurationMs: 15_000,
    renewDeadlineMs: overrides.renewDeadlineMs ?? 10_000,
    retryPeriodMs: 2_000,
    clock,
    wallClock: () => new Date(Date.UTC(2026, 11, 4, 12, 0, 0, 500)),
    title: 'leadership',
    leaseTitle: 'the leader-election lease',
    onLost: (why) => {
      lost.push(why);
      lostAt.push(clock.now());
    },
  });
  return { clock, client, lost, lostAt, h };
}

const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'my-lock', namespace: 'ops' }, spec: { holderIdentity: 'a' } };

describe('LeaseHolder', () => {
  test('GIVEN a bad timing THEN the constructor throws LeaderElectionConfigError naming the values', () => {
    expect(() => holder({ renewDeadlineMs: 20_000 })).toThrow(LeaderElectionConfigError);
    expect(() => holder({ renewDeadlineMs: 20_000 })).toThrow(/leaseDuration=15000ms, renewDeadline=20000ms/);
  });

  test('GIVEN a renewal sent at t WHEN the clock reaches t + renewDeadline THEN it holds no more at that instant, and the timer reports the loss once', () => {
    const { clock, lost, h } = holder();
    expect(h.isHolding()).toBe(false);
    h.renewed(clock.now());
    clock.advance(9_999);
    expect(h.isHolding()).toBe(true);
    expect(lost).toEqual([]);
    clock.advance(1);
    expect(h.isHolding()).toBe(false);
    expect(lost).toEqual(['not renewed within the renew deadline (10000 ms)']);
    expect(h.lostWhy).toBe('not renewed within the renew deadline (10000 ms)');
    clock.advance(20_000);
    expect(lost).toHaveLength(1);
  });

  test('GIVEN renewals WHEN each is sent before the deadline THEN the deadline moves with the last one sent', () => {
    const { clock, lost, h } = holder();
    h.renewed(clock.now());
    clock.advance(8_000);
    h.renewed(clock.now() - 1_000); // sent 1 s ago, answered now
    clock.advance(8_999);
    expect(h.isHolding()).toBe(true);
    clock.advance(1);
    expect(h.isHolding()).toBe(false);
    expect(lost).toHaveLength(1);
  });

  test('GIVEN no hold THEN the fence refuses a write, naming the Lease, and reports no loss', () => {
    const { lost, h } = holder();
    expect(() => h.assertMayWrite('POST', '/x')).toThrow(new WriteFencedError('POST', '/x', 'this process does not hold the leader-election lease ops/my-lock'));
    expect(lost).toEqual([]);
  });

  test('GIVEN a holder past its deadline before its timer ran WHEN a write is asked THEN it is deposed at once, then the write is refused', () => {
    const { clock, lost, h } = holder();
    h.renewed(clock.now());
    expect(() => h.assertMayWrite('PATCH', '/x')).not.toThrow();
    // Jump past the deadline without running timers (a process resumed after a freeze).
    clock.freeze(12_000);
    expect(() => h.assertMayWrite('PATCH', '/x')).toThrow(/^PATCH \/x: not sent: leadership of ops\/my-lock lost: no renewal within the renew deadline \(10000 ms; last renewal sent 12000 ms ago\)$/);
    expect(lost).toEqual(['not renewed within the renew deadline (10000 ms)']);
    expect(() => h.assertMayWrite('PATCH', '/x')).toThrow(/leadership of ops\/my-lock lost: not renewed within the renew deadline/);
    expect(lost).toHaveLength(1);
  });

  test('GIVEN a quiet holder (stopping) THEN neither the timer nor the fence deposes it, but the fence still refuses past the deadline', () => {
    const { clock, lost, h } = holder();
    h.renewed(clock.now());
    h.quiet = true;
    clock.advance(11_000);
    expect(lost).toEqual([]);
    expect(() => h.assertMayWrite('PUT', '/x')).toThrow(WriteFencedError);
    expect(lost).toEqual([]);
  });

  test('GIVEN a read of its own Lease THEN another holder or none deposes it at once; itself or an empty holder does not', () => {
    const { clock, lost, h } = holder();
    h.renewed(clock.now());
    expect(h.observeOwn('a')).toBe(true);
    expect(h.observeOwn('')).toBe(false);
    expect(lost).toEqual([]);
    expect(h.observeOwn('b')).toBe(false);
    expect(lost).toEqual(['the Lease is held by b']);
    expect(h.isHolding()).toBe(false);

    const other = holder();
    other.h.renewed(other.clock.now());
    other.h.observeOwn(undefined);
    expect(other.lost).toEqual(['the Lease ops/my-lock was deleted']);
  });

  test('GIVEN its own Lease writes THEN they carry no gate before it first held, and its gate once it held or lost', async () => {
    const { clock, client, h } = holder();
    await h.create(LEASE);
    expect(client.calls.at(-1)).toMatchObject({ method: 'POST', path: '/apis/coordination.k8s.io/v1/namespaces/ops/leases' });
    expect(client.calls.at(-1)?.writeGate).toBeUndefined();
    h.renewed(clock.now());
    await h.update({ ...LEASE, metadata: { ...LEASE.metadata, resourceVersion: '1' } });
    expect(client.calls.at(-1)).toMatchObject({ method: 'PUT', path: '/apis/coordination.k8s.io/v1/namespaces/ops/leases/my-lock' });
    expect(client.calls.at(-1)?.writeGate).toBe(h);
    expect(h.lease?.metadata?.resourceVersion).toBe('2');
    h.lose('the Lease is held by b');
    await expect(h.update(LEASE)).rejects.toThrow(/not sent: leadership of ops\/my-lock lost: the Lease is held by b/);
    expect(client.calls.at(-1)?.writeGate).toBe(h);
    expect(h.lease?.metadata?.resourceVersion).toBe('2'); // nothing stored
  });

  test('GIVEN a wall clock not ahead of the last renewTime THEN each stamp is one microsecond later, carrying into the millisecond', () => {
    const { h } = holder();
    expect(h.stamp(undefined)).toBe('2026-12-04T12:00:00.500000Z');
    expect(h.stamp('2026-12-04T12:00:00.500000Z')).toBe('2026-12-04T12:00:00.500001Z');
    expect(nextMicroTime(new Date(Date.UTC(2026, 11, 4)), '2026-12-04T00:00:00.123999Z')).toBe('2026-12-04T00:00:00.124000Z');
    expect(h.stamp('not a time')).toBe('2026-12-04T12:00:00.500000Z');
  });

  test('GIVEN the renew loop WHEN a round succeeds THEN holding runs from when it was sent; WHEN rounds fail THEN each failure is told and holding is lost at the deadline, the loop ending', async () => {
    const { clock, lost, lostAt, h } = holder();
    h.renewed(clock.now());
    const failures: unknown[] = [];
    let answer: () => Promise<boolean> = async () => {
      clock.advance(500); // the round takes 500 ms: the renewal counts from when it was sent
      return true;
    };
    const done = h.renewLoop(() => answer(), [], (err) => failures.push(err));
    await flushUntil(() => clock.pending() === 2);
    clock.advance(2_000); // first round, sent at 3_000
    await flushUntil(() => clock.now() === 3_500);
    answer = () => Promise.reject(new Error('connect ECONNREFUSED'));
    for (let i = 0; i < 6 && lost.length === 0; i++) {
      await flushUntil(() => clock.pending() === 2);
      clock.advance(2_000);
    }
    await done;
    expect(failures.map(String)).toEqual(expect.arrayContaining(['Error: connect ECONNREFUSED']));
    expect(lost).toEqual(['not renewed within the renew deadline (10000 ms)']);
    expect(lostAt).toEqual([3_000 + 10_000]); // sent at 3 000, answered at 3 500
  });

  test('GIVEN the renew loop asked for a slower pace THEN each round is sent that long after the last was sent, never sooner than retryPeriod after it ended; back at the retry period when the pace says so', async () => {
    const { clock, h } = holder();
    h.renewed(clock.now());
    const sent: number[] = [];
    let takes = 500;
    let pace = 5_000;
    const done = h.renewLoop(async () => {
      sent.push(clock.now());
      clock.advance(takes);
      return true;
    }, [], undefined, () => pace);
    const runTo = async (t: number) => {
      while (clock.now() < t) {
        await flushUntil(() => clock.pending() === 2);
        clock.advance(100);
      }
    };
    await runTo(11_500);
    expect(sent).toEqual([6_000, 11_000]); // the first 5 s after the loop began (at 1 000), the next 5 s after it was sent
    takes = 4_000; // a slow round: 5 s after it was sent would leave 1 s; retryPeriod (2 s) after it ended
    await runTo(21_500);
    expect(sent).toEqual([6_000, 11_000, 16_000]); // 16 000 ended at 20 000: the next waits for 22 000
    takes = 500;
    pace = 2_000; // the fast pace: retryPeriod after the round ended
    await runTo(30_000);
    expect(sent).toEqual([6_000, 11_000, 16_000, 22_000, 24_500, 27_000, 29_500]);
    h.end();
    clock.advance(10_000);
    await done;
  });

  test('GIVEN the renew loop without a failure handler WHEN a round throws THEN the loop rejects with that error (its owner logs it), not silently', async () => {
    const { clock, h } = holder();
    h.renewed(clock.now());
    const done = h.renewLoop(() => Promise.reject(new Error('onNewLeader threw')), []);
    await flushUntil(() => clock.pending() === 2);
    clock.advance(2_000);
    await expect(done).rejects.toThrow('onNewLeader threw');
  });

  test('GIVEN the renew loop WHEN it wakes past the deadline (a frozen process) THEN it sends no round and holding is lost', async () => {
    const { clock, lost, h } = holder();
    h.renewed(clock.now());
    let rounds = 0;
    const done = h.renewLoop(async () => (rounds++, true), []);
    await flushUntil(() => clock.pending() === 2);
    clock.freeze(12_000);
    clock.advance(2_000);
    await done;
    expect(rounds).toBe(0);
    expect(lost).toEqual(['not renewed within the renew deadline (10000 ms)']);
  });

  test('GIVEN a Lease read THEN body() keeps its metadata and merges spec, labels and annotations, leaving out an empty holder; a 404 read forgets it', async () => {
    const { client, h } = holder();
    const read = { ...LEASE, metadata: { ...LEASE.metadata, resourceVersion: '7', labels: { a: '1' }, annotations: { b: '2' } }, spec: { holderIdentity: 'a', leaseTransitions: 3 } };
    client.respond = () => read;
    await h.get();
    expect(h.body({ holderIdentity: '', renewTime: 't' }, { labels: { ring: 'r' } })).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'my-lock', namespace: 'ops', resourceVersion: '7', labels: { a: '1', ring: 'r' }, annotations: { b: '2' } },
      spec: { leaseTransitions: 3, renewTime: 't' },
    });
    expect(leaseRecord(h.lease)).toEqual({ holderIdentity: 'a', leaseDurationSeconds: 0, acquireTime: undefined, renewTime: undefined, leaseTransitions: 3 });
    client.respond = undefined;
    client.fail = (call) => new ApiError(call.method, call.path, 404, 'NotFound', undefined, 'not found');
    await expect(h.get()).rejects.toThrow(/404|not found/);
    expect(h.lease).toBeUndefined();
    expect(h.body({ holderIdentity: 'a' }).metadata).toEqual({ name: 'my-lock', namespace: 'ops' });
  });
});

/** Lets promise chains run until `done` holds (a bounded number of turns: a wrong wait fails the test). */
async function flushUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setImmediate(r));
  expect(done()).toBe(true);
}
