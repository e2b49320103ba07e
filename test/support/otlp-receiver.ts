/**
 * An OTLP/HTTP trace receiver in the test process (node:http on 127.0.0.1, a free port): it takes what
 * an OpenTelemetry exporter POSTs to `/v1/traces`, answers 200 as a collector does, and keeps the spans
 * of JSON requests (`http/json`, the OTLP JSON encoding: hex ids, attributes as key/value lists) in a flat,
 * easy-to-assert form. Protobuf requests (`http/protobuf`) are recorded (path, content type, body) but not
 * decoded.
 *
 * @see https://opentelemetry.io/docs/specs/otlp/#otlphttp
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An attribute value as the receiver keeps it. */
export type AttributeValue = string | number | boolean;

/** One span as received. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** Start, in milliseconds since the epoch. */
  readonly startMs: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** OTLP status code: 0 unset, 1 OK, 2 ERROR. */
  readonly status: { readonly code: number; readonly message?: string };
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }[];
  /** The resource's attributes (service.name …). */
  readonly resource: Readonly<Record<string, AttributeValue>>;
  /** The instrumentation scope's name. */
  readonly scope: string;
}

/** One request the receiver answered. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
}

interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}

function attributesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly received: ReceivedSpan[] = [];

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:PORT`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
    readonly endpoint: string,
  ) {}

  /** Listens on a free loopback port. */
  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined;
    const server = createServer((req, res) => void receiver?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** Every span received so far, in arrival order. */
  spans(): readonly ReceivedSpan[] {
    return [...this.received];
  }

  /** The spans whose parent is `span`. */
  childrenOf(span: ReceivedSpan): ReceivedSpan[] {
    return this.received.filter((s) => s.traceId === span.traceId && s.parentSpanId === span.spanId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const contentType = req.headers['content-type'] ?? '';
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', contentType, body });
    if (contentType.startsWith('application/json')) {
      this.collect(JSON.parse(body.toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      // An empty ExportTraceServiceResponse is an empty protobuf message.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    }
  }

  private collect(request: { resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[] }[] }): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          const status = (span.status ?? {}) as { code?: number; message?: string };
          this.received.push({
            traceId: String(span.traceId),
            spanId: String(span.spanId),
            parentSpanId: typeof span.parentSpanId === 'string' ? span.parentSpanId : '',
            name: String(span.name),
            startMs: Number(BigInt(String(span.startTimeUnixNano)) / 1_000_000n),
            attributes: attributesOf(span.attributes as OtlpKeyValue[] | undefined),
            status: { code: status.code ?? 0, ...(status.message ? { message: status.message } : {}) },
            events: ((span.events ?? []) as { name: string; attributes?: OtlpKeyValue[] }[]).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
            resource,
            scope: scopeSpans.scope?.name ?? '',
          });
        }
      }
    }
  }
}
