import { jest } from '@jest/globals';
import perfHooks from 'node:perf_hooks';
import { register as globalRegistry } from 'prom-client';
import { ManualClock } from '../../../lib/runtime/clock.js';
import { EVENT_LOOP_MONITORING_PRECISION_MS, OperatorMetrics, RECONCILE_TIME_BUCKETS, WORKQUEUE_DURATION_BUCKETS } from '../../../lib/runtime/metrics/metrics.js';
import { ExponentialRateLimiter } from '../../../lib/runtime/queue/rate-limiter.js';
import { Workqueue } from '../../../lib/runtime/queue/workqueue.js';
import { EXPECTED_METRIC_NAMES } from '../../support/metric-names.js';

/** The value of one sample line `name{labels} value` in the exposition text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('OperatorMetrics', () => {
  test('GIVEN a controller and its queue hooked up THEN every controller-runtime, client-go and own metric name is exposed with its labels', async () => {
    const metrics = new OperatorMetrics();
    metrics.controller('memcached-operator').setMaxConcurrentReconciles(1);
    metrics.workqueue('memcached-operator');
    metrics.requestHook('https://127.0.0.1:6443')({ method: 'GET', path: '/api', code: 200, durationMs: 1, watch: false });
    metrics.leaderElection().leading('memcached-operator', false);
    metrics.watch().restarted('deployments.apps', 'closed');
    metrics.watch().relisted('deployments.apps');
    metrics.watch().event('deployments.apps', 'MODIFIED');
    metrics.watch().event('deployments.apps', 'MODIFIED');
    metrics.watch().event('pods', 'ADDED');
    const text = await metrics.text();
    for (const name of EXPECTED_METRIC_NAMES) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(sample(text, 'controller_runtime_reconcile_total{controller="memcached-operator",result="success"}')).toBe(0);
    expect(sample(text, 'controller_runtime_reconcile_total{controller="memcached-operator",result="requeue_after"}')).toBe(0);
    expect(sample(text, 'controller_runtime_max_concurrent_reconciles{controller="memcached-operator"}')).toBe(1);
    expect(sample(text, 'workqueue_depth{name="memcached-operator",controller="memcached-operator"}')).toBe(0);
    expect(sample(text, 'cdk8s_operator_watch_restarts_total{resource="deployments.apps",reason="closed"}')).toBe(1);
    expect(sample(text, 'cdk8s_operator_watch_relists_total{resource="deployments.apps"}')).toBe(1);
    expect(sample(text, 'cdk8s_operator_watch_events_total{resource="deployments.apps",type="MODIFIED"}')).toBe(2);
    expect(sample(text, 'cdk8s_operator_watch_events_total{resource="pods",type="ADDED"}')).toBe(1);
  });

  test('GIVEN two instances in one process THEN they do not collide and never touch prom-client\'s global registry', async () => {
    const one = new OperatorMetrics();
    const two = new OperatorMetrics();
    one.controller('a').reconciled('success', 0.01);
    expect(sample(await two.text(), 'controller_runtime_reconcile_total{controller="a",result="success"}')).toBeUndefined();
    expect(await globalRegistry.getSingleMetric('controller_runtime_reconcile_total')).toBeUndefined();
  });

  test('GIVEN reconciles with each result THEN totals, errors and the time histogram count them', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const c = metrics.controller('app-operator');
    c.reconciled('success', 0.004);
    c.reconciled('requeue_after', 0.2);
    c.reconciled('error', 2);
    c.reconcileError();
    c.reconciled('error', 0.1);
    c.terminalError();
    c.activeWorkers(1);
    c.activeWorkers(1);
    c.activeWorkers(-1);
    c.applySkipped(3);
    c.childrenPruned();
    const text = await metrics.text();
    const l = 'controller="app-operator"';
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="success"}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="error"}`)).toBe(2);
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="requeue"}`)).toBe(0);
    expect(sample(text, `controller_runtime_reconcile_total{${l},result="requeue_after"}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_errors_total{${l}}`)).toBe(2);
    expect(sample(text, `controller_runtime_terminal_reconcile_errors_total{${l}}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_time_seconds_count{${l}}`)).toBe(4);
    expect(sample(text, `controller_runtime_reconcile_time_seconds_bucket{le="0.005",${l}}`)).toBe(1);
    expect(sample(text, `controller_runtime_reconcile_time_seconds_bucket{le="60",${l}}`)).toBe(4);
    expect(sample(text, `controller_runtime_active_workers{${l}}`)).toBe(1);
    expect(sample(text, `cdk8s_operator_applies_skipped_total{${l}}`)).toBe(3);
    expect(sample(text, `cdk8s_operator_children_pruned_total{${l}}`)).toBe(1);
  });

  test('GIVEN a real Workqueue with the adapter THEN depth, adds, retries, durations and in-flight work are reported', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const clock = new ManualClock();
    const hooks = metrics.workqueue('memcached-operator');
    const queue = new Workqueue({ name: 'memcached-operator', clock, metrics: hooks, rateLimiter: new ExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }) });
    hooks.observe(queue);
    const l = 'name="memcached-operator",controller="memcached-operator"';

    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a'); // deduplicated: not an add
    let text = await metrics.text();
    expect(sample(text, `workqueue_depth{${l}}`)).toBe(2);
    expect(sample(text, `workqueue_adds_total{${l}}`)).toBe(2);

    clock.advance(2_000);
    expect(await queue.get()).toBe('ns/a');
    clock.advance(3_000);
    text = await metrics.text();
    expect(sample(text, `workqueue_depth{${l}}`)).toBe(1);
    expect(sample(text, `workqueue_queue_duration_seconds_count{${l}}`)).toBe(1);
    expect(sample(text, `workqueue_queue_duration_seconds_sum{${l}}`)).toBe(2);
    expect(sample(text, `workqueue_unfinished_work_seconds{${l}}`)).toBe(3);
    expect(sample(text, `workqueue_longest_running_processor_seconds{${l}}`)).toBe(3);

    queue.addRateLimited('ns/a');
    queue.done('ns/a');
    text = await metrics.text();
    expect(sample(text, `workqueue_retries_total{${l}}`)).toBe(1);
    expect(sample(text, `workqueue_work_duration_seconds_count{${l}}`)).toBe(1);
    expect(sample(text, `workqueue_work_duration_seconds_sum{${l}}`)).toBe(3);
    expect(sample(text, `workqueue_unfinished_work_seconds{${l}}`)).toBe(0);
    expect(sample(text, `workqueue_longest_running_processor_seconds{${l}}`)).toBe(0);
    queue.shutDown();
  });

  test('GIVEN API requests THEN rest_client_requests_total counts them by code, method (a watch is a GET) and host', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const seen: string[] = [];
    const hook = metrics.requestHook('https://127.0.0.1:6443/', (r) => seen.push(r.method));
    hook({ method: 'GET', path: '/api/v1/pods', code: 200, durationMs: 3, watch: false });
    hook({ method: 'WATCH', path: '/api/v1/pods', code: 200, durationMs: 3, watch: true });
    hook({ method: 'patch', path: '/apis/apps/v1/namespaces/x/deployments/y', code: 409, durationMs: 3, watch: false });
    hook({ method: 'GET', path: '/api/v1/pods', code: 0, durationMs: 3, watch: false });
    const text = await metrics.text();
    expect(sample(text, 'rest_client_requests_total{code="200",method="GET",host="127.0.0.1:6443"}')).toBe(2);
    expect(sample(text, 'rest_client_requests_total{code="409",method="PATCH",host="127.0.0.1:6443"}')).toBe(1);
    expect(sample(text, 'rest_client_requests_total{code="<error>",method="GET",host="127.0.0.1:6443"}')).toBe(1);
    expect(seen).toEqual(['GET', 'WATCH', 'patch', 'GET']);
  });

  test('GIVEN the leader-election hook THEN leader_election_master_status follows it', async () => {
    const metrics = new OperatorMetrics({ defaultMetrics: false });
    const hook = metrics.leaderElection();
    hook.leading('memcached-operator', true);
    expect(sample(await metrics.text(), 'leader_election_master_status{name="memcached-operator"}')).toBe(1);
    hook.leading('memcached-operator', false);
    expect(sample(await metrics.text(), 'leader_election_master_status{name="memcached-operator"}')).toBe(0);
  });

  test('buckets are controller-runtime\'s', () => {
    expect(RECONCILE_TIME_BUCKETS).toHaveLength(40);
    expect([RECONCILE_TIME_BUCKETS[0], RECONCILE_TIME_BUCKETS[39]]).toEqual([0.005, 60]);
    expect(WORKQUEUE_DURATION_BUCKETS).toEqual([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000]);
  });

  test('GIVEN the default metrics THEN the event loop delay is sampled every 100 ms, not prom-client\'s 10 (a timer that wakes an idle process 100 times a second)', () => {
    const monitor = jest.spyOn(perfHooks, 'monitorEventLoopDelay');
    try {
      new OperatorMetrics();
      expect(EVENT_LOOP_MONITORING_PRECISION_MS).toBe(100);
      expect(monitor.mock.calls.map(([options]) => options?.resolution)).toEqual([100]);
    } finally {
      monitor.mockRestore();
    }
  });
});
