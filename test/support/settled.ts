/**
 * Waits until an operator has caught up with everything it wrote for one CR: no reconcile of its
 * controller in flight or queued, and a direct reconcile of `key` writes nothing (no apply, prune or
 * status write), with still no worker reconcile started meanwhile. A reconcile that was already running
 * when the direct one returned could still write from an older view of the cache, so an idle queue is
 * part of the condition. Replaces a fixed pause before counting writes.
 */
import type { Controller } from '../../lib/runtime/reconcile/controller.js';
import { eventually } from './eventually.js';

export async function settled(controller: Controller, key: string, options: { timeoutMs?: number; context?: () => string } = {}): Promise<void> {
  const idle = () => controller.active === 0 && controller.queue.len() === 0;
  await eventually(
    `${key} settled`,
    async () => {
      if (!idle()) return false;
      await controller.reconciler.reconcile(key);
      const stats = controller.reconciler.lastStats.get(key);
      return idle() && stats !== undefined && stats.applied === 0 && stats.pruned === 0 && !stats.statusWritten;
    },
    { timeoutMs: options.timeoutMs ?? 90_000, context: options.context },
  );
}
