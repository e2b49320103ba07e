/**
 * What one request costs the API server, for the requests where `ours` and controller-runtime's memcached
 * operator differ (bench/peers.ts found the control plane using 1.16× the CPU for ours at N=5000 for the
 * same 20 000 writes; docs/reference/benchmark.md).
 *
 *   npx tsx bench/apiserver-request-cost.ts [--objects N] [--rounds R]
 *
 * On a local control plane of etcd and kube-apiserver only (lib/testing/control-plane.ts; no controller
 * manager, scheduler or kwok, so nothing else writes), with the memcached example's CRD, each case sends
 * the same N requests in each of its variants, 8 in flight, variants alternating, R rounds (the first a
 * warm-up, not counted). The figure is kube-apiserver's and etcd's CPU (utime + stime from /proc,
 * bench/control-plane-cpu.ts) per request, in microseconds; the median over rounds:
 * - `status`: two status writes per CR as a converge makes them (Ready=False with no nodes, then
 *   Ready=True with one node): `apply` is ours (PATCH `application/apply-patch+yaml` on /status, field
 *   manager, force), `put` is controller-runtime's sample (`Status().Update`: PUT /status of the object
 *   last read, resourceVersion included);
 * - `create`: the memcached Deployment as render makes it, POSTed with ours' `fieldManager` and
 *   `fieldValidation=Strict`, and without either (controller-runtime's `Create`);
 * - `watch`: N Pods created while one watch of the namespace's Pods is open, as JSON (`full`), as
 *   PartialObjectMetadata (`metadata`, how ours caches the example's Pods) or with no watch (`none`).
 *   The events are read and dropped.
 *
 * Prints one JSON object: per case and variant the median µs per request, each round's figures, and the
 * ratio of each variant to the case's first.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { ApiClient } from '../lib/runtime/client/api-client.js';
import type { KubeObject } from '../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane } from '../lib/testing/control-plane.js';
import { renderForSnapshot } from '../lib/testing/index.js';
import { MemcachedOperator } from '../operators/memcached/index.js';
import { benchOptions } from './bench-options.js';
import { controlPlaneCpu } from './control-plane-cpu.js';

const { number } = benchOptions({ objects: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' } });
const OBJECTS = number('objects');
const ROUNDS = number('rounds');
const NAMESPACE = 'cost';
const CRS = `/apis/cache.example.com/v1beta1/namespaces/${NAMESPACE}/memcacheds`;
const DEPLOYMENTS = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`;
const PODS = `/api/v1/namespaces/${NAMESPACE}/pods`;
const FIELD_MANAGER = 'memcached';
const APPLY = 'application/apply-patch+yaml';
const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** Runs `task(0…count-1)` with at most `limit` in flight. */
async function inFlight(limit: number, count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

const operator = new MemcachedOperator(new App());
const dir = await mkdtemp(join(tmpdir(), 'apiserver-request-cost-'));
const crdFile = join(dir, 'crd.json');
await writeFile(crdFile, JSON.stringify(operator.customResourceDefinition.toJson()));
const plane = await startControlPlane({ components: { controllerManager: false, scheduler: false, kwok: false } });
const client = new ApiClient({ kubeConfig: plane.kubeConfig });
try {
  await installCRDs(plane.kubeConfig, [crdFile]);
  await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
  // No controller manager: the namespace's default ServiceAccount, which Pod admission needs, is made here.
  await client.request('POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } } });

  let serial = 0;
  const memcached = (name: string): KubeObject => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', metadata: { name, namespace: NAMESPACE }, spec: { replicas: 1 } }) as KubeObject;
  const status = (ready: boolean, nodes: string[]) => ({
    observedGeneration: 1,
    nodes,
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Ready' : 'Progressing', message: ready ? 'all children ready' : 'waiting for Deployment', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), observedGeneration: 1 }],
  });

  /** Each case: prepare (not measured) → the measured requests, per variant. */
  const cases: Record<string, Record<string, { prepare: (n: number) => Promise<unknown>; measured: (n: number, state: unknown) => Promise<number> }>> = {
    status: Object.fromEntries(['apply', 'put'].map((variant) => [variant, {
      prepare: async (n: number) => {
        const names = Array.from({ length: n }, () => `mc-${serial++}`);
        const created: KubeObject[] = new Array(n);
        await inFlight(8, n, async (i) => (created[i] = await client.request('POST', CRS, { body: memcached(names[i]!) })));
        return created;
      },
      measured: async (n: number, state: unknown) => {
        const crs = state as KubeObject[];
        await inFlight(8, n, async (i) => {
          const cr = crs[i]!;
          const name = cr.metadata!.name!;
          for (const [ready, nodes] of [[false, []], [true, [`${name}-pod`]]] as const) {
            if (variant === 'apply') {
              await client.request('PATCH', `${CRS}/${name}/status`, { query: { fieldManager: FIELD_MANAGER, force: true }, contentType: APPLY, body: { apiVersion: cr.apiVersion, kind: cr.kind, metadata: { name, namespace: NAMESPACE }, status: status(ready, [...nodes]) } });
            } else {
              crs[i] = await client.request('PUT', `${CRS}/${name}/status`, { body: { ...crs[i], status: status(ready, [...nodes]) } });
            }
          }
        });
        return 2 * n;
      },
    }])),
    create: Object.fromEntries(['strict', 'plain'].map((variant) => [variant, {
      prepare: async (n: number) => Array.from({ length: n }, () => {
        const name = `mc-${serial++}`;
        const children = renderForSnapshot(operator, memcached(name) as never) as KubeObject[];
        return children.find((c) => c.kind === 'Deployment')!;
      }),
      measured: async (n: number, state: unknown) => {
        const deployments = state as KubeObject[];
        const query = variant === 'strict' ? { fieldManager: FIELD_MANAGER, fieldValidation: 'Strict' } : undefined;
        await inFlight(8, n, (i) => client.request('POST', DEPLOYMENTS, { body: deployments[i], query }));
        return n;
      },
    }])),
    watch: Object.fromEntries(['full', 'metadata', 'none'].map((variant) => [variant, {
      prepare: async () => undefined,
      measured: async (n: number) => {
        const stop = new AbortController();
        let seen = 0;
        // From now: the Pods of earlier rounds are not sent again as initial events.
        const { metadata } = await client.request<{ metadata: { resourceVersion: string } }>('GET', PODS, { query: { limit: 1 } });
        const watching = variant === 'none' ? Promise.resolve() : (async () => {
          try {
            for await (const event of client.watch(PODS, { resourceVersion: metadata.resourceVersion }, stop.signal, undefined, variant === 'metadata' ? METADATA_ACCEPT : undefined)) if (event.type === 'ADDED') seen++;
          } catch {
            // aborted
          }
        })();
        const first = serial;
        const pod = (i: number) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${first + i}`, labels: { app: 'memcached', 'app.kubernetes.io/managed-by': 'memcached' } }, spec: { containers: [{ name: 'memcached', image: 'memcached:1.6.26-alpine', command: ['memcached', '-m=64', '-o', 'modern', '-v'], ports: [{ containerPort: 11211, name: 'memcached' }] }] } });
        serial += n;
        await inFlight(8, n, (i) => client.request('POST', PODS, { body: pod(i) }));
        // Every event read before the window closes (the server's work for this watcher is done).
        const deadline = Date.now() + 60_000;
        while (variant !== 'none' && seen < n && Date.now() < deadline) await new Promise((r) => setImmediate(r));
        stop.abort();
        await watching;
        return n;
      },
    }])),
  };

  // In each case's declared order: the ratios are to its first variant (ours).
  const results: Record<string, Record<string, number[]>> = Object.fromEntries(Object.entries(cases).map(([name, variants]) => [name, Object.fromEntries(Object.keys(variants).map((v) => [v, [] as number[]]))]));
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, variants] of Object.entries(cases)) {
      const order = Object.keys(variants);
      if (round % 2 === 1) order.reverse();
      for (const variant of order) {
        const { prepare, measured } = variants[variant]!;
        const state = await prepare(OBJECTS);
        const before = await controlPlaneCpu(plane.dir);
        const requests = await measured(OBJECTS, state);
        const after = await controlPlaneCpu(plane.dir);
        const cpu = (after['kube-apiserver']! - before['kube-apiserver']!) + (after.etcd! - before.etcd!);
        if (round === 0) continue; // warm-up
        results[name]![variant]!.push(Math.round((cpu * 1e6) / requests));
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const out = Object.fromEntries(Object.entries(results).map(([name, variants]) => {
    const first = median(Object.values(variants)[0]!);
    return [name, Object.fromEntries(Object.entries(variants).map(([variant, xs]) => [variant, { apiServerAndEtcdCpuUsPerRequest: median(xs), ratioToFirst: Number((median(xs) / first).toFixed(2)), rounds: xs }]))];
  }));
  console.log(JSON.stringify({ objects: OBJECTS, rounds: ROUNDS, cases: out }, null, 2));
} finally {
  client.close();
  await plane.stop();
  await rm(dir, { recursive: true, force: true });
}
