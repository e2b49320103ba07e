/**
 * The apply step of a reconcile: every desired child, level by level ({@link dependencyLevels}), is
 * server-side applied when {@link decideApply} finds a difference with its cached state, and its
 * readiness read for the CR's status.
 *
 * - A child that `dependsOn` others is neither created nor updated until every dependency is ready
 *   (it is listed as waiting; never pruned meanwhile).
 * - The children of one level go out together, at most `applyConcurrency` at once; outcomes are merged
 *   in level, then render, order.
 * - A child about to be created is created (POST, adoption.ts): a name already taken answers 409 and
 *   only then is it looked up (one GET). Before the first apply of a changed render, the fields a create
 *   left under our `Update` entry are handed to server-side apply (created-fields.ts).
 * - A memory of its own applies, per child: the desired hash applied on top of which resourceVersion
 *   (or of one our own earlier write in that apply stored: the created fields' conversion), and a
 *   create's answer until the cache shows the child. A reconcile before the cache caught up skips
 *   the same apply (the level-triggered loop stays idempotent); this also stops a hot loop should the
 *   diff ever disagree with the server, since a no-op apply leaves the resourceVersion unchanged.
 * - Never throws: a rejected apply (or 409) is in the outcome, so the other children are still applied
 *   and the CR's status still written.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/
 */
import type { ReconcileScope } from './reconcile-scope.js';
import { kindKey } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import type { RenderOutput } from '../../operator/render/render-children.js';
import type { KubeResource } from '../../operator/render/render-context.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { TerminalError, isConflict } from '../errors.js';
import { type Logger, errorFields } from '../logger.js';
import type { EventRecorder } from '../events/events.js';
import type { ControllerMetrics } from '../metrics/metrics.js';
import { type AdoptionPolicy, ChildAdoption } from './adoption.js';
import { type ChildCache, readerIn } from './child-cache.js';
import type { ChildDecision, ChildDecisionListener } from './child-decision.js';
import { type ApplyReason, DESIRED_HASH_ANNOTATION, decideApply } from './child-diff.js';
import { childReadiness } from './child-readiness.js';
import { dependencyLevels } from './dependency-levels.js';
import { errorMessage } from './error-message.js';
import type { FieldType } from './field-type.js';
import { mapConcurrently } from './map-concurrently.js';
import type { FieldTypeSource } from './openapi-field-types.js';
import type { ChildStatus } from './status-writer.js';
import { type ReconcileTrace } from '../tracing/reconcile-trace.js';

export interface ChildApplierOptions {
  readonly client: KubeClient;
  /** The operator's field manager (its name). */
  readonly fieldManager: string;
  /** The caches of the child kinds the operator owns; a child of another kind is a TerminalError. */
  readonly children: readonly ChildCache[];
  /** An existing object under a child's name that this CR did not make. @default 'refuse' */
  readonly adoption?: AdoptionPolicy;
  /** Field types of the child kinds for the diff ({@link decideApply}). @default none: scalars compared exactly */
  readonly fieldTypes?: FieldTypeSource;
  /** Applies in flight at once within one level. @default 8 */
  readonly applyConcurrency?: number;
  /** `cdk8s_operator_applies_skipped_total`. @default none */
  readonly metrics?: Pick<ControllerMetrics, 'applySkipped'>;
  /** For the `Adopted` Normal event. @default no events */
  readonly events?: EventRecorder;
  /** Told each child's decision (child-decision.ts). @default none */
  readonly onDecision?: ChildDecisionListener;
}

/** What the apply step did to the desired children. */
export interface ApplyOutcome {
  /** The status.children entries of the desired children (none for a kind without cache), in level order. */
  readonly children: readonly ChildStatus[];
  /** The children applied (created or updated), in level order. */
  readonly applied: readonly ObjectRef[];
  /** The children among {@link applied} that existed before (updated: render changed, or drift reverted), in level order. */
  readonly updated: readonly ObjectRef[];
  /** Why each child that is not ready isn't (for the Reconciling condition's message). */
  readonly waiting: readonly string[];
  /** Applies the API server refused (not 409), and children of kinds without cache (TerminalError). */
  readonly failures: readonly Error[];
  /** The first apply answered with 409, if any. */
  readonly conflict?: Error;
}

