/**
 * The CPU the render skip saves (issue 20: "render is about a fifth of the operator's CPU while
 * converging"), on the local control plane. Prints one JSON object.
 *
 *   npm run bench:render-skip -- [--crs 200] [--rounds 2] [--operators app,memcached]
 *
 * One control plane (kube-controller-manager, kube-scheduler and kwok move the children's status: the
 * Deployments' and Pods' status churn while they converge). Per round and example operator (`app`,
 * `memcached`; `--operators app`), two operator processes one after the other, each on a fresh
 * namespace: with `renderSkip: false` (off) and with the default (on). This process creates N CRs (1
 * replica each) and waits until all are Ready; the
 * operator process reports the CPU it used (`process.cpuUsage`, user + system) from just before the
 * first create until its queue is idle after the last CR is Ready, with its render calls, reconciles
 * and `cdk8s_operator_renders_skipped_total`, and the CPU spent inside render calls and inside the
 * render memo (`process.cpuUsage` around each call). The CPU of this process (the CRs' creation, the
 * polling) is not counted. Per operator, over the sums of all rounds: `savingPercent` = (render CPU off
 * − render CPU on − memo CPU on) / process CPU off, the figure the machine's noise does not move much;
 * `processSavingPercent` = 1 − process CPU on/off, which it does (±10 % between runs on a busy 2-core
 * machine).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { pino } from 'pino';
import type { CustomResource } from '../lib/operator/custom-resource.js';
import { renderCustomResource } from '../lib/operator/render/render-children.js';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { KubeConfig } from '@kubernetes/client-node';
import { Manager } from '../lib/runtime/manager.js';
import { OperatorMetrics } from '../lib/runtime/metrics/metrics.js';
import { RenderMemo } from '../lib/runtime/reconcile/render-memo.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { AppOperator } from '../operators/app/index.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';

/** The example operators measured, with the spec of their N CRs (1 replica each). */
const EXAMPLES = {
  app: { make: () => new AppOperator(new App()), spec: { image: 'ghcr.io/example/hello:1.4.2', replicas: 1 } },
  memcached: { make: () => new MemcachedOperator(new App()), spec: { replicas: 1 } },
} as const;
type Example = keyof typeof EXAMPLES;

