/**
 * bench:peers' `plain-node` peer: the memcached operator of bench/peers/controller-runtime/main.go written
 * by hand in plain Node.js, with no SDK and no Kubernetes client library: `node:https` with a keep-alive
 * agent, LIST then WATCH of Memcacheds, Deployments, Services and Pods into Maps, one worker over a
 * de-duplicating queue, and the Go peer's reconcile (children from the cache: create when missing, update
 * the replicas when they differ; status.nodes from the Pods; the status written only when it changed).
 *
 * It answers "what does the same work cost in Node at all": converging CPU and RSS of a process that does
 * no more than that, beside `ours` (the SDK) and `controller-runtime` (Go), on the same Node and flags as
 * `ours`. It keeps none of the SDK's guarantees (no server-side apply, no drift repair of fields other than
 * replicas, no adoption rules, no Events, no retries but the queue's backoff) and is no example to follow:
 * it is the bench's floor, as floor-16 is the API server's.
 *
 * Plain JavaScript on purpose: it runs with no TypeScript loader and imports only `node:` modules and
 * `yaml` (to read the kubeconfig once). Its /metrics (plain HTTP) carries the counters bench/peers.ts
 * reads, named as controller-runtime names them: rest_client_requests_total{method,code} (a watch counts
 * once), controller_runtime_reconcile_total{result}, controller_runtime_reconcile_time_seconds_sum and
 * _count, workqueue_adds_total, workqueue_depth, controller_runtime_active_workers. /metrics answers once
 * every cache has listed.
 *
 * Usage: node [flags] bench/peers/plain-node/operator.mjs --kubeconfig FILE --metrics-bind-address HOST:PORT [--namespace NS]
 * (`--namespace`: list and watch that namespace only, as the Go peer's; default: all namespaces)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Agent, request } from 'node:https';
import { parse } from 'yaml';

const args = process.argv.slice(2);
const option = (name, optional = false) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= args.length) {
    if (optional) return undefined;
    throw new Error(`plain-node operator: --${name} is required`);
  }
  return args[i + 1];
};
const watchNamespace = option('namespace', true);
/** A collection's path, within `--namespace` when given: `collection('/api/v1', 'pods')`. */
const collection = (prefix, plural) => (watchNamespace ? `${prefix}/namespaces/${watchNamespace}/${plural}` : `${prefix}/${plural}`);

// ---- client ----

const kubeconfig = parse(readFileSync(option('kubeconfig'), 'utf8'));
const contextName = kubeconfig['current-context'];
const context = kubeconfig.contexts.find((c) => c.name === contextName).context;
const cluster = kubeconfig.clusters.find((c) => c.name === context.cluster).cluster;
const user = kubeconfig.users.find((u) => u.name === context.user).user;
const server = new URL(cluster.server);
const fromBase64 = (text) => Buffer.from(text, 'base64');
const agent = new Agent({
  keepAlive: true,
  ca: fromBase64(cluster['certificate-authority-data']),
  cert: fromBase64(user['client-certificate-data']),
  key: fromBase64(user['client-key-data']),
});

/** `METHOD code` → count, for rest_client_requests_total. */
const requests = new Map();
const countRequest = (method, code) => requests.set(`${method} ${code}`, (requests.get(`${method} ${code}`) ?? 0) + 1);

/** Opens a request; resolves with the response (a stream) once its head arrived. */
function open(method, path, body, contentType = 'application/json') {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request({
      agent, method, hostname: server.hostname, port: server.port, path,
      headers: { Accept: 'application/json', ...(data === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) }) },
    }, (res) => {
      countRequest(method, res.statusCode);
      resolve(res);
    });
    req.on('error', (err) => {
      countRequest(method, '<error>');
      reject(err);
    });
    req.end(data);
  });
}

