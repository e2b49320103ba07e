/**
 * The workqueue's three priorities and their fair order: a fixed cycle of hand-out slots in which each
 * priority owns a share (weighted round-robin), so higher priorities go first while every queued key
 * still has a bounded wait, counted in hand-outs (`get` calls).
 */

/**
 * How soon a queued key is handed out, highest first:
 * - `high`: the CR itself was created or edited (spec, labels, annotations, finalizers, deletion) by a
 *   watch event after its informer had synced: a user's change.
 * - `normal`: follow-up work: child and related events, and `requeueAfter` and rate-limited retries once
 *   they are due.
 * - `low`: events that are not edge-triggered: the informer's initial list (adds before it has synced,
 *   and adds replayed for objects it already had) and the periodic resync. Like controller-runtime's
 *   priority queue (pkg/controller/priorityqueue, `handler.LowPriorityWhenUnchanged`), which puts them at
 *   `LowPriority` below fresh events, so that after a restart a CR created then is not reconciled behind
 *   the whole initial list (tofu-controller#1641).
 *
 * The order is not strict: see {@link PriorityShares}.
 */
export type QueuePriority = 'high' | 'normal' | 'low';

/** The priorities, highest first. */
export const QUEUE_PRIORITIES: readonly QueuePriority[] = ['high', 'normal', 'low'];

/**
 * Slots per cycle of hand-outs for each priority (weighted round-robin). Each `get` takes the next slot
 * of a fixed cycle of `high + normal + low` slots: the slot's priority is served if it has keys queued,
 * else the highest priority that has. FIFO within each priority.
 *
 * **The bound.** A key that enters priority `p`'s queue with `position - 1` keys ahead of it there is
 * handed out within `ceil(position / shares[p]) × (shares.high + shares.normal + shares.low)` gets, however
 * fast keys of other priorities keep arriving ({@link ShareCycle.maxWaitGets} gives the exact, smaller
 * figure for a cycle). Reason: while the key waits its queue is not empty, so each of `p`'s slots hands
 * out the key at the head of that queue, and new keys queue behind it. In time: that many gets ÷ the
 * rate at which the workers take keys (`maxConcurrentReconciles` ÷ the reconcile time).
 *
 * **Why shares and not aging.** Strict priority (controller-runtime's priority queue, and this queue
 * before) starves the lower priorities while higher adds arrive faster than the workers take keys
 * (controller-runtime#3496: initial-list keys never ran; here also child events, retries and
 * requeueAfter). Aging, which promotes a key after it waited some time, bounds the wait too, but under a
 * backlog it promotes the whole backlog at once: after a restart the 1000 initial-list keys would all age
 * past a user's edit and the edit would again wait behind them. A share keeps the priorities meaningful
 * under any backlog (a fresh edit still gets `high`'s share of every cycle), gives each lower priority a
 * guaranteed share, needs no clock, and gives a bound that does not depend on arrival rates.
 *
 * @default { high: 4, normal: 2, low: 1 }: a cycle of 7 slots, `high normal high low high normal high`.
 * Halving per level keeps user edits ahead (at least 4 of 7 hand-outs when everything is busy, every one
 * when nothing else waits) while follow-up work gets at least 2 of 7 and the initial list 1 of 7. With it:
 * the first `high` key is handed out within 2 gets, the first `normal` within 4, the first `low` within
 * 7; the n-th of a priority within `ceil(n / share) × 7`.
 * @see https://github.com/kubernetes-sigs/controller-runtime/tree/main/pkg/controller/priorityqueue (priorities, strict)
 * @see https://pkg.go.dev/k8s.io/client-go/util/workqueue (the queue's other guarantees)
 */
export type PriorityShares = Readonly<Record<QueuePriority, number>>;

/** See {@link PriorityShares}. */
export const DEFAULT_PRIORITY_SHARES: PriorityShares = Object.freeze({ high: 4, normal: 2, low: 1 });

/** The largest share accepted, so that a cycle stays small (the bound grows with the cycle). */
export const MAX_PRIORITY_SHARE = 1000;

