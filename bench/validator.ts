/**
 * Benchmark (not a test) of the built-in kinds' validator (lib/validator, issue 23): what it adds to the
 * package, and what it costs a process. Prints one table and a JSON line of medians.
 *
 * ```
 * npm run bench:validator -- [--reps 5] [--children 600]
 * ```
 *
 * Each repetition is a fresh node process (this file with `--child`), which renders the example
 * operators' samples (validation off) to get real children, then measures:
 * - `loadMs`: the first validateBuiltInObjects call of the process minus what a call costs once loaded
 *   (compile, instantiate and initialise the WebAssembly module);
 * - `rssAddedMB`: the process's resident set after loading minus before;
 * - `perChildMs`: one call of `--children` children (the samples' children repeated), per child;
 * - `snapshotSuiteAddedMs`: 50 calls of one sample's children each (a suite of 50 renderForSnapshot
 *   tests in one jest worker), plus the load: what validation adds to such a suite;
 * - `renderOneAddedMs`: the load plus one call of one CR's children (`cdk8s-operator render` of one CR).
 * The package figures: the file's size, and gzip's (what `npm pack` adds to the tarball).
 *
 * Where the load goes (`loadBreakdownMs`, medians of the same number of fresh processes, which do the
 * loader's steps of lib/validator/validator-instance.ts one by one, with its V8 flags): `read` the file,
 * `compile` (`new WebAssembly.Module`: decoding its sections; function bodies are validated and compiled
 * lazily, on their first call), `instantiate`, `goInit` (`_initialize`: the Go runtime and every package's
 * `init`, compiling each function it runs on the way) and `firstCall` (one Service validated).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { App } from 'cdk8s';
import type { Manifest } from '../lib/operator/render/render-children.js';
import { renderForSnapshot } from '../lib/testing/render-snapshot.js';
import { validateBuiltInObjects } from '../lib/validator/validate-built-in-objects.js';
import { VALIDATOR_V8_FLAGS } from '../lib/validator/validator-instance.js';
import { locateValidatorWasm } from '../lib/validator/validator-wasm-file.js';
import { addOperators } from '../operators/index.js';
import { benchOptions } from './bench-options.js';

const args = process.argv.slice(2);
// --child (given the options of this run) and --breakdown: the fresh processes main() starts.
const { values, number } = benchOptions({
  reps: { type: 'string', default: '5' },
  children: { type: 'string', default: '600' },
  child: { type: 'boolean', default: false },
  breakdown: { type: 'boolean', default: false },
}, { args });
const REPS = number('reps');
const CHILDREN = number('children');

interface ChildFigures {
  loadMs: number;
  rssAddedMB: number;
  perChildMs: number;
  snapshotSuiteAddedMs: number;
  renderOneAddedMs: number;
  kubernetesVersion?: string;
}

/** The children of every example operator's samples (with the related objects beside them), validation off. */
function sampleChildren(): Manifest[][] {
  return addOperators(new App()).flatMap((operator) => operator.examples.map((example) =>
    renderForSnapshot(operator, { ...example, metadata: { namespace: 'default', ...example.metadata } } as never, { validateChildren: false, related: operator.exampleRelated })));
}

