/**
 * Pure helpers of `bench:peers` for the sharded peer (`ours-3-shards`) and its hand-over scenario: what
 * each replica's log says about the buckets it held and the objects it wrote, and the issue's goals
 * (issue 33) evaluated on the medians.
 *
 * Log records are the runtime's JSON lines (pino, `time` in epoch milliseconds):
 * - `sharding: buckets changed hands` (info; lib/runtime/sharding/membership.ts), with `taken` and
 *   `released` bucket numbers;
 * - `reconciled` (debug; lib/runtime/reconcile/reconciler.ts), logged only when the reconcile wrote
 *   something (applied or pruned a child, or wrote status), with the CR's `namespace` and `name`.
 *
 * The same idea as test/integration/sharding.test.ts's overlap check: each replica's hold intervals
 * per bucket; no two replicas' holds of one bucket overlap, and every write falls inside the writing
 * replica's hold of the CR's bucket.
 */

/** One replica's log, parsed. `killedAt` (epoch ms) closes its open holds; else they stay open. */
export interface ReplicaLog {
  readonly replica: string;
  readonly records: readonly Record<string, unknown>[];
  readonly killedAt?: number;
}

export interface HoldInterval {
  readonly replica: string;
  readonly bucket: number;
  readonly from: number;
  readonly to: number;
}

/** A write (a `reconciled` record) by one replica. */
export interface WriteRecord {
  readonly replica: string;
  readonly namespace: string;
  readonly name: string;
  readonly time: number;
}

/** JSON lines of a log's text; other lines (e.g. a stack trace) are left out. */
export function parseLogLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by a kill -9
    }
  }
  return out;
}

/** Each replica's hold intervals per bucket: [taken at, released at (or killed at, or +∞)]. */
export function holdIntervals(logs: readonly ReplicaLog[]): HoldInterval[] {
  const intervals: HoldInterval[] = [];
  for (const log of logs) {
    const open = new Map<number, number>();
    for (const r of log.records) {
      if (r.msg !== 'sharding: buckets changed hands') continue;
      const time = r.time as number;
      for (const b of (r.released as number[] | undefined) ?? []) {
        if (open.has(b)) intervals.push({ replica: log.replica, bucket: b, from: open.get(b)!, to: time });
        open.delete(b);
      }
      for (const b of (r.taken as number[] | undefined) ?? []) open.set(b, time);
    }
    for (const [bucket, from] of open) intervals.push({ replica: log.replica, bucket, from, to: log.killedAt ?? Number.POSITIVE_INFINITY });
  }
  return intervals;
}

/** Every `reconciled` record (a reconcile that wrote) of every replica, in time order. */
export function writeRecords(logs: readonly ReplicaLog[]): WriteRecord[] {
  const out: WriteRecord[] = [];
  for (const log of logs) {
    for (const r of log.records) {
      if (r.msg !== 'reconciled') continue;
      out.push({ replica: log.replica, namespace: String(r.namespace ?? ''), name: String(r.name ?? ''), time: r.time as number });
    }
  }
  return out.sort((a, b) => a.time - b.time);
}

/**
 * What breaks single-writer-per-bucket: two replicas' holds of one bucket that overlap, and writes
 * outside the writing replica's hold of the CR's bucket (`bucketOf` maps a CR to its bucket).
 */
export function holdViolations(logs: readonly ReplicaLog[], bucketOf: (namespace: string, name: string) => number): string[] {
  const intervals = holdIntervals(logs);
  const found: string[] = [];
  for (const a of intervals) {
    for (const b of intervals) {
      if (a.replica < b.replica && a.bucket === b.bucket && a.from < b.to && b.from < a.to) found.push(`bucket ${a.bucket}: ${a.replica} [${a.from}, ${a.to}] and ${b.replica} [${b.from}, ${b.to}]`);
    }
  }
  for (const w of writeRecords(logs)) {
    const bucket = bucketOf(w.namespace, w.name);
    if (!intervals.some((i) => i.replica === w.replica && i.bucket === bucket && i.from <= w.time && w.time <= i.to)) found.push(`${w.replica} wrote ${w.namespace}/${w.name} (bucket ${bucket}) at ${w.time} outside its hold`);
  }
  return found;
}