/**
 * The cycle of hand-out slots of {@link PriorityShares}: slots are spread evenly (smooth weighted
 * round-robin: each step every priority gains its share, the one with the most credit takes the slot and
 * pays the cycle length; ties go to the higher priority), so a priority's slots are never bunched.
 */
export class ShareCycle {
  /** The slots of one cycle, in order. */
  readonly slots: readonly QueuePriority[];
  readonly shares: PriorityShares;
  private cursor = 0;
  /** Per priority: worst[r - 1] = most slots, over every starting slot, up to and including the r-th slot of the priority. */
  private readonly worst: Record<QueuePriority, number[]>;

  /**
   * @param shares @default DEFAULT_PRIORITY_SHARES
   * @throws Error naming the field (`shares.low`) when a share is not a whole number from 1 to
   *   {@link MAX_PRIORITY_SHARE} (0 would starve that priority again).
   */
  constructor(shares: PriorityShares = DEFAULT_PRIORITY_SHARES) {
    for (const priority of QUEUE_PRIORITIES) {
      const share = shares[priority];
      if (!Number.isInteger(share) || share < 1 || share > MAX_PRIORITY_SHARE) {
        throw new Error(`shares.${priority}: must be a whole number from 1 to ${MAX_PRIORITY_SHARE} (slots per cycle of hand-outs), got ${String(share)}`);
      }
    }
    this.shares = Object.freeze({ high: shares.high, normal: shares.normal, low: shares.low });
    const total = shares.high + shares.normal + shares.low;
    const credit: Record<QueuePriority, number> = { high: 0, normal: 0, low: 0 };
    const slots: QueuePriority[] = [];
    for (let i = 0; i < total; i++) {
      let best: QueuePriority = 'high';
      for (const priority of QUEUE_PRIORITIES) {
        credit[priority] += shares[priority];
        if (credit[priority] > credit[best]) best = priority;
      }
      credit[best] -= total;
      slots.push(best);
    }
    this.slots = Object.freeze(slots);
    this.worst = { high: [], normal: [], low: [] };
    for (const priority of QUEUE_PRIORITIES) {
      for (let r = 1; r <= shares[priority]; r++) {
        let most = 0;
        for (let start = 0; start < total; start++) {
          let seen = 0;
          let count = 0;
          while (seen < r) {
            if (slots[(start + count) % total] === priority) seen++;
            count++;
          }
          most = Math.max(most, count);
        }
        this.worst[priority].push(most);
      }
    }
  }

  /** Slots in one cycle: the sum of the shares. */
  get length(): number {
    return this.slots.length;
  }

  /**
   * Takes the next slot and says which priority it serves: the slot's own if `hasKeys` says it has keys
   * queued, else the highest that has; `undefined` (no slot taken) when none has.
   */
  take(hasKeys: (priority: QueuePriority) => boolean): QueuePriority | undefined {
    const owner = this.slots[this.cursor];
    const served = hasKeys(owner) ? owner : QUEUE_PRIORITIES.find(hasKeys);
    if (served !== undefined) this.cursor = (this.cursor + 1) % this.slots.length;
    return served;
  }

  /** Starts the cycle over (at its first slot); the queue does this whenever it runs empty, so a burst after idle starts with `high`. */
  reset(): void {
    this.cursor = 0;
  }

  /**
   * The most gets (hand-outs), counting the one that hands it out, until a key that entered `priority`'s
   * queue at `position` (1 = at the head) is handed out, from any point of the cycle, however many keys
   * of other priorities are queued or arrive. At most `ceil(position / share) × length`.
   */
  maxWaitGets(priority: QueuePriority, position: number): number {
    if (!Number.isInteger(position) || position < 1) throw new Error(`position: must be a whole number ≥ 1, got ${String(position)}`);
    const share = this.shares[priority];
    const fullCycles = Math.floor((position - 1) / share);
    return fullCycles * this.slots.length + this.worst[priority][position - 1 - fullCycles * share];
  }
}
