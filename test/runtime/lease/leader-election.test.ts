/**
 * LeaderElector against an in-memory Lease store (resourceVersion semantics of the API server) on a
 * ManualClock: the algorithm's timing rules, checked without sleeping. The real API server is exercised in
 * test/integration/leader-election.test.ts.
 */
import { ApiError, type KubeObject } from '../../../lib/runtime/client/kube-client.js';
import { ManualClock, type Clock } from '../../../lib/runtime/clock.js';
import { LeaderElector, type LeaderElectorOptions, type StoppedLeadingReason } from '../../../lib/runtime/lease/leader-election.js';
import { LeaderElectionConfigError, microTime, validateLeaderElectionTiming } from '../../../lib/runtime/lease/lease-timing.js';
import { WriteFencedError } from '../../../lib/runtime/client/write-gate.js';
import { type FakeCall, FakeKubeClient } from '../../support/fake-kube-client.js';

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/ops/leases/my-lock';
const LEASES_PATH = '/apis/coordination.k8s.io/v1/namespaces/ops/leases';

/** One Lease object with the API server's optimistic concurrency; each client can be cut off (see {@link partition}). */
class LeaseStore {
  lease: KubeObject | undefined;
  private rv = 100;
  readonly writes: { by: string; method: string; spec: Record<string, unknown> }[] = [];

  /** A client of this store, writing as `name`. */
  client(name: string): FakeKubeClient {
    const client = new FakeKubeClient();
    client.respond = (call) => this.handle(name, call.method, call.path, call.body);
    return client;
  }

  /** Writes the lease as some other party would (e.g. a process not in this test). */
  put(spec: Record<string, unknown>): void {
    this.lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'my-lock', namespace: 'ops', resourceVersion: String(++this.rv) }, spec };
  }

  spec(): Record<string, unknown> {
    return (this.lease?.spec ?? {}) as Record<string, unknown>;
  }

  private handle(by: string, method: string, path: string, body: KubeObject | undefined): KubeObject {
    if (method === 'GET' && path === LEASE_PATH) {
      if (!this.lease) throw new ApiError(method, path, 404, 'NotFound', undefined, 'not found');
      return structuredClone(this.lease);
    }
    if (method === 'POST' && path === LEASES_PATH) {
      if (this.lease) throw new ApiError(method, path, 409, 'AlreadyExists', undefined, 'already exists');
      this.put(structuredClone(body!.spec) as Record<string, unknown>);
      this.writes.push({ by, method, spec: this.spec() });
      return structuredClone(this.lease!);
    }
    if (method === 'PUT' && path === LEASE_PATH) {
      if (!this.lease) throw new ApiError(method, path, 404, 'NotFound', undefined, 'not found');
      if (body?.metadata?.resourceVersion !== this.lease.metadata?.resourceVersion) throw new ApiError(method, path, 409, 'Conflict', undefined, 'the object has been modified');
      this.put(structuredClone(body!.spec) as Record<string, unknown>);
      this.writes.push({ by, method, spec: this.spec() });
      return structuredClone(this.lease!);
    }
    throw new Error(`unexpected ${method} ${path}`);
  }
}

/** Cuts `client` off the API server: every request fails as a refused connection. */
function partition(client: FakeKubeClient): void {
  client.fail = () => new Error('connect ECONNREFUSED');
}

/** Advances the clock in steps, letting promise chains run after each. */
async function advance(clock: ManualClock, ms: number, stepMs = 50): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    clock.advance(Math.min(stepMs, ms - t));
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

interface Candidate {
  elector: LeaderElector;
  client: FakeKubeClient;
  stop: AbortController;
  done: Promise<void>;
}

function harness() {
  const clock = new ManualClock(1_000_000);
  const store = new LeaseStore();
  const events: string[] = [];
  const metric = new Map<string, number>();
  const candidate = (identity: string, overrides: Partial<LeaderElectorOptions> = {}): Candidate => {
    const client = store.client(identity);
    const stop = new AbortController();
    const elector = new LeaderElector({
      client,
      namespace: 'ops',
      name: 'my-lock',
      identity,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      clock,
      random: () => 0,
      wallClock: () => new Date(Date.UTC(2026, 10, 29, 12) + clock.now()),
      metrics: { leading: (name, leading) => metric.set(`${identity}/${name}`, leading ? 1 : 0) },
      onStartedLeading: (signal) => {
        events.push(`${identity} started`);
        signal.addEventListener('abort', () => events.push(`${identity} signal aborted`));
      },
      onStoppedLeading: (reason: StoppedLeadingReason) => events.push(`${identity} stopped: ${reason}`),
      onNewLeader: (leader) => events.push(`${identity} sees ${leader}`),
      ...overrides,
    });
    const done = elector.run(stop.signal);
    return { elector, client, stop, done };
  };
  return { clock, store, events, metric, candidate };
}