// `--operator EXAMPLE KUBECONFIG NAMESPACE on|off`: the operator process, as converge() forks it.
const { values, positionals, number } = benchOptions({
  crs: { type: 'string', default: '200' },
  rounds: { type: 'string', default: '2' },
  operators: { type: 'string', default: Object.keys(EXAMPLES).join(',') },
  operator: { type: 'string' },
}, { allowPositionals: true });
if (values.operator === undefined && positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What an operator process reports at the end of a run. */
interface RunReport {
  cpuSeconds: number;
  /** CPU spent inside render calls. */
  renderCpuSeconds: number;
  /** CPU spent by the render memo (fingerprints and lookups): what a skip costs. */
  memoCpuSeconds: number;
  renders: number;
  reconciles: number;
  rendersSkipped: number;
}

type ToOperator = { type: 'start' } | { type: 'finish' };
type FromOperator = { type: 'ready' } | ({ type: 'report' } & RunReport);

// ---- the operator process ----

async function operatorProcess(example: Example, kubeconfigPath: string, namespace: string, skip: boolean): Promise<void> {
  const operator = EXAMPLES[example].make();
  if (!skip) (operator as { renderSkip: boolean }).renderSkip = false;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const metrics = new OperatorMetrics({ defaultMetrics: false });
  let renders = 0;
  let renderCpu = 0;
  let memoCpu = 0;
  const cpuOf = <T>(f: () => T, add: (micros: number) => void): T => {
    const before = process.cpuUsage();
    try {
      return f();
    } finally {
      const used = process.cpuUsage(before);
      add(used.user + used.system);
    }
  };
  // The memo's own cost, measured around its methods that run on every reconcile (`reuse` calls
  // `fingerprint`: counted once, at the outermost call).
  let inMemo = false;
  for (const method of ['reuse', 'fingerprint', 'remember'] as const) {
    const original = RenderMemo.prototype[method] as (...args: unknown[]) => unknown;
    (RenderMemo.prototype as unknown as Record<string, unknown>)[method] = function (this: RenderMemo, ...args: unknown[]) {
      if (inMemo) return original.apply(this, args);
      inMemo = true;
      try {
        return cpuOf(() => original.apply(this, args), (micros) => (memoCpu += micros));
      } finally {
        inMemo = false;
      }
    };
  }
  const manager = new Manager({
    kubeConfig,
    namespace,
    operators: [operator],
    metrics,
    logger: pino({ level: 'warn' }, pino.destination(2)),
    render: (op, cr, inputs) => {
      renders++;
      return cpuOf(() => renderCustomResource(op, cr as unknown as CustomResource, inputs), (micros) => (renderCpu += micros));
    },
  });
  await manager.start();
  const controller = manager.controllers[0];
  const sum = async (name: string) => ((await metrics.registry.getSingleMetric(name)!.get()).values as { value: number }[]).reduce((s, v) => s + v.value, 0);
  let start: NodeJS.CpuUsage | undefined;
  const base = { renders: 0, reconciles: 0, skipped: 0, renderCpu: 0, memoCpu: 0 };
  process.on('message', async (message: ToOperator) => {
    if (message.type === 'start') {
      base.renders = renders;
      base.renderCpu = renderCpu;
      base.memoCpu = memoCpu;
      base.reconciles = await sum('controller_runtime_reconcile_total');
      base.skipped = await sum('cdk8s_operator_renders_skipped_total');
      start = process.cpuUsage();
      process.send!({ type: 'ready' } satisfies FromOperator);
      return;
    }
    // finish: wait for the queue to stay idle for a second (the children's last status changes reconciled)
    let idleSince = Date.now();
    for (;;) {
      if (controller.active > 0 || controller.queue.len() > 0) idleSince = Date.now();
      else if (Date.now() - idleSince >= 1000) break;
      await sleep(50);
    }
    const used = process.cpuUsage(start);
    const report: RunReport = {
      cpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(2)),
      renderCpuSeconds: Number(((renderCpu - base.renderCpu) / 1e6).toFixed(3)),
      memoCpuSeconds: Number(((memoCpu - base.memoCpu) / 1e6).toFixed(3)),
      renders: renders - base.renders,
      reconciles: (await sum('controller_runtime_reconcile_total')) - base.reconciles,
      rendersSkipped: (await sum('cdk8s_operator_renders_skipped_total')) - base.skipped,
    };
    process.send!({ type: 'report', ...report } satisfies FromOperator);
    await manager.stop();
    process.exit(0);
  });
  process.send!({ type: 'ready' } satisfies FromOperator);
}

// ---- this process ----

