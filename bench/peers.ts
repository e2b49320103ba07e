/**
 * Side-by-side benchmark (not a test): the memcached operator of this SDK (`run`, a separate process)
 * against the same operator written with controller-runtime (bench/peers/controller-runtime), the same
 * operator written by hand in plain Node.js (`plain-node`: bench/peers/plain-node/operator.mjs, no SDK, on
 * the same Node and flags as `ours`: what the work costs in Node at all) and the raw floor (the same
 * children created directly, 1 and 16 requests in flight). Prints one table and JSON of medians.
 *
 * ```
 * npm run bench:peers -- [--crs 1000[,5000…]] [--reps 3] [--peers ours,ours-3-shards,controller-runtime,plain-node,floor-1,floor-16] [--handover]
 *                        (more peers: ours-1-shard, ours-tsx, and the division without sharding: ours-3-namespaces,
 *                        controller-runtime-3-namespaces, plain-node-3-namespaces; see NAMESPACE_SPLIT)
 *                        [--idle-seconds 60] [--changes 50] [--out FILE.json] [--profile DIR]
 *                        [--ours-node-args "--cpu-prof --cpu-prof-dir=DIR"] [--heap-snapshot-dir DIR]
 *                        [--relist] [--linear-baseline FILE.json]
 * ```
 *
 * Node: `ours`, its shards and `plain-node` run on the Node that runs the bench (`process.execPath`). To
 * measure what the image runs, run the bench on the image's Node:
 * `bash tools/image-node/run.sh npm run bench:peers -- …` (the JSON's `machine.node` says which ran).
 *
 * Several N (`--crs 1000,5000`): each N in turn, smallest first, within one invocation (every
 * repetition of every peer at the first N, then the next N; each run with a fresh control plane). The
 * table has a group of columns per N side by side (`ours N=1000 … | ours N=5000 …`, each group with its
 * ratios), then the scale lines and the goals per N. The smallest N is the baseline of the larger ones'
 * `readyRatio` (unless `--linear-baseline` names a file). `--handover` runs at every N (it adds about one
 * convergence of `ours-3-shards` per N, less than a third of that N's time with three peers).
 *
 * The `--out` JSON (and what is printed after the table): `started`, `finished`, `machine`,
 * `repetitions`, `peers`, `handoverAt` ('every N', or null without `--handover`), `profileDir`,
 * `sharding` (the sharded peers' `buckets` and `webhook`: `--shard-buckets`, `--no-shard-webhook`), and
 * `runs` (every run, each with its `crs`; also appended to `FILE.json.runs.jsonl` as each run ends).
 * With one N, as before: `crs` (the number), `medians` (per peer, per figure), `ratios`, `scale`, `goals`
 * and `profiles` at the top level. With several: `crs` is the list and `perCrs` holds, per N (smallest
 * first), `{ crs, medians, ratios, scale, goals, profiles }`. Each run of `ours`, `ours-tsx` and
 * `ours-3-shards` has `watchEvents`: per replica, the watch events it received while converging, by
 * resource (`cdk8s_operator_watch_events_total`), and `gc`: per replica, V8's collections in the same
 * window by kind (`nodejs_gc_duration_seconds`: main-thread pause seconds and count), both printed after
 * the table.
 *
 * Profiling (bench/PROFILE.md): `--profile DIR` runs `ours` and each replica of `ours-3-shards` (and of
 * `ours-3-namespaces`, whose profiles are in its runs' `profiles` only) under
 * `--cpu-prof --cpu-prof-dir=DIR/<peer>-<N>-<replica>` (`DIR/ours-1000-ours`, `DIR/ours-3-shards-1000-shard-1`;
 * `-rep<r>` appended with `--reps` above 1). The bench stops each process with SIGTERM (a graceful
 * stop, exit 0; up to 120 s before SIGKILL while profiling) so that V8 writes the profile; the replica
 * killed by `--handover` (SIGKILL) writes none. Each profile is summarised with bench/profile-summary.ts
 * over that process's converging window (from the first CR created to its last CR Ready, on the
 * monotonic clock the profile's times use): seconds per category and the top functions by self time,
 * in the run's `profiles` (`replica`, `dir`, `file`, `exit`, `convergingMs`, `summary`). Per N,
 * `profiles` has `ours`, `ours-3-shards` (its replicas added up) and `ours-3-shards largest` (its
 * busiest replica), from the first repetition; under each MISSED goal the top categories and
 * functions of its peer's profile are printed (the busiest replica's for a per-shard goal), with the
 * control plane's CPU meanwhile. A profile's seconds are sampled wall time while the thread was not
 * idle: on a loaded machine they exceed the process's CPU seconds (`cpuConvergeSeconds`); read its
 * shares. `--ours-node-args` are given to `ours`' node as they are;
 * `--heap-snapshot-dir` writes a heap snapshot of `ours` when half of the CRs are Ready (node's
 * `--heapsnapshot-signal=SIGUSR2`).
 *
 * Every run (one peer, one repetition) gets a fresh local control plane with the same raised
 * kube-controller-manager and kube-scheduler client rate limits (`--kube-api-qps=500`), enough fake
 * nodes for one Pod per CR and a /16 service range. Peers alternate within each repetition. Figures:
 *
 * - `readySeconds`: from the first CR created (20 creates in flight) to every CR `Ready=True` (floor:
 *   first child created to every Deployment Available);
 * - `operatorRequests`: requests the operator sent from its start to all Ready (its
 *   `rest_client_requests_total`; a watch counts once); `operatorWrites`: its POST, PUT, PATCH and
 *   DELETE requests from the first CR created to all Ready (start-up access reviews left out);
 *   `operatorRequestsConverging`: every request it sent from the first CR created to all Ready (the
 *   per-CR cost issue 33 compares: the start-up's requests, sent once per process whatever N, are left
 *   out; watches re-opened while converging are in);
 * - `idleWrites`: the operator's write requests in a quiet window after convergence (`--idle-seconds`),
 *   and `idleServerWrites`, the API server's `apiserver_request_total` write verbs on memcacheds,
 *   deployments and services in that window;
 * - `rssStartBytes`: resident set of the operator's process tree once it is ready and idle, before any
 *   CR; `peakRssBytes`: the largest sampled (every 250 ms) or the kernel's high-water mark;
 *   `rssGrowthPer1000ObjectsBytes`: (RSS after the idle window − RSS at start) / (4N / 1000), the
 *   cache holding N CRs, N Deployments, N Services and N Pods (both operators report status.nodes);
 * - `cpuStartSeconds`: utime+stime of the process tree until ready; `cpuConvergeSeconds`: from the
 *   first CR to all Ready; `controlPlaneCpuSeconds`: the same window's utime+stime of each control-plane
 *   component (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) and their `total`,
 *   the work the peer caused on the cores it shares with them (the bench's own CR creates included);
 * - `specChangeMs`: p50/p99 from a spec change (merge-patch `spec.replicas` 1 → 2, one at a time, `--changes`
 *   samples) to the Deployment's new replicas seen in a watch; `serverApplyMs`: the same path without an
 *   operator, a server-side apply of a probe Deployment's replicas seen in the same watch (the floor
 *   that the spec-change figure is compared with);
 * - with `--relist` (operators only; null for the floors, `plain-node` and without the flag), last in the run, once
 *   the spec changes have rolled out and the operator's metrics are still: every watch of the operator is
 *   made to end in 410 Gone. kube-apiserver is stopped; while it is down, etcd's revision is moved on (a
 *   key outside `/registry`) and etcd is compacted at that revision; it starts again. The restarted API
 *   server's watch caches are filled by a fresh list at etcd's current revision, so resuming any watch
 *   from an older resourceVersion answers 410 "too old resource version" (the restart alone does that
 *   already, as long as anything was written in between: the write and the compaction make it
 *   deterministic, also for a watch served from etcd). The bench's own watches are stopped first.
 *   `relistSeconds`: from the API server's /readyz ok to the last time (scraped every 250 ms from the
 *   API server's start) the operator's requests, reconciles, queue adds, queue depth or busy workers
 *   moved, once every watch has relisted and nothing moved for 3 s (0 if that was before /readyz); it
 *   includes the operator's own reconnect backoff.
 *   `relistWrites`: the operator's write requests from just before the restart to then (the issue:
 *   0); `relistServerWrites`: the restarted API server's `apiserver_request_total` write verbs on
 *   memcacheds, deployments and services until then (its counters start with the process; all clients,
 *   kube-controller-manager included). Each run's `relist` holds the evidence, per watched resource the
 *   410s and relists seen after the restart, and the run fails (no figure) unless every one shows both:
 *   for ours `cdk8s_operator_watch_restarts_total{reason="expired"}` and `cdk8s_operator_watch_relists_total`
 *   (memcacheds, deployments, services, and any other resource whose watch restarted: Pods, for
 *   `status.nodes`); for controller-runtime, which has no such metrics, client-go's reflector lines in
 *   its log, for which it runs with `--zap-log-level=4` under `--relist` (a handful of lines, none per
 *   object): `Watch closed` with "too old resource version", then `Caches populated`, for every type it
 *   populated at start. controller-runtime relists by a watch with `sendInitialEvents` (client-go 1.35's
 *   WatchListClient) and each of its informers then hands every object to the controller again,
 *   so it reconciles every CR once per informer (`relist.reconciles` = 3N measured before it watched
 *   Pods too); ours emits only
 *   what changed (0 reconciles).
 *
 * Scale (the issue's targets: N = 5000, i.e. 15 000 cached CRs, Deployments and Services, and here 5000 Pods as well, Ready within
 * 5.5× the time of N = 1000; peak RSS under 1 GiB; a relist after 410 under 10 s writing nothing): the
 * JSON's `scale` has, per operator peer, `readySeconds`, `peakRssBytes` (the whole run, relist
 * included), `relistSeconds`, `relistWrites`, `relistServerWrites` and, at an N above the run's
 * smallest (or with `--linear-baseline FILE.json`, the `--out` report of an earlier run at a smaller
 * N, e.g. 1000; of a several-N report its smallest N), `readyRatio` = this N's readySeconds / the
 * baseline's median for the same peer, against `linearLimit` = 1.1 × N / baseline N (5.5 for 5000 over
 * 1000); `meets` says which targets hold (null: not measured). The same lines are printed under the
 * table. E.g., on a quiet machine:
 *
 * ```
 * npm run bench:peers -- --crs 1000,5000 --reps 1 --peers ours --relist --out scale.json
 * ```
 *
 * `ours-3-shards`: the same operator as `ours` (compiled), three `run --sharding` processes (`POD_NAME`
 * shard-1..3, Leases in the namespace `bench-shards`, 32 buckets, `run`'s default Lease timings 15 s /
 * 10 s / 2 s; with `--handover`, `--log-level debug` so that each reconcile that wrote leaves a
 * `reconciled` record, else `info` as for `ours`). The
 * CRs are created once the ring settled (every replica's Lease holds its share, every bucket held
 * once; after the warm-up, settled again). The ring balances by CR count (load-balance.ts), so buckets
 * may move while the measured CRs arrive. Its figures are the replicas' sums (RSS: the sum
 * at one moment; `readySeconds`: until the last CR), and per replica (`shards` in the JSON, printed under
 * the table): buckets at the start of the window and once every CR is Ready, CRs (by the latter),
 * `readySeconds` (until the last CR of its buckets is Ready), `cpuConvergeSeconds` (from the first CR
 * created to then; when buckets moved in the window, to the moment every CR is Ready, for every
 * replica), RSS at start, peak and after the idle window. The table's
 * `per replica: …, largest` rows hold the largest replica's (a one-replica peer: its own), from which
 * the goals' per-shard ratios are taken. `--relist` is left out for it.
 *
 * `ours-1-shard`: the same with one replica, which holds all 32 buckets: the work of `ours` with
 * sharding's own (its Lease rounds, a watch per bucket and kind), to tell that apart from the division.
 *
 * `--handover` (needs `ours-3-shards`): after the spec changes, with every CR Ready at its generation and
 * the replicas quiet, the replica holding the middle number of buckets (neither the largest, whose
 * profile explains the per-shard goals, nor the smallest) is killed with SIGKILL and every CR's
 * `spec.replicas` is patched to 3 right then. `handoverSeconds`: from the kill to the last of its CRs'
 * Deployments at 3 replicas (seen in the bench's watch); they get there only once a survivor took its
 * buckets after its Lease expired;
 * `survivorsSeconds`: the same for the survivors' own CRs. From the replicas' logs (bench/shard-records.ts,
 * the idea of test/integration/sharding.test.ts's overlap check): objects written by two replicas from the
 * kill to the end (must be 0), the killed replica's CRs rewritten by a survivor (all, when the buckets were truly
 * taken over), and over the whole run bucket holds that overlap or writes outside the writer's hold (0).
 *
 * Goals (issue 33; bench/shard-records.ts `goalsOf`), printed met or MISSED under the table, per N:
 * requests per CR while converging (and from start to Ready) ≤ 1.0× controller-runtime, CPU converging ≤ 1.25×, all Ready ≤ 1.0×, RSS growth per 1000
 * objects ≤ 1.0×, idle writes 0; per shard (the largest of 3) CPU converging, peak RSS and watch events ≤ 0.4×
 * one replica's (`ours`). Beside them, per peer, the cores its operator and control plane kept busy
 * from the first CR to all Ready (`coresBusy`): at 80 % of the machine's cores or more the figure is
 * capped by the machine, and says so with the control plane's CPU.
 *
 * ```
 * npm run bench:peers -- --crs 1000,5000 --reps 1 --peers ours,ours-3-shards,controller-runtime --handover --profile /tmp/prof --out peers.json
 * ```
 *
 * A failed run keeps its operator's log and says where.
 *
 * Control plane binaries: tools/control-plane/build.sh; the Go peer: bench/peers/controller-runtime/build.sh
 * (both build once from the Go module proxy into ~/.cache/cdk8s-operator-sdk and are reused).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { appendFile, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { freePort } from '../test/support/free-port.js';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions, finiteNumber } from './bench-options.js';
import { App } from 'cdk8s';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import type { KubeObject } from '../lib/runtime/client/kube-client.js';
import { Informer } from '../lib/runtime/cache/informer.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../lib/testing/control-plane.js';
import { renderForSnapshot } from '../lib/testing/index.js';
import { bucketOf } from '../lib/runtime/sharding/bucket-hash.js';
import { serveWebhooksLocally, type LocalWebhooks } from '../lib/testing/local-webhooks.js';
import { OURS_OUT, buildOurs } from './build-ours.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { mergeSummaries, summarizeProfile, type CpuProfile, type ProfileSummary } from './profile-summary.js';
import { goalsOf, holdIntervals, holdViolations, objectsWrittenByTwo, parseLogLines, watchEventLines, writeRecords, writtenByTwoWithoutHandOver, type Goal, type ReplicaLog, type ReplicaWatchEvents } from './shard-records.js';
import { waitFor, stopChild } from './wait-for.js';
import { CLK_TCK, controlPlaneCpu, cpuDelta } from './control-plane-cpu.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * `--ours-node-args "--flag …"` as the docs write it: a value that starts with a dash, which `parseArgs`
 * refuses as ambiguous unless it is joined with `=`.
 */