/** What happened to one desired child. */
interface ChildOutcome {
  /** Why it was applied, or why not (for its span). @default none: its kind has no cache */
  readonly reason?: ApplyReason | 'unchanged' | 'waiting';
  readonly ready: boolean;
  readonly status?: ChildStatus;
  readonly applied?: ObjectRef;
  /** Set with {@link applied} when the child existed before (not created). */
  readonly updated?: ObjectRef;
  readonly waiting?: string;
  readonly failure?: Error;
  readonly conflict?: Error;
  /** The GET after a create found the name taken, in ms (for its span). */
  readonly lookupMs?: number;
  /** Only with an `onDecision` listener: what the cache held (or the lookup found), the answer, the managers adopted from. */
  readonly decided?: { readonly live?: KubeObject; readonly after?: KubeObject; readonly adopted?: readonly string[]; readonly waitingFor?: readonly string[] };
}

/** The render and the levels handled so far, for one child. */
interface ChildScope {
  readonly cr: KubeObject;
  readonly output: RenderOutput;
  readonly byKey: ReadonlyMap<string, KubeObject>;
  /** ObjectRef key → ready, for the children of the levels handled so far. */
  readonly readyByKey: ReadonlyMap<string, boolean>;
  readonly logger: Logger;
  readonly log: Record<string, unknown>;
  readonly trace: ReconcileTrace;
  /** Sharded: the CR's bucket, whose cache holds its children (ReconcileScope.bucket). */
  readonly bucket: number | undefined;
}

/** One remembered apply (see the module doc). */
interface AppliedMemo {
  /**
   * The resourceVersion applied on top of ('' when the child did not exist), then those our own
   * earlier writes of that apply stored (a cache showing one of them has not caught up).
   */
  readonly baseResourceVersions: readonly string[];
  /** The desired hash applied. */
  readonly hash: string;
  /** A create's answer, until the cache shows the child. */
  created?: KubeObject;
}

export class ChildApplier {
  private readonly options: ChildApplierOptions;
  private readonly cacheByKind: ReadonlyMap<string, ChildCache>;
  private readonly adoption: ChildAdoption;
  /** ObjectRef key of a child → our last apply of it. */
  private readonly applied = new Map<string, AppliedMemo>();
  /** Child kinds whose missing field types were logged. */
  private readonly fieldTypesWarned = new Set<string>();

  constructor(options: ChildApplierOptions) {
    this.options = options;
    this.cacheByKind = new Map(options.children.map((child) => [kindKey(child.kind), child]));
    this.adoption = new ChildAdoption({ client: options.client, fieldManager: options.fieldManager, policy: options.adoption });
  }

  /**
   * Applies `desired` (the render's children, with their desired hash) level by level, each child in an
   * `apply` span of `trace`. Never throws.
   */
  async apply(scope: ReconcileScope, output: RenderOutput, desired: readonly KubeObject[]): Promise<ApplyOutcome> {
    const { cr, logger, log, trace, bucket } = scope;
    const byKey = new Map(desired.map((child) => [ObjectRef.of(child).key(), child]));
    const readyByKey = new Map<string, boolean>();
    const children: ChildStatus[] = [];
    const applied: ObjectRef[] = [];
    const updated: ObjectRef[] = [];
    const waiting: string[] = [];
    const failures: Error[] = [];
    let conflict: Error | undefined;
    for (const level of dependencyLevels(desired, output.waitsFor)) {
      const outcomes = await mapConcurrently(level, this.options.applyConcurrency ?? 8, (child) => this.tracedApplyChild(child, { cr, output, byKey, readyByKey, logger, log, trace, bucket }));
      for (const [index, outcome] of outcomes.entries()) {
        readyByKey.set(ObjectRef.of(level[index] as KubeObject).key(), outcome.ready);
        if (outcome.status) children.push(outcome.status);
        if (outcome.applied) applied.push(outcome.applied);
        if (outcome.updated) updated.push(outcome.updated);
        if (outcome.waiting) waiting.push(outcome.waiting);
        if (outcome.failure) failures.push(outcome.failure);
        if (outcome.conflict) conflict ??= outcome.conflict;
      }
    }
    return { children, applied, updated, waiting, failures, ...(conflict ? { conflict } : {}) };
  }

  /** Forgets our applies of a child (call on its delete event, or when its CR is forgotten). */
  forget(obj: KubeObject): void {
    this.applied.delete(ObjectRef.of(obj).key());
  }

