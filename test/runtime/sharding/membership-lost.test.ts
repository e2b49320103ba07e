/**
 * How a ShardMember (lib/runtime/sharding/membership.ts) tells that its membership was lost: the
 * ShardMembershipError handed to `onLost` (which the Manager fences writes with and `runOperators` rejects
 * with) names the real reason the Lease holder saw: the Lease deleted, held by another process, or not
 * renewed within the renew deadline. An in-memory Lease store (test/support/lease-store.ts) behind the fake client, on a ManualClock;
 * the real API server is exercised in test/integration/shard-membership.test.ts.
 */
import { ManualClock } from '../../../lib/runtime/clock.js';
import { ShardMember, ShardMembershipError } from '../../../lib/runtime/sharding/membership.js';
import { FakeKubeClient } from '../../support/fake-kube-client.js';
import { flush, LeaseStore } from '../../support/lease-store.js';

async function joined() {
  const clock = new ManualClock(1_000_000);
  const store = new LeaseStore();
  const client = new FakeKubeClient();
  client.respond = (call) => store.handle(call.method, call.path, call.body);
  const lost: ShardMembershipError[] = [];
  const member = new ShardMember({
    client,
    namespace: 'ops',
    ring: 'app',
    member: 'm-0',
    bucketCount: 4,
    leaseDurationMs: 4_000,
    renewDeadlineMs: 3_000,
    retryPeriodMs: 1_000,
    clock,
    onLost: (error) => lost.push(error),
  });
  await member.start();
  // The first round claims the buckets, the next takes them.
  clock.advance(1_000);
  await flush();
  expect(member.heldBuckets()).toEqual([0, 1, 2, 3]);
  return { clock, store, client, member, lost };
}

describe('ShardMember: the reason membership was lost', () => {
  test('GIVEN a member WHEN its Lease is deleted THEN onLost gets a MembershipLost error saying the Lease was deleted, not "not renewed"', async () => {
    const { clock, store, member, lost } = await joined();
    store.leases.delete('m-0');
    clock.advance(1_000);
    await flush();
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(ShardMembershipError);
    expect(lost[0]!.reason).toBe('MembershipLost');
    expect(lost[0]!.message).toBe('sharding: the member Lease ops/m-0 was lost (the Lease ops/m-0 was deleted); workers stopped, writes fenced');
    expect(member.heldBuckets()).toEqual([]);
    await member.stop();
  });

  test('GIVEN a member WHEN another process takes its Lease THEN the error names that holder', async () => {
    const { clock, store, member, lost } = await joined();
    const lease = store.leases.get('m-0')!;
    store.put('m-0', { ...lease, spec: { ...(lease.spec as object), holderIdentity: 'other-process' } });
    clock.advance(1_000);
    await flush();
    expect(lost.map((e) => e.message)).toEqual(['sharding: the member Lease ops/m-0 was lost (the Lease is held by other-process); workers stopped, writes fenced']);
    await member.stop();
  });

  test('GIVEN a member cut off from the API server WHEN its renew deadline passes THEN the error says it was not renewed within it', async () => {
    const { clock, client, member, lost } = await joined();
    client.fail = () => new Error('connect ECONNREFUSED');
    for (let t = 0; t < 3_000 && lost.length === 0; t += 100) {
      clock.advance(100);
      await flush();
    }
    expect(lost.map((e) => e.message)).toEqual(['sharding: the member Lease ops/m-0 was lost (not renewed within the renew deadline (3000 ms)); workers stopped, writes fenced']);
    await member.stop();
  });
});