const ARGS = process.argv.slice(2).flatMap((arg, i, all) => (all[i - 1] === '--ours-node-args' ? [] : arg === '--ours-node-args' && i + 1 < all.length ? [`${arg}=${all[i + 1]}`] : [arg]));
/** The options (their docs are at the constants below), read by bench/bench-options.ts: one it does not know, or a number that is not one, is an error. */
const { values: options, number } = benchOptions(
  {
    crs: { type: 'string', default: '1000' },
    reps: { type: 'string', default: '3' },
    peers: { type: 'string', default: 'ours,controller-runtime,floor-1,floor-16' },
    'idle-seconds': { type: 'string', default: '60' },
    changes: { type: 'string', default: '50' },
    out: { type: 'string', default: '' },
    relist: { type: 'boolean', default: false },
    'linear-baseline': { type: 'string', default: '' },
    handover: { type: 'boolean', default: false },
    'shard-buckets': { type: 'string', default: '32' },
    'shard-webhook': { type: 'boolean', default: false },
    'no-shard-webhook': { type: 'boolean', default: false },
    'warm-up-crs': { type: 'string', default: '0' },
    'warm-up-each': { type: 'boolean', default: false },
    'keep-logs': { type: 'boolean', default: false },
    'ours-node-args': { type: 'string', default: '--max-semi-space-size=2' },
    'heap-snapshot-dir': { type: 'string', default: '' },
    profile: { type: 'string', default: '' },
  },
  { args: ARGS },
);

/** `--crs 1000,5000`: the numbers of CRs, run one after the other (smallest first) in this invocation. */
const CRS_LIST = [...new Set(options.crs.split(',').map((v) => finiteNumber('crs', v.trim())))].sort((a, b) => a - b);
const REPS = number('reps');
const PEERS = options.peers.split(',');
const IDLE_SECONDS = number('idle-seconds');
/** `--changes`: spec-change samples per run (at most the run's N). */
const CHANGES_WANTED = number('changes');
const OUT = options.out;
/** `--relist`: after the spec changes, force every watch of the operator to end in 410 Gone and time its relist. */
const RELIST = options.relist;
/** `--linear-baseline FILE.json`: an earlier report (`--out`) at a smaller N; its readySeconds are divided into this run's. */
const LINEAR_BASELINE = options['linear-baseline'];
/** `--handover`: `ours-3-shards` only; after the spec changes, kill -9 one shard and time the take-over of its buckets (see {@link measureHandover}). */
const HANDOVER = options.handover;
/** `ours-3-shards`: replicas and their Lease namespace. */
const SHARDS = 3;
const SHARD_NAMESPACE = 'bench-shards';
/** `--shard-buckets B` (default 32, `run`'s default): `ours-3-shards`' `--sharding-buckets`. */
const SHARD_BUCKETS = number('shard-buckets');
/**
 * `--shard-webhook` (default) / `--no-shard-webhook`: `ours-3-shards` with the operator's mutating
 * webhook served, so a CR is stored with its bucket label and only its bucket's replica watches it (how
 * the sharding how-to deploys it). The webhook is served by the bench process on loopback
 * (lib/testing/local-webhooks.ts; one admission review per CR create, its CPU not in the replicas'
 * figures); without it every replica's strays watch sees each CR until its holder stamps it (one PATCH).
 */
if (options['shard-webhook'] && options['no-shard-webhook']) throw new Error('--shard-webhook and --no-shard-webhook: give one');
const SHARD_WEBHOOK = !options['no-shard-webhook'];
/** `run`'s default Lease timings (client-go's): a killed shard's buckets move once its Lease expired. */
const SHARD_LEASE_SECONDS = 15;
/** The relist is over once nothing moved in the operator's metrics for this long (and every watch relisted). */
const QUIET_MS = 3000;
/**
 * `ours` runs as production does: compiled JavaScript (lib/ and operators/ built by
 * bench/tsconfig.ours.json into bench/.out/), no TypeScript loader, with the Node flags of the image
 * `init`'s Dockerfile builds (`NODE_OPTIONS=--max-semi-space-size=2`; `--ours-node-args ''` for none).
 * `ours-tsx` runs the checkout's `bin/cdk8s-operator.js` from the TypeScript sources under tsx (how the
 * repository runs).
 */
/**
 * `--warm-up-crs W` (default 0): before the measured window, each operator converges W CRs in the
 * namespace `bench-warm` and goes idle; they stay. Both peers then converge the measured N with their
 * code already run (V8's JIT warmed up for ours, as it is in a process that has been running for a
 * while); every figure but `rssStartBytes` and `cpuStartSeconds` is taken after the warm-up.
 * `--warm-up-each`: W CRs per operator process (`ours-3-shards` converges 3W, W in each replica's
 * buckets give or take the hashing's spread), so that each shard has run its code as often as one
 * replica has before the window (without it the shards share W and are each about a third as warm).
 */
const WARM_UP_CRS = number('warm-up-crs');
const WARM_UP_EACH = options['warm-up-each'];
const WARM_NAMESPACE = 'bench-warm';
/** `--keep-logs`: keep each run's operator logs (else kept only when the run failed). */
const KEEP_LOGS = options['keep-logs'];
const OURS_NODE_ARGS = options['ours-node-args'].split(' ').filter(Boolean);
const HEAP_SNAPSHOT_DIR = options['heap-snapshot-dir'];
/**
 * `--profile DIR`: `ours` and `ours-3-shards` run under `--cpu-prof --cpu-prof-dir=DIR/<peer>-<N>-<replica>`
 * (`-rep<r>` added with `--reps` above 1); each profile is summarised over its converging window.
 */
const PROFILE_DIR = options.profile;
/** How long a SIGTERMed operator may take to exit (drain, then write its CPU profile) before SIGKILL. */
const STOP_TIMEOUT_MS = PROFILE_DIR ? 120_000 : 10_000;
const NAMESPACE = 'bench';
/** The Memcacheds of all namespaces, and of one. */
const CRS_PATH = '/apis/cache.example.com/v1beta1/memcacheds';
const crPathIn = (namespace: string): string => `/apis/cache.example.com/v1beta1/namespaces/${namespace}/memcacheds`;
const CR_PATH = crPathIn(NAMESPACE);
const PODS_PER_NODE = 250;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Peer = 'ours' | 'ours-3-shards' | 'ours-1-shard' | 'ours-3-namespaces' | 'ours-tsx' | 'controller-runtime' | 'controller-runtime-3-namespaces' | 'plain-node' | 'plain-node-3-namespaces' | 'floor-1' | 'floor-16';
const ALL_PEERS: readonly Peer[] = ['ours', 'ours-3-shards', 'ours-1-shard', 'ours-3-namespaces', 'ours-tsx', 'controller-runtime', 'controller-runtime-3-namespaces', 'plain-node', 'plain-node-3-namespaces', 'floor-1', 'floor-16'];
/** The `run --sharding` replicas of a peer: 3 for `ours-3-shards`, 1 for `ours-1-shard`, else none. */
const shardReplicas = (peer: string): number => (peer === 'ours-3-shards' ? 3 : peer === 'ours-1-shard' ? 1 : 0);
/**
 * `ours-3-namespaces`, `controller-runtime-3-namespaces` and `plain-node-3-namespaces`: the division
 * without sharding, the control for the per-shard goals. Three unsharded replicas of `ours` (resp.
 * `controller-runtime`, `plain-node`), each started
 * with `--namespace bench-k` (k = 1..3) and so listing, watching and caching that namespace only; the
 * measured CRs go round-robin into the three namespaces (`mc-i` into `bench-(i mod 3 + 1)`: 334, 333, 333
 * of 1000), and with a warm-up so do the warm-up CRs (`warm-i`, next to them). No Lease, no buckets: what
 * a third of the work costs a process of its own. Their per-replica figures are in `shards` as for
 * `ours-3-shards` (`buckets` empty), and `division` in the report sets the largest replica against the
 * one-replica peer (`ours`, resp. `controller-runtime`, `plain-node`) of the same run (`ours-3-shards`' too).
 */
const NAMESPACE_SPLIT = 3;
const splitReplicas = (peer: string): number => (peer.endsWith('-3-namespaces') ? NAMESPACE_SPLIT : 0);
/** The one-replica peer a multi-replica peer divides (`ours-3-shards` → `ours`), undefined for a one-replica peer. */
const dividedPeer = (peer: Peer): Peer | undefined =>
  peer === 'ours-3-shards' || peer === 'ours-3-namespaces' ? 'ours' : peer === 'controller-runtime-3-namespaces' ? 'controller-runtime' : peer === 'plain-node-3-namespaces' ? 'plain-node' : undefined;
/** The namespace of replica k (0-based) of a `-3-namespaces` peer. */
const splitNamespace = (k: number): string => `bench-${k + 1}`;
/** The namespace of a CR named `mc-i` or `warm-i` under a `-3-namespaces` peer: `bench-(i mod 3 + 1)`. */
const splitNamespaceOf = (name: string): string => splitNamespace(Number(name.slice(name.lastIndexOf('-') + 1)) % NAMESPACE_SPLIT);

/** One replica of a multi-replica peer (`ours-3-shards`, `ours-1-shard`, a `-3-namespaces` peer), over the same windows as the run's figures. */
interface ShardFigures {
  replica: string;
  /**
   * Buckets in its Lease (`sharding.cdk8s.io/held`) once every measured CR is Ready and the ring settled;
   * empty for a `-3-namespaces` replica. The ring balances by CR count (lib/runtime/sharding/load-balance.ts),
   * so buckets may move while the measured CRs arrive: see {@link bucketsAtStart}.
   */
  buckets: number[];
  /** Its buckets when the measured window began (after the warm-up, the ring settled); empty for a `-3-namespaces` replica. */
  bucketsAtStart: number[];
  /** Measured CRs in its {@link buckets}. */
  crs: number;
  /** From the first CR created to every CR of its buckets Ready (by the buckets it held when each became Ready as far as the bench knows: {@link buckets} once the ring moved). */
  readySeconds: number;
  rssStartBytes: number;
  peakRssBytes: number;
  rssAfterBytes: number;
  cpuStartSeconds: number;
  /** Until every CR of its buckets is Ready; when buckets moved in the window, until every measured CR is Ready (the same moment for all). */
  cpuConvergeSeconds: number;
}

/** `--handover` (ours-3-shards): one shard killed with SIGKILL, then a spec change of every CR. */
interface HandoverFigures {
  killed: string;
  /** Its buckets and the CRs in them. */
  killedBuckets: number[];
  killedCrs: number;
  /** From the kill to the last of the killed shard's CRs' Deployments showing the new replicas (in the bench's watch). */
  handoverSeconds: number;
  /** The same for the survivors' own CRs (the spec-change wave without a hand-over). */
  survivorsSeconds: number;
  /** Patching every CR's spec (20 in flight), started right after the kill. */
  patchSeconds: number;
  leaseSeconds: number;
  /** The killed shard's CRs written (a `reconciled` record) by a survivor after the kill. */
  killedCrsRewrittenBySurvivors: number;
  /**
   * Objects written by two replicas from the kill to the end of the window with no hand-over of their
   * bucket between the two writes (must be 0), and which (bench/shard-records.ts `writtenByTwoWithoutHandOver`).
   */
  doubleWriters: number;
  doubleWriterExamples: Record<string, string[]>;
  /** Objects written by two replicas in that window, each while it held the bucket: their bucket moved between survivors (balanced by CR count after the kill). */
  writerChanges: number;
  /** Overlapping holds of a bucket, or writes outside the writer's hold, in the whole run (must be 0). */
  holdViolations: number;
  holdViolationExamples: string[];
}

interface RunResult {
  peer: Peer;
  rep: number;
  crs: number;
  /** `--warm-up-crs`: CRs converged before the measured window (0: none). */
  warmUpCrs: number;
  readySeconds: number;
  /** null with a warm-up (the warm-up's requests would be in it). */
  operatorRequests: number | null;
  operatorRequestsConverging: number | null;
  /** `METHOD code` → requests from the first CR created to all Ready (`rest_client_requests_total`; the warm-up's left out). */
  operatorRequestsByMethodAndCode: Record<string, number> | null;
  operatorWrites: number | null;
  idleWrites: number | null;
  idleServerWrites: number;
  rssStartBytes: number | null;
  peakRssBytes: number | null;
  rssAfterBytes: number | null;
  rssGrowthPer1000ObjectsBytes: number | null;
  cpuStartSeconds: number | null;
  cpuConvergeSeconds: number | null;
  /**
   * CPU seconds of each control-plane component (etcd, kube-apiserver, kube-controller-manager,
   * kube-scheduler, kwok) and their `total`, over the same window as `readySeconds`: the work the peer
   * made the control plane do, on the cores it shares with the operator.
   */
  controlPlaneCpuSeconds: Record<string, number>;
  specChangeMs: { p50: number; p99: number; samples: number } | null;
  /**
   * `controller_runtime_reconcile_total` by result from the first CR created to all Ready (the warm-up's
   * left out), and `meanReconcileMs` (`controller_runtime_reconcile_time_seconds` sum / count) of that window.
   */
  reconciles: Record<string, number> | null;
  serverApplyMs: { p50: number; p99: number; samples: number };
  /** `--relist` (operators only, else null): from kube-apiserver ready again to every watch relisted and the operator quiet. */
  relistSeconds: number | null;
  /** The operator's write requests from just before the restart to quiet. */
  relistWrites: number | null;
  /** The restarted API server's `apiserver_request_total` write verbs on memcacheds, deployments and services (all clients) until then. */
  relistServerWrites: number | null;
  /** What shows that the operator relisted (see {@link measureRelist}). */
  relist: RelistEvidence | null;
  /** A multi-replica peer: per replica (the run's figures above are the sums, readySeconds the last replica's). */
  shards: ShardFigures[] | null;
  handover: HandoverFigures | null;
  /** `--profile` (ours, ours-3-shards; else null): each replica's CPU profile over its converging window. */
  profiles: RunProfile[] | null;
  /**
   * Ours only (else null): per replica, the watch events it received while converging (first CR created
   * → all Ready), by resource (`plural[.group]`), from `cdk8s_operator_watch_events_total`: what each
   * replica's watches made it parse.
   */
  watchEvents: ReplicaWatchEvents[] | null;
  /**
   * Ours only (else null): per replica, V8's garbage collection over the same window, by kind (`major`,
   * `minor`, `incremental`, `weakcb`), from prom-client's `nodejs_gc_duration_seconds` (its sum and count):
   * seconds of pauses on the main thread, and how many.
   */
  gc: ReplicaGc[] | null;
  /**
   * Ours only (else null): per replica over the same window, its reconciles (`controller_runtime_reconcile_total`,
   * every result) and how many of them reused the last render (`cdk8s_operator_renders_skipped_total`,
   * render-memo.ts): `rendered` is the difference.
   */
  renders: ReplicaRenders[] | null;
  /**
   * What kube-apiserver served over the same window (first CR created → all Ready), from its own /metrics,
   * every client together (the operator's, the controller manager's, the scheduler's, kwok's and the
   * bench's own polling): see {@link ApiServerWork}.
   */
  apiServer: ApiServerWork;
}

