/**
 * A real {@link Workqueue} that records every `add` it is asked for, with its priority, before the queue
 * decides (a key already waiting is still recorded): what the controller tests read to see which events
 * reached the queue, and at which priority.
 */
import { type QueuePriority, Workqueue } from '../../lib/runtime/queue/workqueue.js';

export class RecordingWorkqueue extends Workqueue {
  /** Each add as `[key, priority]`, oldest first; a test may empty it (`adds.length = 0`). */
  readonly adds: [string, QueuePriority][] = [];

  override add(key: string, priority: QueuePriority = 'normal'): void {
    this.adds.push([key, priority]);
    super.add(key, priority);
  }

  /** The keys of {@link adds}, in order. */
  addedKeys(): string[] {
    return this.adds.map(([key]) => key);
  }
}
