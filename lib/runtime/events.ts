import { type ApiClient, type KubeObject, isApiError } from './api-client.js';
import { type Clock, systemClock } from './clock.js';
import { type Logger, errorFields, silentLogger } from './logger.js';

export interface EventRecorderOptions {
  readonly client: ApiClient;
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
}

/** Longest event note the API accepts (events.k8s.io/v1 `note` is limited to 1 kB). */
const MAX_NOTE_LENGTH = 1024;

/** What {@link EventRecorder} wrote for one observation. */
export type RecordOutcome = 'created' | 'series-updated' | 'rate-limited' | 'failed';

interface Series {
  readonly namespace: string;
  name: string;
  /** Observations so far, including ones not written yet because the bucket was empty. */
  count: number;
  lastObservedMs: number;
  lastObserved: Date;
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
 *   one patches that Event's `series` (`count`, `lastObservedTime`) instead of creating another, so
 *   `kubectl describe` shows "(x12 over 3m)". A repeat after the window starts a new Event.
 * - **Rate limit:** a token bucket per object and reason caps the writes a hot error causes (25, then one
 *   per 5 min by default). Observations while it is empty are counted in memory; the next write carries
 *   the full count. A first observation that finds the bucket empty is dropped.
 *
 * Guarantees: recording never throws; a failed write is logged and dropped (a series patch answered 404,
 * e.g. the Event expired, starts a new Event instead). Observations of one event are written one after
 * the other. Events go to the object's namespace (`default` for a cluster-scoped object).
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly clock: Clock;
  private readonly windowMs: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly instance: string;
  private counter = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.clock = options.clock ?? systemClock;
    this.windowMs = options.seriesWindowMs ?? 360_000;
    this.burst = options.rateLimit?.burst ?? 25;
    this.refillMs = options.rateLimit?.refillMs ?? 300_000;
    this.instance = options.reportingInstance ?? `${options.reportingController.replace(/^.*\//, '')}-${process.pid}`;
  }

  /** Records a Warning. */
  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<RecordOutcome> {
    return this.record('Warning', regarding, reason, action, note);
  }

  /** Records a Normal event. */
  normal(regarding: KubeObject, reason: string, action: string, note: string): Promise<RecordOutcome> {
    return this.record('Normal', regarding, reason, action, note);
  }

  /** Forgets the series and buckets of one object (call when it is deleted). */
  forget(uid: string): void {
    const prefix = uid + '\u0000';
    for (const key of this.series.keys()) if (key.startsWith(prefix)) this.series.delete(key);
    for (const key of this.buckets.keys()) if (key.startsWith(prefix)) this.buckets.delete(key);
  }

  private record(type: 'Normal' | 'Warning', regarding: KubeObject, reason: string, action: string, rawNote: string): Promise<RecordOutcome> {
    const meta = regarding.metadata ?? {};
    const object = meta.uid ?? `${meta.namespace ?? ''}/${meta.name ?? ''}`;
    const note = rawNote.length > MAX_NOTE_LENGTH ? rawNote.slice(0, MAX_NOTE_LENGTH - 1) + '…' : rawNote;
    const key = [object, type, reason, action, note].join('\u0000');
    // One observation at a time per event, so a create and the patch of its first repeat never race.
    const previous = this.chains.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.observe(key, `${object}\u0000${reason}`, type, regarding, reason, action, note));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
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
    const existing = this.series.get(key);
    if (existing && nowMs - existing.lastObservedMs <= this.windowMs) {
      existing.count++;
      existing.lastObservedMs = nowMs;
      existing.lastObserved = now;
      if (!this.takeToken(bucketKey, nowMs)) return 'rate-limited';
      return this.patchSeries(key, existing, { type, regarding, reason, action, note });
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
    const name = `${meta.name}.${(now.getTime() * 1000 + (this.counter++ % 1000)).toString(16)}`;
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
      await this.options.client.request('POST', `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`, { body: event });
      this.series.set(key, { namespace, name, count: 1, lastObservedMs: nowMs, lastObserved: now });
      return 'created';
    } catch (err) {
      this.logger.warn({ namespace, name: meta.name, reason: e.reason, ...errorFields(err) }, 'could not record event');
      return 'failed';
    }
  }

  private async patchSeries(key: string, series: Series, e: EventContent): Promise<RecordOutcome> {
    const path = `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(series.namespace)}/events/${encodeURIComponent(series.name)}`;
    const count = series.count;
    try {
      await this.options.client.request('PATCH', path, {
        body: { series: { count, lastObservedTime: microTime(series.lastObserved) } },
        contentType: 'application/merge-patch+json',
      });
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

/** events.k8s.io MicroTime: RFC 3339 with microseconds. */
function microTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}