/** kube-apiserver's /metrics deltas over a window (each map keyed `VERB resource`, or `group/kind` for watch events). */
interface ApiServerWork {
  /** `apiserver_request_total`: requests by verb and resource (WATCH counted when it opens). */
  requests: Record<string, number>;
  /** `apiserver_request_duration_seconds_sum`, by verb and resource: seconds the server spent answering (a WATCH: how long it stayed open). */
  requestSeconds: Record<string, number>;
  /** `apiserver_watch_events_total` by kind: events sent to all watchers. */
  watchEventsSent: Record<string, number>;
  /** `apiserver_admission_webhook_admission_duration_seconds`: calls to admission webhooks and their seconds. */
  admissionWebhookCalls: number;
  admissionWebhookSeconds: number;
}

/** The kube-apiserver figures {@link ApiServerWork} is the delta of, from one scrape. */
function apiServerCounters(metrics: string): { requests: Record<string, number>; requestSeconds: Record<string, number>; watchEventsSent: Record<string, number>; webhookCalls: number; webhookSeconds: number } {
  const verbAndResource = (valueOf: (label: string) => string | undefined) => `${valueOf('verb') ?? ''} ${valueOf('resource') ?? ''}${valueOf('subresource') ? `/${valueOf('subresource')}` : ''}`;
  const total = (name: string) => samplesBy(metrics, name, undefined)[''] ?? 0;
  return {
    requests: samplesBy(metrics, 'apiserver_request_total', verbAndResource),
    requestSeconds: samplesBy(metrics, 'apiserver_request_duration_seconds_sum', verbAndResource),
    watchEventsSent: samplesBy(metrics, 'apiserver_watch_events_total', (valueOf) => `${valueOf('group') ?? ''}/${valueOf('kind') ?? ''}`),
    webhookCalls: total('apiserver_admission_webhook_admission_duration_seconds_count'),
    webhookSeconds: total('apiserver_admission_webhook_admission_duration_seconds_sum'),
  };
}

/** The window's {@link ApiServerWork}: `after − before`, zero deltas left out, seconds to the millisecond. */
function apiServerWorkBetween(before: ReturnType<typeof apiServerCounters>, after: ReturnType<typeof apiServerCounters>): ApiServerWork {
  const delta = (a: Record<string, number>, b: Record<string, number>, digits: number) =>
    Object.fromEntries(Object.entries(countDelta(a, b)).filter(([, v]) => Math.abs(v) > 1e-9).map(([k, v]) => [k, Number(v.toFixed(digits))]));
  return {
    requests: delta(before.requests, after.requests, 0),
    requestSeconds: delta(before.requestSeconds, after.requestSeconds, 3),
    watchEventsSent: delta(before.watchEventsSent, after.watchEventsSent, 0),
    admissionWebhookCalls: after.webhookCalls - before.webhookCalls,
    admissionWebhookSeconds: Number((after.webhookSeconds - before.webhookSeconds).toFixed(3)),
  };
}

/** One replica's reconciles over a window, and the renders it ran and skipped. */
interface ReplicaRenders {
  replica: string;
  reconciles: number;
  rendered: number;
  skipped: number;
}

/** `controller_runtime_reconcile_total` (every result) and `cdk8s_operator_renders_skipped_total`, summed over controllers. */
function renderCounts(metrics: string): { reconciles: number; skipped: number } {
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  return { reconciles: sum(samplesBy(metrics, 'controller_runtime_reconcile_total', undefined)), skipped: sum(samplesBy(metrics, 'cdk8s_operator_renders_skipped_total', undefined)) };
}

/** One replica's garbage collections over a window, by kind (`nodejs_gc_duration_seconds` deltas). */
interface ReplicaGc {
  replica: string;
  secondsByKind: Record<string, number>;
  countByKind: Record<string, number>;
}

/** `nodejs_gc_duration_seconds`' sum and count, by kind. */
function gcByKind(metrics: string): { seconds: Record<string, number>; count: Record<string, number> } {
  return { seconds: samplesBy(metrics, 'nodejs_gc_duration_seconds_sum', 'kind'), count: samplesBy(metrics, 'nodejs_gc_duration_seconds_count', 'kind') };
}

/** One operator process's CPU profile (`--profile`). */
interface RunProfile {
  replica: string;
  /** The `--cpu-prof-dir` it ran with. */
  dir: string;
  /** The profile written there by this run (null: none, e.g. the replica killed by `--handover`). */
  file: string | null;
  /** How the process ended (`code 0`; `signal SIGKILL` writes no profile). */
  exit: string;
  /** The converging window (first CR created → its last CR Ready), in ms after the profile's start. */
  convergingMs: [number, number] | null;
  summary: ProfileSummary | null;
}

interface RelistEvidence {
  /** Per watched resource (ours: `plural.group`; controller-runtime: client-go's type, e.g. `*v1.Deployment`): watches ended by 410 and relists, after the restart. */
  resources: Record<string, { expired: number; relisted: number }>;
  /** etcd revision compacted while kube-apiserver was down. */
  compactedRevision: number;
  /** kube-apiserver stopped → ready again. */
  apiServerDownSeconds: number;
  /** The operator's requests (a watch counts once) and reconciles from just before the restart to quiet. */
  requests: number;
  reconciles: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}


// ---- process tree accounting (Linux /proc) ----

async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const text = await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '');
      for (const c of text.trim().split(/\s+/)) if (c) out.push(Number(c));
    }
  } catch {
    // gone
  }
  return out;
}

async function processTree(pid: number): Promise<number[]> {
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(await childrenOf(all[i]!)));
  return all;
}

interface Usage {
  rssBytes: number;
  hwmBytes: number;
  cpuSeconds: number;
}

async function usageOf(pid: number): Promise<Usage> {
  let rssBytes = 0;
  let hwmBytes = 0;
  let cpuSeconds = 0;
  for (const p of await processTree(pid)) {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8');
      rssBytes += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      if (p === pid) hwmBytes = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
      const stat = await readFile(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[11..14] = utime stime cutime cstime (stat fields 14..17)
      cpuSeconds += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLK_TCK;
    } catch {
      // exited between listing and reading
    }
  }
  return { rssBytes, hwmBytes, cpuSeconds };
}

/**
 * Samples process trees' RSS every 250 ms: `peaks[i]` is the largest seen of `pids[i]`'s tree (or its
 * kernel high-water mark), `peak` the largest sum of all of them at one tick (with one pid: its peak).
 */
class RssSampler {
  peak = 0;
  readonly peaks: number[];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  constructor(private readonly pids: readonly number[]) {
    this.peaks = pids.map(() => 0);
  }
  start(): void {
    const tick = async () => {
      const usages = await Promise.all(this.pids.map((pid) => usageOf(pid)));
      usages.forEach((u, i) => (this.peaks[i] = Math.max(this.peaks[i]!, u.rssBytes, u.hwmBytes)));
      const sum = usages.reduce((a, u) => a + u.rssBytes, 0);
      this.peak = Math.max(this.peak, this.pids.length === 1 ? this.peaks[0]! : sum);
      // A tick in flight when stop() ran must not arm another timer (the bench would never exit).
      if (!this.stopped) this.timer = setTimeout(tick, 250);
    };
    void tick();
  }
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

// ---- metrics ----

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

/** Sum of `rest_client_requests_total` (all, and write methods only). */
function clientRequests(metrics: string): { all: number; writes: number } {
  let all = 0;
  let writes = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    all += value;
    const method = /method="([A-Za-z]+)"/.exec(line)?.[1]?.toUpperCase() ?? '';
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) writes += value;
  }
  return { all, writes };
}

/** `rest_client_requests_total` by `METHOD code` (summed over hosts and operators), from the operator's start. */
function requestsByMethodAndCode(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    const method = /method="([A-Za-z]+)"/.exec(line)?.[1]?.toUpperCase() ?? '?';
    const code = /code="([^"]*)"/.exec(line)?.[1] ?? '?';
    const key = `${method} ${code}`;
    out[key] = (out[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

/** `controller_runtime_reconcile_total` by result (summed over controllers). */
function reconcileTotals(metrics: string): { byResult: Record<string, number>; seconds: number; count: number } {
  const byResult: Record<string, number> = {};
  let seconds = 0;
  let count = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith('controller_runtime_reconcile_time_seconds_sum')) seconds += Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('controller_runtime_reconcile_time_seconds_count')) count += Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!line.startsWith('controller_runtime_reconcile_total{')) continue;
    const result = /result="([^"]*)"/.exec(line)?.[1] ?? '?';
    byResult[result] = (byResult[result] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return { byResult, seconds, count };
}

/** The reconciles between two scrapes (`before` empty: since start): by result, and `meanReconcileMs` of those. */
function reconcilesBetween(before: string, after: string): Record<string, number> {
  const [a, b] = [reconcileTotals(before), reconcileTotals(after)];
  const out = countDelta(a.byResult, b.byResult);
  const count = b.count - a.count;
  if (count > 0) out.meanReconcileMs = Math.round((1000 * (b.seconds - a.seconds)) / count);
  return out;
}

/**
 * kube-apiserver's /metrics as text. `send`, not `request`: `request` parses a JSON body and gives
 * undefined for any other (until 2026-12-06 this read went through `request`, so every figure made of it,
 * the server's count of idle and relist writes among them, read 0 whatever the server had served).
 */
async function apiServerMetrics(admin: ApiClient): Promise<string> {
  const answer = await admin.send('GET', '/metrics');
  if (answer.statusCode !== 200 || !answer.body.includes('apiserver_request_total')) throw new Error(`kube-apiserver /metrics: HTTP ${answer.statusCode}, ${answer.body.length} bytes without apiserver_request_total`);
  return answer.body;
}

async function serverWrites(admin: ApiClient, resources: string[]): Promise<number> {
  const text = await apiServerMetrics(admin);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '';
    const resource = /resource="([^"]*)"/.exec(line)?.[1] ?? '';
    if (resources.includes(resource) && ['APPLY', 'PATCH', 'POST', 'PUT', 'DELETE'].includes(verb)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** `cdk8s_operator_watch_events_total` summed over event types, by resource. */
function watchEventsByResource(metrics: string): Record<string, number> {
  return samplesBy(metrics, 'cdk8s_operator_watch_events_total', 'resource');
}

/** `after − before` per key (a key only in `after` counts from 0), keys sorted. */
function countDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).sort().map((k) => [k, after[k]! - (before[k] ?? 0)]));
}

/** Sum of every sample of `name` (with or without labels), optionally only those whose labels include `where`. */
function sumOf(metrics: string, name: string, where: Record<string, string> = {}): number {
  return Object.values(samplesBy(metrics, name, undefined, where)).reduce((a, b) => a + b, 0);
}

