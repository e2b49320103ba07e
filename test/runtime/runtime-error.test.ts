/**
 * The runtime's errors (lib/runtime/runtime-error.ts): each names its step and reason, the object in its
 * message where there is one, keeps its cause, is recognised by brand across two copies of the SDK, and
 * is what the start-up steps really throw (their own functions, no fakes of them).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { brandClass } from '../../lib/operator/brand.js';
import { CacheSyncError } from '../../lib/runtime/cache/cache-sync-error.js';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { ApiError } from '../../lib/runtime/client/kube-client.js';
import { ClientCredentials, CredentialsError } from '../../lib/runtime/client/client-credentials.js';
import { KubeConfigError } from '../../lib/runtime/client/kube-config-source.js';
import { WriteFencedError } from '../../lib/runtime/client/write-gate.js';
import { runtimeErrorOf } from '../../lib/runtime/error-chain.js';
import { RenderError } from '../../lib/operator/errors.js';
import { ReconcileError } from '../../lib/runtime/errors.js';
import * as runtimeEntry from '../../lib/runtime/index.js';
import { errorFields } from '../../lib/runtime/logger.js';
import { LeadershipLostError } from '../../lib/runtime/lease/leader-election.js';
import { LeaderElectionConfigError, validateLeaderElectionTiming } from '../../lib/runtime/lease/lease-timing.js';
import { startProbesServer } from '../../lib/runtime/probes/probes-server.js';
import { AccessReviewError, RbacSelfCheckError } from '../../lib/runtime/startup/rbac-self-check.js';
import { ServerStartError } from '../../lib/runtime/server-start-error.js';
import { StorageVersionMigrationError, planStorageVersionMigration } from '../../lib/runtime/startup/storage-version-migration.js';
import { RuntimeError } from '../../lib/runtime/runtime-error.js';
import { TracingConfigError, tracesExportFromEnv } from '../../lib/runtime/tracing/tracing-from-env.js';
import { caBundleTargetList, targetReference } from '../../lib/runtime/webhook/ca-bundle-injector.js';
import { WebhookCertificateError } from '../../lib/runtime/webhook/serving-certificate.js';
import { startWebhookServer } from '../../lib/runtime/webhook/webhook-server.js';
import { createCertificateAuthority, issueServingCertificate } from '../../lib/runtime/webhook/x509.js';
import { FakeKubeClient } from '../support/fake-kube-client.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'runtime-error-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const forbidden = new ApiError('GET', '/api/v1/namespaces/ops/secrets/web-tls', 403, 'Forbidden', { message: 'secrets "web-tls" is forbidden' }, 'secrets "web-tls" is forbidden');

/** One error of each class, with the step, reason and message it must have. */
const family: [string, RuntimeError, string, string, RegExp][] = [
  ['KubeConfigError', new KubeConfigError('NoCurrentCluster', 'kubeconfig has no current cluster'), 'kubeconfig', 'NoCurrentCluster', /^kubeconfig has no current cluster$/],
  ['CredentialsError', new CredentialsError('TokenFileUnreadable', 'user "u" tokenFile /t: ENOENT'), 'credentials', 'TokenFileUnreadable', /^user "u" tokenFile \/t: ENOENT$/],
  ['ServerStartError', new ServerStartError('metrics-server', 'ListenFailed', 'cannot listen on :8080: EADDRINUSE'), 'metrics-server', 'ListenFailed', /^metrics server: cannot listen on :8080/],
  [
    'WebhookCertificateError',
    new WebhookCertificateError('SecretFailed', { kind: 'Secret', namespace: 'ops', name: 'web-tls' }, 'could not be read or written: 403', { cause: forbidden }),
    'webhook-certificate',
    'SecretFailed',
    /^webhook certificate: Secret ops\/web-tls: could not be read or written: 403$/,
  ],
  ['RbacSelfCheckError', new RbacSelfCheckError([{ verb: 'list', group: 'apps', resource: 'deployments', namespace: 'ns' }]), 'rbac-self-check', 'MissingPermissions', /cannot list deployments\.apps in namespace "ns"/],
  [
    'AccessReviewError',
    new AccessReviewError({ verb: 'get', group: '', resource: 'pods' }, { cause: new Error('socket hang up') }),
    'rbac-self-check',
    'AccessReviewFailed',
    /^RBAC self-check: could not ask whether the operator can get pods at the cluster scope: socket hang up$/,
  ],
  ['CacheSyncError', new CacheSyncError('CacheSyncTimeout', [{ resource: 'widgets.example.com', lastError: 'list failed: 404' }], 2000), 'cache-sync', 'CacheSyncTimeout', /^caches did not sync within 2000 ms \(CacheSyncTimeout\): widgets\.example\.com \(list failed: 404\)$/],
  ['LeaderElectionConfigError', new LeaderElectionConfigError('leaseDuration must be > 0'), 'leader-election', 'InvalidLeaderElectionConfig', /^leader election: leaseDuration must be > 0$/],
  ['LeadershipLostError', new LeadershipLostError({ namespace: 'ops', name: 'web' }), 'leader-election', 'LeadershipLost', /^leader election: Lease ops\/web: leadership lost/],
  ['WriteFencedError', new WriteFencedError('PATCH', '/apis/apps/v1/namespaces/n/deployments/d', 'leader election has not started'), 'leader-election', 'WriteFenced', /^PATCH \/apis\/apps\/v1\/namespaces\/n\/deployments\/d: not sent/],
  [
    'StorageVersionMigrationError',
    new StorageVersionMigrationError('widgets.example.com', 'ListFailed', 'LIST failed: 403', { cause: forbidden }),
    'storage-version-migration',
    'ListFailed',
    /^storage-version migration of CustomResourceDefinition widgets\.example\.com: ListFailed: LIST failed: 403$/,
  ],
  ['TracingConfigError', new TracingConfigError('UnsupportedExporter', 'OTEL_TRACES_EXPORTER: unsupported exporter "zipkin"'), 'tracing', 'UnsupportedExporter', /^tracing: OTEL_TRACES_EXPORTER: unsupported exporter "zipkin"$/],
  ['ReconcileError', new ReconcileError('PruneFailed', 'prune Deployment ns/w: 403'), 'prune', 'PruneFailed', /^prune Deployment ns\/w: 403$/],
];

