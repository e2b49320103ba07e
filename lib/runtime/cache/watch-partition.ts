/**
 * One partition of a partitioned {@link Watcher}: the objects whose partition label has one value (a
 * sharded replica's bucket: `operator.cdk8s.io/shard-bucket=5`), with their own map of objects, change
 * handler and transform, kept current by the watcher's one watch over every partition it holds
 * (`label in (…)`). What an {@link Informer} reads from its watch ({@link WatchSource}) a partition answers
 * for its own objects; the loop's health (alive, blind, last error) is the shared watch's.
 *
 * Why: one watch per kind instead of one per partition and kind (each re-opened every 30–45 s, each a
 * socket and its bookkeeping: docs/reference/benchmark.md, "One watch per kind over the held buckets"),
 * while a partition that is added is still listed alone, not with every partition held.
 *
 * How a partition joins without a gap or a replay (resource versions are comparable since Kubernetes
 * 1.35, GA: kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions): the watcher lists it
 * alone, at some resourceVersion L, and keeps L as its {@link WatchPartition.mark}; then it re-opens the
 * shared watch with the partition added, from the older of L and the shared watch's own last
 * resourceVersion W (marking every partition already held with W). The server then sends, in order, every
 * change after that older version: each event whose object's resourceVersion is at or below its
 * partition's mark is one that partition already has (from its list, or from the watch before the
 * re-open) and is dropped; every later one is applied. A partition that leaves is dropped with no event,
 * and the watch re-opens without it.
 */
import type { KubeObject } from '../client/kube-client.js';
import type { ChangeEvent, InitialList } from './watcher.js';

/** What an {@link Informer} reads from the watch that fills it: a whole {@link Watcher}, or one {@link WatchPartition} of one. */
export interface WatchSource {
  get(key: string): KubeObject | undefined;
  values(): IterableIterator<KubeObject>;
  readonly size: number;
  readonly synced: boolean;
  readonly lastError: unknown;
  readonly lastResourceVersion: string | undefined;
  readonly initialListMode: InitialList;
  start(): void;
  stop(): Promise<void>;
  alive(nowMs?: number): boolean;
  blind(nowMs?: number): boolean;
  silentForMs(nowMs?: number): number;
  waitForSync(signal?: AbortSignal): Promise<void>;
  describe(): string;
}

/** A partition's own handling of its objects: its change handler and the transform of each object it keeps. */
export interface PartitionHandlers {
  readonly onChange: (event: ChangeEvent) => void;
  /** @default identity */
  readonly transform?: (object: KubeObject) => KubeObject;
}

/** What a partition asks of the watcher that holds it. */
export interface PartitionOwner {
  /** Starts watching `partition` (lists it alone first). */
  join(partition: WatchPartition): void;
  /** Stops watching `partition`; resolves once the watch no longer includes it. */
  leave(partition: WatchPartition): Promise<void>;
  readonly lastError: unknown;
  alive(nowMs?: number): boolean;
  blind(nowMs?: number): boolean;
  silentForMs(nowMs?: number): number;
  /** The watch, for messages; given a partition's value, as that partition's objects are selected. */
  describe(partition?: string): string;
}

/** A resource version as a number to compare (comparable since Kubernetes 1.35); undefined when it is not a decimal integer. */
export function comparableResourceVersion(rv: string | undefined): bigint | undefined {
  return rv !== undefined && /^[1-9]\d*$/.test(rv) ? BigInt(rv) : undefined;
}

/** See the module docs. Made by {@link Watcher.partition}. */
export class WatchPartition implements WatchSource {
  /** The partition label's value. */
  readonly value: string;
  readonly handlers: PartitionHandlers;
  /** The partition's objects by key (`namespace/name`). */
  readonly items = new Map<string, KubeObject>();
  /**
   * The resourceVersion this partition's objects are known at: its list's, then the shared watch's
   * at each re-open. An event at or below it is a replay (dropped). Undefined until listed.
   */
  get mark(): bigint | undefined {
    return this.markValue;
  }

  set mark(value: bigint | undefined) {
    this.markValue = value;
    this.markText = value?.toString();
  }
  /** The resourceVersion of its last list or applied event. */
  lastResourceVersion: string | undefined;
  private markValue: bigint | undefined;
  /** {@link mark} in decimal, what each event's resourceVersion is compared with (no BigInt per event). */
  private markText: string | undefined;
  private readonly owner: PartitionOwner;
  private syncedFlag = false;
  private joined = false;
  private syncWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];

  constructor(owner: PartitionOwner, value: string, handlers: PartitionHandlers) {
    this.owner = owner;
    this.value = value;
    this.handlers = handlers;
  }

  get(key: string): KubeObject | undefined {
    return this.items.get(key);
  }

  values(): IterableIterator<KubeObject> {
    return this.items.values();
  }

  get size(): number {
    return this.items.size;
  }

  /** True once its first list has landed. */
  get synced(): boolean {
    return this.syncedFlag;
  }

  get lastError(): unknown {
    return this.owner.lastError;
  }

  /** A partition is always listed (LIST pages), never streamed. */
  get initialListMode(): InitialList {
    return 'list';
  }

  /** Joins the watch (a second call does nothing, also after {@link stop}). */
  start(): void {
    if (this.joined) return;
    this.joined = true;
    this.owner.join(this);
  }

  /** Leaves the watch; the partition keeps its last objects. Pending {@link waitForSync} calls reject. */
  async stop(): Promise<void> {
    await this.owner.leave(this);
    for (const waiter of this.syncWaiters.splice(0)) waiter.reject(new Error(`${this.describe()}: stopped before sync`));
  }

  alive(nowMs?: number): boolean {
    return this.owner.alive(nowMs);
  }

  blind(nowMs?: number): boolean {
    return this.owner.blind(nowMs);
  }

  silentForMs(nowMs?: number): number {
    return this.owner.silentForMs(nowMs);
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.syncedFlag) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== waiter);
        reject(signal?.reason ?? new Error(`${this.describe()}: waitForSync aborted`));
      };
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
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(waiter);
    });
  }

  /** The objects of this partition, e.g. `pods with app=x,operator.cdk8s.io/shard-bucket=3`, for messages. */
  describe(): string {
    return this.owner.describe(this.value);
  }

  /** Called by the watcher once the partition's first list landed. */
  markSynced(): void {
    if (this.syncedFlag) return;
    this.syncedFlag = true;
    for (const waiter of this.syncWaiters.splice(0)) waiter.resolve();
  }

  /** The event's object's resourceVersion is at or below {@link mark}: the partition has it already. */
  isReplay(object: KubeObject): boolean {
    const mark = this.markText;
    const rv = object.metadata?.resourceVersion;
    if (mark === undefined || rv === undefined) return false;
    // Decimal integers without leading zeros (the mark is one; the server's since 1.35): the shorter is the smaller.
    return rv.length < mark.length || (rv.length === mark.length && rv <= mark);
  }
}
