import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { loadKubeConfig } from '../../lib/cli/kubeconfig-loader.js';
import { pino } from 'pino';
import { registerRunCommand, runRun } from '../../lib/cli/run-command.js';
import { defaultMetricsBindAddress } from '../../lib/runtime/probes/probes-server.js';

function kubeconfig(server: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
}

describe('cdk8s-operator run', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'run-command-'));
    await writeFile(join(dir, 'flag.json'), kubeconfig('https://flag.example:6443'));
    await writeFile(join(dir, 'env.json'), kubeconfig('https://env.example:6443'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('GIVEN --kubeconfig THEN it wins over KUBECONFIG', async () => {
    const kc = await loadKubeConfig(join(dir, 'flag.json'), { KUBECONFIG: join(dir, 'env.json') });
    expect(kc.getCurrentCluster()?.server).toBe('https://flag.example:6443');
  });

  test('GIVEN no flag THEN KUBECONFIG is used', async () => {
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = join(dir, 'env.json');
    try {
      expect((await loadKubeConfig(undefined, process.env)).getCurrentCluster()?.server).toBe('https://env.example:6443');
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  test('GIVEN --context naming no context of the kubeconfig THEN exit 1 before any request, naming the contexts there are', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const code = await runRun({ kubeconfig: join(dir, 'flag.json'), context: 'nope', metricsBindAddress: '0', healthProbeBindAddress: '0' }, { logger });
    expect(code).toBe(1);
    expect(lines.join('')).toContain('--context nope: no such context in the kubeconfig; known: x');
  });

  test('accepts the args the operator Deployment passes (lib/operator/manifests/operator-deployment.ts)', async () => {
    const program = new Command('cdk8s-operator').exitOverride();
    let seen: Record<string, unknown> | undefined;
    registerRunCommand(program);
    const run = program.commands.find((c) => c.name() === 'run')!;
    run.action((options: Record<string, unknown>) => {
      seen = options;
    });
    await program.parseAsync(['node', 'x', 'run', '--operators', 'memcached-operator', '--metrics-bind-address=:8080', '--health-probe-bind-address=:8081', '--leader-elect', '--namespace=apps']);
    expect(seen).toMatchObject({ operators: 'memcached-operator', metricsBindAddress: ':8080', healthProbeBindAddress: ':8081', leaderElect: true, namespace: 'apps', rbacSelfCheck: true });
  });

  test('GIVEN no bind addresses or shutdown timeout THEN metrics are secure (on :8443, chosen by runOperators), probes on :8081, 30 s; a duration flag parses', async () => {
    const program = new Command('cdk8s-operator').exitOverride();
    const seen: Record<string, unknown>[] = [];
    registerRunCommand(program);
    const run = program.commands.find((c) => c.name() === 'run')!;
    run.action((options: Record<string, unknown>) => {
      seen.push(options);
    });
    await program.parseAsync(['node', 'x', 'run']);
    await program.parseAsync(['node', 'x', 'run', '--graceful-shutdown-timeout', '1m30s', '--cache-sync-timeout', '10s', '--log-format', 'text']);
    expect(seen[0]).toMatchObject({ metricsSecure: true, healthProbeBindAddress: ':8081', gracefulShutdownTimeout: 30_000, cacheSyncTimeout: 120_000, logFormat: 'json' });
    expect(seen[0]!.metricsBindAddress).toBeUndefined();
    expect(defaultMetricsBindAddress(true)).toBe(':8443');
    expect(defaultMetricsBindAddress(false)).toBe(':8080');
    expect(seen[1]).toMatchObject({ gracefulShutdownTimeout: 90_000, cacheSyncTimeout: 10_000, logFormat: 'text' });
  });

  test('GIVEN --metrics-secure with or without a value THEN it parses as Go flags do; a value that is no boolean is refused naming the flag', async () => {
    const program = new Command('cdk8s-operator').exitOverride().configureOutput({ writeErr: () => undefined });
    const seen: unknown[] = [];
    registerRunCommand(program);
    program.commands.find((c) => c.name() === 'run')!.action((options: Record<string, unknown>) => {
      seen.push(options.metricsSecure);
    });
    for (const flags of [['--metrics-secure'], ['--metrics-secure=false'], ['--metrics-secure', 'false'], ['--metrics-secure=0'], ['--metrics-secure=true']]) {
      await program.parseAsync(['node', 'x', 'run', ...flags]);
    }
    expect(seen).toEqual([true, false, false, false, true]);
    await expect(program.parseAsync(['node', 'x', 'run', '--metrics-secure=maybe'])).rejects.toThrow(/--metrics-secure \[bool\]' argument 'maybe' is invalid\. must be true or false/);
  });

  test('registers the documented flags', () => {
    const program = new Command('cdk8s-operator');
    registerRunCommand(program);
    const run = program.commands.find((c) => c.name() === 'run')!;
    expect(run.options.map((o) => o.long)).toEqual([
      '--operators',
      '--module',
      '--kubeconfig',
      '--context',
      '--namespace',
      '--max-concurrent-reconciles',
      '--initial-list',
      '--log-level',
      '--log-format',
      '--metrics-bind-address',
      '--metrics-secure',
      '--metrics-cert-path',
      '--health-probe-bind-address',
      '--graceful-shutdown-timeout',
      '--cache-sync-timeout',
      '--leader-elect',
      '--leader-election-namespace',
      '--leader-election-id',
      '--leader-elect-lease-duration',
      '--leader-elect-renew-deadline',
      '--leader-elect-retry-period',
      '--sharding',
      '--sharding-namespace',
      '--sharding-ring',
      '--sharding-buckets',
      '--no-rbac-self-check',
      '--webhook-bind-address',
      '--webhook-cert-hosts',
      '--webhook-cert-dir',
      '--validate-children',
    ]);
  });

  test('GIVEN --webhook-cert-dir with --webhook-cert-hosts THEN exit 1 before anything loads, saying they exclude each other', async () => {
    const errors: string[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (_fields: object, msg: string) => void errors.push(msg) };
    const code = await runRun({ webhookCertDir: '/certs', webhookCertHosts: '127.0.0.1', module: 'no-such-module.js' }, { logger });
    expect(code).toBe(1);
    expect(errors).toEqual(["cannot start: --webhook-cert-hosts and --webhook-cert-dir exclude each other (the hosts of a certificate read from a directory are its issuer's)"]);
  });
});