  /** {@link applyChild} in an `apply` span: the child, whether it was sent and why, its failure. */
  private async tracedApplyChild(child: KubeObject, scope: ChildScope): Promise<ChildOutcome> {
    const span = scope.trace.step('apply', {
      'cdk8s_operator.child.api_version': child.apiVersion,
      'cdk8s_operator.child.kind': child.kind,
      'k8s.namespace.name': child.metadata?.namespace,
      'cdk8s_operator.child.name': child.metadata?.name,
    });
    try {
      const outcome = await this.applyChild(child, scope);
      if (this.options.onDecision) this.options.onDecision(scope.cr, decisionOf(child, outcome));
      const sent = outcome.reason !== undefined && outcome.reason !== 'unchanged' && outcome.reason !== 'waiting';
      span.set({ 'cdk8s_operator.apply.skipped': !sent, 'cdk8s_operator.apply.reason': outcome.reason, 'cdk8s_operator.apply.lookup_ms': outcome.lookupMs === undefined ? undefined : Math.round(outcome.lookupMs * 10) / 10 });
      const failure = outcome.failure ?? outcome.conflict;
      if (failure) span.fail(failure);
      return outcome;
    } finally {
      span.end();
    }
  }

  /**
   * One desired child whose dependencies were handled: skipped while a dependency is not ready, else
   * applied when {@link decideApply} finds a difference. Never throws: a rejected apply is its outcome.
   */
  private async applyChild(child: KubeObject, scope: ChildScope): Promise<ChildOutcome> {
    const { cr, output, byKey, readyByKey, logger, log } = scope;
    const ref = ObjectRef.of(child);
    const key = ref.key();
    const cache = this.cacheByKind.get(kindKey(ref));
    if (!cache) {
      return { ready: false, failure: new TerminalError(`${ref}: kind ${child.kind} (${child.apiVersion}) is not among the operator's child kinds; declare it in \`owns\``) };
    }
    const identity = { apiVersion: child.apiVersion ?? '', kind: ref.kind, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) };
    const actual = readerIn(cache.cache, scope.bucket).get(ref.namespace, ref.name);
    if (actual) this.cacheCaughtUp(key);
    const blockers = (output.waitsFor.get(key) ?? []).filter((dependency) => readyByKey.get(dependency) !== true);
    if (blockers.length > 0) {
      // dependsOn: neither created nor updated until every dependency is ready; never pruned meanwhile.
      const names = blockers.map((dependency) => {
        const blocker = byKey.get(dependency);
        return blocker ? ObjectRef.of(blocker).toString() : dependency;
      });
      const readiness = readinessOf(ref, actual, output);
      return {
        reason: 'waiting',
        ready: false,
        waiting: `${ref} waits for ${names.join(', ')}`,
        status: { ...identity, ready: actual !== undefined && readiness.ready, waitingFor: names },
        ...(this.options.onDecision ? { decided: { live: actual, waitingFor: names } } : {}),
      };
    }
    let current = actual;
    let applied: ObjectRef | undefined;
    let existed = false;
    let failure: Error | undefined;
    let conflict: Error | undefined;
    let lookupMs: number | undefined;
    let found: KubeObject | undefined;
    let adopted: readonly string[] | undefined;
    const decision = decideApply(child, actual, actual ? await this.fieldTypesOf(child, logger) : undefined);
    const recent = decision.reason ? this.justApplied(key, child, actual) : undefined;
    if (!decision.reason || recent) this.options.metrics?.applySkipped();
    if (recent) current = recent;
    else if (decision.reason) {
      try {
        // adoption.ts: a child not cached and not written by us is created (POST); a taken name is looked up.
        const memo = this.applied.get(key);
        const result = await this.adoption.apply(cache.kind, child, cr, {
          cached: actual,
          appliedBefore: memo !== undefined,
          // Our last write was of another render (justApplied found no match), or the cached child's hash differs.
          renderChanged: decision.reason === 'render-changed' || (!actual && memo !== undefined),
          known: actual ?? memo?.created,
        });
        existed = actual !== undefined || result.existed === true || result.adopted !== undefined;
        current = result.stored;
        lookupMs = result.lookupMs;
        found = result.found;
        adopted = result.adopted;
        if (result.adopted) {
          logger.info({ ...log, child: ref.toString(), managers: result.adopted }, 'adopted existing object');
          void this.options.events?.normal(cr, 'Adopted', 'Apply', `adopted ${ref} (it existed; fields set by ${result.adopted.join(', ') || 'nobody'} taken over)`);
        }
        applied = ref;
        this.applied.set(key, {
          baseResourceVersions: [actual?.metadata?.resourceVersion ?? '', ...(result.earlierWrites ?? [])],
          hash: child.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] ?? '',
          ...(actual ? {} : { created: current }),
        });
        logger.info({ ...log, child: ref.toString(), reason: decision.reason, path: decision.path }, result.adopted ? 'applied child (adopted the existing object)' : result.existed ? 'applied child (it existed, already ours, but was not cached)' : applyMessage(decision.reason));
      } catch (err) {
        if (isConflict(err)) conflict = err as Error;
        else failure = err as Error;
      }
    }
    const readiness = readinessOf(ref, current, output);
    return {
      reason: decision.reason && !recent ? decision.reason : 'unchanged',
      ready: readiness.ready,
      status: { ...identity, ready: readiness.ready },
      ...(!readiness.ready && readiness.message ? { waiting: readiness.message } : {}),
      ...(applied ? { applied } : {}),
      ...(applied && existed ? { updated: applied } : {}),
      ...(failure ? { failure } : {}),
      ...(conflict ? { conflict } : {}),
      ...(lookupMs !== undefined ? { lookupMs } : {}),
      ...(this.options.onDecision ? { decided: { live: actual ?? found, after: applied ? current : undefined, adopted } } : {}),
    };
  }

  /** The child kind's field types; undefined (logged once per kind) when they cannot be read. */
  private async fieldTypesOf(child: KubeObject, logger: Logger): Promise<FieldType | undefined> {
    const source = this.options.fieldTypes;
    if (!source) return undefined;
    const kind = `${child.apiVersion ?? ''} ${child.kind ?? ''}`;
    try {
      return await source.forKind(child.apiVersion ?? '', child.kind ?? '');
    } catch (err) {
      if (!this.fieldTypesWarned.has(kind)) {
        this.fieldTypesWarned.add(kind);
        logger.warn({ operator: this.options.fieldManager, kind, ...errorFields(err) }, 'no field types for the child diff; comparing scalars exactly');
      }
      return undefined;
    }
  }

  /**
   * The server's answer when we already applied this exact desired object on top of the cached state
   * (the cache hasn't caught up yet); see the module doc.
   */
  private justApplied(key: string, desired: KubeObject, actual: KubeObject | undefined): KubeObject | undefined {
    const memo = this.applied.get(key);
    const fresh =
      memo !== undefined &&
      memo.hash === desired.metadata?.annotations?.[DESIRED_HASH_ANNOTATION] &&
      memo.baseResourceVersions.includes(actual?.metadata?.resourceVersion ?? '');
    return fresh ? (actual ?? memo.created) : undefined;
  }

  /** The cache shows the child: the answer to its create is no longer needed (one copy of each child is enough). */
  private cacheCaughtUp(key: string): void {
    const memo = this.applied.get(key);
    if (memo?.created) delete memo.created;
  }
}