describe('the family', () => {
  test.each(family)('GIVEN a %s THEN it is a RuntimeError with its step, reason, name and message', (name, err, step, reason, message) => {
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ name, step, reason });
    expect(err.message).toMatch(message);
  });

  test('GIVEN an error about an object THEN objectRef holds it and the message names it as Kind namespace/name; its cause is kept', () => {
    const lost = new LeadershipLostError({ namespace: 'ops', name: 'web' });
    expect(lost.objectRef).toEqual({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: 'ops', name: 'web' });
    const migration = new StorageVersionMigrationError('widgets.example.com', 'ListFailed', 'x', { cause: forbidden });
    expect(migration.objectRef).toMatchObject({ kind: 'CustomResourceDefinition', name: 'widgets.example.com' });
    expect(migration.cause).toBe(forbidden);
    expect(new KubeConfigError('NoCurrentCluster', 'x').objectRef).toBeUndefined();
  });

  test('GIVEN the package entry THEN it exports the base, the start-up errors and runtimeErrorOf', () => {
    for (const name of [
      'RuntimeError', 'runtimeErrorOf', 'KubeConfigError', 'CredentialsError', 'ServerStartError', 'WebhookCertificateError',
      'RbacSelfCheckError', 'AccessReviewError', 'CacheSyncError', 'LeaderElectionConfigError', 'LeadershipLostError', 'TracingConfigError',
    ]) {
      expect(typeof (runtimeEntry as Record<string, unknown>)[name]).toBe('function');
    }
  });
});