/** Samples of `name` summed by the value of `label` (all under `''` without a label), optionally only those whose labels include `where`. */
function samplesBy(metrics: string, name: string, label: string | ((valueOf: (label: string) => string | undefined) => string) | undefined, where: Record<string, string> = {}): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.lastIndexOf('}')) : '';
    const valueOf = (l: string) => new RegExp(`(?:^|,)${l}="([^"]*)"`).exec(labels)?.[1];
    if (Object.entries(where).some(([l, v]) => valueOf(l) !== v)) continue;
    const key = typeof label === 'function' ? label(valueOf) : label ? valueOf(label) ?? '' : '';
    out[key] = (out[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}


// ---- operators ----

interface OperatorProcess {
  pid: number;
  metricsUrl: string;
  logPath: string;
  stop(): Promise<void>;
  /** SIGKILL, resolved once it exited (the hand-over scenario). */
  kill9(): Promise<void>;
  /** How it exited (`code 0`, `signal SIGKILL`), '' while it runs. */
  exitOf(): string;
}

/** One replica of `ours-3-shards`: its name (`POD_NAME`, its Lease's name). */
interface ShardOptions {
  readonly member: string;
}

async function startOperator(peer: 'ours' | 'ours-tsx' | 'controller-runtime' | 'plain-node', plane: ControlPlane, logPath: string, shard?: ShardOptions, cpuProfileDir?: string, namespace?: string): Promise<OperatorProcess> {
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  let child: ChildProcess;
  let readyUrl: string | undefined;
  if (peer === 'ours' || peer === 'ours-tsx') {
    const probePort = await freePort();
    readyUrl = `http://127.0.0.1:${probePort}/readyz`;
    const entry = peer === 'ours'
      ? [join(OURS_OUT, 'lib/cli/main.js'), 'run', '--module', join(OURS_OUT, 'operators/index.js')]
      : [join(repoRoot, 'bin/cdk8s-operator.js'), 'run'];
    child = spawn(
      process.execPath,
      [...OURS_NODE_ARGS, ...(cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : []), ...(HEAP_SNAPSHOT_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_SNAPSHOT_DIR}`] : []), ...entry,
        '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
        // plain HTTP /metrics for the bench's scrapes (HTTPS with authenticated scrapes is the default)
        '--metrics-bind-address', `127.0.0.1:${metricsPort}`, '--metrics-secure=false', '--health-probe-bind-address', `127.0.0.1:${probePort}`,
        ...(shard ? ['--sharding', '--sharding-namespace', SHARD_NAMESPACE, '--sharding-buckets', String(SHARD_BUCKETS)] : []),
        ...(namespace ? ['--namespace', namespace] : []),
        // Under --handover a shard logs its writes (`reconciled`, debug: one line per reconcile that wrote)
        // for the overlap check; otherwise every replica logs at `run`'s default level, as users run it.
        '--log-level', shard && HANDOVER ? 'debug' : 'info'],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '', ...(shard ? { POD_NAME: shard.member } : {}) } },
    );
  } else if (peer === 'plain-node') {
    // the same Node and flags as `ours`: what the same work costs in Node without the SDK
    child = spawn(process.execPath, [...OURS_NODE_ARGS, join(repoRoot, 'bench/peers/plain-node/operator.mjs'), '--kubeconfig', plane.kubeconfigPath, '--metrics-bind-address', `127.0.0.1:${metricsPort}`, ...(namespace ? ['--namespace', namespace] : [])],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  } else {
    const bin = goPeerBinary();
    // --relist reads client-go's reflector lines from its log: "Caches populated" (V(2)) after every
    // list, "Watch closed" with the 410 (V(4)); nothing else in controller-runtime or client-go's
    // reflector logs between V(1) and V(4) per object, so convergence logs the same as at info.
    const verbosity = RELIST ? ['--zap-log-level=4'] : [];
    child = spawn(bin, ['--kubeconfig', plane.kubeconfigPath, '--metrics-bind-address', `127.0.0.1:${metricsPort}`, ...verbosity, ...(namespace ? ['--namespace', namespace] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  }
  const log = createWriteStream(logPath);
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let exited = false;
  let exit = '';
  child.once('exit', (code, signal) => {
    exited = true;
    exit = signal ? `signal ${signal}` : `code ${code}`;
  });
  const stop = async () => {
    if (exited) return;
    await stopChild(child, STOP_TIMEOUT_MS);
  };
  const kill9 = async () => {
    if (exited) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  try {
    await waitFor(`${peer} metrics endpoint`, async () => {
      if (exited) throw new Error(`${peer} exited during start-up; log: ${logPath}`);
      try {
        await scrape(metricsUrl);
        if (readyUrl) return (await fetch(readyUrl)).ok;
        return true;
      } catch {
        return false;
      }
    }, 120_000);
    // Idle = its CPU time stops moving (< 10 ms per 500 ms): start-up work (loading, cache sync) is over.
    let last = (await usageOf(child.pid!)).cpuSeconds;
    await waitFor(`${peer} idle after start`, async () => {
      const now = (await usageOf(child.pid!)).cpuSeconds;
      const quiet = now - last < 0.01;
      last = now;
      return quiet;
    }, 60_000, 500);
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid!, metricsUrl, logPath, stop, kill9, exitOf: () => exit };
}

let goBinary: string | undefined;
function goPeerBinary(): string {
  if (!goBinary) {
    const out = execFileSync('bash', [join(repoRoot, 'bench/peers/controller-runtime/build.sh')], { stdio: ['ignore', 'pipe', 'inherit'] }).toString().trim().split('\n');
    goBinary = out[out.length - 1]!;
  }
  return goBinary;
}

// ---- relist after 410 ----

/** What moves in an operator's metrics while it works: requests (unless `withRequests` is false), reconciles, queue adds, queue depth, busy workers. */
function activity(metrics: string, withRequests = true): { signature: string; busy: boolean } {
  const depth = sumOf(metrics, 'workqueue_depth');
  const active = sumOf(metrics, 'controller_runtime_active_workers');
  const moving = [withRequests ? clientRequests(metrics).all : 0, sumOf(metrics, 'controller_runtime_reconcile_total'), sumOf(metrics, 'workqueue_adds_total'), depth, active];
  return { signature: moving.join(' '), busy: depth > 0 || active > 0 };
}

/**
 * Polls the operator's metrics every 250 ms until `done()` holds, its queue is empty with no worker busy,
 * and nothing moved for {@link QUIET_MS}. Resolves with the time (performance.now()) of the last scrape
 * that saw something move (`since` if none did) and the last scrape's text.
 */
async function quietAfter(op: OperatorProcess, since: number, what: string, done: (metrics: string) => Promise<boolean> | boolean, timeoutMs: number, signal?: AbortSignal, withRequests = true): Promise<{ lastChange: number; metrics: string }> {
  let lastChange = since;
  let last = '';
  let metrics = '';
  await waitFor(what, async () => {
    signal?.throwIfAborted();
    metrics = await scrape(op.metricsUrl);
    const now = activity(metrics, withRequests);
    if (now.signature !== last) {
      if (last) lastChange = performance.now();
      last = now.signature;
    }
    return !now.busy && performance.now() - lastChange >= QUIET_MS && (await done(metrics));
  }, timeoutMs, 250);
  return { lastChange, metrics };
}

/** etcd's JSON gateway (plain HTTP on loopback). */
async function etcd(plane: ControlPlane, path: string, body: unknown): Promise<{ header?: { revision?: string } }> {
  const res = await fetch(`${plane.etcdEndpoint}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as { header?: { revision?: string } };
}

/**
 * Writes a key outside `/registry` (the API server never reads it) so etcd's revision moves past every
 * resourceVersion a client holds, then compacts etcd at that revision. Returns the revision.
 */
async function compactPastEveryClient(plane: ControlPlane): Promise<number> {
  const put = await etcd(plane, '/v3/kv/put', { key: Buffer.from('/bench-peers/relist').toString('base64'), value: Buffer.from(new Date().toISOString()).toString('base64') });
  const revision = Number(put.header?.revision);
  if (!Number.isInteger(revision) || revision <= 0) throw new Error(`etcd put: no revision in ${JSON.stringify(put)}`);
  await etcd(plane, '/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}

/** ours: `plural.group` of the resources it watches; the restart breaks each watch, so each must show up. */
const OURS_WATCHED = ['memcacheds.cache.example.com', 'deployments.apps', 'services'];

/** controller-runtime's log lines (zap JSON) from `offset`: client-go reflector's 410s and lists by type. */
async function reflectorLines(logPath: string, offset: number): Promise<{ expired: Record<string, number>; listed: Record<string, number> }> {
  const text = (await readFile(logPath)).subarray(offset).toString('utf8');
  const expired: Record<string, number> = {};
  const listed: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: string; type?: string; err?: string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (!entry.type) continue;
    // client-go: "Watch closed" is logged only for an expired watch (isExpiredError), err "too old resource version: …"
    if (entry.msg === 'Watch closed' && /too old resource version|resourceVersion .* too old|expired/i.test(entry.err ?? '')) expired[entry.type] = (expired[entry.type] ?? 0) + 1;
    if (entry.msg === 'Caches populated') listed[entry.type] = (listed[entry.type] ?? 0) + 1;
  }
  return { expired, listed };
}

/**
 * Forces every watch of the operator to end in 410 Gone, then times its relist. How: kube-apiserver is
 * stopped; while it is down, etcd's revision is moved on and etcd is compacted at that revision; then
 * it starts again. Every resourceVersion the operator holds is now older than the restarted API
 * server's watch cache (filled by a fresh list at etcd's current revision) and than etcd's compacted
 * revision, so resuming any watch from it answers 410 "too old resource version" (from the watch cache
 * as an ERROR event; from etcd when a watch is served from storage) and the only way back is a full list.
 *
 * Evidence, required for every watched resource (else this throws and the run reports no figure):
 * - ours: `cdk8s_operator_watch_restarts_total{reason="expired"}` and `cdk8s_operator_watch_relists_total`
 *   both went up, for memcacheds, deployments and services and every other resource whose watch restarted;
 * - controller-runtime (no such metrics): its log at `--zap-log-level=4` (client-go reflector lines, which
 *   controller-runtime routes to its logger): `Watch closed` with "too old resource version" and then
 *   `Caches populated` after the restart, for every type that had `Caches populated` at start-up.
 *
 * Done when all of that is seen and the operator's metrics (requests, reconciles, queue adds and depth,
 * busy workers) stayed still for {@link QUIET_MS}; `relistSeconds` runs from kube-apiserver's /readyz ok
 * to the last scrape (every 250 ms, from the moment it starts again) where one of them moved.
 */
async function measureRelist(peer: Peer, plane: ControlPlane, op: OperatorProcess, admin: ApiClient, logPath: string): Promise<Pick<RunResult, 'relistSeconds' | 'relistWrites' | 'relistServerWrites' | 'relist'>> {
  const before = await scrape(op.metricsUrl);
  const logOffset = (await stat(logPath)).size;
  const ours = peer === 'ours' || peer === 'ours-tsx';
  const startupTypes = ours ? [] : Object.keys((await reflectorLines(logPath, 0)).listed);
  if (!ours && startupTypes.length === 0) throw new Error(`${peer}: no "Caches populated" lines in ${logPath} (is --zap-log-level=4 in effect?)`);

  let resources: RelistEvidence['resources'] = {};
  const relistedAll = async (metrics: string): Promise<boolean> => {
    if (ours) {
      const delta = (name: string, where: Record<string, string> = {}) => {
        const a = samplesBy(before, name, 'resource', where);
        const b = samplesBy(metrics, name, 'resource', where);
        return (r: string) => (b[r] ?? 0) - (a[r] ?? 0);
      };
      const restarted = delta('cdk8s_operator_watch_restarts_total');
      const expired = delta('cdk8s_operator_watch_restarts_total', { reason: 'expired' });
      const relisted = delta('cdk8s_operator_watch_relists_total');
      const names = new Set([...OURS_WATCHED, ...Object.keys(samplesBy(metrics, 'cdk8s_operator_watch_restarts_total', 'resource')).filter((r) => restarted(r) > 0)]);
      resources = Object.fromEntries([...names].sort().map((r) => [r, { expired: expired(r), relisted: relisted(r) }]));
    } else {
      const lines = await reflectorLines(logPath, logOffset);
      resources = Object.fromEntries(startupTypes.sort().map((t) => [t, { expired: lines.expired[t] ?? 0, relisted: lines.listed[t] ?? 0 }]));
    }
    return Object.values(resources).every((r) => r.expired > 0 && r.relisted > 0);
  };
  let compactedRevision = 0;
  let relisting: Promise<{ lastChange: number; metrics: string }> | undefined;
  const abandon = new AbortController();
  const down = performance.now();
  try {
    await plane.restartApiServer(async () => {
      compactedRevision = await compactPastEveryClient(plane);
      // Watch the operator from the moment kube-apiserver starts again: it may serve (and the operator
      // relist) before /readyz is ok.
      relisting = quietAfter(op, performance.now(), `${peer} relisted after 410 and quiet`, relistedAll, 10 * 60_000, abandon.signal);
      relisting.catch(() => undefined); // awaited below
    });
  } catch (err) {
    abandon.abort();
    throw err;
  }
  const ready = performance.now();
  let quiet: { lastChange: number; metrics: string };
  try {
    quiet = await relisting!;
  } catch (err) {
    const relisted = Object.values(resources).every((r) => r.expired > 0 && r.relisted > 0);
    throw new Error(`${(err as Error).message}; ${relisted ? 'relisted but never quiet' : 'no relist after 410 for every watch'}: ${JSON.stringify(resources)} (log: ${logPath})`);
  }
  return {
    // 0 when the relist was over by the time /readyz was ok
    relistSeconds: Number((Math.max(0, quiet.lastChange - ready) / 1000).toFixed(2)),
    relistWrites: clientRequests(quiet.metrics).writes - clientRequests(before).writes,
    // a new kube-apiserver process: its counters started at zero with it
    relistServerWrites: await serverWrites(admin, ['memcacheds', 'deployments', 'services']),
    relist: {
      resources,
      compactedRevision,
      apiServerDownSeconds: Number(((ready - down) / 1000).toFixed(1)),
      requests: clientRequests(quiet.metrics).all - clientRequests(before).all,
      reconciles: sumOf(quiet.metrics, 'controller_runtime_reconcile_total') - sumOf(before, 'controller_runtime_reconcile_total'),
    },
  };
}

// ---- one run ----

function memcached(name: string, size: number, namespace = NAMESPACE): KubeObject {
  return { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace }, spec: { replicas: size } } as KubeObject;
}

/** Waits until each operator used less than 10 ms of CPU in half a second. */
async function waitIdle(ops: readonly OperatorProcess[], what: string): Promise<void> {
  for (const op of ops) {
    let last = (await usageOf(op.pid)).cpuSeconds;
    await waitFor(what, async () => {
      const now = (await usageOf(op.pid)).cpuSeconds;
      const quiet = now - last < 0.01;
      last = now;
      return quiet;
    }, 60_000, 500);
  }
}

function isReadyCr(obj: KubeObject): boolean {
  const conditions = (obj as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions;
  return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function isAvailable(obj: KubeObject): boolean {
  const d = obj as { metadata?: { generation?: number }; status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] } };
  return (d.status?.observedGeneration ?? -1) >= (d.metadata?.generation ?? 0) && (d.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false);
}

/** Ready=True for the CR's current generation (both peers set observedGeneration on the status and on its conditions). */
function isSettledCr(obj: KubeObject): boolean {
  const status = (obj as { status?: { observedGeneration?: number; conditions?: { type: string; status: string; observedGeneration?: number }[] } }).status;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && (ready.observedGeneration ?? status?.observedGeneration ?? -1) >= (obj.metadata?.generation ?? 0);
}

/** Available, and every replica of the wanted count updated and ready. */
function isRolledOut(obj: KubeObject): boolean {
  const d = obj as { spec?: { replicas?: number }; status?: { updatedReplicas?: number; readyReplicas?: number } };
  const want = d.spec?.replicas ?? 1;
  return isAvailable(obj) && d.status?.updatedReplicas === want && d.status?.readyReplicas === want;
}

/** Runs `tasks` with at most `limit` in flight. */
async function inFlight(limit: number, count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

/** Sums `rest_client_requests_total` over several operators' scrapes. */
async function requestsOf(ops: readonly OperatorProcess[]): Promise<{ all: number; writes: number }> {
  const each = await Promise.all(ops.map(async (op) => clientRequests(await scrape(op.metricsUrl))));
  return { all: each.reduce((a, r) => a + r.all, 0), writes: each.reduce((a, r) => a + r.writes, 0) };
}

/** Sums usage over several process trees (RSS as the sum at one moment). */
async function usageOfAll(ops: readonly OperatorProcess[]): Promise<Usage[]> {
  return Promise.all(ops.map((op) => usageOf(op.pid)));
}

function total(usages: readonly Usage[]): Usage {
  return usages.reduce((a, u) => ({ rssBytes: a.rssBytes + u.rssBytes, hwmBytes: Math.max(a.hwmBytes, u.hwmBytes), cpuSeconds: a.cpuSeconds + u.cpuSeconds }), { rssBytes: 0, hwmBytes: 0, cpuSeconds: 0 });
}

/** Each shard's held buckets from its Lease (`sharding.cdk8s.io/held`); null until every replica holds some and every bucket is held once. */
async function settledRing(admin: ApiClient, members: readonly string[]): Promise<Map<string, number[]> | null> {
  const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${SHARD_NAMESPACE}/leases`);
  const out = new Map<string, number[]>();
  const all: number[] = [];
  for (const member of members) {
    const lease = list.items.find((l) => l.metadata?.name === member);
    const value = (lease?.metadata?.annotations as Record<string, string> | undefined)?.['sharding.cdk8s.io/held'] ?? '';
    if (!value) return null;
    const held = value.split(',').map(Number);
    out.set(member, held);
    all.push(...held);
  }
  return all.length === SHARD_BUCKETS && new Set(all).size === SHARD_BUCKETS ? out : null;
}

/**
 * `--handover`: with every CR Ready at its generation and the shards quiet, one shard (the one holding
 * the middle number of buckets) is killed with SIGKILL; right then every CR's `spec.replicas` is merge-patched to 3 (20 in flight). The
 * killed shard's CRs can only get there once a survivor took its buckets (after its Lease expired,
 * {@link SHARD_LEASE_SECONDS} s), so `handoverSeconds` (kill → the last of its CRs' Deployments at 3
 * replicas, seen in the bench's watch) is the take-over time; `survivorsSeconds` is the same wave for
 * CRs that did not move. Single writer: from each replica's log (`reconciled` records: reconciles
 * that wrote), the objects written by two replicas from the kill to the end without their bucket
 * changing hands between the two writes (must be 0; with it, a bucket balanced between survivors), the killed
 * shard's CRs rewritten by a survivor (all of them: the buckets were truly taken over), and over the
 * whole run, overlapping holds of a bucket or writes outside the writer's hold (bench/shard-records.ts;
 * the idea of test/integration/sharding.test.ts).
 */
async function measureHandover(count: number, ops: readonly OperatorProcess[], members: readonly string[], ring: Map<string, number[]>, admin: ApiClient, deployments: Informer): Promise<HandoverFigures> {
  // The replica holding the middle number of buckets: not the largest, whose CPU profile (written only
  // on a clean exit) explains the per-shard goals, and not the smallest, which would flatter the take-over.
  const bySize = members.map((_, i) => i).sort((a, b) => ring.get(members[a]!)!.length - ring.get(members[b]!)!.length);
  const victim = bySize[Math.floor(bySize.length / 2)]!;
  const killedBuckets = ring.get(members[victim]!)!;
  const names = Array.from({ length: count }, (_, i) => `mc-${i}`);
  const killedNames = new Set(names.filter((n) => killedBuckets.includes(bucketOf(NAMESPACE, n, SHARD_BUCKETS))));
  const seenAt = new Map<string, number>();
  const off = deployments.on((event) => {
    const name = event.object.metadata?.name;
    if (name && !seenAt.has(name) && (event.object.spec as { replicas?: number } | undefined)?.replicas === 3) seenAt.set(name, Date.now());
  });
  const killedAt = Date.now();
  await ops[victim]!.kill9();
  await inFlight(20, count, (i) => admin.request('PATCH', `${CR_PATH}/${names[i]}`, { body: { spec: { replicas: 3 } }, contentType: 'application/merge-patch+json' }));
  const patchedAt = Date.now();
  try {
    await waitFor(`every Deployment at 3 replicas after killing ${members[victim]}`, () => names.every((n) => seenAt.has(n)), 30 * 60_000, 250);
  } finally {
    off();
  }
  const end = Date.now();
  const maxOf = (subset: string[]) => Math.max(...subset.map((n) => seenAt.get(n)! - killedAt)) / 1000;
  const logs: ReplicaLog[] = await Promise.all(ops.map(async (op, i) => ({
    replica: members[i]!,
    records: parseLogLines(await readFile(op.logPath, 'utf8')),
    ...(i === victim ? { killedAt } : {}),
  })));
  const writes = writeRecords(logs);
  const bucketOfCr = (ns: string, name: string) => bucketOf(ns, name, SHARD_BUCKETS);
  const twice = writtenByTwoWithoutHandOver(writes, holdIntervals(logs), bucketOfCr, killedAt, end);
  const changed = objectsWrittenByTwo(writes, killedAt, end);
  const violations = holdViolations(logs, bucketOfCr);
  const rewritten = new Set(writes.filter((w) => w.time >= killedAt && w.replica !== members[victim] && killedNames.has(w.name)).map((w) => w.name));
  return {
    killed: members[victim]!,
    killedBuckets,
    killedCrs: killedNames.size,
    handoverSeconds: Number(maxOf([...killedNames]).toFixed(1)),
    survivorsSeconds: Number(maxOf(names.filter((n) => !killedNames.has(n))).toFixed(1)),
    patchSeconds: Number(((patchedAt - killedAt) / 1000).toFixed(1)),
    leaseSeconds: SHARD_LEASE_SECONDS,
    killedCrsRewrittenBySurvivors: rewritten.size,
    doubleWriters: Object.keys(twice).length,
    doubleWriterExamples: Object.fromEntries(Object.entries(twice).slice(0, 5)),
    writerChanges: Object.keys(changed).length - Object.keys(twice).length,
    holdViolations: violations.length,
    holdViolationExamples: violations.slice(0, 5),
  };
}

/** Milliseconds on the monotonic clock (CLOCK_MONOTONIC, as V8's CPU profile `startTime`, there in µs). */
function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/**
 * The CPU profile an operator wrote into `dir` during this run (the newest `.cpuprofile` modified
 * since `since`, epoch ms), summarised (bench/profile-summary.ts) from `fromMono` to `toMono`
 * ({@link monotonicMs}).
 */
async function runProfile(replica: string, dir: string, exit: string, since: number, fromMono: number, toMono: number): Promise<RunProfile> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const fresh = (await Promise.all(files.filter((f) => f.endsWith('.cpuprofile')).map(async (f) => ({ f: join(dir, f), mtime: (await stat(join(dir, f))).mtimeMs }))))
    .filter((x) => x.mtime >= since).sort((a, b) => b.mtime - a.mtime);
  const file = fresh[0]?.f ?? null;
  if (!file) {
    process.stderr.write(`[bench:peers]   no CPU profile in ${dir} (${replica} exited with ${exit || 'nothing'})\n`);
    return { replica, dir, file: null, exit, convergingMs: null, summary: null };
  }
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const startMs = profile.startTime / 1000;
  const convergingMs: [number, number] = [Math.round(fromMono - startMs), Math.round(toMono - startMs)];
  const lengthMs = (profile.endTime - profile.startTime) / 1000;
  if (convergingMs[0] < 0 || convergingMs[1] > lengthMs) throw new Error(`${file}: the converging window ${convergingMs.join('–')} ms is outside the profile (0–${Math.round(lengthMs)} ms): not the same monotonic clock?`);
  return { replica, dir, file, exit, convergingMs, summary: summarizeProfile(profile, { file, fromMs: convergingMs[0], toMs: convergingMs[1] }) };
}

async function oneRun(peer: Peer, rep: number, count: number, operator: MemcachedOperator, crdFile: string): Promise<RunResult> {
  const changes = Math.min(CHANGES_WANTED, count);
  const fastClient = ['--kube-api-qps=500', '--kube-api-burst=1000'];
  const plane = await startControlPlane({
    fakeNodes: Math.ceil((count + WARM_UP_CRS * (WARM_UP_EACH ? SHARDS : 1) + 2 * changes + 20) / PODS_PER_NODE),
    podsPerNode: PODS_PER_NODE,
    serviceClusterIpRange: '10.0.0.0/16',
    extraArgs: { controllerManager: fastClient, scheduler: fastClient },
  });
  const dir = await mkdtemp(join(tmpdir(), `bench-peers-${peer}-`));
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-peers' });
  const sharded = shardReplicas(peer) > 0;
  const split = splitReplicas(peer) > 0;
  // The bench's own watches: the measured namespace, or all three of a `-3-namespaces` peer's.
  const watched = split ? undefined : NAMESPACE;
  const deployments = new Informer({ client: admin, resource: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true }, namespace: watched });
  const crs = new Informer({ client: admin, resource: { group: 'cache.example.com', version: 'v1beta1', plural: 'memcacheds', namespaced: true }, namespace: watched });
  /** The measured CRs (`mc-i`; a `-3-namespaces` peer's warm-up CRs are in the same namespaces). */
  const measuredCrs = () => crs.list(watched).filter((cr) => cr.metadata?.name?.startsWith('mc-'));
  const crNamespaceOf = (name: string) => (split ? splitNamespaceOf(name) : NAMESPACE);
  const logPath = join(dir, `${peer}.log`);
  // The replicas of a multi-replica peer: shard-1..3 (their POD_NAME), or bench-1..3 (their namespace).
  const members = sharded
    ? Array.from({ length: shardReplicas(peer) }, (_, i) => `shard-${i + 1}`)
    : Array.from({ length: splitReplicas(peer) }, (_, k) => splitNamespace(k));
  const multi = members.length > 0;
  const ops: OperatorProcess[] = [];
  // `--profile`: the CPU profile directory of each operator process (in the order of `ops`).
  const profiled: { replica: string; dir: string }[] = [];
  const runStartedAt = Date.now();
  const profileDirOf = (replica: string): string | undefined => {
    if (!PROFILE_DIR || (peer !== 'ours' && !sharded && peer !== 'ours-3-namespaces')) return undefined;
    const d = join(PROFILE_DIR, `${peer}-${count}-${replica}${REPS > 1 ? `-rep${rep}` : ''}`);
    profiled.push({ replica, dir: d });
    return d;
  };
  let ring: Map<string, number[]> | null = null;
  /** Sharded: the ring when the measured window began (`ring` is re-read once every CR is Ready). */
  let ringAtStart: Map<string, number[]> | null = null;
  /** The index in `members` of the replica that owns the CR `name`: its bucket's holder, or its namespace's replica. */
  const replicaOf = (name: string): number => {
    if (split) return members.indexOf(splitNamespaceOf(name));
    const bucket = bucketOf(NAMESPACE, name, SHARD_BUCKETS);
    return members.findIndex((m) => ring!.get(m)!.includes(bucket));
  };
  let sampler: RssSampler | undefined;
  let failed = true;
  let webhooks: LocalWebhooks | undefined;
  try {
    if (sharded && SHARD_WEBHOOK) {
      webhooks = await serveWebhooksLocally({ kubeConfig: plane.kubeConfig, operators: [new MemcachedOperator(new App())], shardBucketCount: SHARD_BUCKETS });
      await webhooks.install();
    } else {
      await installCRDs(plane.kubeConfig, [crdFile]);
    }
    for (const name of [NAMESPACE, ...(sharded ? [SHARD_NAMESPACE] : []), ...(WARM_UP_CRS > 0 && !split ? [WARM_NAMESPACE] : []), ...(split ? members : [])]) await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    deployments.start();
    crs.start();
    await Promise.all([deployments.waitForSync(), crs.waitForSync()]);

    const floor = peer === 'floor-1' || peer === 'floor-16';
    let start: Usage[] | undefined;
    let requestsAtStart = { all: 0, writes: 0 };
    let metricsAtStart = '';
    let watchEventsAtStart: Record<string, number>[] | undefined;
    let gcAtStart: ReturnType<typeof gcByKind>[] | undefined;
    let rendersAtStart: ReturnType<typeof renderCounts>[] | undefined;
    if (sharded) {
      for (const member of members) ops.push(await startOperator('ours', plane, join(dir, `${member}.log`), { member }, profileDirOf(member)));
      // Every replica holds its share before the first CR (balancing by CR count may move buckets later).
      await waitFor(`the ring settles over ${members.length} shards`, async () => (ring = await settledRing(admin, members)) !== null, 120_000, 500);
      await waitIdle(ops, 'shard idle after the ring settled');
    } else if (split) {
      const base = dividedPeer(peer) as 'ours' | 'controller-runtime' | 'plain-node';
      for (const namespace of members) ops.push(await startOperator(base, plane, join(dir, `${namespace}.log`), undefined, profileDirOf(namespace), namespace));
    } else if (peer === 'ours' || peer === 'ours-tsx' || peer === 'controller-runtime' || peer === 'plain-node') {
      ops.push(await startOperator(peer, plane, logPath, undefined, profileDirOf(peer)));
    }
    let startUp: Usage[] | undefined;
    const warmUpCrs = WARM_UP_EACH ? WARM_UP_CRS * ops.length : WARM_UP_CRS;
    if (ops.length > 0 && warmUpCrs > 0) {
      startUp = await usageOfAll(ops);
      const warmNamespaceOf = (name: string) => (split ? splitNamespaceOf(name) : WARM_NAMESPACE);
      await inFlight(20, warmUpCrs, (i) => admin.request('POST', crPathIn(warmNamespaceOf(`warm-${i}`)), { body: memcached(`warm-${i}`, 1, warmNamespaceOf(`warm-${i}`)) }));
      await waitFor(`${warmUpCrs} warm-up Memcached Ready`, async () => {
        const list = await admin.request<{ items: KubeObject[] }>('GET', CRS_PATH);
        return list.items.filter((cr) => cr.metadata?.name?.startsWith('warm-') && isReadyCr(cr)).length >= warmUpCrs;
      }, 60 * 60_000, 500);
      await waitIdle(ops, 'operator idle after the warm-up');
      if (sharded) {
        // The warm-up's CRs moved buckets (the ring balances by CR count): the window starts on a settled ring.
        await waitFor('the ring settles after the warm-up', async () => (ring = await settledRing(admin, members)) !== null, 120_000, 500);
        await waitIdle(ops, 'shard idle after the ring settled again');
      }
    }
    if (ops.length > 0) {
      sampler = new RssSampler(ops.map((op) => op.pid));
      sampler.start();
      start = await usageOfAll(ops);
      const metricsPerOpAtStart = await Promise.all(ops.map((o) => scrape(o.metricsUrl)));
      metricsAtStart = metricsPerOpAtStart.join('\n');
      requestsAtStart = clientRequests(metricsAtStart);
      if (peer.startsWith('ours')) {
        watchEventsAtStart = metricsPerOpAtStart.map(watchEventsByResource);
        gcAtStart = metricsPerOpAtStart.map(gcByKind);
        rendersAtStart = metricsPerOpAtStart.map(renderCounts);
      }
    }
    const op: OperatorProcess | undefined = ops[0];

    // converge
    const apiServerAtStart = apiServerCounters(await apiServerMetrics(admin));
    const planeCpuAtStart = await controlPlaneCpu(plane.dir);
    const t0 = performance.now();
    const t0Mono = monotonicMs();
    // Each operator's end of converging on the monotonic clock of its CPU profile (a shard: its last CR Ready).
    const convergedMono: (number | undefined)[] = ops.map(() => undefined);
    let converged: Usage[] | undefined;
    const readyAt = new Map<string, number>(); // CR name → seconds from t0 to first seen Ready
    if (floor) {
      const children = Array.from({ length: count }, (_, i) =>
        renderForSnapshot(operator, memcached(`mc-${i}`, 1) as never).map((c) => {
          const { ownerReferences: _o, ...metadata } = c.metadata as Record<string, unknown>;
          return { ...c, metadata };
        }),
      ).flat();
      await inFlight(peer === 'floor-1' ? 1 : 16, children.length, async (i) => {
        const c = children[i]! as { apiVersion: string; kind: string };
        const path = c.kind === 'Deployment' ? `/apis/apps/v1/namespaces/${NAMESPACE}/deployments` : `/api/v1/namespaces/${NAMESPACE}/services`;
        await admin.request('POST', path, { body: c });
      });
      await waitFor(`${count} Deployments Available`, () => deployments.list(NAMESPACE).filter(isAvailable).length >= count, 60 * 60_000, 100);
    } else {
      // A replica's own convergence: its CPU is read when the last CR of its buckets (its namespace) is Ready.
      const pendingPerShard = members.map((_, i) => Array.from({ length: count }, (__, j) => `mc-${j}`).filter((n) => replicaOf(n) === i).length);
      const shardConverged: (Usage | undefined)[] = members.map(() => undefined);
      await inFlight(20, count, (i) => admin.request('POST', crPathIn(crNamespaceOf(`mc-${i}`)), { body: memcached(`mc-${i}`, 1, crNamespaceOf(`mc-${i}`)) }));
      let snapshotTaken = !(HEAP_SNAPSHOT_DIR && (peer === 'ours' || peer === 'ours-tsx'));
      await waitFor(`${count} Memcached Ready`, async () => {
        let ready = 0;
        for (const cr of measuredCrs()) {
          if (!isReadyCr(cr)) continue;
          ready++;
          const name = cr.metadata!.name!;
          if (readyAt.has(name)) continue;
          readyAt.set(name, (performance.now() - t0) / 1000);
          if (multi) {
            const i = replicaOf(name);
            if (--pendingPerShard[i]! === 0) {
              convergedMono[i] = monotonicMs();
              shardConverged[i] = await usageOf(ops[i]!.pid);
            }
          }
        }
        if (!snapshotTaken && ready >= count / 2) {
          snapshotTaken = true;
          process.kill(op!.pid, 'SIGUSR2');
        }
        return ready >= count;
      }, 60 * 60_000, 100);
      if (multi) converged = await Promise.all(shardConverged.map((u, i) => u ?? usageOf(ops[i]!.pid)));
      if (sharded) {
        const atAllReady = await usageOfAll(ops);
        ringAtStart = ring;
        await waitFor('the ring settled with every CR Ready', async () => (ring = await settledRing(admin, members)) !== null, 120_000, 500);
        // Buckets moved in the window: a shard's own convergence is not known, so every shard's ends when all are Ready.
        if (JSON.stringify([...ring!]) !== JSON.stringify([...ringAtStart!])) converged = atAllReady;
      }
    }
    const readySeconds = (performance.now() - t0) / 1000;
    const readyMono = monotonicMs();
    if (!multi && ops.length > 0) converged = await usageOfAll(ops);
    const controlPlaneCpuSeconds = cpuDelta(planeCpuAtStart, await controlPlaneCpu(plane.dir));
    const apiServer = apiServerWorkBetween(apiServerAtStart, apiServerCounters(await apiServerMetrics(admin)));
    const metricsPerOpAtReady = await Promise.all(ops.map((o) => scrape(o.metricsUrl)));
    const metricsAtReady = ops.length > 0 ? metricsPerOpAtReady.join('\n') : undefined;
    const watchEvents = watchEventsAtStart
      ? ops.map((_, i) => {
        const byResource = countDelta(watchEventsAtStart![i]!, watchEventsByResource(metricsPerOpAtReady[i]!));
        return { replica: multi ? members[i]! : peer, byResource, total: Object.values(byResource).reduce((a, b) => a + b, 0) };
      })
      : null;
    const gc = gcAtStart
      ? ops.map((_, i): ReplicaGc => {
        const atReady = gcByKind(metricsPerOpAtReady[i]!);
        const round = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v * 1000) / 1000]));
        return { replica: multi ? members[i]! : peer, secondsByKind: round(countDelta(gcAtStart![i]!.seconds, atReady.seconds)), countByKind: countDelta(gcAtStart![i]!.count, atReady.count) };
      })
      : null;
    const renders = rendersAtStart
      ? ops.map((_, i): ReplicaRenders => {
        const before = rendersAtStart![i]!;
        const atReady = renderCounts(metricsPerOpAtReady[i]!);
        const reconciles = atReady.reconciles - before.reconciles;
        const skipped = atReady.skipped - before.skipped;
        return { replica: multi ? members[i]! : peer, reconciles, rendered: reconciles - skipped, skipped };
      })
      : null;
    const requestsAtReady = metricsAtReady ? clientRequests(metricsAtReady) : undefined;

    // idle window
    await sleep(2000);
    const idleBefore = ops.length > 0 ? await requestsOf(ops) : undefined;
    const serverBefore = await serverWrites(admin, ['memcacheds', 'deployments', 'services']);
    await sleep(IDLE_SECONDS * 1000);
    const idleAfter = ops.length > 0 ? await requestsOf(ops) : undefined;
    const idleServerWrites = (await serverWrites(admin, ['memcacheds', 'deployments', 'services'])) - serverBefore;
    const after = ops.length > 0 ? await usageOfAll(ops) : undefined;
    if (op) {
      // Both operators do the same job: status.nodes names each CR's one Pod once it has settled.
      const withoutNodes = measuredCrs().filter((cr) => ((cr as { status?: { nodes?: string[] } }).status?.nodes ?? []).length !== 1);
      if (withoutNodes.length > 0) throw new Error(`${peer}: ${withoutNodes.length} Memcacheds without exactly one name in status.nodes after the idle window, e.g. ${withoutNodes[0]?.metadata?.name}`);
    }

    // server apply latency: a probe Deployment nobody owns, its replicas changed by server-side apply
    const probe = (replicas: number) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'latency-probe', namespace: NAMESPACE },
      spec: { replicas, selector: { matchLabels: { probe: 'x' } }, template: { metadata: { labels: { probe: 'x' } }, spec: { containers: [{ name: 'c', image: 'probe:1' }] } } },
    });
    const seenReplicas = (name: string, replicas: number, namespace = NAMESPACE) =>
      new Promise<number>((resolve) => {
        const existing = deployments.get(namespace, name) as { spec?: { replicas?: number } } | undefined;
        if (existing?.spec?.replicas === replicas) return resolve(performance.now());
        const off = deployments.on((event) => {
          if (event.object.metadata?.name === name && event.object.metadata?.namespace === namespace && (event.object.spec as { replicas?: number } | undefined)?.replicas === replicas) {
            off();
            resolve(performance.now());
          }
        });
      });
    const applyPath = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/latency-probe`;
    const apply = (body: unknown) => admin.request('PATCH', applyPath, { body, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'bench', force: true } });
    await apply(probe(0));
    const serverLatencies: number[] = [];
    for (let i = 0; i < changes; i++) {
      const replicas = (i % 2) + 1;
      const seen = seenReplicas('latency-probe', replicas);
      const s = performance.now();
      await apply(probe(replicas));
      serverLatencies.push((await seen) - s);
    }
    serverLatencies.sort((a, b) => a - b);

    // spec change → child updated
    let specChangeMs: RunResult['specChangeMs'] = null;
    if (!floor) {
      const latencies: number[] = [];
      for (let i = 0; i < changes; i++) {
        const name = `mc-${i}`;
        const seen = seenReplicas(name, 2, crNamespaceOf(name));
        const s = performance.now();
        await admin.request('PATCH', `${crPathIn(crNamespaceOf(name))}/${name}`, { body: { spec: { replicas: 2 } }, contentType: 'application/merge-patch+json' });
        latencies.push((await seen) - s);
      }
      latencies.sort((a, b) => a - b);
      specChangeMs = { p50: Math.round(percentile(latencies, 50)), p99: Math.round(percentile(latencies, 99)), samples: latencies.length };
    }

    const settled = () => waitFor('every CR Ready at its generation and its Deployment rolled out', () =>
      measuredCrs().filter(isSettledCr).length >= count && deployments.list(watched).filter((d) => d.metadata?.name?.startsWith('mc-') && isRolledOut(d)).length >= count,
    30 * 60_000, 250);

    // hand-over: a shard killed, its buckets taken over (ours-3-shards only)
    let handover: HandoverFigures | null = null;
    if (HANDOVER && sharded) {
      await settled();
      // A shard renews its Lease every 2 s: quiet = no reconcile, queue add or busy worker for 3 s.
      for (const o of ops) await quietAfter(o, performance.now(), `${peer} quiet before the kill`, () => true, 10 * 60_000, undefined, false);
      handover = await measureHandover(count, ops, members, ring!, admin, deployments);
    }

    // relist after 410: last, once the spec changes have rolled out and the operator is still (one replica only)
    let relist: Pick<RunResult, 'relistSeconds' | 'relistWrites' | 'relistServerWrites' | 'relist'> = { relistSeconds: null, relistWrites: null, relistServerWrites: null, relist: null };
    if (RELIST && op && !multi && peer !== 'plain-node') {
      await settled();
      await quietAfter(op, performance.now(), `${peer} quiet before the restart`, () => true, 10 * 60_000);
      // The bench's own watches would relist too: stop them, so that only the operator and the control
      // plane's components work in the window.
      await Promise.all([deployments.stop(), crs.stop()]);
      relist = await measureRelist(peer, plane, op, admin, logPath);
    }

    const objects = 4 * count; // N CRs, N Deployments, N Services, N Pods (both operators cache the Pods for status.nodes)
    const startTotal = start ? total(start) : undefined;
    const startUpTotal = startUp ? total(startUp) : startTotal; // before the warm-up, when there is one
    const convergedTotal = converged ? total(converged) : undefined;
    const afterTotal = after ? total(after) : undefined;
    const shards: ShardFigures[] | null = multi
      ? members.map((member, i) => {
        const own = [...readyAt].filter(([name]) => replicaOf(name) === i);
        return {
          replica: member,
          buckets: sharded ? ring!.get(member)! : [],
          bucketsAtStart: sharded ? (ringAtStart ?? ring)!.get(member)! : [],
          crs: own.length,
          readySeconds: Number(Math.max(0, ...own.map(([, t]) => t)).toFixed(1)),
          rssStartBytes: (startUp ?? start)![i]!.rssBytes,
          peakRssBytes: sampler!.peaks[i]!,
          rssAfterBytes: after![i]!.rssBytes,
          cpuStartSeconds: Number((startUp ?? start)![i]!.cpuSeconds.toFixed(2)),
          cpuConvergeSeconds: Number((converged![i]!.cpuSeconds - start![i]!.cpuSeconds).toFixed(2)),
        };
      })
      : null;
    const result: RunResult = {
      peer,
      rep,
      crs: count,
      warmUpCrs,
      readySeconds: Number(readySeconds.toFixed(1)),
      operatorRequests: requestsAtReady && !startUp ? requestsAtReady.all : null,
      operatorRequestsConverging: requestsAtReady ? requestsAtReady.all - requestsAtStart.all : null,
      operatorRequestsByMethodAndCode: metricsAtReady ? countDelta(requestsByMethodAndCode(metricsAtStart), requestsByMethodAndCode(metricsAtReady)) : null,
      operatorWrites: requestsAtReady ? requestsAtReady.writes - requestsAtStart.writes : null,
      idleWrites: idleBefore && idleAfter ? idleAfter.writes - idleBefore.writes : null,
      idleServerWrites,
      rssStartBytes: startUpTotal?.rssBytes ?? null,
      peakRssBytes: sampler ? sampler.peak : null,
      rssAfterBytes: afterTotal?.rssBytes ?? null,
      rssGrowthPer1000ObjectsBytes: startTotal && afterTotal ? Math.round((afterTotal.rssBytes - startTotal.rssBytes) / (objects / 1000)) : null,
      cpuStartSeconds: startUpTotal ? Number(startUpTotal.cpuSeconds.toFixed(2)) : null,
      cpuConvergeSeconds: startTotal && convergedTotal ? Number((convergedTotal.cpuSeconds - startTotal.cpuSeconds).toFixed(2)) : null,
      controlPlaneCpuSeconds,
      specChangeMs,
      reconciles: metricsAtReady ? reconcilesBetween(metricsAtStart, metricsAtReady) : null,
      serverApplyMs: { p50: Math.round(percentile(serverLatencies, 50)), p99: Math.round(percentile(serverLatencies, 99)), samples: serverLatencies.length },
      ...relist,
      shards,
      handover,
      profiles: null,
      watchEvents,
      gc,
      renders,
      apiServer,
    };
    if (profiled.length > 0) {
      // V8 writes a CPU profile when the process exits: stop them now (SIGTERM, a graceful stop).
      for (const o of ops) await o.stop();
      result.profiles = await Promise.all(profiled.map(({ replica, dir: profileDir }, i) =>
        runProfile(replica, profileDir, ops[i]!.exitOf(), runStartedAt, t0Mono, convergedMono[i] ?? readyMono)));
    }
    failed = false;
    return result;
  } finally {
    sampler?.stop();
    for (const o of ops) await o.stop();
    await deployments.stop();
    await crs.stop();
    await webhooks?.close();
    admin.close();
    await plane.stop();
    if (failed) process.stderr.write(`[bench:peers]   ${peer} failed; its logs stay in ${dir}\n`);
    else if (KEEP_LOGS) process.stderr.write(`[bench:peers]   ${peer}'s logs stay in ${dir} (--keep-logs)\n`);
    else await rm(dir, { recursive: true, force: true });
  }
}

// ---- summary ----

/** A multi-replica peer's largest replica (by CPU converging) against the one-replica peer it divides, per run. */
interface Division {
  peer: Peer;
  rep: number;
  replica: string;
  crs: number;
  cpuConvergeSeconds: number;
  dividedPeer: Peer;
  /** The one-replica peer's median CPU converging at the same N in this run. */
  dividedCpuConvergeSeconds: number;
  /** cpuConvergeSeconds / dividedCpuConvergeSeconds: the per-shard CPU goal's ratio (≤ 0.4). */
  ratio: number;
  /** Its CRs / N: the ratio if a replica's CPU were its share of the one replica's. */
  share: number;
  /** ratio / share: what a CR costs this replica against the one replica (1 = the division costs nothing). */
  overShare: number;
  /** All replicas' CPU converging together / the one replica's. */
  allReplicasRatio: number;
  /**
   * cpuConvergeSeconds / the one-replica peer's own in the same repetition (run next to it, minutes
   * apart; null when that run is missing): the same ratio with less of the host's drift in it.
   */
  sameRepRatio: number | null;
  /**
   * The work that is the same in both runs, its CPU in this run / in the one-replica run of the same
   * repetition: kube-controller-manager plus kube-scheduler (the same Deployments, ReplicaSets and Pods
   * to handle whatever runs the operator). Above 1, the host made the same work cost more CPU in this run
   * (a longer window on the saturated cores, more contention); null when that run is missing.
   */
  sameWorkRatio: number | null;
}

function divisionOf(runs: RunResult[], medians: Record<string, Partial<Record<Figure, number>>>): Division[] {
  const out: Division[] = [];
  for (const r of runs) {
    const divided = dividedPeer(r.peer);
    const one = divided ? medians[divided]?.cpuConvergeSeconds : undefined;
    if (!r.shards || !divided || !one) continue;
    const largest = r.shards.reduce((a, b) => (b.cpuConvergeSeconds > a.cpuConvergeSeconds ? b : a));
    const ratio = largest.cpuConvergeSeconds / one;
    const share = largest.crs / r.crs;
    const round = (v: number) => Number(v.toFixed(3));
    const pair = runs.find((x) => x.peer === divided && x.rep === r.rep && x.crs === r.crs);
    const sameWork = (x: RunResult) => (x.controlPlaneCpuSeconds['kube-controller-manager'] ?? Number.NaN) + (x.controlPlaneCpuSeconds['kube-scheduler'] ?? Number.NaN);
    const pairedWork = pair ? sameWork(r) / sameWork(pair) : Number.NaN;
    out.push({
      peer: r.peer, rep: r.rep, replica: largest.replica, crs: largest.crs, cpuConvergeSeconds: largest.cpuConvergeSeconds,
      dividedPeer: divided, dividedCpuConvergeSeconds: round(one), ratio: round(ratio), share: round(share), overShare: round(ratio / share),
      allReplicasRatio: round(r.shards.reduce((a, x) => a + x.cpuConvergeSeconds, 0) / one),
      sameRepRatio: pair?.cpuConvergeSeconds ? round(largest.cpuConvergeSeconds / pair.cpuConvergeSeconds) : null,
      sameWorkRatio: Number.isFinite(pairedWork) ? round(pairedWork) : null,
    });
  }
  return out;
}

type Figure =
  | Exclude<keyof RunResult, 'peer' | 'rep' | 'crs' | 'specChangeMs' | 'serverApplyMs' | 'reconciles' | 'relist' | 'controlPlaneCpuSeconds' | 'shards' | 'handover' | 'profiles' | 'watchEvents' | 'gc' | 'renders' | 'apiServer' | 'operatorRequestsByMethodAndCode'>
  | 'specChangeP50Ms' | 'specChangeP99Ms' | 'serverApplyP50Ms' | 'serverApplyP99Ms' | 'apiServerCpuSeconds' | 'controlPlaneCpuTotalSeconds'
  | 'coresBusy' | 'maxReplicaReadySeconds' | 'maxReplicaCpuConvergeSeconds' | 'maxReplicaPeakRssBytes' | 'maxReplicaRssGrowthBytes' | 'maxReplicaWatchEvents'
  | 'handoverSeconds' | 'handoverSurvivorsSeconds' | 'handoverDoubleWriters' | 'handoverHoldViolations';

/** Per replica (a one-replica peer: the peer itself), the largest of `ours-3-shards`' replicas. */
function maxReplica(r: RunResult, f: (s: ShardFigures) => number, single: number | null): number | null {
  return r.shards ? Math.max(...r.shards.map(f)) : single;
}

function figureOf(r: RunResult, f: Figure): number | null {
  switch (f) {
    case 'specChangeP50Ms': return r.specChangeMs?.p50 ?? null;
    case 'specChangeP99Ms': return r.specChangeMs?.p99 ?? null;
    case 'serverApplyP50Ms': return r.serverApplyMs.p50;
    case 'serverApplyP99Ms': return r.serverApplyMs.p99;
    case 'apiServerCpuSeconds': return r.controlPlaneCpuSeconds?.['kube-apiserver'] ?? null;
    case 'controlPlaneCpuTotalSeconds': return r.controlPlaneCpuSeconds?.total ?? null;
    case 'coresBusy': return r.readySeconds > 0 ? Number((((r.cpuConvergeSeconds ?? 0) + (r.controlPlaneCpuSeconds?.total ?? 0)) / r.readySeconds).toFixed(2)) : null;
    case 'maxReplicaReadySeconds': return maxReplica(r, (s) => s.readySeconds, r.cpuConvergeSeconds === null ? null : r.readySeconds);
    case 'maxReplicaCpuConvergeSeconds': return maxReplica(r, (s) => s.cpuConvergeSeconds, r.cpuConvergeSeconds);
    case 'maxReplicaPeakRssBytes': return maxReplica(r, (s) => s.peakRssBytes, r.peakRssBytes);
    case 'maxReplicaWatchEvents': return r.watchEvents && r.watchEvents.length > 0 ? Math.max(...r.watchEvents.map((w) => w.total)) : null;
    case 'maxReplicaRssGrowthBytes': return maxReplica(r, (s) => s.peakRssBytes - s.rssStartBytes, r.peakRssBytes !== null && r.rssStartBytes !== null ? r.peakRssBytes - r.rssStartBytes : null);
    case 'handoverSeconds': return r.handover?.handoverSeconds ?? null;
    case 'handoverSurvivorsSeconds': return r.handover?.survivorsSeconds ?? null;
    case 'handoverDoubleWriters': return r.handover?.doubleWriters ?? null;
    case 'handoverHoldViolations': return r.handover?.holdViolations ?? null;
    default: return r[f];
  }
}

const FIGURES: { key: Figure; label: string; format: (v: number) => string }[] = [
  { key: 'readySeconds', label: 'all N CRs Ready (s)', format: (v) => v.toFixed(1) },
  { key: 'operatorRequests', label: 'requests sent by the operator (start → Ready)', format: (v) => String(Math.round(v)) },
  { key: 'operatorRequestsConverging', label: 'requests while converging (first CR → Ready)', format: (v) => String(Math.round(v)) },
  { key: 'operatorWrites', label: 'writes while converging', format: (v) => String(Math.round(v)) },
  { key: 'idleWrites', label: `writes in a ${IDLE_SECONDS} s idle window`, format: (v) => String(Math.round(v)) },
  { key: 'idleServerWrites', label: '… API server\'s count (all clients)', format: (v) => String(Math.round(v)) },
  { key: 'rssStartBytes', label: 'RSS at start (MB)', format: (v) => (v / 1e6).toFixed(0) },
  { key: 'peakRssBytes', label: 'peak RSS (MB)', format: (v) => (v / 1e6).toFixed(0) },
  { key: 'rssGrowthPer1000ObjectsBytes', label: 'RSS growth per 1000 cached objects (MB)', format: (v) => (v / 1e6).toFixed(1) },
  { key: 'cpuStartSeconds', label: 'CPU at start-up (s)', format: (v) => v.toFixed(2) },
  { key: 'cpuConvergeSeconds', label: 'CPU converging (s)', format: (v) => v.toFixed(1) },
  { key: 'apiServerCpuSeconds', label: '… kube-apiserver\'s CPU meanwhile (s)', format: (v) => v.toFixed(1) },
  { key: 'controlPlaneCpuTotalSeconds', label: '… whole control plane\'s CPU meanwhile (s)', format: (v) => v.toFixed(1) },
  { key: 'coresBusy', label: `… cores busy, operator + control plane (of ${cpus().length})`, format: (v) => v.toFixed(2) },
  { key: 'maxReplicaReadySeconds', label: 'per replica: its CRs Ready, largest (s)', format: (v) => v.toFixed(1) },
  { key: 'maxReplicaCpuConvergeSeconds', label: 'per replica: CPU converging, largest (s)', format: (v) => v.toFixed(1) },
  { key: 'maxReplicaPeakRssBytes', label: 'per replica: peak RSS, largest (MB)', format: (v) => (v / 1e6).toFixed(0) },
  { key: 'maxReplicaRssGrowthBytes', label: 'per replica: peak RSS − RSS at start, largest (MB)', format: (v) => (v / 1e6).toFixed(0) },
  { key: 'maxReplicaWatchEvents', label: 'per replica: watch events while converging, largest', format: (v) => String(Math.round(v)) },
  { key: 'specChangeP50Ms', label: 'spec change → child, p50 (ms)', format: (v) => String(Math.round(v)) },
  { key: 'specChangeP99Ms', label: 'spec change → child, p99 (ms)', format: (v) => String(Math.round(v)) },
  { key: 'serverApplyP50Ms', label: 'server apply → watch, p50 (ms)', format: (v) => String(Math.round(v)) },
  { key: 'serverApplyP99Ms', label: 'server apply → watch, p99 (ms)', format: (v) => String(Math.round(v)) },
  ...(RELIST
    ? [
      { key: 'relistSeconds', label: 'relist after 410 → quiet (s)', format: (v: number) => v.toFixed(1) },
      { key: 'relistWrites', label: 'writes from the restart to quiet', format: (v: number) => String(Math.round(v)) },
      { key: 'relistServerWrites', label: '… API server\'s count (all clients)', format: (v: number) => String(Math.round(v)) },
    ] as const
    : []),
  ...(HANDOVER
    ? [
      { key: 'handoverSeconds', label: `kill -9 a shard → its CRs' spec change applied (s; Lease ${SHARD_LEASE_SECONDS} s)`, format: (v: number) => v.toFixed(1) },
      { key: 'handoverSurvivorsSeconds', label: '… the survivors\' own CRs meanwhile (s)', format: (v: number) => v.toFixed(1) },
      { key: 'handoverDoubleWriters', label: 'objects written by two replicas after the kill', format: (v: number) => String(Math.round(v)) },
      { key: 'handoverHoldViolations', label: 'bucket holds overlapping / writes outside a hold', format: (v: number) => String(Math.round(v)) },
    ] as const
    : []),
];

function summarize(results: RunResult[]): Record<string, Record<string, number | null>> {
  const medians: Record<string, Record<string, number | null>> = {};
  for (const peer of PEERS) {
    const runs = results.filter((r) => r.peer === peer);
    medians[peer] = {};
    for (const { key } of FIGURES) {
      const values = runs.map((r) => figureOf(r, key)).filter((v): v is number => v !== null && !Number.isNaN(v));
      medians[peer]![key] = values.length ? median(values) : null;
    }
  }
  return medians;
}

function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a == null || b == null || b === 0 ? null : Number((a / b).toFixed(2));
}

/** Medians per peer at one N. */
type Medians = Record<string, Record<string, number | null>>;

/**
 * One table: per N (side by side, smallest first), a column per peer and then the ratios; with
 * several N, each column's header names its N (`ours N=1000`).
 */
function table(byCrs: readonly { crs: number; medians: Medians }[]): string {
  const ratios = PEERS.includes('ours') && PEERS.includes('controller-runtime');
  const floorPeer = PEERS.includes('floor-16') ? 'floor-16' : PEERS.find((p) => p.startsWith('floor'));
  const shardRatios = PEERS.includes('ours-3-shards');
  const shardRefs = shardRatios ? ['controller-runtime', 'ours'].filter((p) => PEERS.includes(p)) : [];
  const plain = PEERS.includes('plain-node') && PEERS.includes('ours');
  const plainOverCr = PEERS.includes('plain-node') && PEERS.includes('controller-runtime');
  const columnsAt = (suffix: string) => [...PEERS, ...(ratios ? ['ours/cr'] : []), ...(plain ? ['ours/plain-node'] : []), ...(plainOverCr ? ['plain-node/cr'] : []),
    ...(floorPeer && PEERS.includes('ours') ? [`ours/${floorPeer}`] : []),
    ...shardRefs.map((p) => `3-shards/${p === 'controller-runtime' ? 'cr' : p}`)].map((c) => c + suffix);
  const header = ['figure (median)', ...byCrs.flatMap(({ crs }) => columnsAt(byCrs.length > 1 ? ` N=${crs}` : ''))];
  const rows = FIGURES.map(({ key, label, format }) => {
    const cellsAt = (medians: Medians) => {
      const cells = PEERS.map((p) => {
        const v = medians[p]?.[key];
        return v == null ? '–' : format(v);
      });
      if (ratios) cells.push(String(ratio(medians.ours?.[key], medians['controller-runtime']?.[key]) ?? '–'));
      if (plain) cells.push(String(ratio(medians.ours?.[key], medians['plain-node']?.[key]) ?? '–'));
      if (plainOverCr) cells.push(String(ratio(medians['plain-node']?.[key], medians['controller-runtime']?.[key]) ?? '–'));
      if (floorPeer && PEERS.includes('ours')) cells.push(String(ratio(medians.ours?.[key], medians[floorPeer]?.[key]) ?? '–'));
      for (const p of shardRefs) cells.push(String(ratio(medians['ours-3-shards']?.[key], medians[p]?.[key]) ?? '–'));
      return cells;
    };
    return [byCrs.length === 1 ? label.replace('all N CRs', `all ${byCrs[0]!.crs} CRs`) : label, ...byCrs.flatMap(({ medians }) => cellsAt(medians))];
  });
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i === 0 ? ':' : '') + '-'.repeat(w + 1) + (i === 0 ? '' : ':')).join('|')}|`, ...rows.map(line)].join('\n');
}

// ---- scale (the issue's targets) ----

/** The issue's scale targets: N CRs within 1.1 × (N / baseline N) of the baseline's time (5.5× for 5000 over 1000), RSS, relist. */
const TARGETS = { readyRatioPerCrsRatio: 1.1, peakRssBytes: 2 ** 30, relistSeconds: 10, relistWrites: 0 };

interface Baseline {
  file: string;
  crs: number;
  readySeconds: Record<string, number | null>;
}

/** An earlier report's (`--out`) medians at one N: a one-N report's, or a several-N report's smallest N's. */
async function readBaseline(file: string): Promise<Baseline> {
  type AtCrs = { crs?: number; medians?: Record<string, { readySeconds?: number | null }> };
  const report = JSON.parse(await readFile(file, 'utf8')) as AtCrs & { perCrs?: AtCrs[] };
  const at = report.perCrs?.[0] ?? report;
  if (!Number.isInteger(at.crs) || !at.medians) throw new Error(`--linear-baseline ${file}: not a bench:peers report (no crs or medians)`);
  return baselineOf(file, at.crs!, at.medians as Medians);
}

function baselineOf(file: string, crs: number, medians: Medians): Baseline {
  return { file, crs, readySeconds: Object.fromEntries(Object.entries(medians).map(([peer, m]) => [peer, m.readySeconds ?? null])) };
}

type Scale = ReturnType<typeof scaleOf>;

/** Per operator peer: the figures the issue's "Scale" section asks for, and whether each meets its target (null: not measured). */
function scaleOf(peer: string, N: number, medians: Record<string, number | null>, baseline: Baseline | undefined) {
  const baseReady = baseline?.readySeconds[peer] ?? null;
  const readyRatio = ratio(medians.readySeconds, baseReady);
  const linearLimit = baseline && baseReady != null ? Number((TARGETS.readyRatioPerCrsRatio * (N / baseline.crs)).toFixed(2)) : null;
  const within = (v: number | null | undefined, limit: number | null, strict = false) => (v == null || limit == null ? null : strict ? v < limit : v <= limit);
  return {
    peer,
    crs: N,
    cachedObjects: 4 * N,
    readySeconds: medians.readySeconds ?? null,
    baseline: baseline && baseReady != null ? { file: baseline.file, crs: baseline.crs, readySeconds: baseReady } : null,
    readyRatio,
    linearLimit,
    peakRssBytes: medians.peakRssBytes ?? null,
    relistSeconds: medians.relistSeconds ?? null,
    relistWrites: medians.relistWrites ?? null,
    relistServerWrites: medians.relistServerWrites ?? null,
    meets: {
      linear: within(readyRatio, linearLimit),
      peakRssUnder1GiB: within(medians.peakRssBytes, TARGETS.peakRssBytes, true),
      relistUnder10s: within(medians.relistSeconds, TARGETS.relistSeconds, true),
      relistWritesNothing: within(medians.relistWrites, TARGETS.relistWrites),
    },
  };
}

function scaleLines(scale: Scale[]): string {
  const mark = (ok: boolean | null) => (ok === null ? '' : ok ? ' (ok)' : ' (MISSED)');
  const lines = scale.map((s) => {
    const parts = [`${s.peer}: ${s.crs} CRs Ready in ${s.readySeconds?.toFixed(1) ?? '–'} s`];
    if (s.baseline) parts[0] += `, ${s.readyRatio ?? '–'}× ${s.baseline.crs} CRs' ${s.baseline.readySeconds.toFixed(1)} s (limit ${s.linearLimit}×)${mark(s.meets.linear)}`;
    parts.push(`peak RSS ${s.peakRssBytes == null ? '–' : (s.peakRssBytes / 2 ** 20).toFixed(0)} MiB${mark(s.meets.peakRssUnder1GiB)}`);
    if (RELIST) parts.push(`relist ${s.relistSeconds ?? '–'} s${mark(s.meets.relistUnder10s)}, ${s.relistWrites ?? '–'} writes${mark(s.meets.relistWritesNothing)}`);
    return `- ${parts.join('; ')}`;
  });
  return [`scale (issue: N = 5000 within 5.5× of N = 1000, peak RSS < 1 GiB, relist after 410 < 10 s and no writes):`, ...lines].join('\n');
}

