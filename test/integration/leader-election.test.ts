/**
 * LeaderElector against a real kube-apiserver (lib/testing/control-plane.ts): two candidates for one
 * Lease, short durations (4 s / 3 s / 1 s: long enough that a leader on a loaded machine still renews in
 * time). Assertions are on the order of events, the Lease's
 * content, and on a sampler that checks both candidates every few milliseconds: at no sampled moment do
 * both think they lead. No assertion on elapsed time.
 */
import type { RequestRecord } from '../../lib/runtime/client/api-client.js';
import type { KubeObject } from '../../lib/runtime/client/kube-client.js';
import { LeaderElector, type StoppedLeadingReason } from '../../lib/runtime/lease/leader-election.js';
import { OperatorMetrics } from '../../lib/runtime/metrics/metrics.js';
import { partitionable, useApiServerOnly } from '../support/api-server-only.js';
import { eventually as waitFor } from '../support/eventually.js';

const TEST_TIMEOUT_MS = 90_000;

const api = useApiServerOnly('le');
const { namespace } = api;

/** Polls `check` every 50 ms until it is true (a wait, not a timing assertion). */
const eventually = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) =>
  waitFor(what, async () => check(), { timeoutMs, intervalMs: 50 });

interface Candidate {
  readonly identity: string;
  readonly elector: LeaderElector;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  /** Writes (POST/PUT/PATCH/DELETE) this candidate sent, and whether it led when it sent them. */
  readonly writes: { method: string; code: number; leading: boolean }[];
  /** While true, every request of this candidate fails as if the API server were unreachable. */
  partitioned: boolean;
}

function candidate(identity: string, lease: string, events: string[], metrics?: OperatorMetrics): Candidate {
  const writes: { method: string; code: number; leading: boolean }[] = [];
  let elector: LeaderElector | undefined;
  const self = partitionable(api.client({
    onRequest: (record: RequestRecord) => {
      if (record.method !== 'GET') writes.push({ method: record.method, code: record.code, leading: elector?.isLeader() ?? false });
    },
  }));
  const stop = new AbortController();
  elector = new LeaderElector({
    client: self.client,
    namespace,
    name: lease,
    identity,
    leaseDurationMs: 4_000,
    renewDeadlineMs: 3_000,
    retryPeriodMs: 1_000,
    metrics: metrics?.leaderElection(),
    onStartedLeading: () => events.push(`${identity} started`),
    onStoppedLeading: (reason: StoppedLeadingReason) => events.push(`${identity} stopped: ${reason}`),
  });
  return Object.assign(self, { identity, elector, stop, done: elector.run(stop.signal), writes });
}

/** Samples both candidates every 5 ms; `both` counts the samples where both led. */
function sampler(a: Candidate, b: Candidate) {
  const state = { samples: 0, both: 0 };
  const timer = setInterval(() => {
    state.samples++;
    if (a.elector.isLeader() && b.elector.isLeader()) state.both++;
  }, 5);
  return { state, stop: () => clearInterval(timer) };
}

