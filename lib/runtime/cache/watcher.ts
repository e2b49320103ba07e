/**
 * The watch loop under every informer: list, then watch from the list's resourceVersion, and recover from
 * everything (410 Gone, closed and half-open streams, errors, Retry-After) without ever stopping on its
 * own (client-go's Reflector; kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes).
 */
import { type KubeClient, type KubeObject, type WatchEvent, ApiError, isApiError } from '../client/kube-client.js';
import { Backoff, type BackoffOptions, sleep } from '../queue/backoff.js';
import { type Logger, errorFields, silentLogger } from '../logger.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { type Clock, systemClock } from '../clock.js';
import { WATCH_DEAD_AFTER_MS, WatchHeartbeat } from './watch-heartbeat.js';
import { type ResourceRef, resourcePath } from '../client/resource-path.js';
import { listPages } from '../client/list-pages.js';
import { apiVersionOf, withTypeMeta } from '../client/type-meta.js';
import { type PartitionHandlers, type PartitionOwner, type WatchSource, WatchPartition, comparableResourceVersion } from './watch-partition.js';

/** A change to the watched set, after the watcher's own map of objects was updated. */
export interface ChangeEvent {
  readonly type: 'add' | 'update' | 'delete';
  /** The object now (for `delete`: its last known state). */
  readonly object: KubeObject;
  /** The previously cached state: always set for `update`; for `delete` when the watcher had the object. */
  readonly oldObject?: KubeObject;
}

/**
 * Hooks for watch metrics (lib/runtime/metrics/metrics.ts `WatchMetrics` fits): `resource` is `plural[.group]`,
 * e.g. `deployments.apps`.
 */
export interface WatcherMetrics {
  /**
   * A watch was re-opened; `reason` is `closed` (server ended it), `idle` (heard nothing for
   * timeoutSeconds + 15 s: half-open, see {@link Watcher}), `error`, `expired` (410), or `partitions`
   * (a partitioned watcher's set of partitions changed: a sharded replica took or gave up a bucket).
   */
  restarted?(resource: string, reason: 'closed' | 'idle' | 'error' | 'expired' | 'partitions'): void;
  /** A full list after the first one (after a 410 Expired). */
  relisted?(resource: string): void;
  /** One watch event received and parsed (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`); list items are not events. */
  event?(resource: string, type: string): void;
}