/** The issue's goals (bench/shard-records.ts) on the medians; null figures where a peer did not run. */
function goals(medians: Record<string, Record<string, number | null>>): Goal[] {
  const m = (p: string) => medians[p];
  return goalsOf({
    ours: m('ours') && {
      readySeconds: m('ours')!.readySeconds ?? null,
      cpuConvergeSeconds: m('ours')!.cpuConvergeSeconds ?? null,
      peakRssBytes: m('ours')!.peakRssBytes ?? null,
      operatorRequests: m('ours')!.operatorRequests ?? null,
      operatorRequestsConverging: m('ours')!.operatorRequestsConverging ?? null,
      rssGrowthPer1000ObjectsBytes: m('ours')!.rssGrowthPer1000ObjectsBytes ?? null,
      watchEvents: m('ours')!.maxReplicaWatchEvents ?? null,
      idleWrites: m('ours')!.idleWrites ?? null,
    },
    shards: m('ours-3-shards') && {
      readySeconds: m('ours-3-shards')!.readySeconds ?? null,
      cpuConvergeSeconds: m('ours-3-shards')!.cpuConvergeSeconds ?? null,
      maxReplicaCpuConvergeSeconds: m('ours-3-shards')!.maxReplicaCpuConvergeSeconds ?? null,
      maxReplicaPeakRssBytes: m('ours-3-shards')!.maxReplicaPeakRssBytes ?? null,
      maxReplicaWatchEvents: m('ours-3-shards')!.maxReplicaWatchEvents ?? null,
    },
    controllerRuntime: m('controller-runtime') && {
      readySeconds: m('controller-runtime')!.readySeconds ?? null,
      cpuConvergeSeconds: m('controller-runtime')!.cpuConvergeSeconds ?? null,
      operatorRequests: m('controller-runtime')!.operatorRequests ?? null,
      operatorRequestsConverging: m('controller-runtime')!.operatorRequestsConverging ?? null,
      rssGrowthPer1000ObjectsBytes: m('controller-runtime')!.rssGrowthPer1000ObjectsBytes ?? null,
    },
  });
}