async function readLease(name: string): Promise<Record<string, unknown>> {
  const lease = await api.admin.request<KubeObject>('GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  return lease.spec as Record<string, unknown>;
}

test(
  'GIVEN two candidates WHEN the leader crashes (no release) THEN the standby takes over, transitions are counted, and never do both lead',
  async () => {
    const events: string[] = [];
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const a = candidate('a', 'crash-lock', events, metrics);
    const b = candidate('b', 'crash-lock', events);
    const sample = sampler(a, b);
    try {
      await eventually('one leader', () => a.elector.isLeader() || b.elector.isLeader());
      const [leader, standby] = a.elector.isLeader() ? [a, b] : [b, a];
      // Let the leader renew a few times; the standby must stay a standby meanwhile.
      const standbyWritesBefore = standby.writes.length; // its lost create race, unless that is still in flight
      const renewals = new Set<string>();
      await eventually('three renewals', async () => {
        const spec = await readLease('crash-lock');
        if (spec.holderIdentity === leader.identity) renewals.add(String(spec.renewTime));
        return renewals.size >= 3;
      });
      expect(events).toEqual([`${leader.identity} started`]);
      expect(standby.elector.isLeader()).toBe(false);
      // What a standby may send (leader-election.ts, "What a standby sends"): a POST when its GET found no
      // Lease (both candidates start at once here, so its create may race the leader's and arrive after the
      // leader already leads: 409 AlreadyExists), and a PUT when it saw the record unchanged for a lease
      // duration (a late renewal on a loaded machine: 409 Conflict). Either is the protocol working; none
      // may be accepted while the leader renews.
      expect(standby.writes.slice(standbyWritesBefore).filter((w) => !(['POST', 'PUT'].includes(w.method) && w.code === 409))).toEqual([]);
      expect(await readLease('crash-lock')).toMatchObject({ holderIdentity: leader.identity, leaseDurationSeconds: 4, leaseTransitions: 0 });
      if (leader === a) expect(await metrics.registry.getSingleMetricAsString('leader_election_master_status')).toContain('leader_election_master_status{name="crash-lock"} 1');

      leader.stop.abort(); // crash: the lease is left as it is
      await leader.done;
      await eventually('the standby leads', () => standby.elector.isLeader());

      expect(events).toEqual([`${leader.identity} started`, `${leader.identity} stopped: stopped`, `${standby.identity} started`]);
      expect(await readLease('crash-lock')).toMatchObject({ holderIdentity: standby.identity, leaseTransitions: 1 });
      expect(standby.writes.slice(standbyWritesBefore).filter((w) => !w.leading && w.code !== 409)).toEqual([{ method: 'PUT', code: 200, leading: false }]); // the acquiring update
      if (leader === a) expect(await metrics.registry.getSingleMetricAsString('leader_election_master_status')).toContain('leader_election_master_status{name="crash-lock"} 0');
    } finally {
      sample.stop();
      a.stop.abort();
      b.stop.abort();
      await Promise.all([a.done, b.done]);
    }
    expect(sample.state.samples).toBeGreaterThan(100);
    expect(sample.state.both).toBe(0);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN two candidates WHEN the leader releases THEN the lease is emptied, the standby takes over, and never do both lead',
  async () => {
    const events: string[] = [];
    const a = candidate('a', 'release-lock', events);
    await eventually('a leads', () => a.elector.isLeader());
    const b = candidate('b', 'release-lock', events);
    const sample = sampler(a, b);
    try {
      await eventually('b observed a renewal', async () => (await readLease('release-lock')).renewTime !== undefined && b.writes.length === 0 && events.length === 1);
      await a.elector.release();
      await a.done;
      expect(a.elector.isLeader()).toBe(false);
      await eventually('b leads', () => b.elector.isLeader());
      expect(events).toEqual(['a started', 'a stopped: released', 'b started']);
      expect(await readLease('release-lock')).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 4, leaseTransitions: 1 });
    } finally {
      sample.stop();
      a.stop.abort();
      b.stop.abort();
      await Promise.all([a.done, b.done]);
    }
    expect(sample.state.both).toBe(0);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a released lease WHEN read back THEN it has no holder and leaseDurationSeconds 1 (client-go ReleaseOnCancel)',
  async () => {
    const events: string[] = [];
    const a = candidate('a', 'empty-lock', events);
    await eventually('a leads', () => a.elector.isLeader());
    await a.elector.release();
    await a.done;
    const spec = await readLease('empty-lock');
    expect(spec.holderIdentity).toBeUndefined();
    expect(spec).toMatchObject({ leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(events).toEqual(['a started', 'a stopped: released']);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a leader cut off from the API server WHEN it cannot renew THEN it reports lost before the standby starts, and never do both lead',
  async () => {
    const events: string[] = [];
    const a = candidate('a', 'partition-lock', events);
    await eventually('a leads', () => a.elector.isLeader());
    const b = candidate('b', 'partition-lock', events);
    const sample = sampler(a, b);
    try {
      await eventually('b observed the lease', () => b.elector.getLeader() === 'a');
      a.partitioned = true;
      await a.done;
      await eventually('b leads', () => b.elector.isLeader());
      expect(events).toEqual(['a started', 'a stopped: lost', 'b started']);
      expect(await readLease('partition-lock')).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    } finally {
      sample.stop();
      a.stop.abort();
      b.stop.abort();
      await Promise.all([a.done, b.done]);
    }
    expect(sample.state.both).toBe(0);
  },
  TEST_TIMEOUT_MS,
);

test(
  'GIVEN a leader WHEN another holder is written into its Lease THEN at its next renewal it stops leading, saying so, before its renew deadline, and its write gate refuses',
  async () => {
    const events: string[] = [];
    // A renew deadline far longer than the rest of the test: only the observed holder can depose it.
    const writes: { method: string; code: number }[] = [];
    const client = api.client({ onRequest: (record: RequestRecord) => void (record.method !== 'GET' && writes.push({ method: record.method, code: record.code })) });
    const stop = new AbortController();
    const elector = new LeaderElector({
      client,
      namespace,
      name: 'usurped-lock',
      identity: 'a',
      leaseDurationMs: 600_000,
      renewDeadlineMs: 500_000,
      retryPeriodMs: 1_000,
      onStartedLeading: () => events.push('a started'),
      onStoppedLeading: (reason: StoppedLeadingReason) => events.push(`a stopped: ${reason}: ${elector.lostWhy}`),
    });
    const done = elector.run(stop.signal);
    try {
      await eventually('a leads', () => elector.isLeader());
      // Another replica's takeover, as the API server would store it.
      const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/usurped-lock`;
      const lease = await api.admin.request<KubeObject>('GET', path);
      await api.admin.request('PUT', path, { body: { ...lease, spec: { ...(lease.spec as object), holderIdentity: 'b', leaseTransitions: 1 } } });
      await eventually('a stops leading (its renew deadline is minutes away)', () => events.length === 2);
      expect(events).toEqual(['a started', 'a stopped: lost: the Lease is held by b']);
      expect(elector.isLeader()).toBe(false);
      expect(() => elector.assertLeading('PATCH', '/api/v1/namespaces/x/configmaps/y')).toThrow(/leadership of .*usurped-lock lost: the Lease is held by b/);
      // Its last write was the renewal the takeover refused; nothing after it, the Lease is b's.
      expect(writes.at(-1)).toEqual({ method: 'PUT', code: 409 });
      expect(await readLease('usurped-lock')).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    } finally {
      stop.abort();
      await done;
    }
  },
  TEST_TIMEOUT_MS,
);