/** `Accept` of a metadata-only list: PartialObjectMetadataList (meta.k8s.io/v1), else whole objects. */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** `Accept` of a metadata-only watch: each event's object a PartialObjectMetadata (meta.k8s.io/v1). */
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** Answers with Retry-After retried in a row before the exponential backoff takes over (client-go's maxRetries). */
export const MAX_RETRY_AFTER_IN_A_ROW = 10;

export interface WatcherOptions {
  readonly client: KubeClient;
  readonly resource: ResourceRef;
  /** Watch one namespace only. @default all namespaces (or cluster-scoped) */
  readonly namespace?: string;
  /** A label selector (kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors). @default everything */
  readonly labelSelector?: string;
  /** A field selector. @default everything */
  readonly fieldSelector?: string;
  /**
   * Ask for metadata only (`PartialObjectMetadata`, as controller-runtime's metadata-only watches do) and
   * keep `{ apiVersion, kind, metadata }` of each object, with this apiVersion and kind: the server
   * sends and the cache holds no spec, data or status. A server that answers with whole objects is
   * trimmed here to the same shape.
   * @default whole objects
   * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-metadata-only
   */
  readonly metadataOnly?: { readonly apiVersion: string; readonly kind: string };
  /** Receives every change, in order, synchronously. Exceptions are caught and logged. Unused with {@link partitionLabel}: each partition has its own. */
  readonly onChange: (event: ChangeEvent) => void;
  /**
   * Partition the watched set by this label's value (watch-partition.ts): the watcher keeps no objects of
   * its own, {@link Watcher.partition} makes one {@link WatchPartition} per value, and one watch with
   * `<label> in (<the values held>)` (and {@link labelSelector}) fills them all. Each partition is listed
   * alone when it joins (LIST pages; `initialList` does not apply) and after a 410. The loop runs while at
   * least one partition is held.
   * @default none: one set of objects
   */
  readonly partitionLabel?: string;
  /**
   * Maps each received object before it is kept and passed on (e.g. strip managedFields, freeze).
   * @default identity
   */
  readonly transform?: (obj: KubeObject) => KubeObject;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Page size of list calls (`limit`). @default 500, like client-go's pager */
  readonly pageSize?: number;
  /**
   * Server-side `timeoutSeconds` of each watch call; a function is called once per watch. It is also the
   * watch's heartbeat (the server ends the stream then), so it bounds how long a half-open watch goes
   * unnoticed: see {@link WatchHeartbeat} and the class docstring.
   * @default a random 30–45 s: short enough that a dead stream is found within a minute, random so that
   * many clients' re-watches spread (client-go's reflector uses 300–600 s and relies on HTTP/2 pings)
   */
  readonly timeoutSeconds?: number | (() => number);
  /**
   * A watch stream that hears nothing from the server (no headers, event, bookmark or end) for this long
   * is dead: its socket is destroyed, the idle pooled connections to the server are dropped
   * ({@link KubeClient.suspectConnections}), and it is re-opened at once from the last resourceVersion.
   * @default (timeoutSeconds × 1000 + 15000) ms, computed per watch (15 s: client-go's HTTP/2 PingTimeout)
   */
  readonly idleTimeoutMs?: number;
  /** Time of the heartbeat (dead and blind streams). @default systemClock */
  readonly clock?: Clock;
  /** Delay between failed attempts. @default 200 ms → 30 s, ×2, +50 % jitter */
  readonly backoff?: BackoffOptions;
  /**
   * Delay between attempts while the API server refuses connections (`ECONNREFUSED`: nothing listens on
   * its port, e.g. kube-apiserver restarting), +50 % jitter. A refused connect costs the server nothing, so
   * these attempts neither grow nor use the exponential backoff: the watch is back within this delay of the
   * server listening again, however long it was down. @default 1000 ms
   *
   * Also the longest wait for an answer that says when to come back (429 or 5xx with `Retry-After`, e.g.
   * "storage is (re)initializing" or a path not yet installed while kube-apiserver starts): it is retried
   * after min(Retry-After, this), +50 % jitter, without growing the backoff, up to
   * {@link MAX_RETRY_AFTER_IN_A_ROW} times in a row (client-go's REST client retries such answers up to 10
   * times); more fall back to the exponential backoff.
   */
  readonly refusedRetryMs?: number;
  /** @default none */
  readonly metrics?: WatcherMetrics;
  /**
   * How the whole set is read at start and after a 410 Gone:
   * - `watch-list`: streamed, as a watch with `sendInitialEvents=true` and
   *   `resourceVersionMatch=NotOlderThan` (KEP-3157, WatchList, beta): the server sends every object as
   *   an `ADDED` event from its watch cache, then a `BOOKMARK` annotated `k8s.io/initial-events-end`, and
   *   the same stream goes on with changes. Neither side builds a LIST response (the API server's memory
   *   is what KEP-3157 saves most). Falls back to `list` for this watcher, for good, when the server
   *   refuses the parameters (400 or 422: a server without the WatchList feature) or twice ends the stream
   *   before that bookmark;
   * - `list`: pages of LIST (`limit`/`continue`), then a watch from the list's resourceVersion.
   * @default 'list' (the Manager's informers ask for `watch-list`: ManagerOptions.initialList)
   * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#streaming-lists
   */
  readonly initialList?: InitialList;
}

/** How a {@link Watcher} reads the whole set: see {@link WatcherOptions.initialList}. */
export type InitialList = 'watch-list' | 'list';

/** The annotation on the bookmark that ends a watch-list's initial events (KEP-3157). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** The default `timeoutSeconds` range: a random whole number of seconds in [min, max]. */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = { min: 30, max: 45 } as const;

/**
 * The documented bound, with the defaults: a watch stream that stopped answering without closing is
 * destroyed and re-opened at most this long after the server last said anything on it:
 * max `timeoutSeconds` (45 s) + 15 s.
 */
export const HALF_OPEN_WATCH_BOUND_MS = DEFAULT_WATCH_TIMEOUT_SECONDS.max * 1000 + WATCH_DEAD_AFTER_MS;

/** How long one list page may take before the loop counts as stuck (see {@link Watcher.alive}). */
const LIST_BUDGET_MS = 120_000;
/** Slack on top of every step's own budget before {@link Watcher.alive} turns false. */
const ALIVE_GRACE_MS = 60_000;

/**
 * Lists, then watches, one resource (optionally one namespace and/or label selector), and keeps a map of
 * the objects it has seen (client-go's Reflector + store; kube-rs `watcher` + `reflector`).
 *
 * Expected flow:
 * 1. List all pages (`limit`/`continue`), keep the objects, emit `add` for each, set `synced` (the first
 *    full list has landed).
 * 2. Watch from the list's resourceVersion with `allowWatchBookmarks=true` and `timeoutSeconds`; every
 *    event and bookmark moves the resourceVersion forward. No event between list and watch is lost.
 * 3. When the stream ends (server timeout, closed connection, idle watchdog), watch again from the last
 *    resourceVersion.
 * 4. On 410 Gone (HTTP 410 at watch start, or an `ERROR` event with code 410 in the stream): list again once
 *    and emit `add`/`update`/`delete` from the difference to what it had, so deletions in between are seen.
 *
 * Guarantees: it never stops by itself. Every failure (list, watch start, stream error, bad line) is logged
 * via the injected logger and retried after an exponential backoff with jitter (never a tight loop), until
 * `stop()`; a refused connection is retried every `refusedRetryMs` instead, and an answer with Retry-After
 * after at most that long (see there). A watch that ends cleanly within a second without a single event
 * also waits a backoff step; so does a second 410 in a row. The backoff resets after a watch that
 * delivered events. `onChange` runs synchronously in event order; an exception in it is logged and does
 * not break the loop. A relist swaps the whole set at once: changes are emitted only after the last page
 * arrived.
 *
 * Half-open connections (a socket that stops answering without closing: a dropped NAT or conntrack entry,
 * a load balancer that lost the flow, a frozen peer): HTTP/1.1 has no ping like client-go's HTTP/2 health
 * check (`ReadIdleTimeout` 30 s + `PingTimeout` 15 s), so the server's `timeoutSeconds` is the heartbeat:
 * a healthy stream always says something (an event, a bookmark, its end) within `timeoutSeconds` (T).
 * Periodic bookmarks are no heartbeat: measured on kube-apiserver 1.35, an idle watch gets its first one
 * 88–121 s after it opened. So:
 * - a stream that has heard nothing for T + 15 s is dead: its socket is destroyed, the idle pooled
 *   sockets of every client to that server are dropped (they likely went the same way; the next write
 *   opens a new connection instead of waiting its 30 s timeout on a dead one), a warning is logged, the
 *   `idle` restart is counted, and the watch is re-opened at once from the last resourceVersion;
 * - the watcher is {@link blind} while the server has said nothing for more than T + 5 s, until it
 *   hears again (the liveness probe names blind watches, see the manager).
 * Bound, with the default T (random 30–45 s): a change made while the watch's connection is half-open
 * reaches the cache at most {@link HALF_OPEN_WATCH_BOUND_MS} = 45 + 15 = 60 s after the server last said
 * anything on it, plus one round trip to re-open the watch (a new connection). A larger `timeoutSeconds`
 * makes the bound T + 15 s. The cost of the short T: each watcher re-opens its watch every 30–45 s from
 * its last resourceVersion (served from the API server's watch cache; no etcd read).
 *
 * Partitioned ({@link WatcherOptions.partitionLabel}; watch-partition.ts): the same loop over every
 * partition held, with two more steps. Before a watch opens, each partition that joined (every one, with no
 * resourceVersion) is listed alone, page by page, and the watch opens from the oldest of the lists' and
 * its own resourceVersion; each partition drops the events at or below its list's. A join or a leave
 * closes the open watch (counted as restart `partitions`, no backoff), so the other partitions' events
 * wait for the joining one's list: a pause of one list, no loss. A partition's list that fails is retried
 * like any list, with the watch closed meanwhile.
 *
 * Caveats: `update` is emitted only when the resourceVersion changed; objects are not deep-compared.
 * A `delete` after a relist carries the last state this watcher saw, not the final one.
 */
export class Watcher implements WatchSource, PartitionOwner {
  readonly resource: ResourceRef;
  readonly namespace: string | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  private readonly options: WatcherOptions;
  private readonly logger: Logger;
  private readonly path: string;
  private readonly items = new Map<string, KubeObject>();
  private readonly backoff: Backoff;
  /** The constant delay (with jitter) while connections are refused; its `failures` counts refusals in a row. */
  private readonly refusedRetry: Backoff;
  private readonly refusedRetryMs: number;
  /** Answers with Retry-After in a row (see `refusedRetryMs`). */
  private retryAfterInARow = 0;
  private resourceVersion: string | undefined;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private syncedFlag = false;
  private loopEnded = false;
  /** When the loop last showed progress, and how long it may go without more before it counts as stuck. */
  private progress = { atMs: 0, budgetMs: 0 };
  private syncWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** The error of the last failed list or watch, until a list succeeds. */
  private lastFailure: unknown;
  private readonly heartbeat: WatchHeartbeat;
  /** How the next full read goes: `watch-list` until the server shows it does not serve it. */
  private initialList: InitialList;
  /** Watch-list streams in a row that ended before their initial-events-end bookmark. */
  private unfinishedInitialStreams = 0;
  /** With {@link WatcherOptions.partitionLabel}: the partitions held, by value. */
  private readonly partitions = new Map<string, WatchPartition>();
  /** Partitions to list alone before the next watch opens (joined, or all of them after a 410). */
  private readonly unlisted = new Set<WatchPartition>();
  /** Ends the open watch stream so that the loop re-opens it with the partitions held now (undefined: none open). */
  private reopenStream: (() => void) | undefined;
  /** Wakes the loop while it waits for a partition to hold. */
  private wakeUp: (() => void) | undefined;
  /** The partition whose list is running (and, after it threw, failed): named in the loop's log. */
  private listing: WatchPartition | undefined;

  constructor(options: WatcherOptions) {
    this.options = options;
    this.resource = options.resource;
    this.namespace = options.namespace;
    this.labelSelector = options.labelSelector;
    this.fieldSelector = options.fieldSelector;
    this.path = resourcePath(options.resource, options.namespace);
    this.backoff = new Backoff(options.backoff);
    this.refusedRetryMs = options.refusedRetryMs ?? 1000;
    this.refusedRetry = new Backoff({ initialMs: this.refusedRetryMs, maxMs: this.refusedRetryMs, factor: 1 });
    this.logger = options.logger ?? silentLogger;
    this.heartbeat = new WatchHeartbeat(LIST_BUDGET_MS, options.clock ?? systemClock);
    this.initialList = options.initialList ?? 'list';
  }

  /** How this watcher reads the whole set now: `watch-list` until the server showed it does not serve it. */
  get initialListMode(): InitialList {
    return this.initialList;
  }

  /**
   * True while the server has said nothing to this watcher for longer than a healthy watch stays
   * silent (the last stream's `timeoutSeconds` + 5 s; before the first watch: 2 min for the list): its
   * cache may be missing changes and no error says why. Anything from the server counts as word: a list
   * page, watch headers, an event, a bookmark, a stream's end, an error answer (403, 429, 5xx), and a
   * refused connection (nothing listens: the API server is down, which the loop logs). The watcher is
   * already recovering (see the class docstring); this is what `/healthz` reports. False once stopped.
   */
  blind(nowMs?: number): boolean {
    if (!this.loop || this.loopEnded || this.abort?.signal.aborted) return false;
    if (this.options.partitionLabel && this.partitions.size === 0) return false; // no watch open, by design
    return this.heartbeat.blind(nowMs);
  }

  /** Milliseconds since the server last said anything to this watcher (an answer, event, bookmark, end). */
  silentForMs(nowMs?: number): number {
    return this.heartbeat.silentForMs(nowMs);
  }

  /** True once the first full list has landed (and stays true across relists). */
  get synced(): boolean {
    return this.syncedFlag;
  }

  /** Why the last list or watch failed; undefined once a list succeeded after it (or before any failure). */
  get lastError(): unknown {
    return this.lastFailure;
  }

  /** The last resourceVersion seen (list, event or bookmark); undefined before the first list. */
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  /** The last known state of the object with this key (`namespace/name` or `name`). */
  get(key: string): KubeObject | undefined {
    return this.items.get(key);
  }

  /** All objects, in no particular order. */
  values(): IterableIterator<KubeObject> {
    return this.items.values();
  }

  get size(): number {
    return this.items.size;
  }

  /**
   * One partition of this watcher (with {@link WatcherOptions.partitionLabel}): the objects whose label
   * has `value`, with their own handlers. It joins the watch when started and leaves it when stopped.
   */
  partition(value: string, handlers: PartitionHandlers): WatchPartition {
    if (!this.options.partitionLabel) throw new Error(`${this.describe()}: not partitioned (no partitionLabel)`);
    return new WatchPartition(this, value, handlers);
  }

  /** {@link PartitionOwner.join}: lists `partition` alone, then re-opens the watch with it. */
  join(partition: WatchPartition): void {
    const held = this.partitions.get(partition.value);
    if (held && held !== partition) throw new Error(`${this.describe()}: partition ${partition.value} is held already`);
    this.partitions.set(partition.value, partition);
    this.unlisted.add(partition);
    this.start();
    this.reopenStream?.();
    this.wakeUp?.();
  }

  /** {@link PartitionOwner.leave}: drops `partition` (no events) and re-opens the watch without it. */
  async leave(partition: WatchPartition): Promise<void> {
    if (this.partitions.get(partition.value) !== partition) return;
    this.partitions.delete(partition.value);
    this.unlisted.delete(partition);
    this.reopenStream?.();
  }

  /** Starts the list/watch loop in the background; a second call does nothing (also after `stop()`: a stopped watcher stays stopped). */
  start(): void {
    if (this.loop) return;
    this.abort = new AbortController();
    this.progressed(LIST_BUDGET_MS);
    this.loop = this.run(this.abort.signal).finally(() => {
      this.loopEnded = true;
    });
  }

  /**
   * True while the list/watch loop runs and is not stuck: started, not stopped, and it has shown progress
   * (a page, an event, a bookmark, a new watch, a backoff step) within the time it allows itself for the
   * current step: the idle watchdog's timeout for an open watch, the backoff delay for a pause, 2 min for
   * a list, each plus a 60 s grace. The liveness probe's "watchers alive" check.
   */
  alive(nowMs: number = performance.now()): boolean {
    if (!this.loop || this.loopEnded || this.abort?.signal.aborted) return false;
    return nowMs - this.progress.atMs <= this.progress.budgetMs + ALIVE_GRACE_MS;
  }

  private progressed(budgetMs: number): void {
    this.progress = { atMs: performance.now(), budgetMs };
  }

  /** Stops the loop and any open stream; resolves when the loop has exited. Pending `waitForSync` calls reject. */
  async stop(): Promise<void> {
    this.abort?.abort();
    await this.loop;
    this.heartbeat.disarm();
    for (const waiter of this.syncWaiters.splice(0)) waiter.reject(new Error(`${this.describe()}: stopped before sync`));
  }

  /** Resolves once synced; rejects when `signal` aborts or the watcher stops first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.syncedFlag) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== waiter);
        reject(signal?.reason ?? new Error(`${this.describe()}: waitForSync aborted`));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(waiter);
    });
  }

  /** `plural[.group]`, e.g. `deployments.apps`: the resource label of metrics. */
  resourceName(): string {
    return this.resource.group ? `${this.resource.plural}.${this.resource.group}` : this.resource.plural;
  }

  /**
   * `plural[.group][ in namespace][ with labels][ with fields]`, for messages; partitioned, the labels
   * end with `<label> by value`, or with `<label>=<partition>` for one partition.
   */
  describe(partition?: string): string {
    let text = this.resourceName();
    if (this.namespace) text += ` in ${this.namespace}`;
    const label = this.options.partitionLabel;
    const own = label === undefined ? undefined : partition === undefined ? `${label} by value` : `${label}=${partition}`;
    const selector = [this.labelSelector, own].filter(Boolean).join(',');
    if (selector) text += ` with ${selector}`;
    if (this.fieldSelector) text += ` with fields ${this.fieldSelector}`;
    return text;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const log = { resource: this.describe() };
    const restarted = (reason: 'closed' | 'idle' | 'error' | 'expired' | 'partitions') => this.options.metrics?.restarted?.(this.resourceName(), reason);
    let expiredInARow = 0;
    while (!signal.aborted) {
      try {
        if (this.options.partitionLabel) {
          if (this.partitions.size === 0) {
            await this.holdNothing(signal);
            continue;
          }
          await this.listUnlisted(signal);
          if (signal.aborted) break;
          if (this.resourceVersion === undefined) continue; // every partition left during its list
        } else if (this.resourceVersion === undefined && this.initialList === 'list') {
          this.progressed(LIST_BUDGET_MS);
          await this.relist(signal);
        }
        // Without a resourceVersion (start, after a 410) in watch-list mode, this watch reads the whole set first.
        const outcome = await this.watchOnce(this.resourceVersion, signal);
        this.refusedRetry.reset();
        this.retryAfterInARow = 0;
        if (outcome === 'stopped') break;
        if (outcome === 'reopen') {
          restarted('partitions'); // closed by join() or leave(): not the watch's own end, no backoff
          continue;
        }
        restarted(outcome === 'idle' ? 'idle' : 'closed');
        if (outcome === 'events') {
          this.backoff.reset();
          expiredInARow = 0;
          this.logger.debug({ ...log, resourceVersion: this.resourceVersion }, 'watch ended; re-watching');
          continue;
        }
        if (outcome === 'idle') {
          // Half-open: the socket is destroyed already; the pooled ones to the same server are suspect too.
          const droppedIdleSockets = this.options.client.suspectConnections();
          this.logger.warn(
            { ...log, resourceVersion: this.resourceVersion, silentForMs: Math.round(this.heartbeat.silentForMs()), droppedIdleSockets },
            'watch went silent (half-open connection?); closed it and the idle pooled connections, re-watching',
          );
          continue;
        }
        // 'empty': a clean end, quickly, with nothing in it (client-go's "very short watch");
        // wait a step so a misbehaving server or proxy can't spin us.
        const delayMs = this.backoff.next();
        this.logger.warn({ ...log, delayMs }, 'watch ended at once without events; re-watching after a pause');
        this.progressed(delayMs);
        await sleep(delayMs, signal);
      } catch (err) {
        const listing = this.listing; // a partition's list threw
        this.listing = undefined;
        if (signal.aborted) break;
        // An error answer is the server talking, and a refused connection its host saying that nothing
        // listens (kube-apiserver restarting; logged below): neither is a silent, half-open path.
        if (err instanceof ApiError || isConnectionRefused(err)) this.heartbeat.heard();
        if (this.resourceVersion === undefined && this.initialList === 'watch-list' && (isApiError(err, 400) || isApiError(err, 422))) {
          // The server does not take sendInitialEvents (the WatchList feature is off or unknown to it): list.
          this.initialList = 'list';
          this.logger.info({ ...log, ...errorFields(err) }, 'the API server does not stream the initial list (WatchList); listing instead');
          continue;
        }
        if (isApiError(err, 410)) {
          // Expired resourceVersion (or continue token): the only way back is a fresh list. A relist that is
          // at once expired again must not spin: back off from the second one in a row.
          restarted('expired');
          const delayMs = expiredInARow++ > 0 ? this.backoff.next() : 0;
          this.logger.info({ ...log, resourceVersion: this.resourceVersion, delayMs, ...errorFields(err) }, 'resourceVersion expired; relisting');
          this.resourceVersion = undefined; // partitioned: listUnlisted then lists every partition
          this.progressed(delayMs);
          if (delayMs > 0) await sleep(delayMs, signal);
          continue;
        }
        this.lastFailure = err;
        // A partition's list that failed is no restart of the watch (that one was closed to re-open with it).
        if (this.resourceVersion !== undefined && !listing) restarted('error');
        const what = this.resourceVersion === undefined || listing ? 'list' : 'watch';
        const at = listing ? { ...log, resource: listing.describe() } : log;
        const retryAfterSeconds = err instanceof ApiError ? err.retryAfterSeconds : undefined;
        let delayMs: number;
        if (isConnectionRefused(err)) {
          delayMs = this.refusedRetry.next();
          // Logged on the 1st, 2nd, 4th, 8th … refusal in a row, so a long outage doesn't flood the log.
          const refusedInARow = this.refusedRetry.failures;
          if ((refusedInARow & (refusedInARow - 1)) === 0) {
            this.logger.warn({ ...at, resourceVersion: this.resourceVersion, delayMs, refusedInARow, ...errorFields(err) }, `${what} refused (API server not listening); retrying`);
          }
        } else if (retryAfterSeconds !== undefined && this.retryAfterInARow < MAX_RETRY_AFTER_IN_A_ROW) {
          // The server said when to come back (a cache initializing, paths not installed yet, APF): come back
          // then (at most refusedRetryMs later), without growing the backoff.
          this.refusedRetry.reset();
          this.retryAfterInARow++;
          delayMs = Math.round(Math.min(retryAfterSeconds * 1000, this.refusedRetryMs) * (1 + 0.5 * Math.random()));
          this.logger.info({ ...at, resourceVersion: this.resourceVersion, delayMs, retryAfterInARow: this.retryAfterInARow, ...errorFields(err) }, `${what} answered ${(err as ApiError).code} with Retry-After; retrying`);
        } else {
          this.refusedRetry.reset();
          // Past the limit, answers with Retry-After keep the exponential backoff until a watch succeeds.
          if (retryAfterSeconds === undefined) this.retryAfterInARow = 0;
          delayMs = this.backoff.next();
          // 429 is the server asking to come back later (e.g. a new CRD's watch cache still initializing):
          // expected right after start-up, so only repeated ones are errors.
          const level = isApiError(err, 429) && this.backoff.failures <= 3 ? 'info' : 'error';
          // 404 on a list: nothing serves this resource, most often a CRD not installed (yet) or without this version.
          const notServed = isApiError(err, 404) ? `: the API server does not serve ${this.resourceName()} ${this.resource.version} (is its CustomResourceDefinition installed, serving this version?)` : '';
          this.logger[level]({ ...at, resourceVersion: this.resourceVersion, delayMs, failures: this.backoff.failures, ...errorFields(err) }, `${what} failed${notServed}; retrying`);
        }
        this.progressed(delayMs);
        await sleep(delayMs, signal);
      }
    }
  }

  /** Lists every page, then swaps the set and emits the difference. Sets the resourceVersion. */
  private async relist(signal: AbortSignal): Promise<void> {
    const { fresh, listRv } = await this.listAll(this.options.labelSelector, this.options.transform, signal);
    if (signal.aborted) return;
    this.replaceAll(fresh, listRv, 'list');
  }

  /**
   * Swaps the whole set for `fresh`, read at `rv` by a list or a watch-list's initial events, and emits
   * the difference (`delete` first, then `add` and `update`); marks the watcher synced.
   */
  private replaceAll(fresh: Map<string, KubeObject>, listRv: string, how: InitialList): void {
    if (this.syncedFlag) this.options.metrics?.relisted?.(this.resourceName());
    const { added, updated, deleted } = this.swap(this.items, fresh, (event) => this.emit(event));
    this.resourceVersion = listRv;
    this.lastFailure = undefined;
    this.logger.debug({ resource: this.describe(), resourceVersion: listRv, objects: fresh.size, added, updated, deleted, how }, 'listed');
    if (!this.syncedFlag) {
      this.syncedFlag = true;
      for (const waiter of this.syncWaiters.splice(0)) waiter.resolve();
    }
  }

  /** Swaps `items` for `fresh` and emits the difference (`delete` first, then `add` and `update`). */
  private swap(items: Map<string, KubeObject>, fresh: Map<string, KubeObject>, emit: (event: ChangeEvent) => void): { added: number; updated: number; deleted: number } {
    const old = new Map(items);
    items.clear();
    for (const [key, obj] of fresh) items.set(key, obj);
    let added = 0;
    let updated = 0;
    let deleted = 0;
    for (const [key, obj] of old) {
      if (!fresh.has(key)) {
        deleted++;
        emit({ type: 'delete', object: obj, oldObject: obj });
      }
    }
    for (const [key, obj] of fresh) {
      const before = old.get(key);
      if (!before) {
        added++;
        emit({ type: 'add', object: obj });
      } else if (before.metadata?.resourceVersion !== obj.metadata?.resourceVersion || before.metadata?.uid !== obj.metadata?.uid) {
        updated++;
        emit({ type: 'update', object: obj, oldObject: before });
      }
    }
    return { added, updated, deleted };
  }

  /** The label selector of the next list or watch of the whole set: with partitions, the base and `<label> in (<values held>)`. */
  private selector(): string | undefined {
    const label = this.options.partitionLabel;
    if (!label) return this.options.labelSelector;
    const own = `${label} in (${[...this.partitions.keys()].sort().join(',')})`;
    return this.options.labelSelector ? `${this.options.labelSelector},${own}` : own;
  }

  /** Waits, with no watch open, until a partition joins or the watcher stops. */
  private async holdNothing(signal: AbortSignal): Promise<void> {
    this.progressed(Number.MAX_SAFE_INTEGER);
    await new Promise<void>((resolve) => {
      const done = () => {
        this.wakeUp = undefined;
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.wakeUp = done;
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted || this.partitions.size > 0) done();
    });
    this.heartbeat.heard(); // not silent: nothing was asked of the server
  }

  /**
   * Lists each partition that joined (or every one, after a 410) alone, then sets the resourceVersion the
   * watch re-opens from: the oldest of the shared watch's own and those lists' (watch-partition.ts).
   */
  private async listUnlisted(signal: AbortSignal): Promise<void> {
    // No resourceVersion to watch from (the start, a 410): every partition is listed again.
    if (this.resourceVersion === undefined) for (const partition of this.partitions.values()) this.unlisted.add(partition);
    if (this.unlisted.size === 0) return;
    const watched = this.resourceVersion === undefined ? undefined : this.comparable(this.resourceVersion);
    let from = watched;
    // Held and listed: they have every change up to the shared watch's last version.
    for (const partition of this.partitions.values()) {
      if (!this.unlisted.has(partition) && watched !== undefined && (partition.mark === undefined || partition.mark < watched)) partition.mark = watched;
    }
    while (this.unlisted.size > 0 && !signal.aborted) {
      const [partition] = this.unlisted;
      this.listing = partition;
      const { fresh, listRv } = await this.listAll(`${this.options.labelSelector ? `${this.options.labelSelector},` : ''}${this.options.partitionLabel}=${partition!.value}`, partition!.handlers.transform, signal);
      this.listing = undefined;
      if (signal.aborted) return;
      if (this.partitions.get(partition!.value) !== partition || !this.unlisted.has(partition!)) continue; // left (or re-joined) meanwhile
      const listed = this.comparable(listRv);
      if (partition!.synced) this.options.metrics?.relisted?.(this.resourceName()); // after a 410
      const { added, updated, deleted } = this.swap(partition!.items, fresh, (event) => this.emitTo(partition!.handlers.onChange, event));
      partition!.mark = listed;
      partition!.lastResourceVersion = listRv;
      this.unlisted.delete(partition!);
      this.logger.debug({ resource: partition!.describe(), resourceVersion: listRv, objects: fresh.size, added, updated, deleted }, 'listed');
      partition!.markSynced();
      if (from === undefined || listed < from) from = listed;
      this.resourceVersion = String(from); // kept as it goes: a later partition's failed list resumes from here
    }
    this.lastFailure = undefined;
  }

  /** Every page of a list of the set with `labelSelector`, each object transformed; throws without a resourceVersion. */
  private async listAll(labelSelector: string | undefined, transform: ((obj: KubeObject) => KubeObject) | undefined, signal: AbortSignal): Promise<{ fresh: Map<string, KubeObject>; listRv: string }> {
    const fresh = new Map<string, KubeObject>();
    let listRv: string | undefined;
    this.progressed(LIST_BUDGET_MS);
    for await (const page of listPages(this.options.client, this.path, {
      limit: this.options.pageSize ?? 500,
      labelSelector,
      fieldSelector: this.options.fieldSelector,
      signal,
      accept: this.options.metadataOnly ? METADATA_LIST_ACCEPT : undefined,
    })) {
      this.heartbeat.heard();
      for (const item of page.items) {
        const obj = this.withKind(item);
        const kept = transform ? transform(obj) : obj;
        fresh.set(ObjectRef.cacheKeyOf(kept), kept);
      }
      this.progressed(LIST_BUDGET_MS);
      listRv = page.resourceVersion;
    }
    if (!listRv) throw new Error(`${this.describe()}: list returned no resourceVersion`);
    return { fresh, listRv };
  }

  /** `rv` as a number; an error naming the watch when it is not one (a server older than Kubernetes 1.35 may not promise it). */
  private comparable(rv: string): bigint {
    const value = comparableResourceVersion(rv);
    if (value === undefined) throw new Error(`${this.describe()}: resourceVersion ${JSON.stringify(rv)} is not a decimal integer; partitions need comparable resource versions (Kubernetes 1.35 or later)`);
    return value;
  }

  /**
   * One watch call from `rv`. Returns how it ended: 'events' (ended cleanly after at least one event or
   * bookmark, or after a quiet second or more), 'empty' (ended cleanly within a second with nothing in it),
   * 'idle' (watchdog fired), 'stopped'. Throws on errors (410 as ApiError).
   */
  private async watchOnce(rv: string | undefined, signal: AbortSignal): Promise<'events' | 'empty' | 'idle' | 'stopped' | 'reopen'> {
    // Stopped while the list ran: a listener added to an aborted signal never fires, so the watch would
    // stay open until its timeout (30–45 s) and stop() with it.
    if (signal.aborted) return 'stopped';
    const timeoutSeconds = this.timeoutSeconds();
    const deadAfterMs = this.options.idleTimeoutMs ?? timeoutSeconds * 1000 + WATCH_DEAD_AFTER_MS;
    const stream = new AbortController();
    const onStop = () => stream.abort();
    signal.addEventListener('abort', onStop, { once: true });
    let idle = false;
    let reopening = false;
    this.reopenStream = () => {
      reopening = true;
      stream.abort();
    };
    let received = 0;
    const opened = performance.now();
    this.progressed(deadAfterMs);
    // Also covers a server that accepts the connection and never answers.
    this.heartbeat.arm(
      timeoutSeconds,
      () => {
        idle = true;
        stream.abort();
      },
      deadAfterMs,
    );
    try {
      // No resourceVersion: a watch-list, whose initial events are gathered in `fresh` until their end bookmark.
      let fresh = rv === undefined ? new Map<string, KubeObject>() : undefined;
      const events = this.options.client.watch(
        this.path,
        {
          ...(rv === undefined ? { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' } : { resourceVersion: rv }),
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: this.selector(),
          fieldSelector: this.options.fieldSelector,
        },
        stream.signal,
        () => this.heartbeat.heard(),
        this.options.metadataOnly ? METADATA_WATCH_ACCEPT : undefined,
      );
      for await (const event of events) {
        this.heartbeat.heard();
        this.progress.atMs = performance.now();
        received++;
        if (fresh === undefined) this.apply(event);
        else if (this.gatherInitial(event, fresh)) fresh = undefined;
      }
      this.heartbeat.heard(); // the server ended it
      if (fresh !== undefined) this.initialStreamUnfinished();
      return received > 0 || performance.now() - opened >= 1000 ? 'events' : 'empty';
    } catch (err) {
      if (signal.aborted) return 'stopped';
      if (idle) return 'idle';
      if (reopening) return 'reopen';
      throw err;
    } finally {
      this.reopenStream = undefined;
      this.heartbeat.disarm();
      signal.removeEventListener('abort', onStop);
      stream.abort();
    }
  }

  /**
   * One event of a watch-list's initial events: an `ADDED` object goes into `fresh`; the bookmark
   * annotated {@link INITIAL_EVENTS_END_ANNOTATION} swaps the set (as a list does) and returns true. An
   * `ERROR` throws as in {@link apply}; any other bookmark is ignored (the set is not complete yet).
   */
  private gatherInitial(event: WatchEvent, fresh: Map<string, KubeObject>): boolean {
    switch (event.type) {
      case 'ADDED': {
        const obj = this.transform(this.withKind(event.object));
        fresh.set(ObjectRef.cacheKeyOf(obj), obj);
        return false;
      }
      case 'BOOKMARK': {
        const rv = event.object?.metadata?.resourceVersion;
        if (event.object?.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true' || !rv) return false;
        this.unfinishedInitialStreams = 0;
        this.replaceAll(fresh, rv, 'watch-list');
        return true;
      }
      case 'ERROR':
        this.apply(event); // throws
        return false;
      default:
        // The server sends only ADDED before the end bookmark; anything else is told and left out of the set.
        this.logger.warn({ resource: this.describe(), type: event.type }, 'unexpected event among the initial events of a watch-list; ignored');
        return false;
    }
  }

  /** A watch-list stream ended before its initial-events-end bookmark: the second time in a row, list instead. */
  private initialStreamUnfinished(): void {
    if (++this.unfinishedInitialStreams < 2) return;
    this.initialList = 'list';
    this.logger.warn({ resource: this.describe(), streams: this.unfinishedInitialStreams }, 'watch-list streams ended before their initial-events-end bookmark; listing instead');
  }

  private apply(event: WatchEvent): void {
    this.options.metrics?.event?.(this.resourceName(), String(event.type));
    switch (event.type) {
      case 'BOOKMARK': {
        const rv = event.object?.metadata?.resourceVersion;
        if (rv) this.resourceVersion = rv;
        return;
      }
      case 'ERROR': {
        const status = (event.object ?? {}) as Record<string, unknown>;
        const code = typeof status.code === 'number' ? status.code : 0;
        const reason = typeof status.reason === 'string' ? status.reason : `HTTP${code}`;
        const message = typeof status.message === 'string' ? status.message : JSON.stringify(status);
        throw new ApiError('WATCH', this.path, code, reason, status, message);
      }
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
        if (this.options.partitionLabel) return this.applyToPartition(event.type, event.object);
        return this.applyToItems(event.object, event.type === 'DELETED');
      default:
        this.logger.warn({ resource: this.describe(), type: (event as { type?: unknown }).type }, 'unknown watch event type; ignored');
    }
  }

  /**
   * An event of a partitioned watch. The object leaves any other partition that holds it (its label was
   * edited to another value: the one watch sends no DELETED for that, as one watch per value did), or,
   * for `DELETED`, the partition that holds it; then an `ADDED` or `MODIFIED` goes to the partition its
   * label names, unless that one is not held (it left; the watch re-opens without it) or not listed yet.
   * A partition takes no event it has already (at or below its mark).
   */
  private applyToPartition(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): void {
    this.advance(object);
    const value = object.metadata?.labels?.[this.options.partitionLabel!];
    const target = value === undefined ? undefined : this.partitions.get(value);
    const key = ObjectRef.cacheKeyOf(object);
    // Keys are unique across partitions: only a delete, or an object new to its target, can be elsewhere.
    if (type === 'DELETED' || !target?.items.has(key)) {
      for (const partition of this.partitions.values()) {
        if (partition === target && type !== 'DELETED') continue;
        const before = partition.items.get(key);
        if (!before || this.unlisted.has(partition) || partition.isReplay(object)) continue;
        partition.items.delete(key);
        partition.lastResourceVersion = object.metadata?.resourceVersion ?? partition.lastResourceVersion;
        this.emitTo(partition.handlers.onChange, { type: 'delete', object: this.keptBy(partition, object), oldObject: before });
      }
    }
    if (type === 'DELETED' || !target || this.unlisted.has(target) || target.isReplay(object)) return;
    const kept = this.keptBy(target, object);
    const before = target.items.get(key);
    target.items.set(key, kept);
    target.lastResourceVersion = object.metadata?.resourceVersion ?? target.lastResourceVersion;
    this.emitTo(target.handlers.onChange, before ? { type: 'update', object: kept, oldObject: before } : { type: 'add', object: kept });
  }

  /** `object` as `partition` keeps it: typed, then through its transform. */
  private keptBy(partition: WatchPartition, object: KubeObject): KubeObject {
    const obj = this.withKind(object);
    return partition.handlers.transform ? partition.handlers.transform(obj) : obj;
  }

  /** An unpartitioned `ADDED` or `MODIFIED`, or `DELETED` (`deleted`): the watcher's own objects. */
  private applyToItems(object: KubeObject, deleted: boolean): void {
    const obj = this.transform(this.withKind(object));
    const key = ObjectRef.cacheKeyOf(obj);
    const before = this.items.get(key);
    if (deleted) this.items.delete(key);
    else this.items.set(key, obj);
    this.advance(obj);
    if (deleted) this.emit(before ? { type: 'delete', object: obj, oldObject: before } : { type: 'delete', object: obj });
    else this.emit(before ? { type: 'update', object: obj, oldObject: before } : { type: 'add', object: obj });
  }

  private advance(obj: KubeObject): void {
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }

  /** List items come without apiVersion/kind (the pager fills in the List's kind); fill them in so cached objects are self-describing. */
  private withKind(obj: KubeObject): KubeObject {
    const metadataOnly = this.options.metadataOnly;
    if (metadataOnly) return { apiVersion: metadataOnly.apiVersion, kind: metadataOnly.kind, metadata: obj.metadata ?? {} };
    return withTypeMeta(obj, apiVersionOf(this.resource), undefined);
  }

  private transform(obj: KubeObject): KubeObject {
    return this.options.transform ? this.options.transform(obj) : obj;
  }

  private emit(event: ChangeEvent): void {
    this.emitTo(this.options.onChange, event);
  }

  private emitTo(onChange: (event: ChangeEvent) => void, event: ChangeEvent): void {
    try {
      onChange(event);
    } catch (err) {
      this.logger.error({ resource: this.describe(), type: event.type, key: ObjectRef.cacheKeyOf(event.object), ...errorFields(err) }, 'change handler threw');
    }
  }

  private timeoutSeconds(): number {
    const t = this.options.timeoutSeconds;
    if (typeof t === 'number') return t;
    if (typeof t === 'function') return t();
    const { min, max } = DEFAULT_WATCH_TIMEOUT_SECONDS;
    return min + Math.floor(Math.random() * (max - min + 1));
  }
}

/**
 * True for a connect that nothing accepted: Node's `ECONNREFUSED`, also as an Error's cause or inside an
 * AggregateError (a host name with several addresses, all refused).
 */
function isConnectionRefused(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (e.code === 'ECONNREFUSED') return true;
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((inner) => isConnectionRefused(inner, depth + 1))) return true;
  return isConnectionRefused(e.cause, depth + 1);
}