/** Per peer at one N (first repetition): `ours`, `ours-3-shards` (its replicas summed) and `ours-3-shards largest` (its busiest replica). */
type Profiles = Record<string, (ProfileSummary & { replicas: string[]; without: string[] }) | null>;

function profilesOf(runs: readonly RunResult[]): Profiles {
  const out: Profiles = {};
  for (const peer of ['ours', 'ours-3-shards']) {
    const run = runs.filter((r) => r.peer === peer && r.profiles).sort((a, b) => a.rep - b.rep)[0];
    if (!run) continue;
    const got = run.profiles!.filter((p) => p.summary);
    // e.g. the replica killed by --handover: no profile
    const without = run.profiles!.filter((p) => !p.summary).map((p) => `${p.replica} (${p.exit})`);
    if (got.length === 0) {
      out[peer] = null;
      continue;
    }
    out[peer] = { ...mergeSummaries(got.map((p) => p.summary!)), replicas: got.map((p) => p.replica), without };
    if (peer === 'ours-3-shards') {
      const busiest = got.reduce((a, b) => (b.summary!.busySeconds > a.summary!.busySeconds ? b : a));
      out['ours-3-shards largest'] = { ...busiest.summary!, replicas: [busiest.replica], without };
    }
  }
  return out;
}

/** `  why: …`: the top categories and functions by self time of a peer's CPU profile over its converging window. */
function whyLines(summary: ProfileSummary & { replicas: string[]; without: string[] }, what: string, controlPlaneCpu: number | null | undefined, memory: boolean): string[] {
  const categories = summary.rows.filter((r) => r.category !== 'idle').slice(0, 6).map((r) => `${r.category} ${r.percentOfBusy} % (${r.seconds} s)`);
  const functions = summary.functions.slice(0, 6).map((f) => `${f.function} ${f.seconds} s`);
  return [
    `  why (the CPU profile of ${what} while converging${summary.replicas.length > 1 ? `, ${summary.replicas.join(' + ')}` : ''}: ${summary.busySeconds} s busy; the control plane ${controlPlaneCpu?.toFixed(1) ?? '–'} s CPU meanwhile):`,
    `    categories: ${categories.join('; ')}`,
    `    functions (self): ${functions.join('; ')}`,
    ...(summary.without.length ? [`    (no profile of ${summary.without.join(', ')}: a process killed with SIGKILL writes none)`] : []),
    ...(memory ? ['    (a CPU profile: where the heap goes is bench/heap-summary.ts on a --heap-snapshot-dir snapshot)'] : []),
  ];
}