/** One request; resolves with the status code and the parsed body. */
async function send(method, path, body, contentType) {
  const res = await open(method, path, body, contentType);
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk;
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

// ---- informers ----

const keyOf = (obj) => `${obj.metadata.namespace}/${obj.metadata.name}`;

/** LIST then WATCH of one collection into `items`; `handle(obj)` for every object added, changed or deleted. */
class Informer {
  items = new Map();
  #resourceVersion = '';
  constructor(path, handle) {
    this.path = path;
    this.handle = handle;
  }

  async list() {
    const { status, body } = await send('GET', this.path);
    if (status !== 200) throw new Error(`LIST ${this.path}: HTTP ${status}`);
    const seen = new Set();
    for (const obj of body.items) {
      const key = keyOf(obj);
      seen.add(key);
      this.items.set(key, obj);
      this.handle(obj);
    }
    for (const [key, obj] of this.items) {
      if (seen.has(key)) continue;
      this.items.delete(key);
      this.handle(obj);
    }
    this.#resourceVersion = body.metadata.resourceVersion;
  }

  /** Watches for ever: again from the last resourceVersion when a watch ends, a new LIST after 410 Gone. */
  async run() {
    for (;;) {
      try {
        if (await this.#watchOnce()) await this.list();
      } catch (err) {
        console.error(`watch ${this.path}: ${err.message}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Resolves true when the server answered 410 Gone (the resourceVersion is too old). */
  async #watchOnce() {
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    const res = await open('GET', `${this.path}?watch=true&allowWatchBookmarks=true&resourceVersion=${this.#resourceVersion}&timeoutSeconds=${timeoutSeconds}`);
    if (res.statusCode !== 200) {
      res.resume();
      if (res.statusCode === 410) return true;
      throw new Error(`HTTP ${res.statusCode}`);
    }
    let pending = '';
    res.setEncoding('utf8');
    for await (const chunk of res) {
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const event = JSON.parse(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        if (event.type === 'ERROR') return event.object.code === 410;
        this.#resourceVersion = event.object.metadata.resourceVersion;
        if (event.type === 'BOOKMARK') continue;
        const key = keyOf(event.object);
        if (event.type === 'DELETED') this.items.delete(key);
        else this.items.set(key, event.object);
        this.handle(event.object);
      }
    }
    return false;
  }
}

// ---- queue ----

/** Keys waiting, in order, each once; a key being reconciled is queued again after, if added meanwhile. */
const queue = [];
const queued = new Set();
const running = new Set();
const failures = new Map();
let adds = 0;
let activeWorkers = 0;
let wake = () => {};

function enqueue(key) {
  adds++;
  if (queued.has(key)) return;
  queued.add(key);
  if (running.has(key)) return;
  queue.push(key);
  wake();
}

/** The reconcile counts for /metrics. */
const results = new Map();
let reconcileSeconds = 0;
let reconcileCount = 0;

async function worker() {
  for (;;) {
    if (queue.length === 0) await new Promise((r) => (wake = r));
    const key = queue.shift();
    if (key === undefined) continue;
    queued.delete(key);
    running.add(key);
    activeWorkers++;
    const started = performance.now();
    let result = 'success';
    try {
      await reconcile(key);
      failures.delete(key);
    } catch (err) {
      result = 'error';
      const failed = (failures.get(key) ?? 0) + 1;
      failures.set(key, failed);
      console.error(`reconcile ${key}: ${err.message}`);
      setTimeout(() => enqueue(key), Math.min(5 * 2 ** failed, 1000_000));
    }
    reconcileSeconds += (performance.now() - started) / 1000;
    reconcileCount++;
    results.set(result, (results.get(result) ?? 0) + 1);
    activeWorkers--;
    running.delete(key);
    if (queued.has(key)) queue.push(key);
  }
}

// ---- reconcile (bench/peers/controller-runtime/main.go's, by hand) ----

const FIELD_OWNER = 'memcached-operator';
const PORT = 11211;
const MEMCACHED_UID = 11211;

const selectorLabels = (mc) => ({ 'app.kubernetes.io/name': 'memcached', 'app.kubernetes.io/instance': mc.metadata.name });
const childLabels = (mc) => ({ 'app.kubernetes.io/managed-by': FIELD_OWNER, 'app.kubernetes.io/instance': mc.metadata.name, 'operator.cdk8s.io/owner-uid': mc.metadata.uid });
const ownerReference = (mc) => ({ apiVersion: 'cache.example.com/v1beta1', kind: 'Memcached', name: mc.metadata.name, uid: mc.metadata.uid, controller: true, blockOwnerDeletion: true });

function deploymentFor(mc) {
  const tcp = { tcpSocket: { port: PORT }, failureThreshold: 3 };
  const ids = { runAsNonRoot: true, runAsUser: MEMCACHED_UID, runAsGroup: MEMCACHED_UID };
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: mc.metadata.name, namespace: mc.metadata.namespace, labels: childLabels(mc), ownerReferences: [ownerReference(mc)] },
    spec: {
      replicas: mc.spec.replicas,
      selector: { matchLabels: selectorLabels(mc) },
      template: {
        metadata: { labels: selectorLabels(mc) },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { ...ids, fsGroup: MEMCACHED_UID, fsGroupChangePolicy: 'Always' },
          containers: [{
            name: 'memcached', image: 'memcached:1.6.17-alpine', imagePullPolicy: 'IfNotPresent',
            args: ['-m=64', '-o', 'modern', '-v'],
            ports: [{ name: 'memcached', containerPort: PORT }],
            readinessProbe: tcp, livenessProbe: tcp,
            resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
            securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, ...ids, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
          }],
        },
      },
    },
  };
}

function serviceFor(mc) {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: mc.metadata.name, namespace: mc.metadata.namespace, labels: childLabels(mc), ownerReferences: [ownerReference(mc)] },
    spec: { type: 'ClusterIP', selector: selectorLabels(mc), ports: [{ name: 'memcached', port: PORT, targetPort: PORT }] },
  };
}

function deploymentReady(dep) {
  const where = `Deployment ${dep.metadata.namespace}/${dep.metadata.name}`;
  if ((dep.status?.observedGeneration ?? 0) < (dep.metadata.generation ?? 0)) return [false, `${where}: rollout not observed yet`];
  if (dep.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')) return [true, ''];
  return [false, `${where}: not available`];
}

/** meta.SetStatusCondition: lastTransitionTime moves only when the status does. */
function setCondition(conditions, condition) {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const existing = conditions.find((c) => c.type === condition.type);
  if (!existing) return conditions.push({ ...condition, lastTransitionTime: now });
  if (existing.status !== condition.status) existing.lastTransitionTime = now;
  Object.assign(existing, { status: condition.status, reason: condition.reason, message: condition.message, observedGeneration: condition.observedGeneration });
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => deepEqual(a[k], b[k]));
}

const crPath = (ns) => `/apis/cache.example.com/v1beta1/namespaces/${ns}/memcacheds`;

async function create(path, body) {
  const { status, body: answer } = await send('POST', path, body);
  if (status !== 201) throw new Error(`POST ${path}: HTTP ${status}: ${answer?.message}`);
  return answer;
}

async function reconcile(key) {
  const mc = memcacheds.items.get(key);
  if (!mc || mc.metadata.deletionTimestamp) return;
  const ns = mc.metadata.namespace;
  let dep = deployments.items.get(key);
  if (!dep) {
    dep = deploymentFor(mc);
    await create(`/apis/apps/v1/namespaces/${ns}/deployments`, dep);
  } else if (dep.spec.replicas !== mc.spec.replicas) {
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/${dep.metadata.name}?fieldManager=${FIELD_OWNER}`;
    const { status, body } = await send('PUT', path, { ...dep, spec: { ...dep.spec, replicas: mc.spec.replicas } });
    if (status !== 200) throw new Error(`PUT ${path}: HTTP ${status}: ${body?.message}`);
    dep = body;
  }
  if (!services.items.has(key)) await create(`/api/v1/namespaces/${ns}/services`, serviceFor(mc));

  const nodes = [...(podsByInstance.get(key) ?? [])].filter((name) => !pods.items.get(`${ns}/${name}`)?.metadata.deletionTimestamp).sort();
  const [ready, message] = deploymentReady(dep);
  const generation = mc.metadata.generation;
  const conditions = structuredClone(mc.status?.conditions ?? []);
  const reason = ready ? 'Ready' : 'ChildrenNotReady';
  setCondition(conditions, { type: 'Ready', status: ready ? 'True' : 'False', reason, message: ready ? '2 children ready' : message, observedGeneration: generation });
  setCondition(conditions, { type: 'Reconciling', status: ready ? 'False' : 'True', reason, message: ready ? '' : message, observedGeneration: generation });
  setCondition(conditions, { type: 'Stalled', status: 'False', reason, message: '', observedGeneration: generation });
  const status = { observedGeneration: generation, conditions, nodes };
  if (deepEqual(mc.status ?? {}, status)) return;
  const path = `${crPath(ns)}/${mc.metadata.name}/status`;
  const answer = await send('PATCH', path, { status }, 'application/merge-patch+json');
  if (answer.status !== 200) throw new Error(`PATCH ${path}: HTTP ${answer.status}: ${answer.body?.message}`);
}

// ---- watches ----

const controllerOwner = (obj) => obj.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Memcached');
/** `namespace/instance` → names of the Pods labelled for that Memcached. */
const podsByInstance = new Map();

const memcacheds = new Informer(collection('/apis/cache.example.com/v1beta1', 'memcacheds'), (mc) => enqueue(keyOf(mc)));
const enqueueOwner = (obj) => {
  const owner = controllerOwner(obj);
  if (owner) enqueue(`${obj.metadata.namespace}/${owner.name}`);
};
const deployments = new Informer(collection('/apis/apps/v1', 'deployments'), enqueueOwner);
const services = new Informer(collection('/api/v1', 'services'), enqueueOwner);
const pods = new Informer(collection('/api/v1', 'pods'), (pod) => {
  const labels = pod.metadata.labels ?? {};
  if (labels['app.kubernetes.io/name'] !== 'memcached' || !labels['app.kubernetes.io/instance']) return;
  const key = `${pod.metadata.namespace}/${labels['app.kubernetes.io/instance']}`;
  const names = podsByInstance.get(key) ?? new Set();
  if (pods.items.has(keyOf(pod))) names.add(pod.metadata.name);
  else names.delete(pod.metadata.name);
  podsByInstance.set(key, names);
  enqueue(key);
});

// ---- metrics ----

function metrics() {
  const lines = [];
  for (const [methodCode, n] of requests) {
    const [method, code] = methodCode.split(' ');
    lines.push(`rest_client_requests_total{code="${code}",host="${server.host}",method="${method}"} ${n}`);
  }
  for (const [result, n] of results) lines.push(`controller_runtime_reconcile_total{controller="memcached",result="${result}"} ${n}`);
  lines.push(`controller_runtime_reconcile_time_seconds_sum{controller="memcached"} ${reconcileSeconds}`);
  lines.push(`controller_runtime_reconcile_time_seconds_count{controller="memcached"} ${reconcileCount}`);
  lines.push(`controller_runtime_active_workers{controller="memcached"} ${activeWorkers}`);
  lines.push(`workqueue_adds_total{name="memcached"} ${adds}`);
  lines.push(`workqueue_depth{name="memcached"} ${queue.length}`);
  return `${lines.join('\n')}\n`;
}

const informers = [memcacheds, deployments, services, pods];
await Promise.all(informers.map((i) => i.list()));
for (const i of informers) void i.run();
void worker();
const [host, port] = option('metrics-bind-address').split(':');
createServer((req, res) => {
  if (req.url !== '/metrics') return res.writeHead(404).end();
  res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(metrics());
}).listen(Number(port), host);
console.log(`plain-node memcached operator: caches listed, metrics on ${host}:${port}`);
// exit on SIGTERM through process.exit, as a stop should (and V8 then writes a --cpu-prof profile)
process.on('SIGTERM', () => process.exit(0));
