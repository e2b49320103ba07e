/**
 * The type of each field of a kind, read from the API server's own OpenAPI v3 documents, so the child
 * diff compares fields as the server stores them (quantities by value, int-or-string by JSON type).
 */
import type { KubeClient } from '../client/kube-client.js';
import { type FieldType, fieldTypeOfSchema } from './field-type.js';
import { messageOf } from '../../error-text.js';

/** Where the child diff gets the type of a kind's fields. */
export interface FieldTypeSource {
  /**
   * The type of a whole object of `kind` in `apiVersion` (e.g. `apps/v1`, `Deployment`); undefined when
   * the server publishes no schema for it.
   * @throws Error naming the request and the reason when the schema cannot be read (e.g. 403)
   */
  forKind(apiVersion: string, kind: string): Promise<FieldType | undefined>;
}

export interface OpenApiFieldTypesOptions {
  /** Reads `/openapi/v3` (allowed to every authenticated user by the default `system:discovery` ClusterRole). */
  readonly client: Pick<KubeClient, 'request'>;
  /**
   * After a failed read, calls within this window fail at once with the same error; the next one after
   * it asks the server again. Also the least time between two reads of the index (`/openapi/v3`) when a
   * group-version is missing from it (a CRD installed later). @default 60000 ms
   */
  readonly retryAfterMs?: number;
  /** Monotonic clock in milliseconds. @default performance.now */
  readonly now?: () => number;
}

interface Entry<T> {
  readonly value: Promise<T>;
  readonly at: number;
  failed: boolean;
}

/**
 * Field types from the API server's own OpenAPI v3 documents
 * (kubernetes.io/docs/concepts/overview/kubernetes-api/#openapi-v3): the index `GET /openapi/v3`, then
 * one document per group-version (`/openapi/v3/apis/apps/v1?hash=…`), each read once per process and
 * shared by every kind in it. Reading them at run time, rather than a table built in advance, keeps the
 * diff true to the server it talks to, CRD kinds included.
 *
 * Cost: the core `v1` document is about 1.5 MB and `apps/v1` about 0.7 MB of JSON; descriptions are
 * dropped as they are parsed. The documents of a server version do not change, so nothing is re-read,
 * except the index when it lacks a group-version (at most once per `retryAfterMs`).
 *
 * Errors: a failed read rejects with an Error naming the path and the server's reason; it is remembered
 * for `retryAfterMs`, so a forbidden `/openapi/v3` costs one request per minute, not one per reconcile.
 */
export class OpenApiFieldTypes implements FieldTypeSource {
  private readonly client: Pick<KubeClient, 'request'>;
  private readonly retryAfterMs: number;
  private readonly now: () => number;
  private index: Entry<Record<string, string>> | undefined;
  private readonly documents = new Map<string, Entry<Record<string, unknown>>>();
  private readonly kinds = new Map<string, Promise<FieldType | undefined>>();

  constructor(options: OpenApiFieldTypesOptions) {
    this.client = options.client;
    this.retryAfterMs = options.retryAfterMs ?? 60_000;
    this.now = options.now ?? (() => performance.now());
  }

  async forKind(apiVersion: string, kind: string): Promise<FieldType | undefined> {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const gv = group === '' ? `api/${version}` : `apis/${group}/${version}`;
    const schemas = await this.document(gv);
    if (!schemas) return undefined;
    const key = `${gv}/${kind}`;
    let type = this.kinds.get(key);
    if (!type) {
      const name = Object.keys(schemas).find((n) => gvkOf(schemas[n]).some((k) => k.group === group && k.version === version && k.kind === kind));
      type = Promise.resolve(name === undefined ? undefined : fieldTypeOfSchema(schemas, name));
      this.kinds.set(key, type);
    }
    return type;
  }

  /** `components.schemas` of one group-version's document, or undefined when the index has none. */
  private async document(gv: string): Promise<Record<string, unknown> | undefined> {
    const cached = this.documents.get(gv);
    if (cached && this.usable(cached)) return cached.value;
    let paths = await this.remember(() => this.index, (e) => (this.index = e), () => this.readIndex());
    if (!(gv in paths) && this.index && this.now() - this.index.at >= this.retryAfterMs) {
      this.index = undefined;
      paths = await this.remember(() => this.index, (e) => (this.index = e), () => this.readIndex());
    }
    const url = paths[gv];
    if (url === undefined) return undefined;
    return this.remember(
      () => this.documents.get(gv),
      (e) => this.documents.set(gv, e),
      async () => {
        const doc = await this.get<{ components?: { schemas?: Record<string, unknown> } }>(url);
        const schemas = doc.components?.schemas ?? {};
        dropDescriptions(schemas);
        return schemas;
      },
    );
  }

  private async readIndex(): Promise<Record<string, string>> {
    const index = await this.get<{ paths?: Record<string, { serverRelativeURL?: string }> }>('/openapi/v3');
    const paths: Record<string, string> = {};
    for (const [gv, entry] of Object.entries(index.paths ?? {})) {
      paths[gv] = entry.serverRelativeURL ?? `/openapi/v3/${gv}`;
    }
    return paths;
  }

  private async get<T>(url: string): Promise<T> {
    const [path, search = ''] = url.split('?', 2);
    const query = Object.fromEntries(new URLSearchParams(search));
    try {
      return await this.client.request<T>('GET', path, { query });
    } catch (err) {
      throw new Error(`reading the OpenAPI v3 schema GET ${path}: ${messageOf(err)}`, { cause: err });
    }
  }

  private usable(entry: Entry<unknown>): boolean {
    return !entry.failed || this.now() - entry.at < this.retryAfterMs;
  }

  /** One read shared by concurrent callers; a failure is kept for `retryAfterMs`, then retried. */
  private remember<T>(get: () => Entry<T> | undefined, set: (entry: Entry<T>) => void, read: () => Promise<T>): Promise<T> {
    const cached = get();
    if (cached && this.usable(cached)) return cached.value;
    const entry: Entry<T> = { value: read(), at: this.now(), failed: false };
    entry.value.catch(() => (entry.failed = true));
    set(entry);
    return entry.value;
  }
}

function gvkOf(schema: unknown): { group?: string; version?: string; kind?: string }[] {
  const gvk = (schema as { 'x-kubernetes-group-version-kind'?: unknown } | undefined)?.['x-kubernetes-group-version-kind'];
  return Array.isArray(gvk) ? gvk : [];
}

/** Deletes every `description` in place: most of a document's size, and of no use to the diff. */
function dropDescriptions(value: unknown): void {
  if (Array.isArray(value)) for (const item of value) dropDescriptions(item);
  else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.description === 'string') delete record.description;
    for (const child of Object.values(record)) dropDescriptions(child);
  }
}
