/**
 * The pace of a ShardMember's rounds (lib/runtime/sharding/membership.ts): a LIST of the ring and a PUT
 * of its own Lease every retry period while buckets move, every {@link restingPeriodMs} while the ring is
 * at rest (handover.ts `atRest`), and back to the retry period when another member appears or a round
 * fails. On a ManualClock with the ring's Leases in memory (test/support/lease-store.ts); against a real
 * API server: test/integration/shard-membership.test.ts.
 */
import { ManualClock } from '../../../lib/runtime/clock.js';
import { CLAIMED_ANNOTATION, HELD_ANNOTATION, LOADS_ANNOTATION, PLAN_ANNOTATION, ShardMember, restingPeriodMs } from '../../../lib/runtime/sharding/membership.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { flush, LeaseStore } from '../../support/lease-store.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/ops/leases';
const T0 = 1_000_000;

test('restingPeriodMs: half the renew deadline, never below the retry period', () => {
  expect(restingPeriodMs({ renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toBe(5_000);
  expect(restingPeriodMs({ renewDeadlineMs: 3_000, retryPeriodMs: 1_000 })).toBe(1_500);
  expect(restingPeriodMs({ renewDeadlineMs: 3_000, retryPeriodMs: 2_000 })).toBe(2_000);
});

test('GIVEN a lone member WHEN it holds every bucket THEN its rounds come every resting period; WHEN another member appears THEN every retry period until the ring rests again; WHEN a round fails THEN the next comes a retry period later', async () => {
  const clock = new ManualClock(T0);
  const store = new LeaseStore();
  const client = new FakeKubeClient();
  const lists: number[] = [];
  let failLists = 0;
  client.respond = (call) => store.handle(call.method, call.path, call.body);
  // Asked of every request before it is answered: each LIST's time is recorded here, failed ones included.
  client.fail = (call) => {
    if (call.method !== 'GET' || call.path !== LEASES) return undefined;
    lists.push(clock.now() - T0);
    return failLists > 0 && failLists-- > 0 ? new Error('connect ECONNREFUSED') : undefined;
  };
  const member = new ShardMember({ client, namespace: 'ops', ring: 'app', member: 'm-0', bucketCount: 4, leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000, clock });
  const runTo = async (ms: number) => {
    while (clock.now() < T0 + ms) {
      clock.advance(100);
      await flush();
    }
  };
  const since = (ms: number) => lists.filter((t) => t >= ms);

  await member.start(); // the ring check's LIST and the first round's, at 0: it claims the 4 buckets
  await runTo(6_000);
  expect(member.heldBuckets()).toEqual([0, 1, 2, 3]);
  // 1 000 takes them; 2 000 finds the ring at rest; then every 1 500.
  expect(lists).toEqual([0, 0, 1_000, 2_000, 3_500, 5_000]);

  // Another member's Lease appears (holding and claiming nothing): the owners change, m-0 releases its share.
  const other = structuredClone(store.leases.get('m-0')!);
  other.metadata = { ...other.metadata, name: 'm-1', annotations: { ...other.metadata!.annotations, [HELD_ANNOTATION]: '', [CLAIMED_ANNOTATION]: '', [LOADS_ANNOTATION]: '', [PLAN_ANNOTATION]: '' } };
  other.spec = { ...(other.spec as object), holderIdentity: 'm-1' };
  store.put('m-1', other);
  await runTo(9_000);
  expect(since(6_000)).toEqual([6_500, 7_500, 8_500]);
  expect(member.heldBuckets().length).toBe(2);

  // m-1 never renews: once it has been seen unchanged for its lease duration (4 s, from 6 500), m-0 takes its buckets back and rests.
  await runTo(16_000);
  expect(member.heldBuckets()).toEqual([0, 1, 2, 3]);
  const rested = since(9_000);
  const gaps = rested.slice(1).map((t, i) => t - rested[i]!);
  expect(gaps.slice(0, 3)).toEqual([1_000, 1_000, 1_000]);
  expect(gaps.at(-1)).toBe(1_500);

  // A failed round: the next a retry period later, then at rest again.
  const failedAt = lists.at(-1)! + 1_500;
  failLists = 1;
  await runTo(failedAt + 3_000);
  expect(since(failedAt)).toEqual([failedAt, failedAt + 1_000, failedAt + 2_500]);
  expect(member.heldBuckets()).toEqual([0, 1, 2, 3]);
  await member.stop();
});
