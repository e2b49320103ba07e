/**
 * Breaks a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench:peers -- --profile DIR`) down
 * into where the time went, for bench/PROFILE.md and `bench:peers`' missed goals. Prints JSON.
 *
 * ```
 * npx tsx bench/profile-summary.ts FILE.cpuprofile [--from-ms 0] [--to-ms N] [--top 10]
 * ```
 *
 * Each sample is attributed to the first category found walking its stack from the leaf to the root
 * (so `JSON.parse` called by the watch stream counts as "JSON parse of API responses", a hash computed
 * while rendering as "hashing"). `--from-ms`/`--to-ms` limit the samples to a window after the
 * profile's start (without `--to-ms`, to its end). `functions` are the top `--top` functions by self
 * time (the leaf frame of each sample; idle, GC and `(program)` left out), each with its category.
 *
 * {@link summarizeProfile} is the same as a function (bench/peers.ts calls it on each operator's
 * profile over the converging window); {@link mergeSummaries} adds several up (the replicas of a
 * sharded peer).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchOptions } from './bench-options.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}

/** The JSON of a `.cpuprofile` (V8's `Profiler.Profile`; times in microseconds of the monotonic clock). */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Seconds per category within a window, the busy (non-idle) part, and the top functions by self time. */
export interface ProfileSummary {
  /** The file summarised (or the files, for a merged summary). */
  file: string;
  /** [from, to] in ms after the profile's start, `to` capped at its end. */
  windowMs: [number, number];
  busySeconds: number;
  rows: { category: string; seconds: number; percentOfBusy: number | null }[];
  functions: { function: string; category: string; seconds: number; percentOfBusy: number }[];
}

type Rule = readonly [category: string, test: (fn: string, url: string) => boolean];