describe('brand', () => {
  /** Another copy of the SDK's classes: the same brand names on other class objects. */
  function secondCopy() {
    abstract class OtherRuntimeError extends Error {
      static {
        brandClass(this, 'RuntimeError');
      }
    }
    class OtherCacheSyncError extends OtherRuntimeError {
      static {
        brandClass(this, 'CacheSyncError');
      }
      readonly step = 'cache-sync';
      readonly reason = 'CacheSyncTimeout';
    }
    return { OtherRuntimeError, OtherCacheSyncError };
  }

  test('GIVEN an error made by another copy of the SDK THEN instanceof and runtimeErrorOf recognise it, and the other copy recognises ours', () => {
    const { OtherRuntimeError, OtherCacheSyncError } = secondCopy();
    const foreign = new OtherCacheSyncError('caches did not sync');
    expect(foreign).toBeInstanceOf(RuntimeError);
    expect(foreign).toBeInstanceOf(CacheSyncError);
    expect(foreign).not.toBeInstanceOf(RbacSelfCheckError);
    expect(runtimeErrorOf(new Error('start failed', { cause: foreign }))).toBe(foreign);
    expect(new RbacSelfCheckError([])).toBeInstanceOf(OtherRuntimeError);
  });

  test('GIVEN plain errors THEN they are no RuntimeError and runtimeErrorOf finds none', () => {
    expect(new Error('x')).not.toBeInstanceOf(RuntimeError);
    expect(forbidden).not.toBeInstanceOf(RuntimeError);
    expect(runtimeErrorOf(new Error('x', { cause: forbidden }))).toBeUndefined();
    expect(runtimeErrorOf(undefined)).toBeUndefined();
  });
});

describe('runtimeErrorOf and log fields', () => {
  test('GIVEN a CredentialsError under an AccessReviewError THEN the chain gives the outer step first, the inner one through its cause', () => {
    const credentials = new CredentialsError('TokenFileUnreadable', 'user "u" tokenFile /t: ENOENT');
    const review = new AccessReviewError({ verb: 'list', group: '', resource: 'pods' }, { cause: credentials });
    expect(runtimeErrorOf(review)).toBe(review);
    expect(runtimeErrorOf(review.cause)).toBe(credentials);
  });

  test('GIVEN a runtime error THEN its log fields carry name, reason and step', () => {
    expect(errorFields(new LeadershipLostError({ namespace: 'ops', name: 'web' })).err).toMatchObject({ name: 'LeadershipLostError', reason: 'LeadershipLost', step: 'leader-election' });
  });

  test('GIVEN a user error wrapped by RenderError and ReconcileError THEN the log fields keep its stack, where it was thrown, not the wrappers\'', () => {
    const thrown = new Error('no replicas given'); // this line is the user's throw
    const wrapped = new ReconcileError('RenderFailed', 'render App ns/a: no replicas given', {
      cause: new RenderError('RenderFailed', { kind: 'App', namespace: 'ns', name: 'a' }, 'render() threw: no replicas given', { cause: thrown }),
      step: 'render',
    });

    const fields = errorFields(wrapped).err;

    expect(fields).toMatchObject({ name: 'ReconcileError', message: 'render App ns/a: no replicas given', reason: 'RenderFailed', step: 'render' });
    expect(fields.stack).toBe(thrown.stack);
    expect(fields.stack!.split('\n')[1]).toMatch(/test\/runtime\/runtime-error\.test\.ts:\d+:\d+\)?$/);
    // An SDK error that wraps nothing keeps its own stack; a thrown string has none.
    const own = new LeadershipLostError({ namespace: 'ops', name: 'web' });
    expect(errorFields(own).err.stack).toBe(own.stack);
    expect(errorFields('boom').err).toEqual({ message: 'boom' });
  });
});

