/**
 * The CR's status as the runtime owns it (observedGeneration, conditions, children, the operator's own
 * fields), computed from a reconcile's outcome and written through the status subresource with
 * server-side apply only when it changed
 * (kubernetes.io/docs/concepts/extend-kubernetes/api-extension/custom-resources/#status-subresource).
 */
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { applyObject } from './apply.js';
import { canonicalJson, jsonEqual } from '../../json-object.js';
import { type Condition, type Outcome, kstatusConditions, mergeConditions } from './conditions.js';
import { RUNTIME_STATUS_FIELDS } from '../../operator/schema/runtime-status-fields.js';
import type { ResourceRef } from '../client/resource-path.js';
import { ObjectRef } from '../../operator/object-ref.js';

/** One line of the CR's `status.children`: a child and whether it counts as ready. */
export interface ChildStatus {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly ready: boolean;
  /** Children this one waits for (`dependsOn`), `Kind namespace/name`; absent when it waits for none. */
  readonly waitingFor?: readonly string[];
}

/** The part of a CR's status the runtime owns. Other status fields (set by others) are left alone. */
export interface RuntimeStatus {
  readonly observedGeneration?: number;
  readonly conditions: Condition[];
  /** Sorted by apiVersion, kind, namespace, name. */
  readonly children: ChildStatus[];
  /** The operator's own status fields (what render returned as `status`). */
  readonly [field: string]: unknown;
}

/** Sorts children deterministically (apiVersion, kind, namespace, name). */
export function sortChildren(children: readonly ChildStatus[]): ChildStatus[] {
  const key = (c: ChildStatus) => [c.apiVersion, c.kind, c.namespace ?? '', c.name].join('\u0000');
  return [...children].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * The status a reconcile wants: observedGeneration = metadata.generation, the three kstatus conditions
 * for `outcome` merged into the existing ones (lastTransitionTime kept unless a status flips), and the
 * sorted children summary. `children` undefined keeps the existing summary (e.g. render failed, so the
 * set of children is unknown).
 */
export function computeStatus(
  cr: KubeObject,
  outcome: Outcome,
  children: readonly ChildStatus[] | undefined,
  now: string,
  custom: Readonly<Record<string, unknown>> = {},
): RuntimeStatus {
  const existing = (cr.status ?? {}) as Partial<RuntimeStatus>;
  const generation = cr.metadata?.generation;
  const next = kstatusConditions(outcome, generation);
  const ours = new Set(next.map((c) => c.type));
  // Only our condition types: SSA merges the list-map by type, so other managers' conditions stay.
  const conditions = mergeConditions(existing.conditions, next, now).filter((c) => ours.has(c.type));
  const status: RuntimeStatus = {
    ...custom,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions,
    children: children ? sortChildren(children) : sortChildren(existing.children ?? []),
  };
  return status;
}

/** The condition types the runtime writes; others in `status.conditions` belong to other managers. */
const RUNTIME_CONDITIONS = ['Ready', 'Reconciling', 'Stalled'];

/**
 * True when `next` differs semantically from the fields of `current` this writer owns: the runtime's
 * fields, the operator's own status fields (`ownFields`, plus any other field `next` sets).
 */
export function statusChanged(current: unknown, next: RuntimeStatus, ownFields: readonly string[] = []): boolean {
  const c = (current ?? {}) as Partial<RuntimeStatus>;
  const runtime: readonly string[] = RUNTIME_STATUS_FIELDS;
  const own = [...new Set([...ownFields, ...Object.keys(next)])].filter((f) => !runtime.includes(f)).sort();
  const pick = (s: Partial<RuntimeStatus>) => ({
    observedGeneration: s.observedGeneration,
    conditions: (s.conditions ?? []).filter((c) => RUNTIME_CONDITIONS.includes(c.type)),
    children: s.children ?? [],
    own: own.map((f) => s[f] ?? null),
  });
  return !jsonEqual(pick(c), pick(next));
}

export interface StatusWriterOptions {
  readonly client: KubeClient;
  /** The CR's resource. */
  readonly ref: ResourceRef;
  /** The operator's field manager. */
  readonly fieldManager: string;
}

/** `status` as canonical JSON with its conditions' `lastTransitionTime` left out (see {@link StatusWriter}). */
function withoutTransitionTimes(status: RuntimeStatus): string {
  return canonicalJson({ ...status, conditions: status.conditions.map(({ lastTransitionTime: _, ...rest }) => rest) });
}

/**
 * Writes the runtime-owned part of a CR's status through the status subresource with server-side apply
 * (same field manager as the children, force), only when it changed semantically.
 *
 * Cache lag: right after a write the cache still holds the old status. A reconcile in that window would
 * compute the same status and write it again; the writer remembers what it wrote on top of which
 * resourceVersion and skips that repeat. The repeat is recognised with the conditions'
 * `lastTransitionTime` left out: computed on top of the same old status, a condition that is new or
 * flipped gets the time of each computation (conditions.ts), so a reconcile a second later would
 * otherwise write the same transition again with a later time.
 */
export class StatusWriter {
  /** By CR: the resourceVersion the last write went on top of, and what it wrote ({@link withoutTransitionTimes}). */
  private readonly written = new Map<string, { baseResourceVersion: string | undefined; status: string }>();

  constructor(private readonly options: StatusWriterOptions) {}

  /**
   * Writes `status` unless it equals the cached CR's status (or the one this writer just wrote on top of
   * the same resourceVersion). @returns true when a request was sent.
   */
  async write(cr: KubeObject, status: RuntimeStatus, ownFields: readonly string[] = []): Promise<boolean> {
    const key = ObjectRef.incarnationKeyOf(cr);
    if (!statusChanged(cr.status, status, ownFields)) {
      this.written.delete(key);
      return false;
    }
    const text = withoutTransitionTimes(status);
    const last = this.written.get(key);
    if (last && last.baseResourceVersion === cr.metadata?.resourceVersion && last.status === text) return false;
    const body: KubeObject = {
      apiVersion: cr.apiVersion,
      kind: cr.kind,
      metadata: { name: cr.metadata?.name, ...(cr.metadata?.namespace ? { namespace: cr.metadata.namespace } : {}) },
      status,
    };
    try {
      await applyObject(this.options.client, this.options.ref, body, { fieldManager: this.options.fieldManager, subresource: 'status' });
    } catch (err) {
      // The CR was deleted meanwhile: nothing to report on.
      if (isApiError((err as Error).cause, 404)) return false;
      throw err;
    }
    this.written.set(key, { baseResourceVersion: cr.metadata?.resourceVersion, status: text });
    return true;
  }

  /** Drops what is remembered for a CR (call when it is deleted). */
  forget(uid: string): void {
    this.written.delete(uid);
  }
}
