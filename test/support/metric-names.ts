/**
 * The metric names an operator's /metrics must serve: controller-runtime's and client-go's (so existing
 * dashboards and alerts work unchanged), our own `cdk8s_operator_*`, and prom-client's process and
 * Node.js defaults. Written out here, not imported from lib/runtime/metrics/metrics.ts, so the tests check the
 * implementation against the contract.
 */
export const EXPECTED_METRIC_NAMES = [
  'controller_runtime_reconcile_total',
  'controller_runtime_reconcile_errors_total',
  'controller_runtime_terminal_reconcile_errors_total',
  'controller_runtime_reconcile_time_seconds',
  'controller_runtime_max_concurrent_reconciles',
  'controller_runtime_active_workers',
  'workqueue_depth',
  'workqueue_adds_total',
  'workqueue_queue_duration_seconds',
  'workqueue_work_duration_seconds',
  'workqueue_retries_total',
  'workqueue_unfinished_work_seconds',
  'workqueue_longest_running_processor_seconds',
  'rest_client_requests_total',
  'leader_election_master_status',
  'cdk8s_operator_applies_skipped_total',
  'cdk8s_operator_children_pruned_total',
  'cdk8s_operator_status_write_errors_total',
  'cdk8s_operator_renders_skipped_total',
  'cdk8s_operator_watch_restarts_total',
  'cdk8s_operator_watch_relists_total',
  'cdk8s_operator_watch_events_total',
  'certwatcher_read_certificate_total',
  'certwatcher_read_certificate_errors_total',
  'process_cpu_user_seconds_total',
  'process_start_time_seconds',
  'nodejs_eventloop_lag_seconds',
  'nodejs_heap_size_used_bytes',
] as const;
