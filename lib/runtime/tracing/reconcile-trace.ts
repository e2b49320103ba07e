/**
 * The tracing hook of a reconcile: one OpenTelemetry span per reconcile, with a child span per step
 * (render, each apply, prune, each status write, finalize), over the `Tracer` interface of
 * `@opentelemetry/api`. The steps see only {@link ReconcileTrace} and {@link StepSpan}: no OpenTelemetry
 * type outside this folder.
 *
 * Span names and attributes (docs/concepts/operating.md, "Tracing"); names follow the OpenTelemetry attribute naming rules,
 * with `k8s.namespace.name` and `error.type` from the semantic conventions and the rest under
 * `cdk8s_operator.` (the prefix of the runtime's own metrics):
 *
 * | span | attributes |
 * |---|---|
 * | `reconcile <controller>` | `cdk8s_operator.controller`, `cdk8s_operator.controller_kind`, `k8s.namespace.name` (namespaced CRs), `cdk8s_operator.name`, `cdk8s_operator.reconcile_id`, `cdk8s_operator.result` (`success`, `requeue_after`, `error`: controller_runtime_reconcile_total's labels); on error `error.type` (the error's `reason`, else its class) and `cdk8s_operator.step` |
 * | `render` | `cdk8s_operator.render.children` (children rendered); `cdk8s_operator.render.waiting` true when it waits for a referenced object |
 * | `apply` (one per desired child) | `cdk8s_operator.child.api_version`, `.kind`, `.name`, `k8s.namespace.name` (namespaced children), `cdk8s_operator.apply.skipped`, `cdk8s_operator.apply.reason` (`missing`, `render-changed`, `drift` when sent; `unchanged`, `waiting` when skipped); `cdk8s_operator.apply.lookup_ms`, the wall time in ms of the GET of the child's name after its create found the name taken (409 AlreadyExists; adoption.ts), when one was sent |
 * | `prune` | `cdk8s_operator.prune.deleted` (children deleted) |
 * | `status` (one per status write the reconcile attempts) | `cdk8s_operator.status.written` (false when nothing changed) |
 * | `finalize` | (the CR is being deleted: the operator's hook and the finalizer's removal) |
 *
 * A failed span has status ERROR with the error's message and an `exception` event (`recordException`).
 *
 * Cost when tracing is off: the tracer is `@opentelemetry/api`'s no-op one, its root span does not record,
 * and {@link startReconcileSpan} then hands the steps {@link NO_TRACE}, whose spans are one shared object
 * doing nothing: no attribute is computed, no object made per step.
 *
 * @see https://opentelemetry.io/docs/specs/otel/trace/api/
 * @see https://opentelemetry.io/docs/specs/semconv/general/naming/
 */
import { type Attributes, ROOT_CONTEXT, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';

/** The steps that get a span of their own. */
export type TracedStep = 'render' | 'apply' | 'prune' | 'status' | 'finalize';

/** Attribute values the runtime sets. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** One step's span: attributes, a failure, an end. */
export interface StepSpan {
  /** Adds attributes (undefined values are left out). */
  set(attributes: TraceAttributes): void;
  /** Marks the span failed: status ERROR with the error's message, and an `exception` event. */
  fail(err: unknown): void;
  /** Ends the span; calls after the first do nothing. */
  end(): void;
}

/** What the steps of one reconcile get: child spans of the reconcile's span. */
export interface ReconcileTrace {
  /** Starts a child span of the reconcile's span. */
  step(name: TracedStep, attributes?: TraceAttributes): StepSpan;
}

/** The instrumentation scope of the runtime's spans. */
export const TRACER_NAME = 'cdk8s-operator-sdk';

/**
 * `@opentelemetry/api`'s global tracer for the runtime's spans: a no-op unless the application registered
 * a tracer provider of its own (`trace.setGlobalTracerProvider`, or an OpenTelemetry SDK that does).
 */
export function globalTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

const NO_SPAN: StepSpan = { set: () => undefined, fail: () => undefined, end: () => undefined };

/** The trace of a reconcile that is not traced: every span is one shared no-op. */
export const NO_TRACE: ReconcileTrace = { step: () => NO_SPAN };

/** Who is reconciled: the reconcile span's attributes known before it runs (the log line's fields). */
export interface ReconcileSpanFields {
  /** The controller's (operator's) name. */
  readonly controller: string;
  /** The CR's kind. */
  readonly controllerKind: string;
  /** The CR's namespace; undefined for a cluster-scoped CR. */
  readonly namespace?: string;
  readonly name: string;
  readonly reconcileID: string;
}

/** How a reconcile ended, for the span's `cdk8s_operator.result` (controller_runtime_reconcile_total's labels). */
export type ReconcileSpanResult = 'success' | 'requeue_after' | 'error';

/** A reconcile's span as the controller holds it: the steps' {@link ReconcileTrace} and its end. */
export interface ReconcileSpan {
  readonly trace: ReconcileTrace;
  /** Ends the reconcile's span with its result; `err` (for `error`) fails it. */
  end(result: ReconcileSpanResult, err?: unknown): void;
}

const NOT_RECORDING: ReconcileSpan = { trace: NO_TRACE, end: () => undefined };

/**
 * Starts the span of one reconcile (a root span: a reconcile is started by the workqueue, not by a
 * request). When the tracer does not record it (the no-op tracer, or sampled out), returns a span whose
 * steps cost nothing.
 */
export function startReconcileSpan(tracer: Tracer, fields: ReconcileSpanFields): ReconcileSpan {
  const root = tracer.startSpan(`reconcile ${fields.controller}`, {
    root: true,
    attributes: defined({
      'cdk8s_operator.controller': fields.controller,
      'cdk8s_operator.controller_kind': fields.controllerKind,
      'k8s.namespace.name': fields.namespace,
      'cdk8s_operator.name': fields.name,
      'cdk8s_operator.reconcile_id': fields.reconcileID,
    }),
  });
  if (!root.isRecording()) {
    root.end();
    return NOT_RECORDING;
  }
  const parent = trace.setSpan(ROOT_CONTEXT, root);
  return {
    trace: { step: (name, attributes) => new OtelStepSpan(tracer.startSpan(name, { attributes: attributes && defined(attributes) }, parent)) },
    end: (result, err) => {
      root.setAttribute('cdk8s_operator.result', result);
      if (err !== undefined) {
        const { reason, step } = (err ?? {}) as { reason?: unknown; step?: unknown };
        root.setAttributes(defined({
          'error.type': typeof reason === 'string' ? reason : errorName(err),
          'cdk8s_operator.step': typeof step === 'string' ? step : undefined,
        }));
        failSpan(root, err);
      }
      root.end();
    },
  };
}

/** A {@link StepSpan} over an OpenTelemetry span. */
class OtelStepSpan implements StepSpan {
  private ended = false;

  constructor(private readonly span: Span) {}

  set(attributes: TraceAttributes): void {
    this.span.setAttributes(defined(attributes));
  }

  fail(err: unknown): void {
    failSpan(this.span, err);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end();
  }
}

/** Status ERROR with the message, and the `exception` event. */
function failSpan(span: Span, err: unknown): void {
  const error = err instanceof Error || (err && typeof err === 'object' && typeof (err as Error).message === 'string') ? (err as Error) : new Error(String(err));
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

function errorName(err: unknown): string {
  return err && typeof err === 'object' && typeof (err as Error).name === 'string' ? (err as Error).name : typeof err;
}

/** The attributes without undefined values. */
function defined(attributes: TraceAttributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
