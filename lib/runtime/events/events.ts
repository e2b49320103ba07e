/**
 * Events about a CR (events.k8s.io/v1), recorded the way client-go's tools/events recorder does:
 * the server's size limits on note, reason and name, aggregation into a series, a per-object rate limit
 * and background writes. The reconciler's Warning and Normal events all go through {@link EventRecorder}.
 */
import { createHash } from 'node:crypto';
import { EVENTS } from '../client/builtin-resources.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { ResourceClient } from '../client/resource-client.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { type Clock, systemClock } from '../clock.js';
import { type Logger, errorFields, silentLogger } from '../logger.js';
import { truncateUtf8 } from '../reconcile/text-limit.js';
import { microTime } from '../lease/lease-timing.js';

export interface EventRecorderOptions {
  readonly client: KubeClient;
  /** `reportingController`, e.g. `cdk8s.io/memcached-operator`. */
  readonly reportingController: string;
  /** `reportingInstance`: this process, e.g. the pod name. @default reportingController's last segment + '-' + process.pid */
  readonly reportingInstance?: string;
  /**
   * A repeat of an event (same object, type, reason, action and note) observed within this long of the
   * last observation joins the existing Event's `series` instead of creating a new Event.
   * @default 360000 ms (6 min), client-go tools/events' series window
   */
  readonly seriesWindowMs?: number;
  /**
   * A series is written when it starts (the second observation) and then at most once per this long,
   * carrying the count observed meanwhile; repeats in between are counted in memory only, so a CR that
   * stays stalled costs no write per retry.
   * @default 1800000 ms (30 min), client-go tools/events' series refresh (`refreshTime`)
   */
  readonly seriesHeartbeatMs?: number;
  /**
   * Writes (creates and series patches) per object and reason: a token bucket of `burst` tokens, one
   * refilled every `refillMs`. Observations while it is empty are counted and carried by the next write.
   * @default { burst: 25, refillMs: 300000 }: client-go's event spam filter (25 at once, then 1 per 5 min)
   */
  readonly rateLimit?: { readonly burst: number; readonly refillMs: number };
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Wall clock for event times, injected for tests. @default () => new Date() */
  readonly now?: () => Date;
  /** Monotonic clock for windows and buckets, injected for tests. @default systemClock */
  readonly clock?: Clock;
  /**
   * Observations waiting or being written at most; one more is dropped (outcome `dropped`, a warning
   * logged once per overflow) so a slow API server never makes the recorder grow without bound.
   * @default 1000, client-go's `maxQueuedEvents`
   */
  readonly maxPending?: number;
}

/**
 * Longest Event `note` the API server accepts, in UTF-8 bytes: 1024 (`NoteLengthLimit` in
 * kubernetes pkg/apis/core/validation/events.go, counted with Go's `len`, i.e. bytes).
 */
export const EVENT_NOTE_MAX_BYTES = 1024;
/** Longest Event `reason` and `action` the API server accepts, in UTF-8 bytes (`ReasonLengthLimit`, `ActionLengthLimit`). */
export const EVENT_REASON_MAX_BYTES = 128;
/** Longest Event name: a DNS-1123 subdomain, 253 characters. */
export const EVENT_NAME_MAX_LENGTH = 253;

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The note sent for `text`: unchanged when it fits in {@link EVENT_NOTE_MAX_BYTES} UTF-8 bytes,
 * otherwise cut at a code point boundary so that it and a trailing '…' fit. Lone surrogates become
 * U+FFFD, as the server would store them.
 */
export function eventNote(text: string): string {
  return truncateUtf8(text, EVENT_NOTE_MAX_BYTES);
}

/**
 * The name of a new Event about the object named `regardingName`: `<regardingName>.<suffix>` as
 * client-go's recorder names it (`suffix` is lowercase hex), when that is a DNS-1123 subdomain of at most
 * {@link EVENT_NAME_MAX_LENGTH} characters. Otherwise (a long name, or one that is no subdomain, e.g. a
 * ClusterRole `system:auth`) the regarding name is lowercased, characters outside `[a-z0-9.-]` become
 * `-`, it is cut, and 8 hex digits of its sha256 keep different objects apart:
 * `<cleaned prefix>-<hash>.<suffix>`. Deterministic for the same inputs.
 *
 * @param suffix lowercase hex, at most 64 characters
 */
export function eventName(regardingName: string, suffix: string): string {
  const plain = `${regardingName}.${suffix}`;
  if (plain.length <= EVENT_NAME_MAX_LENGTH && DNS1123_SUBDOMAIN.test(plain)) return plain;
  const hash = createHash('sha256').update(regardingName).digest('hex').slice(0, 8);
  const room = EVENT_NAME_MAX_LENGTH - suffix.length - 1 - hash.length - 1;
  const cleaned = regardingName
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, room)
    // every dot-separated label starts and ends with an alphanumeric character
    .replace(/[-.]*\.[-.]*/g, '.')
    .replace(/^[-.]+|[-.]+$/g, '');
  return cleaned ? `${cleaned}-${hash}.${suffix}` : `${hash}.${suffix}`;
}