/**
 * Objects written by two or more replicas within [from, to] (epoch ms): `namespace/name` → the
 * replicas. Since buckets are balanced by CR count a bucket may move between survivors after a kill
 * (load-balance.ts), so a hand-over may change an object's writer once or more; {@link writtenByTwoWithoutHandOver}
 * says whether each change followed the bucket.
 */
export function objectsWrittenByTwo(writes: readonly WriteRecord[], from: number, to: number): Record<string, string[]> {
  const by = new Map<string, Set<string>>();
  for (const w of writes) {
    if (w.time < from || w.time > to) continue;
    const key = `${w.namespace}/${w.name}`;
    if (!by.has(key)) by.set(key, new Set());
    by.get(key)!.add(w.replica);
  }
  return Object.fromEntries([...by].filter(([, s]) => s.size > 1).map(([k, s]) => [k, [...s].sort()]));
}

/**
 * The objects of {@link objectsWrittenByTwo} whose writer changed without the bucket changing hands in
 * between: two consecutive writes in [from, to] by replicas A then B count unless A's hold of the object's
 * bucket around its write ended no later than B's hold around its own began (`intervals`:
 * {@link holdIntervals}). The single-writer goal: empty.
 */
export function writtenByTwoWithoutHandOver(writes: readonly WriteRecord[], intervals: readonly HoldInterval[], bucketOf: (namespace: string, name: string) => number, from: number, to: number): Record<string, string[]> {
  const holdAround = (w: WriteRecord, bucket: number) => intervals.find((i) => i.replica === w.replica && i.bucket === bucket && i.from <= w.time && w.time <= i.to);
  const last = new Map<string, WriteRecord>();
  const found = new Map<string, Set<string>>();
  for (const w of writes) {
    if (w.time < from || w.time > to) continue;
    const key = `${w.namespace}/${w.name}`;
    const previous = last.get(key);
    last.set(key, w);
    if (!previous || previous.replica === w.replica) continue;
    const bucket = bucketOf(w.namespace, w.name);
    const before = holdAround(previous, bucket);
    const after = holdAround(w, bucket);
    if (before && after && before.to <= after.from) continue;
    if (!found.has(key)) found.set(key, new Set());
    found.get(key)!.add(previous.replica).add(w.replica);
  }
  return Object.fromEntries([...found].map(([k, s]) => [k, [...s].sort()]));
}

/** One goal of the issue: `value` = ours / reference, met when ≤ `limit`. */
export interface Goal {
  readonly goal: string;
  /** The peer whose figure is the numerator (whose CPU profile says why a goal is missed). */
  readonly peer: 'ours' | 'ours-3-shards';
  readonly value: number | null;
  readonly limit: number;
  /** null: a figure is missing (peer not run). */
  readonly met: boolean | null;
}

/** The medians a goal needs, per peer (null when the peer did not run). */
export interface GoalInputs {
  readonly ours?: {
    readySeconds: number | null;
    cpuConvergeSeconds: number | null;
    peakRssBytes: number | null;
    operatorRequests?: number | null;
    /** Requests from the first CR created to all Ready. */
    operatorRequestsConverging?: number | null;
    rssGrowthPer1000ObjectsBytes?: number | null;
    /** Watch events received while converging. */
    watchEvents?: number | null;
    idleWrites?: number | null;
  };
  readonly shards?: {
    readySeconds: number | null;
    cpuConvergeSeconds: number | null;
    maxReplicaCpuConvergeSeconds: number | null;
    maxReplicaPeakRssBytes: number | null;
    maxReplicaWatchEvents?: number | null;
  };
  readonly controllerRuntime?: { readySeconds: number | null; cpuConvergeSeconds: number | null; operatorRequests?: number | null; operatorRequestsConverging?: number | null; rssGrowthPer1000ObjectsBytes?: number | null };
}

function quotient(a: number | null | undefined, b: number | null | undefined): number | null {
  return a == null || b == null || b === 0 ? null : Number((a / b).toFixed(2));
}

function goal(name: string, peer: Goal['peer'], value: number | null, limit: number): Goal {
  return { goal: name, peer, value, limit, met: value === null ? null : value <= limit };
}