describe('validateLeaderElectionTiming', () => {
  test('GIVEN the defaults 15 s / 10 s / 2 s THEN they are valid', () => {
    expect(() => validateLeaderElectionTiming(15_000, 10_000, 2_000)).not.toThrow();
  });

  test('GIVEN leaseDuration <= renewDeadline THEN the error names the values', () => {
    expect(() => validateLeaderElectionTiming(10_000, 10_000, 2_000)).toThrow(
      new LeaderElectionConfigError('leaseDuration must be greater than renewDeadline (leaseDuration=10000ms, renewDeadline=10000ms, retryPeriod=2000ms)'),
    );
  });

  test('GIVEN renewDeadline <= 1.2 × retryPeriod THEN the error names the values', () => {
    expect(() => validateLeaderElectionTiming(15_000, 2_400, 2_000)).toThrow(/renewDeadline must be greater than 1.2 × retryPeriod = 2400ms \(leaseDuration=15000ms, renewDeadline=2400ms, retryPeriod=2000ms\)/);
  });

  test('GIVEN a non-positive or fractional-second lease duration THEN it throws', () => {
    expect(() => validateLeaderElectionTiming(15_000, 10_000, 0)).toThrow(/retryPeriod must be > 0/);
    expect(() => validateLeaderElectionTiming(15_500, 10_000, 2_000)).toThrow(/whole number of seconds/);
  });

  test('GIVEN an invalid timing WHEN constructing an elector THEN the constructor throws', () => {
    const { store } = harness();
    expect(
      () =>
        new LeaderElector({
          client: store.client('a'),
          namespace: 'ops',
          name: 'my-lock',
          identity: 'a',
          leaseDurationMs: 2_000,
          renewDeadlineMs: 3_000,
          onStartedLeading: () => undefined,
          onStoppedLeading: () => undefined,
        }),
    ).toThrow(LeaderElectionConfigError);
  });
});

test('microTime writes six fractional digits (the API server parses RFC 3339 with microseconds)', () => {
  expect(microTime(new Date(Date.UTC(2026, 10, 29, 20, 28, 16, 123)))).toBe('2026-11-29T20:28:16.123000Z');
});