/** Leaf-first rules: the first frame (from the leaf) that matches any rule decides. */
const RULES: readonly Rule[] = [
  ['idle', (fn) => fn === '(idle)'],
  ['garbage collection', (fn) => fn === '(garbage collector)'],
  ['hashing', (fn, url) => /createHash|digest|canonical/i.test(fn) || (url === '' && fn === 'update' )],
  ['JSON parse of API responses', (fn, url) => url === '' && fn === 'parse'],
  ['JSON stringify', (fn, url) => url === '' && fn === 'stringify'],
  ['logging (pino)', (_fn, url) => /node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact)\//.test(url) || /lib\/runtime\/logger|cli-logger/.test(url)],
  ['metrics (prom-client)', (_fn, url) => /node_modules\/prom-client\//.test(url) || /lib\/runtime\/(?:ops\/)?metrics/.test(url)],
  ['render (cdk8s, cdk8s-plus, constructs, operator render)', (_fn, url) => /node_modules\/(cdk8s|cdk8s-plus-\d+|constructs)\//.test(url) || /\/operators\/|lib\/operator\//.test(url)],
  ['validation (zod)', (_fn, url) => /node_modules\/zod\//.test(url)],
  ['diff (child-diff, quantities, field types)', (_fn, url) => /lib\/runtime\/(?:[\w-]+\/)?(child-diff|quantity|field-type|openapi-field-types|child-readiness)/.test(url)],
  ['watch and cache (watcher, informer)', (_fn, url) => /lib\/runtime\/(?:[\w-]+\/)?(watcher|informer|informer-factory)/.test(url)],
  ['workqueue, controller, reconcile bookkeeping', (_fn, url) => /lib\/runtime\/(?:[\w-]+\/)?(workqueue|controller|reconciler|manager|rate-limiter|backoff|conditions|status-writer|inventory|prune|apply|events)/.test(url)],
  ['HTTP client (api-client, credentials, node:http/tls/net)', (_fn, url) => /lib\/runtime\/(?:[\w-]+\/)?(api-client|client-credentials)/.test(url) || /^node:(https?|_http|tls|_tls|net|stream|internal\/(http|tls|net|streams|stream_base|js_stream))/.test(url) || /node:internal\/(http|tls|net|streams)/.test(url)],
  ['client-node (KubeConfig)', (_fn, url) => /@kubernetes\/client-node/.test(url)],
  ['module loading (loader, compile)', (_fn, url) => /node:internal\/modules|node_modules\/tsx\//.test(url)],
  ['other node internals', (_fn, url) => url.startsWith('node:')],
  ['other JavaScript', (_fn, url) => url !== ''],
  ['(program) and natives', () => true],
];

/** Frames left out of `functions`: not a function's own work. */
const NOT_A_FUNCTION = new Set(['(idle)', '(garbage collector)', '(program)', '(root)']);

/** `name (path:line)`, the path from the repository or package on (`node_modules/…`, `lib/…`). */
function functionLabel(frame: ProfileNode['callFrame']): string {
  const url = frame.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, 'node_modules/').replace(/^.*\/(bench\/\.out|lib|operators)\//, '$1/');
  const where = url ? ` (${url}${frame.lineNumber !== undefined ? `:${frame.lineNumber + 1}` : ''})` : '';
  return `${frame.functionName || '(anonymous)'}${where}`;
}

/**
 * Summarises `profile` over [fromMs, toMs] after its start (ms; default the whole profile): seconds per
 * category (leaf-first, see the module doc) and the `top` functions by self time.
 */
export function summarizeProfile(profile: CpuProfile, options: { file?: string; fromMs?: number; toMs?: number; top?: number } = {}): ProfileSummary {
  const fromUs = (options.fromMs ?? 0) * 1000;
  const toUs = (options.toMs ?? Infinity) * 1000;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const categoryOf = new Map<number, string>();
  const categorize = (id: number): string => {
    const cached = categoryOf.get(id);
    if (cached) return cached;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url } = byId.get(cur)!.callFrame;
      for (const [category, test] of RULES.slice(0, -1)) {
        if (category === 'other JavaScript' || category === 'other node internals') continue;
        if (test(functionName, url)) {
          categoryOf.set(id, category);
          return category;
        }
      }
    }
    // nothing specific on the stack: the leaf decides between node internals, other JS and natives
    const { functionName, url } = byId.get(id)!.callFrame;
    const fallback = RULES.find(([c, test]) => ['other node internals', 'other JavaScript', '(program) and natives'].includes(c) && test(functionName, url))![0];
    categoryOf.set(id, fallback);
    return fallback;
  };
  const totals = new Map<string, number>();
  const selfUs = new Map<string, { category: string; us: number }>();
  let t = 0;
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    const category = categorize(id);
    totals.set(category, (totals.get(category) ?? 0) + dt);
    if (category !== 'idle') busyUs += dt;
    const frame = byId.get(id)!.callFrame;
    if (!NOT_A_FUNCTION.has(frame.functionName)) {
      const label = functionLabel(frame);
      const entry = selfUs.get(label) ?? { category, us: 0 };
      entry.us += dt;
      selfUs.set(label, entry);
    }
  }
  return {
    file: options.file ?? '',
    windowMs: [fromUs / 1000, Math.min(toUs, profile.endTime - profile.startTime) / 1000],
    busySeconds: Number((busyUs / 1e6).toFixed(2)),
    rows: [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([category, us]) => ({
      category,
      seconds: Number((us / 1e6).toFixed(2)),
      percentOfBusy: category === 'idle' ? null : busyUs > 0 ? Number(((100 * us) / busyUs).toFixed(1)) : 0,
    })),
    functions: [...selfUs.entries()].sort((a, b) => b[1].us - a[1].us).slice(0, options.top ?? 10).map(([fn, { category, us }]) => ({
      function: fn,
      category,
      seconds: Number((us / 1e6).toFixed(2)),
      percentOfBusy: busyUs > 0 ? Number(((100 * us) / busyUs).toFixed(1)) : 0,
    })),
  };
}

/**
 * Several summaries added up (e.g. the replicas of a sharded peer): seconds per category and per
 * function summed, shares taken of the summed busy time; `functions` keeps the `top` largest of the
 * functions the summaries list (a function outside one summary's top counts 0 there).
 */
export function mergeSummaries(summaries: readonly ProfileSummary[], top = 10): ProfileSummary {
  const busy = summaries.reduce((a, s) => a + s.busySeconds, 0);
  const add = <T extends { seconds: number }>(key: (x: T) => string, lists: T[][]) => {
    const out = new Map<string, T & { seconds: number }>();
    for (const x of lists.flat()) {
      const k = key(x);
      const prev = out.get(k);
      out.set(k, prev ? { ...prev, seconds: prev.seconds + x.seconds } : { ...x });
    }
    return [...out.values()].sort((a, b) => b.seconds - a.seconds);
  };
  const share = (s: number) => (busy > 0 ? Number(((100 * s) / busy).toFixed(1)) : 0);
  return {
    file: summaries.map((s) => s.file).join(', '),
    windowMs: [Math.min(...summaries.map((s) => s.windowMs[0])), Math.max(...summaries.map((s) => s.windowMs[1]))],
    busySeconds: Number(busy.toFixed(2)),
    rows: add((r) => r.category, summaries.map((s) => s.rows)).map((r) => ({ ...r, seconds: Number(r.seconds.toFixed(2)), percentOfBusy: r.category === 'idle' ? null : share(r.seconds) })),
    functions: add((f) => f.function, summaries.map((s) => s.functions)).slice(0, top).map((f) => ({ ...f, seconds: Number(f.seconds.toFixed(2)), percentOfBusy: share(f.seconds) })),
  };
}

function main(): void {
  // --to-ms has no default: not given, the window runs to the profile's end.
  const { values, positionals, number } = benchOptions({ 'from-ms': { type: 'string', default: '0' }, 'to-ms': { type: 'string' }, top: { type: 'string', default: '10' } }, { allowPositionals: true });
  const [file] = positionals;
  if (!file) throw new Error('usage: profile-summary FILE.cpuprofile [--from-ms N] [--to-ms N] [--top N]');
  const limits = { fromMs: number('from-ms'), toMs: values['to-ms'] === undefined ? Infinity : number('to-ms'), top: number('top') };
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  console.log(JSON.stringify(summarizeProfile(profile, { file, ...limits }), null, 2));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