/**
 * Issue 33's goals (ratios in one run): requests per CR ≤ 1.0× controller-runtime (the requests sent
 * while converging, both peers having converged the same N CRs; from start to Ready as well, which adds
 * each process's start-up requests, sent once whatever N); CPU converging ≤ 1.25×;
 * all Ready ≤ 1.0× (one replica, and 3 shards in total); RSS growth per 1000 cached objects ≤ 1.0×;
 * idle writes 0 (one replica; a shard renews its Lease); per shard (the largest replica of the 3 against
 * `ours`) CPU converging, peak RSS and watch events ≤ 0.4×. RSS at start (≤ 60 MB) is measured the way
 * users deploy by bench/start-memory.ts, not here.
 */
export function goalsOf(m: GoalInputs): Goal[] {
  return [
    goal('requests per CR while converging, ours / controller-runtime', 'ours', quotient(m.ours?.operatorRequestsConverging, m.controllerRuntime?.operatorRequestsConverging), 1.0),
    goal('requests from start to Ready, ours / controller-runtime', 'ours', quotient(m.ours?.operatorRequests, m.controllerRuntime?.operatorRequests), 1.0),
    goal('CPU converging, ours / controller-runtime', 'ours', quotient(m.ours?.cpuConvergeSeconds, m.controllerRuntime?.cpuConvergeSeconds), 1.25),
    goal('CPU converging, 3 shards in total / controller-runtime', 'ours-3-shards', quotient(m.shards?.cpuConvergeSeconds, m.controllerRuntime?.cpuConvergeSeconds), 1.25),
    goal('all Ready, ours / controller-runtime', 'ours', quotient(m.ours?.readySeconds, m.controllerRuntime?.readySeconds), 1.0),
    goal('all Ready, 3 shards / controller-runtime', 'ours-3-shards', quotient(m.shards?.readySeconds, m.controllerRuntime?.readySeconds), 1.0),
    goal('RSS growth per 1000 objects, ours / controller-runtime', 'ours', quotient(m.ours?.rssGrowthPer1000ObjectsBytes, m.controllerRuntime?.rssGrowthPer1000ObjectsBytes), 1.0),
    goal('idle writes, ours', 'ours', m.ours?.idleWrites ?? null, 0),
    goal('CPU converging per shard (largest) / one replica', 'ours-3-shards', quotient(m.shards?.maxReplicaCpuConvergeSeconds, m.ours?.cpuConvergeSeconds), 0.4),
    goal('peak RSS per shard (largest) / one replica', 'ours-3-shards', quotient(m.shards?.maxReplicaPeakRssBytes, m.ours?.peakRssBytes), 0.4),
    goal('watch events per shard (largest) / one replica', 'ours-3-shards', quotient(m.shards?.maxReplicaWatchEvents, m.ours?.watchEvents), 0.4),
  ];
}

/** One replica's watch events over a window, by resource (`cdk8s_operator_watch_events_total` deltas). */
export interface ReplicaWatchEvents {
  readonly replica: string;
  readonly byResource: Readonly<Record<string, number>>;
  readonly total: number;
}

/**
 * The resources of which `shard` received at least `share` (default 0.9) of the events `one` (a single
 * replica doing all the work) received: the watches that sharding did not split by bucket.
 */
export function unsplitResources(one: ReplicaWatchEvents, shard: ReplicaWatchEvents, share = 0.9): string[] {
  return Object.keys(one.byResource).filter((k) => one.byResource[k]! > 0 && (shard.byResource[k] ?? 0) >= share * one.byResource[k]!).sort();
}

/** `  watch events …` lines under a missed per-shard goal: the busiest shard's events against one replica's, and the watches not split. */
export function watchEventLines(one: ReplicaWatchEvents, busiest: ReplicaWatchEvents, holds: string): string[] {
  const per = (w: ReplicaWatchEvents) => Object.entries(w.byResource).map(([k, v]) => `${k} ${v}`).join(', ');
  const unsplit = unsplitResources(one, busiest);
  return [
    `  watch events while converging: ${busiest.replica} (the busiest shard, ${holds}) received ${busiest.total}, ${(busiest.total / Math.max(1, one.total)).toFixed(2)}× one replica's ${one.total}`,
    `    ${busiest.replica}: ${per(busiest)}; one replica: ${per(one)}`,
    ...(unsplit.length ? [`    not split by bucket (the busiest shard received ≥ 0.9× one replica's events): ${unsplit.join(', ')}`] : []),
  ];
}
