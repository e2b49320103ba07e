/**
 * Tracing as the standard `OTEL_*` environment variables configure it: the OpenTelemetry SDK with an
 * OTLP exporter when they ask for one, nothing at all otherwise. Read once, at the edge
 * (`runOperators`, `cdk8s-operator run` / `dev`); the runtime gets only a `Tracer`.
 *
 * When tracing is off the SDK is not even loaded (the packages are imported dynamically, here, only when
 * on) and the runtime gets `@opentelemetry/api`'s global tracer, a no-op unless the application
 * registered a tracer provider of its own.
 *
 * @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
 * @see https://opentelemetry.io/docs/specs/otel/protocol/exporter/
 */
import { DiagLogLevel, type DiagLogger, type Tracer, diag } from '@opentelemetry/api';
import { brandClass } from '../../operator/brand.js';
import { type Logger, errorFields } from '../logger.js';
import { RuntimeError } from '../runtime-error.js';
import { TRACER_NAME, globalTracer } from './reconcile-trace.js';

/** The environment, as `process.env`. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** OTLP transports this SDK can send spans over. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** What the environment asks of tracing: nothing, or export over OTLP. */
export type TracesExport = { readonly kind: 'off'; readonly why: string } | { readonly kind: 'otlp'; readonly protocol: OtlpProtocol };

/** Why {@link tracesExportFromEnv} refused the environment. */
export type TracingConfigFailureReason = 'UnsupportedExporter' | 'UnsupportedProtocol';

/**
 * An `OTEL_*` variable asks for something this SDK cannot do; the message (`tracing: VARIABLE: …`) names
 * the variable, its value and what is supported. Step `tracing`; branded.
 */
export class TracingConfigError extends RuntimeError {
  static {
    brandClass(this, 'TracingConfigError');
  }

  override readonly step = 'tracing';
  constructor(
    override readonly reason: TracingConfigFailureReason,
    message: string,
  ) {
    super(`tracing: ${message}`);
    this.name = 'TracingConfigError';
  }
}

/** A variable's value, trimmed; undefined when unset or empty (the spec treats empty as unset). */
function variable(env: Environment, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/**
 * Decides from the environment whether to export spans, and how:
 *
 * - `OTEL_SDK_DISABLED=true` → off.
 * - `OTEL_TRACES_EXPORTER`: `otlp` → export; `none` → off; any other value (`console`, `zipkin` …) →
 *   {@link TracingConfigError} `UnsupportedExporter`.
 * - `OTEL_TRACES_EXPORTER` unset → export only when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 *   `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise off. (The spec's default exporter is `otlp`; an operator
 *   that sent spans to `localhost:4318` in every cluster without being asked would only log failures.)
 * - Protocol: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, @default
 *   'http/protobuf': the spec's default; `http/json` also; `grpc` → {@link TracingConfigError}
 *   `UnsupportedProtocol` (send to the collector's OTLP/HTTP port, 4318, instead).
 *
 * The rest (endpoint, headers, timeout, compression, certificates, sampler, batch sizes, resource
 * attributes) is read by the OpenTelemetry SDK itself, as the spec says.
 */
export function tracesExportFromEnv(env: Environment): TracesExport {
  if (variable(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { kind: 'off', why: 'OTEL_SDK_DISABLED=true' };
  const exporters = variable(env, 'OTEL_TRACES_EXPORTER')?.split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  if (exporters && exporters.length > 0) {
    const unsupported = exporters.filter((e) => e !== 'otlp' && e !== 'none');
    if (unsupported.length > 0) {
      throw new TracingConfigError('UnsupportedExporter', `OTEL_TRACES_EXPORTER: unsupported exporter ${unsupported.map((e) => `"${e}"`).join(', ')}; this SDK supports "otlp" and "none"`);
    }
    if (!exporters.includes('otlp')) return { kind: 'off', why: 'OTEL_TRACES_EXPORTER=none' };
  } else if (!variable(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') && !variable(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')) {
    return { kind: 'off', why: 'no OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT' };
  }
  const protocolVariable = variable(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = variable(env, protocolVariable) ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new TracingConfigError(
      'UnsupportedProtocol',
      `${protocolVariable}: unsupported protocol "${protocol}"; this SDK sends OTLP over HTTP: "http/protobuf" (the default) or "http/json" (a collector's OTLP/HTTP port is 4318)`,
    );
  }
  return { kind: 'otlp', protocol };
}

/** Tracing as started: the tracer to hand the runtime, and its shutdown. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Whether spans are exported. */
  readonly exporting: boolean;
  /** Exports the spans still buffered and stops the exporter (on graceful stop). Never rejects: a failure is logged. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  /** `service.name` of the spans unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) sets it. */
  readonly serviceName: string;
  /** Where "tracing on" and the SDK's own warnings and errors (a refused export …) go. */
  readonly logger: Logger;
  /** @default process.env; the SDK reads its own settings (endpoint, headers, sampler …) from process.env */
  readonly env?: Environment;
}

/**
 * Starts tracing as the environment says ({@link tracesExportFromEnv}): off → the global no-op tracer,
 * no SDK loaded; otlp → a tracer provider (sampler and limits from `OTEL_TRACES_SAMPLER` …) with a batch
 * span processor and an OTLP/HTTP exporter, its resource `service.name` = `serviceName` overridden by
 * `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`. The provider is not registered globally. The SDK's
 * diagnostics (warnings and errors: an export the collector refused, a bad sampler value) go to the logger.
 *
 * @throws TracingConfigError when a variable asks for what this SDK cannot do
 */
export async function startTracing(options: StartTracingOptions): Promise<Tracing> {
  const decision = tracesExportFromEnv(options.env ?? process.env);
  if (decision.kind === 'off') return { tracer: globalTracer(), exporting: false, shutdown: async () => undefined };
  const [{ BasicTracerProvider, BatchSpanProcessor }, { detectResources, envDetector, resourceFromAttributes }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    decision.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const { logger } = options;
  diag.setLogger(diagLogger(logger), DiagLogLevel.WARN);
  const resource = resourceFromAttributes({ 'service.name': options.serviceName }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  logger.info({ protocol: decision.protocol, serviceName: resource.attributes['service.name'] }, 'tracing on: exporting spans over OTLP');
  return {
    tracer: provider.getTracer(TRACER_NAME),
    exporting: true,
    shutdown: async () => {
      try {
        await provider.shutdown();
      } catch (err) {
        logger.warn(errorFields(err), 'tracing: the last spans could not be exported');
      }
    },
  };
}

/** The SDK's diagnostics on our logger, with the SDK's extra arguments as a field. */
function diagLogger(logger: Logger): DiagLogger {
  const fields = (args: unknown[]) => ({ component: 'opentelemetry', ...(args.length > 0 ? { details: args.map(String) } : {}) });
  return {
    error: (message, ...args) => logger.error(fields(args), message),
    warn: (message, ...args) => logger.warn(fields(args), message),
    info: (message, ...args) => logger.info(fields(args), message),
    debug: (message, ...args) => logger.debug(fields(args), message),
    verbose: (message, ...args) => logger.debug(fields(args), message),
  };
}
