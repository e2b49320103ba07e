/**
 * What every step of one reconcile of one CR needs (see {@link ReconcileScope}).
 */
import { ObjectRef } from '../../operator/object-ref.js';
import type { KubeObject } from '../client/kube-client.js';
import type { Logger } from '../logger.js';
import { NO_TRACE, type ReconcileTrace } from '../tracing/reconcile-trace.js';
import type { DeclarationFailure } from './change-check-failures.js';
import type { ReconcileStats } from './reconcile-stats.js';

/**
 * One reconcile of one CR, built once by `Reconciler.reconcile` and passed to each step (finalizer-step.ts,
 * render-step.ts, apply-children.ts, prune.ts, outcome-reporter.ts) in place of loose arguments; the
 * counterpart of controller-runtime's `ctx` + `Request` and kube-rs' `Arc<K>` + `Arc<Context>`.
 * Lives for that one reconcile; the steps read it and write only `stats`.
 */
export interface ReconcileScope {
  /** The CR's cache key: `namespace/name`, or `name` for a cluster-scoped CR (ObjectRef.cacheKeyOf). */
  readonly key: string;
  /** The CR as the cache holds it at the start of this reconcile. */
  readonly cr: KubeObject;
  /** The CR's reference (`ObjectRef.of(cr)`): what the steps' errors ({@link ReconcileError}'s `objectRef`) and messages name. */
  readonly ref: ObjectRef;
  /** What this reconcile did (reconcile-stats.ts); the steps fill it in. */
  readonly stats: ReconcileStats;
  /** Logger carrying this reconcile's fields (controller, namespace, name, reconcileID). */
  readonly logger: Logger;
  /** Fields every log line of this reconcile carries: `{ operator, key }`. */
  readonly log: Readonly<Record<string, unknown>>;
  /** This reconcile's span: each step starts its span under it (lib/runtime/tracing/reconcile-trace.ts). @default NO_TRACE */
  readonly trace: ReconcileTrace;
  /**
   * A failure of the operator's own code outside render that this reconcile must tell (change-check-failures.ts):
   * Stalled=True and a TerminalError after the children are applied and pruned. @default none
   */
  readonly declarationFailure?: DeclarationFailure;
  /**
   * Sharded with per-bucket child caches: the CR's bucket, which its children (and the objects made from
   * them) carry, so the steps read that bucket's caches only (child-cache.ts `readerIn`, `relatedIn`).
   * @default none: every cache
   */
  readonly bucket?: number;
}

/** A scope for calling a step on its own (tests, tools): empty stats, `{}` log fields, not traced. */
export function reconcileScope(cr: KubeObject, logger: Logger, fields: Partial<Omit<ReconcileScope, 'cr' | 'logger'>> = {}): ReconcileScope {
  const stats: ReconcileStats = fields.stats ?? { applied: 0, pruned: 0, statusWritten: false };
  return { key: fields.key ?? '', cr, ref: fields.ref ?? ObjectRef.of(cr), stats, logger, log: fields.log ?? {}, trace: fields.trace ?? NO_TRACE, declarationFailure: fields.declarationFailure, bucket: fields.bucket };
}