function nextMessage(child: ChildProcess, type: FromOperator['type']): Promise<FromOperator> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: FromOperator) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number | null) => reject(new Error(`operator process exited (${code}) before '${type}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function converge(example: Example, admin: ApiClient, kubeconfigPath: string, namespace: string, crs: number, skip: boolean): Promise<RunReport & { convergeSeconds: number }> {
  await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  const child = fork(process.argv[1], ['--operator', example, kubeconfigPath, namespace, skip ? 'on' : 'off'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { crd } = EXAMPLES[example].make();
  try {
    await nextMessage(child, 'ready'); // caches synced
    await sleep(2000); // start-up work done
    child.send({ type: 'start' } satisfies ToOperator);
    await nextMessage(child, 'ready');
    const base = `/apis/${crd.group}/${crd.version}/namespaces/${namespace}/${crd.plural}`;
    const t0 = performance.now();
    for (let i = 0; i < crs; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, crs - i) }, (_, j) =>
          admin.request('POST', base, { body: { apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name: `cr-${i + j}`, namespace }, spec: EXAMPLES[example].spec } }),
        ),
      );
    }
    for (;;) {
      const list = await admin.request<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>('GET', base);
      const ready = list.items.filter((cr) => cr.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
      if (ready === crs) break;
      if (performance.now() - t0 > 30 * 60_000) throw new Error(`only ${ready}/${crs} Ready after 30 min`);
      await sleep(500);
    }
    const convergeSeconds = Number(((performance.now() - t0) / 1000).toFixed(1));
    child.send({ type: 'finish' } satisfies ToOperator);
    const report = (await nextMessage(child, 'report')) as RunReport & { type: 'report' };
    const { type: _type, ...rest } = report;
    return { ...rest, convergeSeconds };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const crs = number('crs');
  const rounds = number('rounds');
  const examples = values.operators.split(',') as Example[];
  for (const example of examples) if (!(example in EXAMPLES)) throw new Error(`--operators: unknown ${example}; known: ${Object.keys(EXAMPLES).join(', ')}`);
  // Every run's Pods stay (its namespace is not deleted): one fake node per 250 Pods, a Service each.
  const fastClient = ['--kube-api-qps=500', '--kube-api-burst=1000'];
  const plane = await startControlPlane({
    fakeNodes: Math.ceil((crs * rounds * 2 * examples.length + 10) / 250),
    serviceClusterIpRange: '10.0.0.0/16',
    extraArgs: { controllerManager: fastClient, scheduler: fastClient },
  });
  const dir = await mkdtemp(join(tmpdir(), 'bench-render-skip-'));
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench' });
  try {
    const files: string[] = [];
    for (const example of examples) {
      const file = join(dir, `${example}-crd.json`);
      await writeFile(file, JSON.stringify(EXAMPLES[example].make().customResourceDefinition.toJson()));
      files.push(file);
    }
    await installCRDs(plane.kubeConfig, files);
    type Run = { operator: Example; skip: 'on' | 'off'; round: number; convergeSeconds: number } & RunReport;
    const runs: Run[] = [];
    for (let round = 0; round < rounds; round++) {
      // off first in even rounds, on first in odd ones: neither always runs on the emptier control plane
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const example of examples) {
        for (const skip of order) {
          const result = await converge(example, admin, plane.kubeconfigPath, `${example}-${skip ? 'on' : 'off'}-${round}`, crs, skip);
          runs.push({ operator: example, skip: skip ? 'on' : 'off', round, ...result });
          console.error(JSON.stringify(runs.at(-1)));
        }
      }
    }
    const summary = Object.fromEntries(
      examples.map((example) => {
        const total = (skip: 'on' | 'off', field: keyof RunReport) => runs.filter((r) => r.operator === example && r.skip === skip).reduce((s, r) => s + r[field], 0);
        const both = (field: keyof RunReport) => ({ off: Number(total('off', field).toFixed(2)), on: Number(total('on', field).toFixed(2)) });
        const cpu = both('cpuSeconds');
        const render = both('renderCpuSeconds');
        const memo = both('memoCpuSeconds');
        return [
          example,
          {
            cpuSecondsConverging: cpu,
            renderCpuSeconds: render,
            memoCpuSeconds: memo,
            // The render CPU the skip saved, less what the memo cost, as a share of the operator's CPU without it.
            savingPercent: Number((100 * ((render.off - render.on - memo.on) / cpu.off)).toFixed(1)),
            renderSharePercentOff: Number((100 * (render.off / cpu.off)).toFixed(1)),
            // The whole process's CPU, on against off: includes the machine's noise (±10 % here).
            processSavingPercent: Number((100 * (1 - cpu.on / cpu.off)).toFixed(1)),
            renders: both('renders'),
            reconciles: both('reconciles'),
            rendersSkipped: both('rendersSkipped'),
          },
        ];
      }),
    );
    console.log(JSON.stringify({ date: new Date().toISOString(), crs, rounds, ...summary, runs }, null, 2));
  } finally {
    admin.close();
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (values.operator !== undefined) {
  const [kubeconfigPath, namespace, skip] = positionals;
  await operatorProcess(values.operator as Example, kubeconfigPath, namespace, skip === 'on');
} else {
  await main();
}
