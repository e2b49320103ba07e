/**
 * Status conditions in the kstatus convention (kubernetes-sigs/cli-utils pkg/kstatus, KEP-1623):
 * `Ready` (normal-true), `Reconciling` and `Stalled` (abnormal-true).
 */
import type { Condition } from '../../operator/schema/crd.js';
import { truncateCodePoints } from './text-limit.js';

export type { Condition };

/** A condition as computed by a reconcile, before its transition time is decided. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/**
 * Longest message kept in a condition, in code points (the unit of the CRD schema's `maxLength`, whose
 * limit for `message` is 32768); longer ones are cut with an ellipsis. 1024 keeps a status with many
 * conditions far below the API server's request size limit.
 */
export const MAX_CONDITION_MESSAGE_LENGTH = 1024;

/** Order of the standard conditions; other types follow alphabetically. */
const ORDER = ['Ready', 'Reconciling', 'Stalled'];

/**
 * Cuts `message` to `max` code points (ending in '…'), never inside a surrogate pair; lone surrogates
 * become U+FFFD, as the API server stores them.
 */
export function capMessage(message: string, max = MAX_CONDITION_MESSAGE_LENGTH): string {
  return truncateCodePoints(message, max);
}

/**
 * Merges freshly computed conditions into the existing ones.
 * - `lastTransitionTime` is kept from the existing condition of the same type unless its status flips;
 *   otherwise it is `now`;
 * - existing conditions of other types (not in `next`) are kept as they are;
 * - the result is in a deterministic order: Ready, Reconciling, Stalled, then others by type.
 *
 * @param now RFC 3339 time, seconds precision (metav1.Time serialises at seconds)
 */
export function mergeConditions(existing: readonly Condition[] | undefined, next: readonly ConditionInput[], now: string): Condition[] {
  const byType = new Map<string, Condition>();
  for (const condition of existing ?? []) byType.set(condition.type, condition);
  for (const input of next) {
    const old = byType.get(input.type);
    const lastTransitionTime = old && old.status === input.status ? old.lastTransitionTime : now;
    const condition: Condition = { ...input, message: capMessage(input.message), lastTransitionTime };
    if (condition.observedGeneration === undefined) delete (condition as { observedGeneration?: number }).observedGeneration;
    byType.set(input.type, condition);
  }
  return [...byType.values()].sort(compareConditions);
}

function compareConditions(a: Condition, b: Condition): number {
  const ia = ORDER.indexOf(a.type);
  const ib = ORDER.indexOf(b.type);
  if (ia !== ib) return (ia === -1 ? ORDER.length : ia) - (ib === -1 ? ORDER.length : ib);
  return a.type < b.type ? -1 : a.type > b.type ? 1 : 0;
}

/**
 * A condition as read from any object's `status.conditions`: a custom resource's, or a built-in kind's
 * (a CRD's `Established`, a Deployment's `Available`, a Pod's `Ready`), whose reason and message may be absent.
 */
export type ObservedCondition = Pick<Condition, 'type' | 'status'> & Partial<Pick<Condition, 'reason' | 'message' | 'observedGeneration'>>;

/** The conditions in `object.status.conditions`; none when the object, its status or the list is absent. */
export function conditionsOf(object: object | undefined): ObservedCondition[] {
  return (object as { status?: { conditions?: ObservedCondition[] } } | undefined)?.status?.conditions ?? [];
}

/** The condition of `type`, if present. */
export function findCondition<C extends ObservedCondition>(conditions: readonly C[] | undefined, type: string): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether `object` has the condition `type` with status `True` (e.g. a Pod `Ready`, a CRD `Established`). */
export function hasTrueCondition(object: object | undefined, type: string): boolean {
  return findCondition(conditionsOf(object), type)?.status === 'True';
}

/** `<status> <reason>: <message>` as a line tells it; the reason and the message are left out when empty or absent. */
export function conditionSummary(condition: ObservedCondition): string {
  return `${condition.status}${condition.reason ? ` ${condition.reason}` : ''}${condition.message ? `: ${condition.message}` : ''}`;
}

/** Current time in metav1.Time's format (seconds precision, UTC, `Z`). */
export function nowRfc3339(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The three kstatus conditions for one reconcile outcome. */
export type Outcome =
  /** Every child applied and ready. */
  | { readonly kind: 'ready'; readonly message: string }
  /** Applied, waiting for children to become ready. */
  | { readonly kind: 'progressing'; readonly reason: string; readonly message: string }
  /** An error the reconcile cannot get past by itself (render failed, apply rejected, finalizer failed). */
  | { readonly kind: 'stalled'; readonly reason: string; readonly message: string };

/** Ready/Reconciling/Stalled for an outcome, as kstatus reads them. */
export function kstatusConditions(outcome: Outcome, generation: number | undefined): ConditionInput[] {
  const g = generation === undefined ? {} : { observedGeneration: generation };
  switch (outcome.kind) {
    case 'ready':
      return [
        { type: 'Ready', status: 'True', reason: 'Ready', message: outcome.message, ...g },
        { type: 'Reconciling', status: 'False', reason: 'Ready', message: '', ...g },
        { type: 'Stalled', status: 'False', reason: 'Ready', message: '', ...g },
      ];
    case 'progressing':
      return [
        { type: 'Ready', status: 'False', reason: outcome.reason, message: outcome.message, ...g },
        { type: 'Reconciling', status: 'True', reason: outcome.reason, message: outcome.message, ...g },
        { type: 'Stalled', status: 'False', reason: outcome.reason, message: '', ...g },
      ];
    case 'stalled':
      return [
        { type: 'Ready', status: 'False', reason: outcome.reason, message: outcome.message, ...g },
        { type: 'Reconciling', status: 'False', reason: outcome.reason, message: '', ...g },
        { type: 'Stalled', status: 'True', reason: outcome.reason, message: outcome.message, ...g },
      ];
  }
}
