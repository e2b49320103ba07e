/**
 * ShardMember (lib/runtime/sharding/membership.ts) against a real kube-apiserver: members of one ring,
 * each with its own Lease, short timings (4 s / 3 s / 1 s). A sampler checks every member every 5 ms: at
 * no sampled moment do two members hold a bucket. Waits are for conditions, never fixed sleeps.
 * Bad input: a missing namespace, a user without RBAC on Leases, and a member with another bucket count
 * are refused at start, with messages naming the namespace, the permission, or both settings.
 */
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { assignBucketsBalanced } from '../../lib/runtime/sharding/rendezvous.js';
import { HELD_ANNOTATION, LOADS_ANNOTATION, PLAN_ANNOTATION, RING_LABEL, ShardMember, ShardMembershipError } from '../../lib/runtime/sharding/membership.js';
import { memberLoads, rebalanceStep } from '../../lib/runtime/sharding/load-balance.js';
import { type Partitionable, partitionable, useApiServerOnly } from '../support/api-server-only.js';
import { eventually as waitFor } from '../support/eventually.js';

const TEST_TIMEOUT_MS = 120_000;
const BUCKETS = 16;

const api = useApiServerOnly('shard');
const { namespace } = api;

/** Polls `check` every 50 ms until it is true (a wait, not a timing assertion). */
const eventually = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
  waitFor(what, async () => check(), { timeoutMs, intervalMs: 50 });

interface TestMember {
  readonly member: ShardMember;
  /** While true, every request fails as if the API server were unreachable (a frozen or cut-off replica). */
  partitioned: boolean;
  lost: boolean;
}

function testMember(name: string, ring: string, options: { bucketCount?: number; impersonate?: { user: string }; namespace?: string; load?: (bucket: number) => number } = {}): TestMember {
  const link = partitionable(api.client({ impersonate: options.impersonate }));
  const self = Object.assign(link, { lost: false }) as Partitionable & TestMember;
  const member = new ShardMember({
    client: link.client,
    namespace: options.namespace ?? namespace,
    ring,
    member: name,
    bucketCount: options.bucketCount ?? BUCKETS,
    leaseDurationMs: 4_000,
    renewDeadlineMs: 3_000,
    retryPeriodMs: 1_000,
    load: options.load,
    onLost: () => {
      self.lost = true;
    },
  });
  return Object.assign(self, { member });
}

/** Samples every member every 5 ms and records each moment two held one bucket. */
function sampler(members: () => TestMember[]) {
  const overlaps: string[] = [];
  const timer = setInterval(() => {
    for (let b = 0; b < BUCKETS; b++) {
      const holders = members().filter((m) => m.member.holds(b)).map((m) => m.member.member);
      if (holders.length > 1) overlaps.push(`bucket ${b}: ${holders.join(', ')}`);
    }
  }, 5);
  return { overlaps, stop: () => clearInterval(timer) };
}