/** For the per-shard CPU goal: the busiest shard's watch events against one replica's (first repetitions). */
function watchEventLinesOf(runs: readonly RunResult[]): string[] {
  const first = (peer: Peer) => runs.filter((r) => r.peer === peer && r.watchEvents).sort((a, b) => a.rep - b.rep)[0];
  const one = first('ours')?.watchEvents?.[0];
  const sharded = first('ours-3-shards');
  if (!one || !sharded?.shards) return [];
  const busiest = sharded.shards.reduce((a, b) => (b.cpuConvergeSeconds > a.cpuConvergeSeconds ? b : a));
  const theirs = sharded.watchEvents!.find((w) => w.replica === busiest.replica);
  return theirs ? watchEventLines(one, theirs, `${busiest.crs} of ${sharded.crs} CRs`) : [];
}

/**
 * The goals, met or missed (a missed one with the top of its peer's CPU profile, with `--profile`),
 * and under them where the machine's cores cap the figures: a peer whose operator and control plane
 * kept at least 80 % of the cores busy from the first CR to all Ready is bound by the machine there
 * (its time follows the CPU used), printed with the control plane's CPU.
 */
function goalLines(crs: number, list: Goal[], medians: Medians, profiles: Profiles, cores: number, load: string, runs: readonly RunResult[]): string {
  const lines: string[] = [];
  for (const g of list) {
    lines.push(`- ${g.goal} ≤ ${g.limit}: ${g.value ?? '–'}${g.met === null ? ' (not measured: a peer did not run)' : g.met ? ' (met)' : ' (MISSED)'}`);
    if (g.met !== false) continue;
    if (g.goal.startsWith('CPU converging per shard') || g.goal.startsWith('watch events per shard')) lines.push(...watchEventLinesOf(runs));
    const key = g.peer === 'ours-3-shards' && g.goal.includes('per shard') ? 'ours-3-shards largest' : g.peer;
    const summary = profiles[key];
    if (summary) lines.push(...whyLines(summary, key === 'ours-3-shards largest' ? `${g.peer}'s busiest profiled replica, ${summary.replicas[0]}` : g.peer, medians[g.peer]?.controlPlaneCpuTotalSeconds, g.goal.includes('RSS')));
    else lines.push(PROFILE_DIR ? `  (no CPU profile of ${g.peer})` : '  (run with --profile DIR for the CPU profile that says why)');
  }
  for (const peer of PEERS.filter((p) => !p.startsWith('floor'))) {
    const busy = medians[peer]?.coresBusy;
    if (busy == null) continue;
    const capped = busy >= 0.8 * cores;
    lines.push(`- ${peer}: ${busy.toFixed(2)} of ${cores} cores busy while converging (operator ${medians[peer]!.cpuConvergeSeconds?.toFixed(1)} s CPU, control plane ${medians[peer]!.controlPlaneCpuTotalSeconds?.toFixed(1)} s, in ${medians[peer]!.readySeconds?.toFixed(1)} s)${capped ? ': capped by the machine\'s cores' : ''}`);
  }
  const load1 = Number(load.split(' ')[0]);
  if (load1 >= cores) lines.push(`- the machine is loaded by other work too (load average ${load} on ${cores} cores at the end): wall-clock figures (Ready, hand-over) are stretched by it; CPU seconds and memory are not`);
  return [`goals at N = ${crs} (issue 33):`, ...lines].join('\n');
}

