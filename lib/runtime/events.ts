import type { ApiClient, KubeObject } from './api-client.js';
import { type Logger, errorFields, silentLogger } from './logger.js';

export interface EventRecorderOptions {
  readonly client: ApiClient;
  /** `reportingController`, e.g. `cdk8s.io/memcached-operator`. */
  readonly reportingController: string;
  /** `reportingInstance`: this process, e.g. the pod name. @default reportingController + '-' + process.pid */
  readonly reportingInstance?: string;
  /**
   * An identical event (same object, type, reason and note) recorded again within this window is dropped,
   * so a CR failing on every retry doesn't write an Event per retry. @default 900000 ms (15 min)
   */
  readonly dedupeWindowMs?: number;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Wall clock, injected for tests. @default () => new Date() */
  readonly now?: () => Date;
}

/** Longest event note the API accepts (events.k8s.io/v1 `note` is limited to 1 kB). */
const MAX_NOTE_LENGTH = 1024;

/**
 * A minimal recorder of events.k8s.io/v1 Events (kubernetes.io/docs/reference/kubernetes-api/cluster-resources/event-v1/)
 * about a custom resource. Recording never throws: a failed write is logged and dropped.
 * Events go to the object's namespace (`default` for a cluster-scoped object).
 */
export class EventRecorder {
  private readonly sent = new Map<string, number>();
  private readonly logger: Logger;
  private readonly now: () => Date;
  private readonly dedupeWindowMs: number;
  private readonly instance: string;
  private counter = 0;

  constructor(private readonly options: EventRecorderOptions) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? (() => new Date());
    this.dedupeWindowMs = options.dedupeWindowMs ?? 900_000;
    this.instance = options.reportingInstance ?? `${options.reportingController.replace(/^.*\//, '')}-${process.pid}`;
  }

  /** Records a Warning; @returns true when an Event was written. */
  warning(regarding: KubeObject, reason: string, action: string, note: string): Promise<boolean> {
    return this.record('Warning', regarding, reason, action, note);
  }

  /** Records a Normal event; @returns true when an Event was written. */
  normal(regarding: KubeObject, reason: string, action: string, note: string): Promise<boolean> {
    return this.record('Normal', regarding, reason, action, note);
  }

  /** Forgets the dedupe entries of one object (call when it is deleted). */
  forget(uid: string): void {
    for (const key of this.sent.keys()) if (key.startsWith(uid + '\u0000')) this.sent.delete(key);
  }

  private async record(type: 'Normal' | 'Warning', regarding: KubeObject, reason: string, action: string, note: string): Promise<boolean> {
    const meta = regarding.metadata ?? {};
    const now = this.now();
    const dedupeKey = [meta.uid ?? `${meta.namespace}/${meta.name}`, type, reason, note].join('\u0000');
    const last = this.sent.get(dedupeKey);
    if (last !== undefined && now.getTime() - last < this.dedupeWindowMs) return false;
    this.sent.set(dedupeKey, now.getTime());
    const namespace = meta.namespace ?? 'default';
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${meta.name}.${(now.getTime() * 1000 + (this.counter++ % 1000)).toString(16)}`, namespace },
      eventTime: now.toISOString().replace(/Z$/, '000Z'),
      reportingController: this.options.reportingController,
      reportingInstance: this.instance,
      action,
      reason,
      type,
      note: note.length > MAX_NOTE_LENGTH ? note.slice(0, MAX_NOTE_LENGTH - 1) + '…' : note,
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
    };
    try {
      await this.options.client.request('POST', `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`, { body: event });
      return true;
    } catch (err) {
      this.logger.warn({ namespace, name: meta.name, reason, ...errorFields(err) }, 'could not record event');
      return false;
    }
  }
}