describe('what the start-up steps throw', () => {
  test('GIVEN a kubeconfig with no current cluster WHEN a client is made THEN KubeConfigError NoCurrentCluster', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    expect(() => new ApiClient({ kubeConfig: kc })).toThrow(expect.objectContaining({ name: 'KubeConfigError', step: 'kubeconfig', reason: 'NoCurrentCluster' }));
  });

  test('GIVEN a token file that is empty WHEN the credentials are first read THEN CredentialsError TokenFileUnreadable naming the user and file', async () => {
    const token = join(dir, 'empty-token');
    await writeFile(token, '');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u', authProvider: { name: 'tokenFile', config: { tokenFile: token } } }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const err = await new ClientCredentials(kc).current().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CredentialsError);
    expect(err).toMatchObject({ step: 'credentials', reason: 'TokenFileUnreadable', message: `user "u" tokenFile ${token}: token file ${token} is empty` });
  });

  test('GIVEN bad bind addresses WHEN the servers start THEN ServerStartError InvalidBindAddress naming the server', async () => {
    await expect(startProbesServer({ metricsBindAddress: '8080', healthProbeBindAddress: '0' })).rejects.toMatchObject({
      name: 'ServerStartError', step: 'metrics-server', reason: 'InvalidBindAddress', message: expect.stringMatching(/^metrics server: bind address "8080": expected host:port/),
    });
    await expect(startProbesServer({ metricsBindAddress: '0', healthProbeBindAddress: 'localhost' })).rejects.toMatchObject({ step: 'probes-server', reason: 'InvalidBindAddress' });
    const ca = createCertificateAuthority('test-ca', { notAfter: new Date(Date.now() + 86_400_000) });
    const certificate = issueServingCertificate(ca, ['127.0.0.1'], { notAfter: new Date(Date.now() + 86_400_000) });
    await expect(startWebhookServer({ operators: [], client: new FakeKubeClient(), bindAddress: '9443', certificate })).rejects.toMatchObject({
      name: 'ServerStartError', step: 'webhook-server', reason: 'InvalidBindAddress', message: expect.stringMatching(/^webhook server: bind address "9443"/),
    });
  });

  test('GIVEN a port in use WHEN the probe server starts on it THEN ServerStartError ListenFailed with Node\'s error as cause', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const err = await startProbesServer({ metricsBindAddress: '0', healthProbeBindAddress: `127.0.0.1:${port}` }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServerStartError);
      expect(err).toMatchObject({ step: 'probes-server', reason: 'ListenFailed', message: expect.stringContaining(`health probe server: cannot listen on 127.0.0.1:${port}`) });
      expect((err as Error).cause).toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  test('GIVEN leader-election timings out of order THEN LeaderElectionConfigError naming the values', () => {
    expect(() => validateLeaderElectionTiming(10_000, 15_000, 2000)).toThrow(expect.objectContaining({ name: 'LeaderElectionConfigError', step: 'leader-election', message: expect.stringContaining('leaseDuration=10000ms, renewDeadline=15000ms') }));
  });

  test('GIVEN OTEL_EXPORTER_OTLP_PROTOCOL=grpc THEN TracingConfigError naming the variable and value', () => {
    expect(() => tracesExportFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      expect.objectContaining({ name: 'TracingConfigError', step: 'tracing', reason: 'UnsupportedProtocol', message: expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol "grpc"') }),
    );
  });

  test('GIVEN a CRD with no storage version THEN StorageVersionMigrationError about that CRD', () => {
    expect(() => planStorageVersionMigration('widgets.example.com', { spec: { versions: [{ name: 'v1', storage: false }] } })).toThrow(
      expect.objectContaining({ step: 'storage-version-migration', reason: 'NoStorageVersion', objectRef: expect.objectContaining({ kind: 'CustomResourceDefinition', name: 'widgets.example.com' }) }),
    );
  });

  test('GIVEN caBundle targets THEN each is named by its kind in errors', () => {
    const targets = caBundleTargetList({ customResourceDefinitions: ['widgets.example.com'], validatingWebhookConfigurations: ['v'], mutatingWebhookConfigurations: ['m'] });
    expect(targets.map(targetReference)).toEqual([
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: 'widgets.example.com' },
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', name: 'v' },
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', name: 'm' },
    ]);
  });
});
