import type { EventRecorder } from '../../lib/runtime/ops/events.js';
import type { Reconciler } from '../../lib/runtime/reconcile/reconciler.js';

/**
 * Makes every `reconciler.reconcile()` wait, before it settles, for the Events it recorded (the reconciler
 * records them in the background), so a test sees them among the fake client's calls. Their order
 * relative to the reconcile's own requests stays unspecified.
 */
export function flushEventsAfterReconcile(reconciler: Reconciler, events: EventRecorder): void {
  const reconcile = reconciler.reconcile.bind(reconciler);
  reconciler.reconcile = async (...args) => {
    try {
      return await reconcile(...args);
    } finally {
      await events.flush();
    }
  };
}
