/**
 * Breaks a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench:peers -- --ours-node-args
 * "--cpu-prof --cpu-prof-dir=DIR"`) down into where the time went, for bench/PROFILE.md. Prints JSON.
 *
 * ```
 * npx tsx bench/profile-summary.ts FILE.cpuprofile [--from-ms 0] [--to-ms Infinity]
 * ```
 *
 * Each sample is attributed to the first category found walking its stack from the leaf to the root
 * (so `JSON.parse` called by the watch stream counts as "JSON parse of API responses", a hash computed
 * while rendering as "hashing"). `--from-ms`/`--to-ms` limit the samples to a window after the start.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
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
  ['metrics (prom-client)', (_fn, url) => /node_modules\/prom-client\//.test(url) || /lib\/runtime\/metrics/.test(url)],
  ['render (cdk8s, cdk8s-plus, constructs, operator render)', (_fn, url) => /node_modules\/(cdk8s|cdk8s-plus-\d+|constructs)\//.test(url) || /\/operators\/|lib\/operator\//.test(url)],
  ['validation (zod)', (_fn, url) => /node_modules\/zod\//.test(url)],
  ['diff (child-diff, quantities, field types)', (_fn, url) => /lib\/runtime\/(child-diff|quantity|field-type|openapi-field-types|child-readiness)/.test(url)],
  ['watch and cache (watcher, informer)', (_fn, url) => /lib\/runtime\/(watcher|informer|informer-factory)/.test(url)],
  ['workqueue, controller, reconcile bookkeeping', (_fn, url) => /lib\/runtime\/(workqueue|controller|reconciler|manager|rate-limiter|backoff|conditions|status-writer|inventory|prune|apply|events)/.test(url)],
  ['HTTP client (api-client, credentials, node:http/tls/net)', (_fn, url) => /lib\/runtime\/(api-client|client-credentials)/.test(url) || /^node:(https?|_http|tls|_tls|net|stream|internal\/(http|tls|net|streams|stream_base|js_stream))/.test(url) || /node:internal\/(http|tls|net|streams)/.test(url)],
  ['client-node (KubeConfig)', (_fn, url) => /@kubernetes\/client-node/.test(url)],
  ['module loading (loader, compile)', (_fn, url) => /node:internal\/modules|node_modules\/tsx\//.test(url)],
  ['other node internals', (_fn, url) => url.startsWith('node:')],
  ['other JavaScript', (_fn, url) => url !== ''],
  ['(program) and natives', () => true],
];

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: profile-summary FILE.cpuprofile [--from-ms N] [--to-ms N]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const fromUs = flag('from-ms', 0) * 1000;
  const toUs = flag('to-ms', Infinity) * 1000;
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
  let t = 0;
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const category = categorize(profile.samples[i]!);
    totals.set(category, (totals.get(category) ?? 0) + dt);
    if (category !== 'idle') busyUs += dt;
  }
  const rows = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([category, us]) => ({
    category,
    seconds: Number((us / 1e6).toFixed(2)),
    percentOfBusy: category === 'idle' ? null : Number(((100 * us) / busyUs).toFixed(1)),
  }));
  console.log(JSON.stringify({ file, windowMs: [fromUs / 1000, Math.min(toUs, profile.endTime - profile.startTime) / 1000], busySeconds: Number((busyUs / 1e6).toFixed(2)), rows }, null, 2));
}

main();
