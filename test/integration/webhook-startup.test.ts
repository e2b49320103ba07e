/**
 * `cdk8s-operator run` with webhooks at start-up, against a real API server:
 * 1. caches that cannot sync (the CRD not installed) end the run with exit 1 and a CacheSyncError at the
 *    default log level, webhooks or not;
 * 2. with objects stored in a spoke version, the operator's own LIST needs /convert: the caches sync
 *    because the webhook is routable before they do;
 * 3. a caBundle lost while the operator runs (a CRD or webhook configuration re-applied without it, or
 *    created after the start) is written back.
 *
 * The Service routing of (2) cannot be shown on the local control plane (no kube-proxy, kwok pods): the
 * API server calls a `url`, and a TCP proxy of this test stands in for the webhook Service, forwarding
 * a connection to the webhook port only while the process's `/readyz` answers 200, as a Service sends
 * traffic to Ready endpoints only (kubernetes.io/docs/concepts/services-networking/service/#publishnotreadyaddresses).
 *
 * Own control plane: the memcached CRD is replaced by its pre-upgrade form, and its webhook
 * configurations (failurePolicy: Fail) would refuse other files' Memcached writes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { pino } from 'pino';
import { runRun } from '../../lib/cli/run-command.js';
import { Operator } from '../../lib/operator/operator.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { isApiError, type KubeObject } from '../../lib/runtime/client/kube-client.js';
import { installCRDs, startControlPlane, type ControlPlane } from '../../lib/testing/control-plane.js';
import { createCertificateAuthority } from '../../lib/runtime/webhook/x509.js';
import { MemcachedOperator, MemcachedV1alpha1Spec } from '../../operators/memcached/index.js';
import { startCli } from '../support/cli-process.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';

const NS = 'startup';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com';
const VALIDATING_PATH = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/memcached-operator-webhook';
const MUTATING_PATH = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/memcached-operator-webhook';

/** The memcached operator as released before v1beta1: v1alpha1 only, no webhooks. */
class MemcachedBeforeUpgrade extends Operator<typeof MemcachedV1alpha1Spec> {
  constructor(scope: Construct) {
    super(scope, 'memcached-before', { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached', shortNames: ['mc'], spec: MemcachedV1alpha1Spec, name: 'memcached-operator' });
  }
  render(): void {}
}

let plane: ControlPlane;
let admin: ApiClient;
let dir: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.CDK8S_OPERATOR_TEST_BIN_DIR });
  admin = new ApiClient({ kubeConfig: plane.kubeConfig });
  dir = await mkdtemp(join(tmpdir(), 'webhook-startup-'));
  for (const name of [NS, 'memcached-operator-system']) {
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  }
}, 10 * 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  admin?.close();
  await plane?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('GIVEN webhooks on and the CRD not installed WHEN run starts THEN it exits 1 after --cache-sync-timeout, logging at error which cache did not sync and why', async () => {
  const webhookPort = await freePort();
  const { child, output, exited: exit } = startCli(
    [
      'run', '--operators', 'memcached-operator', '--kubeconfig', plane.kubeconfigPath,
      '--webhook-bind-address', `127.0.0.1:${webhookPort}`, '--webhook-cert-hosts', '127.0.0.1',
      '--metrics-bind-address', '0', '--health-probe-bind-address', '0', '--cache-sync-timeout', '3s',
    ],
  );
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  // Before the fix the process logged "operators failed" and never exited: the wait below timed out.
  const code = await eventually('run exits', async () => (child.exitCode !== null ? child.exitCode : undefined), { timeoutMs: 90_000, context: () => `\noutput:\n${output()}` });
  expect(await exit).toBe(code);
  expect(code).toBe(1);
  const lines = output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string; err?: { name?: string; reason?: string; message: string } });
  const failure = lines.find((l) => l.msg === 'caches did not sync; exiting');
  expect(failure).toBeDefined();
  expect(failure!.level).toBe(50); // pino's error, printed at the default level (info)
  expect(failure!.err).toMatchObject({ name: 'CacheSyncError', reason: 'CacheSyncTimeout' });
  expect(failure!.err!.message).toMatch(/^caches did not sync within 3000 ms \(CacheSyncTimeout\): memcacheds\.cache\.example\.com \(list failed: (GET|WATCH) \/apis\/cache\.example\.com\/v1beta1\/memcacheds[^)]*: 404 /);
  // The webhook server was up meanwhile (it must be, before the caches, for /convert): it was stopped too.
  expect(lines.some((l) => l.msg === 'operators stopped')).toBe(true);
}, 120_000);