async function main(): Promise<void> {
  for (const p of PEERS) if (!(ALL_PEERS as readonly string[]).includes(p)) throw new Error(`unknown peer ${p} (known: ${ALL_PEERS.join(', ')})`);
  if (CRS_LIST.length === 0 || CRS_LIST.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`--crs ${options.crs}: expected positive integers separated by commas (e.g. 1000,5000)`);
  // build before timing anything
  if (PEERS.some((p) => p.startsWith('controller-runtime'))) goPeerBinary();
  if (HANDOVER && !PEERS.includes('ours-3-shards')) throw new Error('--handover needs the peer ours-3-shards in --peers');
  if (PEERS.some((p) => p === 'ours' || shardReplicas(p) > 0 || p === 'ours-3-namespaces')) await buildOurs();
  const baseline = LINEAR_BASELINE ? await readBaseline(LINEAR_BASELINE) : undefined;
  const operator = new MemcachedOperator(new App());
  const dir = await mkdtemp(join(tmpdir(), 'bench-peers-'));
  const crdFile = join(dir, 'crd.json');
  await writeFile(crdFile, JSON.stringify(operator.customResourceDefinition.toJson()));
  const started = new Date().toISOString();
  const results: RunResult[] = [];
  try {
    for (const count of CRS_LIST) {
      for (let rep = 1; rep <= REPS; rep++) {
        for (const peer of PEERS as Peer[]) {
          process.stderr.write(`[bench:peers] ${new Date().toISOString()} run ${peer} rep ${rep}/${REPS}, ${count} CRs\n`);
          const r = await oneRun(peer, rep, count, operator, crdFile);
          process.stderr.write(`[bench:peers]   ${JSON.stringify({ ...r, profiles: r.profiles?.map(({ summary: _s, ...p }) => p) ?? null })}\n`);
          if (OUT) await appendFile(`${OUT}.runs.jsonl`, JSON.stringify(r) + '\n'); // survives an interrupted run
          results.push(r);
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  const cores = cpus().length;
  // Without --linear-baseline, the smallest N of this run is the baseline of the larger ones.
  let inRunBaseline: Baseline | undefined;
  const perCrs = CRS_LIST.map((count) => {
    const runs = results.filter((r) => r.crs === count);
    const medians = summarize(runs);
    const base = baseline ?? inRunBaseline;
    const division = divisionOf(runs, medians);
    if (!baseline && !inRunBaseline) inRunBaseline = baselineOf('this run', count, medians);
    return {
      crs: count,
      medians,
      ratios: {
        oursOverControllerRuntime: Object.fromEntries(FIGURES.map(({ key }) => [key, ratio(medians.ours?.[key], medians['controller-runtime']?.[key])])),
        oursOverFloor16: Object.fromEntries(FIGURES.map(({ key }) => [key, ratio(medians.ours?.[key], medians['floor-16']?.[key])])),
      },
      scale: PEERS.filter((p) => !p.startsWith('floor')).map((p) => scaleOf(p, count, medians[p]!, base)),
      goals: goals(medians),
      division,
      profiles: PROFILE_DIR ? profilesOf(runs) : null,
    };
  });
  const handoverAt = HANDOVER ? 'every N' : null;
  const header = {
    started,
    finished: new Date().toISOString(),
    machine: { cpus: cores, node: process.version, loadAverageAtEnd: load },
    repetitions: REPS,
    peers: PEERS,
    handoverAt,
    profileDir: PROFILE_DIR || null,
    sharding: { buckets: SHARD_BUCKETS, webhook: SHARD_WEBHOOK },
  };
  // One N: the figures at the top level, as before; several: `crs` lists them and `perCrs` holds each.
  const report = perCrs.length === 1
    ? { ...header, ...perCrs[0]!, runs: results }
    : { ...header, crs: CRS_LIST, perCrs, runs: results };
  console.log(table(perCrs));
  console.log();
  for (const at of perCrs) {
    if (at.scale.length) {
      console.log(scaleLines(at.scale));
      console.log();
    }
  }
  for (const at of perCrs) {
    if (at.division.length) {
      console.log(`the division at N = ${at.crs}: each multi-replica peer's largest replica (CPU converging) against the one-replica peer of this run (median):`);
      for (const d of at.division) console.log(`- ${d.peer} rep ${d.rep} ${d.replica}: ${d.cpuConvergeSeconds} s of ${d.dividedPeer}'s ${d.dividedCpuConvergeSeconds} s = ${d.ratio} for ${d.crs} of ${at.crs} CRs (share ${d.share}); over its share ${d.overShare}; all replicas together ${d.allReplicasRatio}; against the same repetition ${d.sameRepRatio ?? '–'}, where the same control-plane work cost ${d.sameWorkRatio ?? '–'}×`);
      console.log();
    }
  }
  for (const at of perCrs) {
    console.log(goalLines(at.crs, at.goals, at.medians, at.profiles ?? {}, cores, load, results.filter((r) => r.crs === at.crs)));
    console.log();
  }
  console.log(`load average at the end: ${load}`);
  const withEvents = results.filter((r) => r.watchEvents !== null);
  if (withEvents.length > 0) {
    console.log('watch events received while converging (cdk8s_operator_watch_events_total), per replica and resource:');
    for (const r of withEvents) {
      for (const w of r.watchEvents!) console.log(`- ${r.peer} N = ${r.crs} rep ${r.rep} ${w.replica}: ${w.total} (${Object.entries(w.byResource).map(([k, v]) => `${k} ${v}`).join(', ')})`);
    }
    console.log('garbage collection while converging (nodejs_gc_duration_seconds), per replica and kind: seconds (count):');
    for (const r of results.filter((x) => x.gc)) {
      for (const g of r.gc!) console.log(`- ${r.peer} N = ${r.crs} rep ${r.rep} ${g.replica}: ${Object.keys(g.secondsByKind).map((k) => `${k} ${g.secondsByKind[k]} s (${g.countByKind[k] ?? 0})`).join(', ')}`);
    }
  }
  if (HANDOVER) console.log(`hand-over (--handover): measured at every N (${CRS_LIST.join(', ')}), after that N's spec changes`);
  for (const r of results.filter((x) => x.shards)) {
    console.log(`${r.peer} at N = ${r.crs}, rep ${r.rep}, per replica:`);
    for (const sh of r.shards!) console.log(`- ${sh.replica}: ${sh.buckets.length ? `${sh.buckets.length} buckets${sh.bucketsAtStart.join() === sh.buckets.join() ? '' : ` (${sh.bucketsAtStart.length} at the start)`}, ` : ''}${sh.crs} CRs, Ready ${sh.readySeconds} s, CPU converging ${sh.cpuConvergeSeconds} s, RSS ${(sh.rssStartBytes / 1e6).toFixed(0)} → peak ${(sh.peakRssBytes / 1e6).toFixed(0)} MB (after ${(sh.rssAfterBytes / 1e6).toFixed(0)} MB)`);
    console.log(`- in total: Ready ${r.readySeconds} s, CPU converging ${r.cpuConvergeSeconds} s, peak RSS ${((r.peakRssBytes ?? 0) / 1e6).toFixed(0)} MB (sum at one moment; sum of peaks ${(r.shards!.reduce((a, x) => a + x.peakRssBytes, 0) / 1e6).toFixed(0)} MB), control plane ${r.controlPlaneCpuSeconds.total} s CPU`);
    if (r.handover) {
      const h = r.handover;
      console.log(`hand-over: ${h.killed} (${h.killedBuckets.length} buckets, ${h.killedCrs} CRs) killed; its CRs' spec change applied ${h.handoverSeconds} s after the kill (Lease ${h.leaseSeconds} s; patches took ${h.patchSeconds} s), the survivors' own ${h.survivorsSeconds} s; ${h.killedCrsRewrittenBySurvivors}/${h.killedCrs} of its CRs rewritten by survivors; objects written by two replicas after the kill without a hand-over between: ${h.doubleWriters} (with one, a bucket moved between survivors: ${h.writerChanges}); overlapping holds / writes outside a hold: ${h.holdViolations}`);
    }
  }
  if (PROFILE_DIR) {
    console.log('CPU profiles (--profile), converging window:');
    for (const r of results.filter((x) => x.profiles)) {
      for (const p of r.profiles!) console.log(`- ${r.peer} N = ${r.crs} rep ${r.rep} ${p.replica}: ${p.file ? `${p.file}, ${p.convergingMs!.join('–')} ms, ${p.summary!.busySeconds} s busy, top: ${p.summary!.rows.filter((x) => x.category !== 'idle').slice(0, 3).map((x) => `${x.category} ${x.percentOfBusy} %`).join(', ')}` : `none (exit: ${p.exit || 'still running'})`}`);
    }
  }
  console.log();
  console.log(JSON.stringify(report, null, 2));
  if (OUT) await writeFile(OUT, JSON.stringify(report, null, 2) + '\n');
}

await main();
