/**
 * Tracing from the OTEL_* variables (lib/runtime/tracing/tracing-from-env.ts): which settings turn it on,
 * which are refused; off gives a tracer that records nothing; on exports spans over OTLP/HTTP to an
 * in-process receiver (test/support/otlp-receiver.ts), with the service name, and shutdown flushes them.
 * That the SDK is not loaded when off is test/cli/run-start-imports.test.ts' (a fresh process).
 */
import { type Environment, TracingConfigError, startTracing, tracesExportFromEnv } from '../../../lib/runtime/tracing/tracing-from-env.js';
import { silentLogger, type Logger } from '../../../lib/runtime/logger.js';
import { OtlpReceiver } from '../../support/otlp-receiver.js';

describe('tracesExportFromEnv', () => {
  const off = { kind: 'off' } as const;
  const otlp = (protocol: string) => ({ kind: 'otlp', protocol }) as const;
  test.each<[string, Environment, { kind: string; protocol?: string }]>([
    ['nothing set', {}, off],
    ['only OTEL_SERVICE_NAME', { OTEL_SERVICE_NAME: 'x' }, off],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, off],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, otlp('http/protobuf')],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }, otlp('http/protobuf')],
    ['OTEL_TRACES_EXPORTER=otlp alone (the SDK\'s default endpoint)', { OTEL_TRACES_EXPORTER: 'otlp' }, otlp('http/protobuf')],
    ['OTEL_TRACES_EXPORTER=none with an endpoint', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, off],
    ['OTEL_SDK_DISABLED=TRUE with an endpoint', { OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, off],
    ['OTEL_SDK_DISABLED=false with an endpoint', { OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, otlp('http/protobuf')],
    ['http/json', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, otlp('http/json')],
    ['the traces protocol over the general one', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }, otlp('http/json')],
  ])('GIVEN %s %o THEN %o', (_, env, expected) => {
    expect(tracesExportFromEnv(env)).toMatchObject(expected);
  });

  test.each<[string, Environment, string, RegExp]>([
    ['an exporter this SDK lacks', { OTEL_TRACES_EXPORTER: 'otlp,zipkin' }, 'UnsupportedExporter', /^tracing: OTEL_TRACES_EXPORTER: unsupported exporter "zipkin"; this SDK supports "otlp" and "none"$/],
    ['grpc', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, 'UnsupportedProtocol', /^tracing: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: unsupported protocol "grpc"; .*4318/],
  ])('GIVEN %s THEN TracingConfigError naming the variable', (_, env, reason, message) => {
    let thrown: unknown;
    try {
      tracesExportFromEnv(env);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TracingConfigError);
    expect(thrown).toMatchObject({ reason, step: 'tracing' });
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('startTracing', () => {
  const saved = { ...process.env };
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
  });

  afterEach(() => {
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_') && !(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  afterAll(async () => {
    await receiver.close();
  });

  test('GIVEN no OTEL_* variable THEN the tracer records nothing and shutdown does nothing', async () => {
    const tracing = await startTracing({ serviceName: 'svc', logger: silentLogger, env: {} });
    expect(tracing.exporting).toBe(false);
    const span = tracing.tracer.startSpan('x');
    expect(span.isRecording()).toBe(false);
    span.end();
    await tracing.shutdown();
    expect(receiver.requests).toEqual([]);
  });

  test('GIVEN OTEL_EXPORTER_OTLP_ENDPOINT and http/json THEN a span reaches the receiver at /v1/traces with the service name, flushed by shutdown', async () => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    const lines: string[] = [];
    const logger: Logger = { ...silentLogger, info: (_fields, msg) => void lines.push(msg) };
    const tracing = await startTracing({ serviceName: 'svc', logger });
    expect(tracing.exporting).toBe(true);
    const span = tracing.tracer.startSpan('unit span', { attributes: { a: 1 } });
    span.end();
    await tracing.shutdown();
    const received = receiver.spans().find((s) => s.name === 'unit span');
    expect(received).toMatchObject({ attributes: { a: 1 }, resource: { 'service.name': 'svc' }, scope: 'cdk8s-operator-sdk', parentSpanId: '' });
    expect(receiver.requests.map((r) => r.path)).toContain('/v1/traces');
    expect(lines).toContain('tracing on: exporting spans over OTLP');
  });

  test('GIVEN OTEL_SERVICE_NAME THEN it names the service instead of the default', async () => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'named-by-env' });
    const tracing = await startTracing({ serviceName: 'svc', logger: silentLogger });
    tracing.tracer.startSpan('named span').end();
    await tracing.shutdown();
    expect(receiver.spans().find((s) => s.name === 'named span')?.resource['service.name']).toBe('named-by-env');
  });

  test('GIVEN only an endpoint THEN the default protocol is http/protobuf', async () => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    const before = receiver.requests.length;
    const tracing = await startTracing({ serviceName: 'svc', logger: silentLogger });
    tracing.tracer.startSpan('protobuf span').end();
    await tracing.shutdown();
    const sent = receiver.requests.slice(before);
    expect(sent.map((r) => [r.path, r.contentType])).toEqual([['/v1/traces', 'application/x-protobuf']]);
    // A protobuf string field is its UTF-8 bytes: the span's name is in the body.
    expect(sent[0]?.body.includes(Buffer.from('protobuf span'))).toBe(true);
  });

  test('GIVEN a collector that refuses the export THEN the SDK\'s error reaches the logger', async () => {
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:1/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    const errors: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, msg) => void errors.push(msg), warn: (_fields, msg) => void errors.push(msg) };
    const tracing = await startTracing({ serviceName: 'svc', logger });
    tracing.tracer.startSpan('lost span').end();
    await tracing.shutdown();
    expect(errors.length).toBeGreaterThan(0);
  });
});