/** A stand-in for the webhook Service: forwards a connection to `targetPort` only while `/readyz` answers 200. */
async function readinessGatedProxy(targetPort: number, readyzUrl: string): Promise<{ port: number; forwarded: () => number; refused: () => number; close: () => Promise<void> }> {
  let forwarded = 0;
  let refused = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.pause();
    fetch(readyzUrl)
      .then((res) => res.status === 200)
      .catch(() => false)
      .then((ready) => {
        if (!ready) {
          refused++;
          socket.destroy(); // no Ready endpoint: the API server's dial fails
          return;
        }
        forwarded++;
        const upstream = net.connect(targetPort, '127.0.0.1');
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        socket.pipe(upstream).pipe(socket);
        socket.resume();
        upstream.on('error', () => socket.destroy());
        socket.on('error', () => upstream.destroy());
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    forwarded: () => forwarded,
    refused: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let run: { stop: AbortController; exit: Promise<number> } | undefined;
/** Base URL of the stand-in webhook Service. */
let serviceUrl = '';

test('GIVEN a Memcached stored as v1alpha1 and the v1beta1 operator with its conversion webhook behind a readiness-gated Service WHEN run starts THEN the caches sync through /convert and the old object is reconciled', async () => {
  // Before the upgrade: v1alpha1 is the only (and storage) version; an object is stored in it.
  const before = join(dir, 'before.json');
  await writeFile(before, JSON.stringify(new MemcachedBeforeUpgrade(new App()).customResourceDefinition.toJson()));
  await installCRDs(plane.kubeConfig, [before]);
  await admin.request('POST', `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds`, {
    body: { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'old', namespace: NS }, spec: { size: 1 } },
  });

  // The upgrade: CRD and webhook configurations as synthesized, pointed at the stand-in Service; a
  // stand-in CA until the operator writes its own (self-managed certificates).
  const [webhookPort, probesPort] = [await freePort(), await freePort()];
  const service = await readinessGatedProxy(webhookPort, `http://127.0.0.1:${probesPort}/readyz`);
  cleanups.push(service.close);
  serviceUrl = `https://127.0.0.1:${service.port}`;
  const file = join(dir, 'memcached.json');
  const operator = new MemcachedOperator(new App());
  const objects = operator.node.findAll().filter((c) => 'kind' in c && ['CustomResourceDefinition', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'].includes((c as { kind: string }).kind));
  await writeFile(file, objects.map((o) => JSON.stringify((o as unknown as { toJson(): unknown }).toJson())).join('\n---\n'));
  await installCRDs(plane.kubeConfig, [file], 60_000, { webhook: { url: serviceUrl, caPem: createCertificateAuthority('stand-in', { notAfter: new Date(Date.now() + 86400_000) }).certPem } });

  const stop = new AbortController();
  let started!: () => void;
  const synced = new Promise<void>((r) => (started = r));
  const logFile = join(dir, 'run.log');
  const exit = runRun(
    {
      operators: 'memcached-operator', kubeconfig: plane.kubeconfigPath, metricsBindAddress: '0', healthProbeBindAddress: `127.0.0.1:${probesPort}`,
      webhookBindAddress: `127.0.0.1:${webhookPort}`, webhookCertHosts: '127.0.0.1', cacheSyncTimeoutMs: 90_000, gracefulShutdownTimeoutMs: 5000,
    },
    { signal: stop.signal, onStarted: () => started(), logger: pino(pino.destination({ dest: logFile, sync: true })) },
  );
  run = { stop, exit };
  cleanups.push(async () => {
    stop.abort();
    await exit;
  });
  // Before the fix /readyz waited for the caches, the stand-in Service never forwarded, and this run
  // ended with a CacheSyncError instead (memcacheds: conversion webhook … failed).
  const outcome = await Promise.race([synced.then(() => 'synced'), exit.then((code) => `exited ${code}`)]);
  expect(outcome).toBe('synced');
  expect(service.forwarded()).toBeGreaterThan(0);

  const readyz = await fetch(`http://127.0.0.1:${probesPort}/readyz?verbose`);
  expect(readyz.status).toBe(200);
  expect(await readyz.text()).toBe('[+]webhooks ok\nreadyz check passed\n');
  // The old object, read through /convert, is reconciled: its children are applied. (Its status is not
  // checked here: a status write to an object created in v1alpha1 is issue 22's versions part.)
  await eventually('the old Memcached reconciled', async () => {
    const list = await admin.request<{ items: KubeObject[] }>('GET', `/apis/apps/v1/namespaces/${NS}/deployments`);
    return list.items.some((d) => d.metadata?.ownerReferences?.some((o) => o.kind === 'Memcached' && o.name === 'old'));
  });
}, 240_000);

const caBundleOf = (obj: KubeObject, path: 'crd' | 'webhooks'): (string | undefined)[] =>
  path === 'crd'
    ? [(obj.spec as { conversion: { webhook: { clientConfig: { caBundle?: string } } } }).conversion.webhook.clientConfig.caBundle]
    : (obj.webhooks as { clientConfig: { caBundle?: string } }[]).map((w) => w.clientConfig.caBundle);

test('GIVEN the running operator WHEN its CRD and a webhook configuration are replaced without caBundle, and one is deleted and created again THEN every caBundle is written back with the current CA', async () => {
  expect(run).toBeDefined();
  const secret = await admin.request('GET', '/api/v1/namespaces/memcached-operator-system/secrets/memcached-operator-webhook-tls');
  const ca = (secret.data as Record<string, string>)['ca.crt']!; // base64 of the CA PEM: what caBundle holds
  const crd = await admin.request('GET', CRD_PATH);
  expect(caBundleOf(crd, 'crd')).toEqual([ca]);

  // `kubectl replace` of the synthesized form (pointed at the stand-in Service): no caBundle.
  const withoutCa = (obj: KubeObject) => {
    const copy = structuredClone(obj) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (copy.kind === 'CustomResourceDefinition') delete copy.spec.conversion.webhook.clientConfig.caBundle;
    else for (const w of copy.webhooks) delete w.clientConfig.caBundle;
    return copy;
  };
  // Re-read and retry on 409, as a user's `kubectl replace` would: the operator writes these objects too
  // (the storage-version migration trims the CRD's status.storedVersions, the injector its caBundle).
  const replaceWithoutCa = async (path: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.request('PUT', path, { body: withoutCa(await admin.request('GET', path)) });
        return;
      } catch (err) {
        if (!isApiError(err, 409) || attempt === 10) throw err;
      }
    }
  };
  await replaceWithoutCa(CRD_PATH);
  await replaceWithoutCa(MUTATING_PATH);
  // Deleted, then created after the operator started, from the synthesized YAML (no caBundle).
  await admin.request('DELETE', VALIDATING_PATH);
  const synthesized = new MemcachedOperator(new App()).node.findAll().find((c) => (c as { kind?: string }).kind === 'ValidatingWebhookConfiguration') as unknown as { toJson(): KubeObject };
  const created = synthesized.toJson() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const w of created.webhooks) w.clientConfig = { url: `${serviceUrl}${w.clientConfig.service.path}` };
  expect(created.webhooks.map((w: { clientConfig: { caBundle?: string } }) => w.clientConfig.caBundle)).toEqual([undefined]);
  await admin.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: created });

  // Before the fix the caBundles stayed empty until a restart: these waits timed out.
  await eventually('CRD caBundle back', async () => caBundleOf(await admin.request('GET', CRD_PATH), 'crd')[0] === ca);
  await eventually('mutating caBundle back', async () => caBundleOf(await admin.request('GET', MUTATING_PATH), 'webhooks').every((b) => b === ca));
  await eventually('validating caBundle written', async () => caBundleOf(await admin.request('GET', VALIDATING_PATH), 'webhooks').every((b) => b === ca));

  // The patch wrote the caBundle and nothing else.
  const after = await admin.request('GET', CRD_PATH);
  expect(withoutCa(after).spec).toEqual(withoutCa(crd).spec);
  // A conversion goes through again with the CA written back: the old object reads as v1alpha1.
  await eventually('conversion with the written-back CA', async () => (await admin.request('GET', `/apis/cache.example.com/v1alpha1/namespaces/${NS}/memcacheds/old`)).spec !== undefined);
}, 180_000);