describe('LeaderElector', () => {
  test('GIVEN no lease WHEN a candidate runs THEN it creates the lease with itself as holder and 0 transitions, and leads', async () => {
    const { store, events, metric, candidate } = harness();
    const a = candidate('a');
    await flush();
    expect(a.elector.isLeader()).toBe(true);
    expect(store.spec()).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(events).toEqual(['a sees a', 'a started']);
    expect(metric.get('a/my-lock')).toBe(1);
    a.stop.abort();
    await a.done;
  });

  test('GIVEN a leader WHEN time passes THEN it renews every retry period and a standby never leads', async () => {
    const { clock, store, events, candidate } = harness();
    const a = candidate('a');
    await flush();
    const b = candidate('b');
    await flush();
    await advance(clock, 60_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    const renewals = store.writes.filter((w) => w.by === 'a' && w.method === 'PUT');
    expect(renewals.length).toBe(30);
    expect(store.writes.filter((w) => w.by === 'b')).toEqual([]);
    expect(store.spec()).toMatchObject({ holderIdentity: 'a', leaseTransitions: 0 });
    expect(events).toEqual(['a sees a', 'a started', 'b sees a']);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  test('GIVEN a crashed leader WHEN its record stops changing THEN a standby takes over only after the record\'s leaseDurationSeconds', async () => {
    const { clock, store, events, candidate } = harness();
    const a = candidate('a');
    await flush();
    const b = candidate('b');
    await advance(clock, 4_000);
    a.stop.abort(); // a crash: no release
    await a.done;
    const lastRenewal = store.spec().renewTime;
    // b observed the last renewal at its next retry after it; 15 s from then, not from the remote renewTime.
    await advance(clock, 14_000);
    expect(store.spec().renewTime).toBe(lastRenewal);
    expect(b.elector.isLeader()).toBe(false);
    await advance(clock, 4_000);
    expect(b.elector.isLeader()).toBe(true);
    expect(store.spec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(events).toEqual(['a sees a', 'a started', 'b sees a', 'a signal aborted', 'a stopped: stopped', 'b sees b', 'b started']);
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a held lease with an ancient renewTime WHEN a candidate arrives THEN it still waits a full lease duration (remote clocks are not trusted)', async () => {
    const { clock, store, candidate } = harness();
    store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 15, renewTime: '1999-01-01T00:00:00.000000Z', acquireTime: '1999-01-01T00:00:00.000000Z', leaseTransitions: 7 });
    const b = candidate('b');
    await advance(clock, 14_900);
    expect(b.elector.isLeader()).toBe(false);
    await advance(clock, 2_100);
    expect(b.elector.isLeader()).toBe(true);
    expect(store.spec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 8 });
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a record whose leaseDurationSeconds is 60 WHEN a candidate configured for 15 s arrives THEN it waits the record\'s 60 s', async () => {
    const { clock, store, candidate } = harness();
    store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 60, renewTime: '2026-11-29T12:00:00.000000Z', leaseTransitions: 0 });
    const b = candidate('b');
    await advance(clock, 58_000);
    expect(b.elector.isLeader()).toBe(false);
    await advance(clock, 4_000);
    expect(b.elector.isLeader()).toBe(true);
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a held lease WHEN any field of its record changes (here only renewTime) THEN the candidate restarts its wait', async () => {
    const { clock, store, candidate } = harness();
    store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 15, renewTime: 'r1', leaseTransitions: 0 });
    const b = candidate('b');
    await advance(clock, 10_000);
    store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 15, renewTime: 'r2', leaseTransitions: 0 });
    await advance(clock, 12_000);
    expect(b.elector.isLeader()).toBe(false);
    await advance(clock, 6_000);
    expect(b.elector.isLeader()).toBe(true);
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a leader that cannot reach the API server WHEN the renew deadline passes THEN it stops leading before any standby can take over', async () => {
    const { clock, store, events, metric, candidate } = harness();
    const a = candidate('a');
    await flush();
    const b = candidate('b');
    await advance(clock, 3_000);
    partition(a.client);
    let sawBoth = false;
    for (let t = 0; t < 30_000; t += 100) {
      await advance(clock, 100);
      if (a.elector.isLeader() && b.elector.isLeader()) sawBoth = true;
    }
    await a.done;
    expect(sawBoth).toBe(false);
    expect(a.elector.isLeader()).toBe(false);
    expect(b.elector.isLeader()).toBe(true);
    expect(metric.get('a/my-lock')).toBe(0);
    expect(events.indexOf('a stopped: lost')).toBeGreaterThan(-1);
    expect(events.indexOf('a stopped: lost')).toBeLessThan(events.indexOf('b started'));
    expect(events.indexOf('a signal aborted')).toBeLessThan(events.indexOf('a stopped: lost'));
    expect(store.spec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a leader whose renewals keep failing WHEN the deadline passes THEN isLeader() is false at that instant, even before any timer runs', async () => {
    const { clock, candidate } = harness();
    const a = candidate('a');
    await flush();
    partition(a.client);
    clock.advance(9_999); // no flush: no callbacks
    expect(a.elector.isLeader()).toBe(true);
    clock.advance(1);
    expect(a.elector.isLeader()).toBe(false);
    await flush();
    await a.done;
  });

  test('GIVEN timers that fire a fraction of a millisecond early WHEN renewals keep failing THEN the leader still steps down (lost) and run() resolves', async () => {
    const { clock, events, candidate } = harness();
    const early: Clock = {
      now: () => clock.now(),
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms - 0.5),
      clearTimeout: (h) => clock.clearTimeout(h),
    };
    const a = candidate('a', { clock: early });
    await flush();
    partition(a.client);
    await advance(clock, 12_000);
    await a.done;
    expect(events).toEqual(['a sees a', 'a started', 'a signal aborted', 'a stopped: lost']);
  });

  test('GIVEN a leader and a standby WHEN the leader releases THEN the lease has no holder and a 1 s duration, and the standby takes over at its next retry', async () => {
    const { clock, store, events, candidate } = harness();
    const a = candidate('a');
    await flush();
    const b = candidate('b');
    await advance(clock, 3_000);
    await a.elector.release();
    await a.done;
    expect(store.spec().holderIdentity).toBeUndefined();
    expect(store.spec()).toMatchObject({ leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(a.elector.isLeader()).toBe(false);
    await advance(clock, 2_000);
    expect(b.elector.isLeader()).toBe(true);
    expect(store.spec()).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });
    expect(events).toEqual(['a sees a', 'a started', 'b sees a', 'a signal aborted', 'a stopped: released', 'b sees b', 'b started']);
    await a.elector.release(); // idempotent
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a released lease WHEN two candidates race for it THEN exactly one wins (optimistic concurrency) and transitions grow by one', async () => {
    const { clock, store, candidate } = harness();
    store.put({ leaseDurationSeconds: 1, leaseTransitions: 3 });
    const b = candidate('b');
    const c = candidate('c');
    await flush();
    await advance(clock, 5_000);
    expect([b.elector.isLeader(), c.elector.isLeader()].filter(Boolean)).toHaveLength(1);
    expect(store.spec().leaseTransitions).toBe(4);
    expect(store.writes.filter((w) => w.spec.leaseTransitions === 4 && w.spec.acquireTime === w.spec.renewTime).length).toBe(1);
    b.stop.abort();
    c.stop.abort();
    await Promise.all([b.done, c.done]);
  });

  test('GIVEN a leader WHEN someone else rewrites the lease to themselves THEN the leader never overwrites it and steps down at its deadline', async () => {
    const { clock, store, events, candidate } = harness();
    const a = candidate('a');
    await flush();
    await advance(clock, 1_000);
    store.put({ holderIdentity: 'intruder', leaseDurationSeconds: 15, renewTime: 'x', leaseTransitions: 1 });
    await advance(clock, 12_000);
    await a.done;
    expect(a.elector.isLeader()).toBe(false);
    expect(store.spec().holderIdentity).toBe('intruder');
    expect(events).toEqual(['a sees a', 'a started', 'a sees intruder', 'a signal aborted', 'a stopped: lost']);
  });

  test('GIVEN a wall clock that does not advance WHEN the leader renews THEN renewTime still changes every time, so standbys see renewals', async () => {
    const { clock, store, candidate } = harness();
    const wall = () => new Date(Date.UTC(2026, 10, 29, 12, 0, 0, 999));
    const a = candidate('a', { wallClock: wall });
    await flush();
    const b = candidate('b', { wallClock: wall });
    await advance(clock, 40_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    const stamps = store.writes.map((w) => w.spec.renewTime);
    expect(new Set(stamps).size).toBe(stamps.length);
    expect(stamps.slice(0, 3)).toEqual(['2026-11-29T12:00:00.999000Z', '2026-11-29T12:00:00.999001Z', '2026-11-29T12:00:00.999002Z']);
    a.stop.abort();
    b.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  test('GIVEN run() was never leading WHEN its signal aborts THEN onStoppedLeading is not called', async () => {
    const { clock, store, events, candidate } = harness();
    store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const b = candidate('b');
    await advance(clock, 2_000);
    b.stop.abort();
    await b.done;
    expect(events).toEqual(['b sees ghost']);
  });
});

/**
 * A process frozen (SIGSTOP, a long GC pause, a stalled VM) and resumed: its monotonic clock jumped, and
 * none of its timers has run yet. `frozen(ms)` moves `now()` forward by `ms` without firing a timer;
 * timers stay due at their manual-clock time, so the ones due soonest (the renew sleep) fire first when
 * the manual clock advances, before the deadline timer, as an event loop that resumes in its poll phase
 * runs I/O callbacks and a renew sleep's continuation before the timer that would depose it.
 */
function resumedClock(clock: ManualClock): Clock & { frozen(ms: number): void } {
  let skew = 0;
  return {
    now: () => clock.now() + skew,
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (h) => clock.clearTimeout(h),
    frozen: (ms) => {
      skew += ms;
    },
  };
}

describe('LeaderElector write gate (assertLeading)', () => {
  test('GIVEN a leader WHEN its last renewal is younger than the renew deadline THEN a write may leave; at the deadline it may not', async () => {
    const { clock, candidate } = harness();
    const a = candidate('a');
    await flush();
    partition(a.client); // no renewal succeeds from now on
    clock.advance(9_999); // no flush: the deadline timer has not deposed it
    expect(() => a.elector.assertLeading('PATCH', '/apis/apps/v1/namespaces/n/deployments/d')).not.toThrow();
    const gate = a.elector.writeGate();
    expect(() => gate.assertMayWrite('PATCH', '/x')).not.toThrow();
    clock.advance(1);
    expect(() => gate.assertMayWrite('PATCH', '/apis/apps/v1/namespaces/n/deployments/d')).toThrow(WriteFencedError);
    await flush();
    await a.done;
  });

  test('GIVEN a leader frozen past its renew deadline WHEN it resumes and a write is sent before any timer ran THEN the write is refused, and leadership ends at that instant (signal aborted, lost)', async () => {
    const { clock, events, candidate } = harness();
    const resumed = resumedClock(clock);
    const a = candidate('a', { clock: resumed });
    await advance(clock, 3_000); // renewed at least once
    resumed.frozen(12_000); // past the 10 s deadline; no timer has fired
    let error: unknown;
    try {
      a.elector.assertLeading('PATCH', '/apis/apps/v1/namespaces/n/deployments/d');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(WriteFencedError);
    expect(error).toMatchObject({ reason: 'WriteFenced', method: 'PATCH', path: '/apis/apps/v1/namespaces/n/deployments/d' });
    expect((error as Error).message).toMatch(/^PATCH \/apis\/apps\/v1\/namespaces\/n\/deployments\/d: not sent: leadership of ops\/my-lock lost: no renewal within the renew deadline \(10000 ms; last renewal sent \d+ ms ago\)$/);
    // synchronously, before the throw: no timer or promise continuation ran in between
    expect(events).toEqual(['a sees a', 'a started', 'a signal aborted', 'a stopped: lost']);
    expect(a.elector.isLeader()).toBe(false);
    await advance(clock, 2_000);
    await a.done;
    expect(events).toEqual(['a sees a', 'a started', 'a signal aborted', 'a stopped: lost']); // reported once
  });

  test('GIVEN a leader frozen past its renew deadline WHEN it resumes and its renew sleep ends before the deadline timer THEN it sends no renewal and steps down (lost)', async () => {
    const { clock, store, events, candidate } = harness();
    const resumed = resumedClock(clock);
    const a = candidate('a', { clock: resumed });
    await advance(clock, 3_000);
    const writesBefore = store.writes.length;
    expect(writesBefore).toBeGreaterThan(0);
    resumed.frozen(12_000);
    await advance(clock, 2_000, 2_000); // the renew sleep (due within 2 s) fires; the deadline timer (8 s away on the manual clock) does not
    await a.done;
    expect(store.writes.slice(writesBefore)).toEqual([]);
    expect(events).toEqual(['a sees a', 'a started', 'a signal aborted', 'a stopped: lost']);
  });

  test('GIVEN a leader whose renewal is on its way WHEN the process freezes past its renew deadline and resumes THEN the renewal is not sent (its write gate refuses it) and it steps down (lost)', async () => {
    const { clock, store, events, candidate } = harness();
    const resumed = resumedClock(clock);
    const a = candidate('a', { clock: resumed });
    await advance(clock, 1_000);
    const writesBefore = store.writes.length;
    let resume!: () => void;
    const held = new Promise<void>((r) => (resume = r));
    const renewals: FakeCall[] = [];
    a.client.hold = (call) => (call.method === 'PUT' ? (renewals.push(call), held) : Promise.resolve());
    await advance(clock, 2_000); // the renewal starts and is held on its way to the socket
    expect(renewals).toHaveLength(1);
    expect(renewals[0].writeGate).toBeDefined();
    resumed.frozen(12_000); // frozen past the renew deadline (10 s) before the bytes left
    resume();
    await flush();
    await a.done;
    expect(store.writes.slice(writesBefore)).toEqual([]);
    expect(events).toEqual(['a sees a', 'a started', 'a signal aborted', 'a stopped: lost']);
  });

  test('GIVEN a standby WHEN it acquires the lease THEN its writes carry no write gate (it does not lead yet)', async () => {
    const { clock, candidate } = harness();
    const a = candidate('a');
    await advance(clock, 1_000);
    const acquiring = a.client.calls.filter((call) => call.method === 'POST' || call.method === 'PUT');
    expect(acquiring[0]).toMatchObject({ method: 'POST' });
    expect(acquiring[0].writeGate).toBeUndefined();
    a.stop.abort();
    await a.done;
  });

  test('GIVEN a standby THEN no write may leave, and asking does not report a loss', async () => {
    const { clock, store, events, candidate } = harness();
    store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const b = candidate('b');
    await advance(clock, 2_000);
    expect(() => b.elector.assertLeading('POST', '/api/v1/namespaces/n/configmaps')).toThrow(/not sent: this process does not hold the leader-election lease ops\/my-lock$/);
    expect(events).toEqual(['b sees ghost']);
    b.stop.abort();
    await b.done;
  });

  test('GIVEN a leader that released the lease THEN no write may leave', async () => {
    const { clock, candidate } = harness();
    const a = candidate('a');
    await advance(clock, 1_000);
    expect(() => a.elector.assertLeading('PUT', '/x')).not.toThrow();
    await a.elector.release();
    await a.done;
    expect(() => a.elector.assertLeading('PUT', '/x')).toThrow(WriteFencedError);
  });
});