/** What {@link EventRecorder} wrote for one observation. */
export type RecordOutcome = 'created' | 'series-updated' | 'counted' | 'rate-limited' | 'dropped' | 'failed';

interface Series {
  readonly namespace: string;
  name: string;
  /** Observations so far, including ones not written yet because the bucket was empty. */
  count: number;
  lastObservedMs: number;
  lastObserved: Date;
  /** When the Event or its series was last written (monotonic ms). */
  lastWrittenMs: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Records events.k8s.io/v1 Events (kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/)
 * about a custom resource, the way client-go's tools/events recorder does.
 *
 * - **Aggregation:** the first observation creates an Event. A repeat within `seriesWindowMs` of the last
 *   one joins that Event's `series` (`count`, `lastObservedTime`) instead of creating another, so
 *   `kubectl describe` shows "(x12 over 3m)". As client-go's tools/events does, the series is patched
 *   on the second observation and then only as a heartbeat, once per `seriesHeartbeatMs` (carrying the
 *   count); the repeats in between are counted in memory (outcome `counted`). A repeat after the window
 *   starts a new Event.
 * - **Rate limit:** a token bucket per object and reason caps the writes a hot error causes (25, then one
 *   per 5 min by default). Observations while it is empty are counted in memory; the next write carries
 *   the full count. A first observation that finds the bucket empty is dropped.
 *
 * - **Server limits:** the note is cut to 1024 UTF-8 bytes ({@link eventNote}), reason and action to 128
 *   bytes, and the Event's name is a valid DNS-1123 subdomain of at most 253 characters whatever the
 *   regarding object's name ({@link eventName}), so no Event is rejected for its size or name.
 *
 * - **In the background:** a caller need not wait for the returned promise (the reconciler does not; an
 *   Event is not part of the desired state). At most `maxPending` observations wait or are being written;
 *   more are dropped. {@link EventRecorder.flush} waits for what was recorded so far (a graceful stop).
 *
 * Guarantees: recording never throws; a failed write is logged and dropped (a series patch answered 404,
 * e.g. the Event expired, starts a new Event instead). Observations of one event are written one after
 * the other. Events go to the object's namespace (`default` for a cluster-scoped object).
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Observations recorded and not yet written (or given up on). */
  private readonly pending = new Set<Promise<RecordOutcome>>();
  private readonly maxPending: number;
  /** Whether the current overflow was logged. */
  private overflowLogged = false;
  /** Keys of observations being written when their object was forgotten: they file no series. */
  private readonly forgotten = new Set<string>();
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly clock: Clock;
  private readonly windowMs: number;
  private readonly heartbeatMs: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly instance: string;
  private counter = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.clock = options.clock ?? systemClock;
    this.windowMs = options.seriesWindowMs ?? 360_000;
    this.heartbeatMs = options.seriesHeartbeatMs ?? 1_800_000;
    this.burst = options.rateLimit?.burst ?? 25;
    this.refillMs = options.rateLimit?.refillMs ?? 300_000;
    this.instance = options.reportingInstance ?? `${options.reportingController.replace(/^.*\//, '')}-${process.pid}`;
    this.maxPending = options.maxPending ?? 1000;
  }

  /** Records a Warning. */
  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<RecordOutcome> {
    return this.record('Warning', regarding, reason, action, note);
  }

  /** Records a Normal event. */
  normal(regarding: KubeObject, reason: string, action: string, note: string): Promise<RecordOutcome> {
    return this.record('Normal', regarding, reason, action, note);
  }

  /**
   * Resolves once every observation recorded before (and while) waiting has been written or given up on,
   * or when `signal` aborts. Never rejects.
   */
  async flush(signal?: AbortSignal): Promise<void> {
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<void>((resolve) => (onAbort = resolve));
    signal?.addEventListener('abort', onAbort!, { once: true });
    try {
      while (this.pending.size > 0 && !signal?.aborted) await Promise.race([Promise.all(this.pending), aborted]);
    } finally {
      signal?.removeEventListener('abort', onAbort!);
    }
  }

  /** Forgets the series and buckets of one object (call when it is deleted); an observation still being written keeps none. */
  forget(uid: string): void {
    const prefix = uid + '\u0000';
    for (const key of this.series.keys()) if (key.startsWith(prefix)) this.series.delete(key);
    for (const key of this.buckets.keys()) if (key.startsWith(prefix)) this.buckets.delete(key);
    // An observation still being written must not file its series after this.
    for (const key of this.chains.keys()) if (key.startsWith(prefix)) this.forgotten.add(key);
  }

  private record(type: 'Normal' | 'Warning', regarding: KubeObject, reason: string, action: string, rawNote: string): Promise<RecordOutcome> {
    const meta = regarding.metadata ?? {};
    const object = ObjectRef.incarnationKeyOf(regarding);
    const note = eventNote(rawNote);
    reason = truncateUtf8(reason, EVENT_REASON_MAX_BYTES, '');
    action = truncateUtf8(action, EVENT_REASON_MAX_BYTES, '');
    const key = [object, type, reason, action, note].join('\u0000');
    if (this.pending.size >= this.maxPending) {
      if (!this.overflowLogged) {
        this.overflowLogged = true;
        this.logger.warn({ maxPending: this.maxPending, namespace: meta.namespace, name: meta.name, reason }, 'too many events waiting to be written; dropping new ones until they drain');
      }
      return Promise.resolve('dropped');
    }
    // One observation at a time per event, so a create and the patch of its first repeat never race.
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.observe(key, `${object}\u0000${reason}`, type, regarding, reason, action, note));
    this.chains.set(key, next);
    this.pending.add(next);
    void next.finally(() => {
      if (this.chains.get(key) === next) {
        this.chains.delete(key);
        this.forgotten.delete(key);
      }
      this.pending.delete(next);
      if (this.pending.size === 0) this.overflowLogged = false;
    });
    return next;
  }

  private async observe(
    key: string,
    bucketKey: string,
    type: 'Normal' | 'Warning',
    regarding: KubeObject,
    reason: string,
    action: string,
    note: string,
  ): Promise<RecordOutcome> {
    const nowMs = this.clock.now();
    const now = this.now();
    const meta = regarding.metadata ?? {};
    // Recorded before its object was forgotten: written, but no series or bucket is kept for it.
    if (this.forgotten.has(key)) return this.create(key, { type, regarding, reason, action, note }, nowMs, now);
    const existing = this.series.get(key);
    if (existing && nowMs - existing.lastObservedMs <= this.windowMs) {
      existing.count++;
      existing.lastObservedMs = nowMs;
      existing.lastObserved = now;
      if (existing.count > 2 && nowMs - existing.lastWrittenMs < this.heartbeatMs) return 'counted';
      if (!this.takeToken(bucketKey, nowMs)) return 'rate-limited';
      return this.patchSeries(key, existing, { type, regarding, reason, action, note }, nowMs);
    }
    if (!this.takeToken(bucketKey, nowMs)) {
      this.logger.debug({ namespace: meta.namespace, name: meta.name, reason }, 'event rate-limited; dropped');
      return 'rate-limited';
    }
    return this.create(key, { type, regarding, reason, action, note }, nowMs, now);
  }

  private async create(key: string, e: EventContent, nowMs: number, now: Date): Promise<RecordOutcome> {
    const meta = e.regarding.metadata ?? {};
    const namespace = meta.namespace ?? 'default';
    const name = eventName(meta.name ?? '', (now.getTime() * 1000 + (this.counter++ % 1000)).toString(16));
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.options.reportingController,
      reportingInstance: this.instance,
      action: e.action,
      reason: e.reason,
      type: e.type,
      note: e.note,
      regarding: {
        apiVersion: e.regarding.apiVersion,
        kind: e.regarding.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
    };
    try {
      await new ResourceClient(this.options.client).create(EVENTS, event);
      if (!this.forgotten.has(key)) this.series.set(key, { namespace, name, count: 1, lastObservedMs: nowMs, lastObserved: now, lastWrittenMs: nowMs });
      return 'created';
    } catch (err) {
      this.logger.warn({ namespace, name: meta.name, reason: e.reason, ...errorFields(err) }, 'could not record event');
      return 'failed';
    }
  }

  private async patchSeries(key: string, series: Series, e: EventContent, nowMs: number): Promise<RecordOutcome> {
    const count = series.count;
    try {
      await new ResourceClient(this.options.client).patch(EVENTS, series.namespace, series.name, { type: 'merge', body: { series: { count, lastObservedTime: microTime(series.lastObserved) } } });
      series.lastWrittenMs = nowMs;
      return 'series-updated';
    } catch (err) {
      const meta = e.regarding.metadata ?? {};
      if (isApiError(err, 404)) {
        // The Event is gone (events expire after the API server's --event-ttl): start a new one.
        this.series.delete(key);
        return this.create(key, e, series.lastObservedMs, series.lastObserved);
      }
      this.logger.warn({ namespace: meta.namespace, name: meta.name, reason: e.reason, ...errorFields(err) }, 'could not update event series');
      return 'failed';
    }
  }

  private takeToken(key: string, nowMs: number): boolean {
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { tokens: this.burst, atMs: nowMs }));
    const refilled = Math.floor((nowMs - bucket.atMs) / this.refillMs);
    if (refilled > 0) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + refilled);
      bucket.atMs = bucket.tokens === this.burst ? nowMs : bucket.atMs + refilled * this.refillMs;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens--;
    return true;
  }
}

interface EventContent {
  readonly type: 'Normal' | 'Warning';
  readonly regarding: KubeObject;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
}
