/**
 * The reconcile's span when tracing is off (lib/runtime/tracing/reconcile-trace.ts): with
 * `@opentelemetry/api`'s global tracer and no provider registered, the root span does not record and the
 * steps get the shared no-op trace, so a reconcile pays for no span object, attribute or export. The spans
 * themselves, when on, are test/integration/tracing.test.ts'.
 */
import { NO_TRACE, globalTracer, startReconcileSpan } from '../../../lib/runtime/tracing/reconcile-trace.js';

const fields = { controller: 'c', controllerKind: 'K', namespace: 'ns', name: 'n', reconcileID: 'id' };

test('GIVEN the global tracer without a provider THEN the reconcile span hands the steps the shared no-op trace', () => {
  const span = startReconcileSpan(globalTracer(), fields);
  expect(span.trace).toBe(NO_TRACE);
  expect(span.trace.step('apply', { a: 1 })).toBe(NO_TRACE.step('render'));
  span.end('error', new Error('x'));
});
