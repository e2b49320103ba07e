/**
 * `cdk8s-operator run` starts without client-node's generated API (`dist/gen/`, 60 MB and 0.6 s of CPU
 * of the 78 MB / 0.9 s that importing client-node costs): the kubeconfig is loaded by
 * lib/cli/kubeconfig-loader.ts. The CLI runs as a user runs it, under a module-load trace
 * (test/support/module-load-trace.mjs), with a token user against a server that refuses connections:
 * it loads the operators and the kubeconfig, fails its RBAC self-check and exits 1.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'cdk8s-operator.js');
const trace = join(root, 'test', 'support', 'module-load-trace.mjs');
const GENERATED_API = '/node_modules/@kubernetes/client-node/dist/gen/';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'run-start-imports-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `node --import module-load-trace.mjs ...args`; resolves to the exit code, output and loaded URLs. */
async function traced(name: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string; urls: string[] }> {
  const file = join(dir, `${name}.trace`);
  await writeFile(file, '');
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', trace, ...args], {
      cwd: root,
      env: { ...withoutOtel(process.env), NODE_OPTIONS: '', MODULE_LOAD_TRACE: file, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
  const urls = (await readFile(file, 'utf8')).split('\n').filter((u) => u !== '');
  return { code, output, urls };
}

/** The environment without OTEL_* variables: tracing off unless a test sets them. */
function withoutOtel(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')));
}

test('GIVEN the trace THEN it sees the generated API when client-node\'s main entry is imported (the check below can fail)', async () => {
  const { code, urls } = await traced('control', ['--input-type=module', '-e', "await import('@kubernetes/client-node')"]);
  expect(code).toBe(0);
  expect(urls.filter((u) => u.includes(GENERATED_API)).length).toBeGreaterThan(100);
});

/** The OpenTelemetry SDK's packages (the API, `@opentelemetry/api`, is always loaded: it is the runtime's no-op tracer). */
const OTEL_SDK = /\/node_modules\/@opentelemetry\/(sdk-trace-base|sdk-trace|resources|exporter-trace-otlp-[a-z]+|otlp-exporter-base|otlp-transformer|core)\//;

/** A kubeconfig whose server refuses connections: `run` gets as far as its first request. */
async function refusingKubeconfig(): Promise<string> {
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return kubeconfig;
}

test('GIVEN `run` with a kubeconfig THEN it loads it and reaches the API server without loading client-node\'s generated API', async () => {
  const kubeconfig = await refusingKubeconfig();
  const { code, output, urls } = await traced('run', [
    bin, 'run', '--operators', 'memcached-operator', '--kubeconfig', kubeconfig, '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
  ]);
  // It got past loading the operators and the kubeconfig: the first request was refused.
  expect(output).toContain('ECONNREFUSED 127.0.0.1:1');
  expect(code).toBe(1);
  expect(urls.filter((u) => u.includes(GENERATED_API))).toEqual([]);
  expect(urls.filter((u) => /\/@kubernetes\/client-node\/dist\/(index|config)\.js$/.test(u))).toEqual([]);
  expect(urls.some((u) => u.endsWith('/lib/cli/kubeconfig-loader.ts') || u.endsWith('/cli/kubeconfig-loader.js'))).toBe(true);
});

test('GIVEN `run` without OTEL_* variables THEN the OpenTelemetry SDK is not loaded', async () => {
  const kubeconfig = await refusingKubeconfig();
  const { code, output, urls } = await traced('run-untraced', [
    bin, 'run', '--operators', 'memcached-operator', '--kubeconfig', kubeconfig, '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
  ]);
  expect(output).toContain('ECONNREFUSED 127.0.0.1:1');
  expect(code).toBe(1);
  expect(output).not.toContain('tracing on');
  expect(urls.filter((u) => OTEL_SDK.test(u))).toEqual([]);
  expect(urls.some((u) => u.includes('/node_modules/@opentelemetry/api/'))).toBe(true);
});

test('GIVEN `run` with OTEL_EXPORTER_OTLP_ENDPOINT THEN it loads the SDK and says tracing is on (the check above can fail)', async () => {
  const kubeconfig = await refusingKubeconfig();
  const { code, output, urls } = await traced(
    'run-traced',
    [bin, 'run', '--operators', 'memcached-operator', '--kubeconfig', kubeconfig, '--metrics-bind-address', '0', '--health-probe-bind-address', '0'],
    // Nothing listens there: the spans of this run (it reconciles nothing) are never sent.
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' },
  );
  expect(output).toContain('ECONNREFUSED 127.0.0.1:1');
  expect(code).toBe(1);
  expect(output).toContain('tracing on: exporting spans over OTLP');
  expect(urls.filter((u) => OTEL_SDK.test(u)).length).toBeGreaterThan(0);
});

/** The webhook server and its serving-certificate rotation (the certificate file readers are shared with the metrics server, and stay). */
const WEBHOOK_SERVING = /\/runtime\/webhook\/(webhook-runner|webhook-server|serving-certificate|ca-bundle-injector|webhook-reviews|admission-[a-z-]+)\.(ts|js)$/;
const PINO_PRETTY = /\/node_modules\/pino-pretty\//;
/** Certificates made in memory (x509.ts): only for a self-signed metrics certificate or the webhook server's. */
const CERTIFICATE_MAKING = /(\/node_modules\/node-forge\/|\/runtime\/webhook\/x509\.(ts|js)$)/;

test('GIVEN `run` without a webhook bind address, a secure metrics server or text logs THEN neither the webhook server, certificate making nor pino-pretty is loaded', async () => {
  const kubeconfig = await refusingKubeconfig();
  const { code, output, urls } = await traced('run-plain', [
    bin, 'run', '--operators', 'memcached-operator', '--kubeconfig', kubeconfig, '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
  ]);
  expect(output).toContain('ECONNREFUSED 127.0.0.1:1');
  expect(code).toBe(1);
  expect(urls.filter((u) => WEBHOOK_SERVING.test(u))).toEqual([]);
  expect(urls.filter((u) => CERTIFICATE_MAKING.test(u))).toEqual([]);
  expect(urls.filter((u) => PINO_PRETTY.test(u))).toEqual([]);
  // the runtime itself was loaded and traced
  expect(urls.some((u) => /\/runtime\/run-operators\.(ts|js)$/.test(u))).toBe(true);
});

test('GIVEN `run` with --webhook-bind-address and --log-format text THEN it loads the webhook server, certificate making and pino-pretty (the checks above can fail)', async () => {
  const kubeconfig = await refusingKubeconfig();
  const { code, output, urls } = await traced('run-webhooks', [
    bin, 'run', '--operators', 'memcached-operator', '--kubeconfig', kubeconfig, '--metrics-bind-address', '0', '--health-probe-bind-address', '0',
    '--webhook-bind-address', '127.0.0.1:0', '--webhook-cert-dir', join(dir, 'no-webhook-certs'), '--log-format', 'text',
  ]);
  expect(code).toBe(1);
  expect(output).not.toContain('"level"'); // pino-pretty's text, not JSON lines
  expect(urls.filter((u) => WEBHOOK_SERVING.test(u)).length).toBeGreaterThan(0);
  expect(urls.filter((u) => CERTIFICATE_MAKING.test(u)).length).toBeGreaterThan(1); // x509.ts and node-forge
  expect(urls.filter((u) => PINO_PRETTY.test(u)).length).toBeGreaterThan(0);
});