/** True when each bucket is held by exactly its owner (balanced rendezvous) among `members`, in memory and in the Leases. */
async function settled(members: TestMember[], ring: string): Promise<boolean> {
  const owners = assignBucketsBalanced(BUCKETS, members.map((m) => m.member.member));
  for (let b = 0; b < BUCKETS; b++) {
    const holders = members.filter((m) => m.member.holds(b)).map((m) => m.member.member);
    if (holders.length !== 1 || holders[0] !== owners[b]) return false;
  }
  const leases = await api.admin.request<{ items: KubeObject[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, { query: { labelSelector: `${RING_LABEL}=${ring}` } });
  const published = new Map(leases.items.map((l) => [String(l.metadata?.name), String((l.metadata?.annotations as Record<string, string>)[HELD_ANNOTATION] ?? '')]));
  return members.every((m) => published.get(m.member.member) === m.member.heldBuckets().join(','));
}

test(
  'GIVEN 3 members WHEN one leaves, one is cut off past its lease, and one joins THEN each time every bucket ends held once by its owner, and never by two',
  async () => {
    const ring = 'app';
    const all: TestMember[] = [];
    const sample = sampler(() => all);
    try {
      for (const name of ['app-a', 'app-b', 'app-c']) all.push(testMember(name, ring));
      await Promise.all(all.map((m) => m.member.start()));
      await eventually('3 members settle', () => settled(all, ring));
      expect(all.map((m) => [...m.member.members()])).toEqual([['app-a', 'app-b', 'app-c'], ['app-a', 'app-b', 'app-c'], ['app-a', 'app-b', 'app-c']]);

      // A clean leave: the Lease is deleted, the others take its buckets at their next round.
      const leaving = all.pop()!;
      await leaving.member.stop();
      await expect(api.admin.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/app-c`)).rejects.toThrow(/404/);
      await eventually('2 members settle', () => settled(all, ring));

      // Cut off (as a frozen or crashed replica): it stops holding at its renew deadline, and the other
      // takes its buckets only after its Lease was unchanged for the lease duration.
      const cut = all[1]!;
      const heldBefore = cut.member.heldBuckets();
      expect(heldBefore.length).toBeGreaterThan(0);
      cut.partitioned = true;
      await eventually('the cut-off member gives up', () => cut.lost);
      expect(cut.member.heldBuckets()).toEqual([]);
      const survivors = [all[0]!];
      await eventually('the survivor holds every bucket', () => survivors[0]!.member.heldBuckets().length === BUCKETS);
      all.splice(1, 1);
      // Its leftover Lease is deleted by the survivor once expired for another lease duration.
      await eventually('the leftover Lease deleted', () =>
        api.admin.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/app-b`).then(() => false, (err: Error) => /404/.test(err.message)),
      );

      // A join: only the buckets it wins move, released by their holder before it takes them.
      const joiner = testMember('app-d', ring);
      all.push(joiner);
      await joiner.member.start();
      await eventually('the ring with the joiner settles', () => settled(all, ring));
      expect(joiner.member.heldBuckets().length).toBeGreaterThan(0);
      expect(sample.overlaps).toEqual([]);
    } finally {
      sample.stop();
      for (const m of all) await m.member.stop();
    }
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN 3 members publishing CR counts, one with every heavy bucket THEN the first member by name reassigns buckets to where the step stops, never two holders, and the Leases show the counts and its plan',
  async () => {
    const ring = 'load';
    const names = ['load-a', 'load-b', 'load-c'];
    // Every bucket the bounded assignment gives load-b carries 30 CRs, the others 5.
    const bounded = assignBucketsBalanced(BUCKETS, names);
    const loads = bounded.map((owner) => (owner === 'load-b' ? 30 : 5));
    const all = names.map((name) => testMember(name, ring, { load: (b) => loads[b]! }));
    const sample = sampler(() => all);
    const holders = () => Array.from({ length: BUCKETS }, (_, b) => all.filter((m) => m.member.holds(b)).map((m) => m.member.member).join());
    try {
      await Promise.all(all.map((m) => m.member.start()));
      await eventually('the ring settles where the step stops', () => {
        const now = holders();
        return now.every((h) => names.includes(h)) && rebalanceStep(now, loads, names) === now && all.every((m) => m.member.heldBuckets().length > 0);
      });
      const busiest = (owners: readonly (string | undefined)[]) => Math.max(...memberLoads(owners, loads, names).values());
      expect(busiest(bounded)).toBe(30 * bounded.filter((o) => o === 'load-b').length);
      expect(busiest(holders())).toBeLessThan(busiest(bounded));
      const leases = await api.admin.request<{ items: KubeObject[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, { query: { labelSelector: `${RING_LABEL}=${ring}` } });
      const annotations = new Map(leases.items.map((l) => [String(l.metadata?.name), (l.metadata?.annotations ?? {}) as Record<string, string>]));
      // The coordinator publishes the plan the members follow (owners as indices into members); the others publish none.
      const plan = JSON.parse(annotations.get('load-a')![PLAN_ANNOTATION]!) as { members: string[]; owners: number[] };
      expect(plan.members).toEqual(names);
      expect(plan.owners.map((i) => names[i])).toEqual(holders());
      expect(annotations.get('load-b')![PLAN_ANNOTATION]).toBe('');
      // Each member publishes the CR count of each bucket it holds.
      const b = all[1]!.member.heldBuckets();
      await eventually('load-b publishes its counts', async () => {
        const lease = await api.admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/load-b`);
        return (lease.metadata?.annotations as Record<string, string>)[LOADS_ANNOTATION] === b.map((x) => `${x}=${loads[x]}`).join(',');
      });
      expect(sample.overlaps).toEqual([]);
    } finally {
      sample.stop();
      for (const m of all) await m.member.stop();
    }
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a missing namespace THEN start() rejects naming it; GIVEN a user without RBAC on Leases THEN start() rejects naming the permission',
  async () => {
    const missing = testMember('x-1', 'x', { namespace: 'no-such-namespace' });
    const error = await missing.member.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShardMembershipError);
    expect((error as Error).message).toMatch(/^sharding: cannot create Lease no-such-namespace\/x-1: namespace no-such-namespace does not exist/);

    const denied = testMember('x-2', 'x', { impersonate: { user: 'nobody' } });
    const refused = await denied.member.start().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ShardMembershipError);
    expect((refused as Error).message).toMatch(new RegExp(`^sharding: cannot create Lease ${namespace}/x-2: RBAC denies "create" on leases.coordination.k8s.io in namespace ${namespace}`));
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a live ring of 16 buckets WHEN a member with 8 buckets starts THEN it refuses, naming both settings, and leaves no Lease',
  async () => {
    const ring = 'mixed';
    const good = testMember('mixed-a', ring);
    await good.member.start();
    try {
      const other = testMember('mixed-b', ring, { bucketCount: 8 });
      const error = await other.member.start().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ShardMembershipError);
      expect((error as ShardMembershipError).reason).toBe('RingMismatch');
      expect((error as Error).message).toMatch(/member mixed-a records 16 buckets and hash sha256-v1, this replica 8 buckets and hash sha256-v1; replicas with different bucket counts or hash versions refuse to share a ring/);
      await expect(api.admin.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/mixed-b`)).rejects.toThrow(/404/);
      // The ring goes on: the good member still holds everything.
      expect(good.member.heldBuckets()).toHaveLength(BUCKETS);
    } finally {
      await good.member.stop();
    }
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a member that lost its Lease WHEN a replica restarts under the same name THEN it takes its own expired Lease back; GIVEN a live member WHEN another process starts with its name THEN it is refused',
  async () => {
    const ring = 'again';
    const first = testMember('again-a', ring);
    await first.member.start();
    // Cut off until it gives up: its Lease stays behind, holding its buckets, as after a crash.
    first.partitioned = true;
    await eventually('the cut-off member gives up', () => first.lost);
    await first.member.stop();
    const left = await api.admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/again-a`);

    // The restart under the same name: start() waits for the Lease to stay unrenewed, then takes it.
    const restarted = testMember('again-a', ring);
    try {
      await restarted.member.start();
      await eventually('the restarted member holds every bucket', () => restarted.member.heldBuckets().length === BUCKETS);
      const taken = await api.admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/again-a`);
      expect(taken.metadata?.uid).toBe(left.metadata?.uid); // the same Lease, updated, not a new one
      expect((taken.spec as { holderIdentity: string }).holderIdentity).toBe('again-a');
      expect((taken.spec as { renewTime: string }).renewTime).not.toBe((left.spec as { renewTime: string }).renewTime);

      // A second process with the same name while the first renews: refused, and the live one goes on.
      const duplicate = testMember('again-a', ring);
      const error = await duplicate.member.start().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ShardMembershipError);
      expect((error as ShardMembershipError).reason).toBe('LeaseNotWritable');
      expect((error as Error).message).toMatch(new RegExp(`a Lease ${namespace}/again-a already exists: another replica uses the member name again-a \\(it was renewed while this replica (watched it|took it back)`));
      expect(restarted.member.heldBuckets()).toHaveLength(BUCKETS);
      expect(restarted.lost).toBe(false);
    } finally {
      await restarted.member.stop();
    }
  },
  TEST_TIMEOUT_MS,
);
