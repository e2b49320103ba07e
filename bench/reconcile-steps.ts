/**
 * Where a reconcile's wall time goes, step by step, on the local control plane: the runtime's own
 * OpenTelemetry spans (lib/runtime/tracing/reconcile-trace.ts), exported over OTLP/JSON to a receiver
 * in this process. With one worker (the default `maxConcurrentReconciles`, as controller-runtime's),
 * "all CRs Ready" is about the sum of the reconciles' wall times, so this says what bench:peers' Ready
 * figure is made of.
 *
 *   npm run bench:reconcile-steps -- [--crs 300]
 *
 * One control plane (kube-controller-manager and kube-scheduler with bench:peers' raised client rate
 * limits, kwok fake nodes), the memcached example compiled as bench:peers runs it (`ours`), told by the
 * standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`). This
 * process creates N Memcacheds (1 replica, 20 creates in flight) and waits until every one is Ready
 * with its Pod in `status.nodes`. Printed: all Ready (s), and per span kind `n`, `sumMs`, `p50Ms`,
 * `p90Ms`, `p99Ms`; `apply` spans are split by `cdk8s_operator.apply.reason` (`missing`: the child is
 * created, one POST; `unchanged`: skipped) and `status` spans by
 * `cdk8s_operator.status.written`; "of which the GET after a taken name" is `cdk8s_operator.apply.lookup_ms`, the
 * adoption GET inside an `apply (missing)` whose create found the name taken (none in this bench). Durations are wall time, so they move with the machine's load.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { freePort } from '../test/support/free-port.js';
import { OURS_OUT, buildOurs } from './build-ours.js';
import { benchOptions } from './bench-options.js';

const CRS = benchOptions({ crs: { type: 'string', default: '300' } }).number('crs');
if (!Number.isInteger(CRS) || CRS <= 0) throw new Error(`--crs ${CRS}: expected a positive integer`);
const NAMESPACE = 'bench';
const CR_PATH = `/apis/cache.example.com/v1beta1/namespaces/${NAMESPACE}/memcacheds`;

/** One span as the OTLP/JSON body carries it (the fields read here). */
interface OtlpSpan {
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: { stringValue?: string; boolValue?: boolean; intValue?: string; doubleValue?: number } }[];
}

/** The span's attribute `key` as text, undefined when absent. */
function attributeOf(span: OtlpSpan, key: string): string | undefined {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : String(v.stringValue ?? v.boolValue ?? v.intValue ?? v.doubleValue);
}

/** The span's kind for the table: its name, `apply` by its reason, `status` by whether it wrote. */
function kindOf(span: OtlpSpan): string {
  const attr = (key: string) => attributeOf(span, key);
  if (span.name === 'apply') return `apply (${attr('cdk8s_operator.apply.reason') ?? '?'})`;
  if (span.name === 'status') return `status (written ${attr('cdk8s_operator.status.written') ?? '?'})`;
  return span.name;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  await buildOurs();
  const durations = new Map<string, number[]>();
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
      for (const rs of parsed.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const span of ss.spans ?? []) {
            const ms = Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6;
            const kind = kindOf(span);
            durations.set(kind, [...(durations.get(kind) ?? []), ms]);
            // inside an apply: the adoption GET after a create found the name taken (`cdk8s_operator.apply.lookup_ms`)
            const lookup = attributeOf(span, 'cdk8s_operator.apply.lookup_ms');
            if (lookup !== undefined) durations.set('  of which the GET after a taken name', [...(durations.get('  of which the GET after a taken name') ?? []), Number(lookup)]);
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const fastClient = ['--kube-api-qps=500', '--kube-api-burst=1000'];
  const plane = await startControlPlane({ fakeNodes: Math.ceil((CRS + 20) / 250), podsPerNode: 250, serviceClusterIpRange: '10.0.0.0/16', extraArgs: { controllerManager: fastClient, scheduler: fastClient } });
  const admin = new ApiClient({ kubeConfig: plane.kubeConfig, userAgent: 'bench-reconcile-steps' });
  const dir = await mkdtemp(join(tmpdir(), 'bench-reconcile-steps-'));
  try {
    const crd = join(dir, 'crd.json');
    await writeFile(crd, JSON.stringify(new MemcachedOperator(new App()).customResourceDefinition.toJson()));
    await installCRDs(plane.kubeConfig, [crd]);
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
    const probePort = await freePort();
    const operator = spawn(process.execPath, [
      join(OURS_OUT, 'lib/cli/main.js'), 'run', '--module', join(OURS_OUT, 'operators/index.js'), '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
      '--metrics-bind-address', '0', '--health-probe-bind-address', `127.0.0.1:${probePort}`,
    ], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env, NODE_OPTIONS: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_MAX_QUEUE_SIZE: '100000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2000',
      },
    });
    const log = createWriteStream(join(dir, 'operator.log'));
    operator.stdout!.pipe(log);
    operator.stderr!.pipe(log);
    const exited = new Promise((resolve) => operator.once('exit', resolve));
    try {
      for (;;) {
        if (operator.exitCode !== null) throw new Error(`the operator exited during start-up; log: ${join(dir, 'operator.log')}`);
        if (await fetch(`http://127.0.0.1:${probePort}/readyz`).then((r) => r.ok, () => false)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const t0 = performance.now();
      for (let i = 0; i < CRS; i += 20) {
        await Promise.all(Array.from({ length: Math.min(20, CRS - i) }, (_, j) =>
          admin.request('POST', CR_PATH, { body: { apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name: `mc-${i + j}`, namespace: NAMESPACE }, spec: { replicas: 1 } } })));
      }
      for (;;) {
        const list = await admin.request<{ items: { status?: { conditions?: { type: string; status: string }[]; nodes?: string[] } }[] }>('GET', CR_PATH);
        const ready = list.items.filter((cr) => cr.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && cr.status.nodes?.length === 1);
        if (ready.length >= CRS) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const readySeconds = (performance.now() - t0) / 1000;
      operator.kill('SIGTERM'); // flushes the span processor
      await exited;
      const steps = [...durations].map(([kind, ms]) => {
        const sorted = [...ms].sort((a, b) => a - b);
        const round = (x: number) => Number(x.toFixed(1));
        return { kind, n: sorted.length, sumMs: Math.round(sorted.reduce((a, b) => a + b, 0)), p50Ms: round(percentile(sorted, 50)), p90Ms: round(percentile(sorted, 90)), p99Ms: round(percentile(sorted, 99)) };
      }).sort((a, b) => b.sumMs - a.sumMs);
      console.log(`all ${CRS} Memcacheds Ready in ${readySeconds.toFixed(1)} s (one worker)`);
      console.log('| span | n | sum (ms) | p50 (ms) | p90 (ms) | p99 (ms) |\n|:--|--:|--:|--:|--:|--:|');
      for (const s of steps) console.log(`| ${s.kind} | ${s.n} | ${s.sumMs} | ${s.p50Ms} | ${s.p90Ms} | ${s.p99Ms} |`);
      console.log(JSON.stringify({ crs: CRS, readySeconds: Number(readySeconds.toFixed(1)), steps }, null, 2));
    } finally {
      if (operator.exitCode === null && operator.signalCode === null) {
        operator.kill('SIGKILL');
        await exited;
      }
    }
  } finally {
    admin.close();
    await plane.stop();
    receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