/** A child's readiness: its `readyWhen` predicate when it has one, else the built-in rules. */
function readinessOf(ref: ObjectRef, current: KubeObject | undefined, output: RenderOutput): { ready: boolean; message?: string } {
  const predicate = output.readyWhen.get(ref.key());
  if (!predicate) return childReadiness(current, ref.toString());
  if (!current) return { ready: false, message: `${ref}: not found` };
  try {
    return predicate(current as KubeResource) ? { ready: true } : { ready: false, message: `${ref}: readyWhen not met` };
  } catch (err) {
    return { ready: false, message: `${ref}: readyWhen threw: ${errorMessage(err)}` };
  }
}

/** The log line of an apply, by why it was sent. */
function applyMessage(reason: ApplyReason): string {
  switch (reason) {
    case 'missing':
      return 'created child';
    case 'render-changed':
      return 'updated child (render changed)';
    case 'drift':
      return 'reverted drift on child';
  }
}

/** The decision an outcome tells the `onDecision` listener (child-decision.ts). */
function decisionOf(child: KubeObject, outcome: ChildOutcome): ChildDecision {
  const { live, after, adopted, waitingFor } = outcome.decided ?? {};
  const failure = outcome.failure ?? outcome.conflict;
  if (failure) return { action: 'failed', object: child, live, error: failure };
  if (outcome.reason === 'waiting') return { action: 'waiting', object: child, live, waitingFor };
  if (!outcome.applied) return { action: 'unchanged', object: child, live };
  return { action: outcome.updated ? 'update' : 'create', object: child, live, after, ...(adopted ? { adopted } : {}) };
}