function child(): void {
  const perCr = sampleChildren();
  const all = perCr.flat();
  const many = Array.from({ length: CHILDREN }, (_, i) => all[i % all.length]!);
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let t = performance.now();
  const first = validateBuiltInObjects(perCr[0]!);
  const firstMs = performance.now() - t;
  const rssAfter = process.memoryUsage().rss;
  if (first.some((v) => v.verdict !== 'valid')) throw new Error(`a sample's child is not valid: ${JSON.stringify(first)}`);
  t = performance.now();
  validateBuiltInObjects(perCr[0]!);
  const oneCrMs = performance.now() - t;
  t = performance.now();
  validateBuiltInObjects(many);
  const perChildMs = (performance.now() - t) / CHILDREN;
  t = performance.now();
  for (let i = 0; i < 50; i++) validateBuiltInObjects(perCr[i % perCr.length]!);
  const fiftyMs = performance.now() - t;
  const loadMs = firstMs - oneCrMs;
  const figures: ChildFigures = {
    loadMs, rssAddedMB: (rssAfter - rssBefore) / 1e6, perChildMs,
    snapshotSuiteAddedMs: loadMs + fiftyMs, renderOneAddedMs: firstMs,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/** The loader's steps one by one (see the module doc), in this fresh process; prints their times in ms. */
async function breakdown(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  for (const flag of VALIDATOR_V8_FLAGS) setFlagsFromString(flag);
  const { WASI } = await import('node:wasi');
  const { file } = locateValidatorWasm();
  const marks = [performance.now()];
  const bytes = readFileSync(file!);
  marks.push(performance.now());
  const wasm = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => object; Instance: new (m: object, i: object) => { exports: object } } }).WebAssembly;
  const module = new wasm.Module(bytes);
  marks.push(performance.now());
  const wasi = new WASI({ version: 'preview1', args: ['validator'], env: {}, preopens: {}, returnOnExit: true });
  const instance = new wasm.Instance(module, wasi.getImportObject());
  marks.push(performance.now());
  wasi.initialize(instance);
  marks.push(performance.now());
  const exports = instance.exports as unknown as { memory: { buffer: ArrayBuffer }; input(n: number): number; validate(): number };
  const request = new TextEncoder().encode(JSON.stringify([{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'a', namespace: 'default' }, spec: { ports: [{ port: 80 }] } }]));
  new Uint8Array(exports.memory.buffer, exports.input(request.length), request.length).set(request);
  exports.validate();
  marks.push(performance.now());
  const steps = ['read', 'compile', 'instantiate', 'goInit', 'firstCall'] as const;
  process.stdout.write(`${JSON.stringify(Object.fromEntries(steps.map((step, i) => [step, marks[i + 1]! - marks[i]!])))}\n`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function main(): void {
  const { file, candidates } = locateValidatorWasm();
  if (file === undefined) throw new Error(`no validator: ${candidates.join(', ')} (run bash tools/validator/build.sh and set CDK8S_OPERATOR_VALIDATOR_WASM)`);
  const bytes = readFileSync(file);
  const runs: ChildFigures[] = [];
  for (let i = 0; i < REPS; i++) {
    const run = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', fileURLToPath(import.meta.url), '--child', ...args], { encoding: 'utf8', env: { ...process.env, CDK8S_OPERATOR_VALIDATOR_WASM: file } });
    if (run.status !== 0) throw new Error(`child run failed: ${run.stderr}`);
    runs.push(JSON.parse(run.stdout.trim().split('\n').at(-1)!) as ChildFigures);
  }
  const steps: Record<string, number>[] = [];
  for (let i = 0; i < REPS; i++) {
    const run = spawnSync(process.execPath, [...process.execArgv, '--no-warnings', fileURLToPath(import.meta.url), '--breakdown'], { encoding: 'utf8', env: { ...process.env, CDK8S_OPERATOR_VALIDATOR_WASM: file } });
    if (run.status !== 0) throw new Error(`breakdown run failed: ${run.stderr}`);
    steps.push(JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, number>);
  }
  const loadBreakdownMs = Object.fromEntries(Object.keys(steps[0]!).map((step) => [step, median(steps.map((s) => s[step]!))]));
  const result = {
    file,
    packageAddedMB: bytes.length / 1e6,
    packageAddedGzipMB: gzipSync(bytes).length / 1e6,
    reps: REPS,
    loadMs: median(runs.map((r) => r.loadMs)),
    rssAddedMB: median(runs.map((r) => r.rssAddedMB)),
    perChildMs: median(runs.map((r) => r.perChildMs)),
    snapshotSuiteAddedMs: median(runs.map((r) => r.snapshotSuiteAddedMs)),
    renderOneAddedMs: median(runs.map((r) => r.renderOneAddedMs)),
    loadBreakdownMs,
    loadAverage: loadavg()[0],
  };
  const row = (label: string, value: number, unit: string) => `${label.padEnd(52)} ${value.toFixed(unit === 'ms/child' ? 3 : 1).padStart(9)} ${unit}`;
  console.log([
    `validator: ${file} (1-minute load average ${result.loadAverage.toFixed(1)} on ${availableParallelism()} cores)`,
    row('package: added file size', result.packageAddedMB, 'MB'),
    row('package: added, gzip (npm pack tarball)', result.packageAddedGzipMB, 'MB'),
    row('load: compile + instantiate + initialise (median)', result.loadMs , 'ms'),
    row('load: resident set added (median)', result.rssAddedMB , 'MB'),
    row('validate: time per child, one call (median)', result.perChildMs , 'ms/child'),
    row('50 snapshot renders in one process: added (median)', result.snapshotSuiteAddedMs , 'ms'),
    row('render of one CR: added (median)', result.renderOneAddedMs , 'ms'),
    ...Object.entries(loadBreakdownMs).map(([step, ms]) => row(`load, step by step: ${step} (median)`, ms, 'ms')),
  ].join('\n'));
  console.log(JSON.stringify(result));
}

if (values.child) child();
else if (values.breakdown) await breakdown();
else main();
