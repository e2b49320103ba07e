import { ApiError } from '../../../lib/runtime/client/kube-client.js';
import { ManualClock } from '../../../lib/runtime/clock.js';
import fc from 'fast-check';
import { EventRecorder, eventName, eventNote } from '../../../lib/runtime/events/events.js';
import { dns1123SubdomainProblem } from '../../../lib/operator/schema/names.js';
import { eventually } from '../../support/eventually.js';
import { type FakeCall, FakeKubeClient } from '../../support/fake-kube-client.js';

function fakeClient(fail?: (call: FakeCall) => Error | undefined): { client: FakeKubeClient; calls: FakeCall[] } {
  const client = new FakeKubeClient();
  client.fail = fail;
  return { client, calls: client.calls };
}

/** A client whose requests are each answered when the test calls the matching entry of `releases`. */
function heldClient(): { client: FakeKubeClient; releases: (() => void)[] } {
  const client = new FakeKubeClient();
  const releases: (() => void)[] = [];
  client.hold = () => new Promise<void>((resolve) => releases.push(resolve));
  return { client, releases };
}

const cr = { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns', uid: 'u1', resourceVersion: '5' } };

describe('EventRecorder', () => {
  test('GIVEN a first observation THEN one events.k8s.io/v1 Event regarding the CR is created', async () => {
    const { client, calls } = fakeClient();
    const recorder = new EventRecorder({ client, reportingController: 'cdk8s.io/widget-operator', clock: new ManualClock() });
    expect(await recorder.warning(cr, 'ApplyFailed', 'Apply', 'boom')).toBe('created');
    expect(calls).toHaveLength(1);
    expect(calls[0].method).toBe('POST');
    expect(calls[0].path).toBe('/apis/events.k8s.io/v1/namespaces/ns/events');
    expect(calls[0].body).toMatchObject({
      type: 'Warning',
      reason: 'ApplyFailed',
      action: 'Apply',
      note: 'boom',
      reportingController: 'cdk8s.io/widget-operator',
      regarding: { kind: 'Widget', name: 'w', namespace: 'ns', uid: 'u1' },
    });
    expect(calls[0].body.eventTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test('GIVEN repeats within the series window THEN the series is patched when it starts, later repeats are counted until the heartbeat', async () => {
    const { client, calls } = fakeClient();
    const clock = new ManualClock();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock, seriesWindowMs: 60_000, seriesHeartbeatMs: 5000 });
    await recorder.warning(cr, 'RenderFailed', 'Render', 'bad spec');
    clock.advance(1000);
    expect(await recorder.warning(cr, 'RenderFailed', 'Render', 'bad spec')).toBe('series-updated');
    clock.advance(1000);
    expect(await recorder.warning(cr, 'RenderFailed', 'Render', 'bad spec')).toBe('counted');
    clock.advance(4000);
    expect(await recorder.warning(cr, 'RenderFailed', 'Render', 'bad spec')).toBe('series-updated');
    const name = (calls[0].body.metadata as { name: string }).name;
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST /apis/events.k8s.io/v1/namespaces/ns/events',
      `PATCH /apis/events.k8s.io/v1/namespaces/ns/events/${name}`,
      `PATCH /apis/events.k8s.io/v1/namespaces/ns/events/${name}`,
    ]);
    expect(calls[1].contentType).toBe('application/merge-patch+json');
    expect((calls[1].body.series as { count: number }).count).toBe(2);
    // The heartbeat carries the repeat that was only counted.
    expect((calls[2].body.series as { count: number; lastObservedTime: string }).count).toBe(4);
    expect((calls[2].body.series as { lastObservedTime: string }).lastObservedTime).toMatch(/\.\d{6}Z$/);
  });

  test('GIVEN a CR stalled for an hour, retried every 10 s, with the defaults THEN 3 writes: the Event, its series, one 30-minute heartbeat', async () => {
    const { client, calls } = fakeClient();
    const clock = new ManualClock();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock });
    const outcomes = new Map<string, number>();
    for (let second = 0; second <= 3600; second += 10) {
      const outcome = await recorder.warning(cr, 'ApplyFailed', 'Apply', 'admission webhook denied the request');
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      clock.advance(10_000);
    }
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH', 'PATCH']);
    expect((calls[1].body.series as { count: number }).count).toBe(2);
    expect((calls[2].body.series as { count: number }).count).toBe(182);
    expect(Object.fromEntries(outcomes)).toEqual({ created: 1, 'series-updated': 2, counted: 358 });
  });

  test('GIVEN a different note or reason THEN a separate Event; GIVEN a repeat after the window THEN a new Event', async () => {
    const { client, calls } = fakeClient();
    const clock = new ManualClock();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock, seriesWindowMs: 60_000 });
    await recorder.warning(cr, 'ApplyFailed', 'Apply', 'one');
    await recorder.warning(cr, 'ApplyFailed', 'Apply', 'two');
    await recorder.normal(cr, 'Applied', 'Apply', 'one');
    clock.advance(60_001);
    await recorder.warning(cr, 'ApplyFailed', 'Apply', 'one');
    expect(calls.map((c) => c.method)).toEqual(['POST', 'POST', 'POST', 'POST']);
  });

  test('GIVEN a hot error THEN writes stop at the bucket burst, and the next write after a refill carries the full count', async () => {
    const { client, calls } = fakeClient();
    const clock = new ManualClock();
    // No heartbeat pause, so that every repeat asks for a write and the bucket decides.
    const recorder = new EventRecorder({ client, reportingController: 'c', clock, rateLimit: { burst: 3, refillMs: 10_000 }, seriesHeartbeatMs: 0 });
    const outcomes: string[] = [];
    for (let i = 0; i < 10; i++) {
      outcomes.push(await recorder.warning(cr, 'ApplyFailed', 'Apply', 'denied'));
      clock.advance(100);
    }
    expect(outcomes).toEqual(['created', 'series-updated', 'series-updated', ...Array(7).fill('rate-limited')]);
    expect(calls).toHaveLength(3);
    clock.advance(10_000);
    expect(await recorder.warning(cr, 'ApplyFailed', 'Apply', 'denied')).toBe('series-updated');
    expect((calls[3].body.series as { count: number }).count).toBe(11);
    // another reason of the same object has its own bucket
    expect(await recorder.warning(cr, 'RenderFailed', 'Render', 'x')).toBe('created');
  });

  test('GIVEN the Event expired (404 on the series patch) THEN a new Event is created; a failed create never throws', async () => {
    let expire = false;
    const { client, calls } = fakeClient((call) =>
      expire && call.method === 'PATCH' ? new ApiError('PATCH', call.path, 404, 'NotFound', undefined, 'gone') : undefined,
    );
    const recorder = new EventRecorder({ client, reportingController: 'c', clock: new ManualClock() });
    await recorder.normal(cr, 'Applied', 'Apply', 'applied Deployment ns/w');
    expire = true;
    expect(await recorder.normal(cr, 'Applied', 'Apply', 'applied Deployment ns/w')).toBe('created');
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH', 'POST']);

    const failing = new EventRecorder({ client: fakeClient(() => new Error('connection refused')).client, reportingController: 'c' });
    expect(await failing.warning(cr, 'ApplyFailed', 'Apply', 'x')).toBe('failed');
  });

  test('GIVEN observations recorded without waiting THEN flush() resolves once all are written; past maxPending new ones are dropped and logged once', async () => {
    const { client, releases } = heldClient();
    const calls = () => client.calls.map((c) => `${c.method} ${c.body.note ?? ''}`);
    const warnings: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (_o: object, msg: string) => warnings.push(msg) };
    const recorder = new EventRecorder({ client, reportingController: 'c', clock: new ManualClock(), maxPending: 2, logger: logger as never });
    const first = recorder.normal(cr, 'Applied', 'Apply', 'one');
    const second = recorder.normal(cr, 'Applied', 'Apply', 'two');
    expect(await recorder.normal(cr, 'Applied', 'Apply', 'three')).toBe('dropped');
    expect(await recorder.normal(cr, 'Applied', 'Apply', 'four')).toBe('dropped');
    expect(warnings).toEqual(['too many events waiting to be written; dropping new ones until they drain']);

    let flushed = false;
    const flush = recorder.flush().then(() => (flushed = true));
    await eventually('both writes sent', async () => calls().length === 2, { intervalMs: 5 });
    releases[0]!();
    expect(await first).toBe('created');
    expect(flushed).toBe(false); // 'two' is still being written
    releases[1]!();
    await flush;
    expect(await second).toBe('created');
    expect(calls()).toEqual(['POST one', 'POST two']);

    // drained: recording works again, and a flush with an aborted signal returns at once
    const fifth = recorder.normal(cr, 'Applied', 'Apply', 'five');
    await recorder.flush(AbortSignal.abort());
    await eventually('the fifth write sent', async () => releases.length === 3, { intervalMs: 5 });
    releases[2]!();
    expect(await fifth).toBe('created');
  });

  test('GIVEN an object forgotten while its Event is being written THEN nothing of it stays: a later observation creates a new Event', async () => {
    const { client, releases } = heldClient();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock: new ManualClock() });
    const first = recorder.normal(cr, 'Applied', 'Apply', 'x');
    await eventually('the create sent', async () => releases.length === 1, { intervalMs: 5 });
    recorder.forget('u1');
    releases[0]!();
    expect(await first).toBe('created');
    await recorder.flush();
    const second = recorder.normal(cr, 'Applied', 'Apply', 'x');
    await eventually('the second write sent', async () => releases.length === 2, { intervalMs: 5 });
    releases[1]!();
    expect(await second).toBe('created');
    expect(client.calls.map((c) => c.method)).toEqual(['POST', 'POST']);
  });

  test('GIVEN concurrent repeats THEN they are handled one after the other: one create, the series patch, then counted', async () => {
    const { client, calls } = fakeClient();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock: new ManualClock() });
    expect(await Promise.all([1, 2, 3].map(() => recorder.warning(cr, 'ApplyFailed', 'Apply', 'x')))).toEqual(['created', 'series-updated', 'counted']);
    expect(calls.map((c) => c.method)).toEqual(['POST', 'PATCH']);
  });

  test('GIVEN a 3000-character or 600 × "é" note THEN the Event note is at most 1024 UTF-8 bytes', async () => {
    const { client, calls } = fakeClient();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock: new ManualClock() });
    await recorder.warning(cr, 'ApplyFailed', 'Apply', 'x'.repeat(3000));
    await recorder.warning(cr, 'ApplyFailed', 'Apply', 'é'.repeat(600));
    expect(calls.map((c) => Buffer.byteLength(c.body.note as string))).toEqual([1024, 1023]);
    expect(eventNote('short')).toBe('short');
  });

  test('GIVEN a 240-character object name THEN the Event name is a DNS-1123 subdomain of at most 253 characters', async () => {
    const { client, calls } = fakeClient();
    const recorder = new EventRecorder({ client, reportingController: 'c', clock: new ManualClock() });
    const long = { ...cr, metadata: { ...cr.metadata, name: 'a'.repeat(240) } };
    await recorder.warning(long, 'ApplyFailed', 'Apply', 'x');
    const name = (calls[0].body.metadata as { name: string }).name;
    expect(dns1123SubdomainProblem(name)).toBeUndefined();
    expect(name.length).toBeLessThanOrEqual(253);
  });

  test('GIVEN an ordinary name THEN client-go\'s <name>.<hex> is kept; GIVEN any name THEN a valid, deterministic Event name', () => {
    expect(eventName('web', '18c2f')).toBe('web.18c2f');
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 300 }), fc.stringMatching(/^[0-9a-f]{1,16}$/), (name, suffix) => {
        const event = eventName(name, suffix);
        expect(dns1123SubdomainProblem(event)).toBeUndefined();
        expect(event.endsWith(`.${suffix}`)).toBe(true);
        expect(eventName(name, suffix)).toBe(event);
      }),
      { numRuns: 500 },
    );
  });
});
