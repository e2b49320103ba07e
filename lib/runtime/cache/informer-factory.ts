/**
 * Shared informers: one per watched (kind, namespace, label selector, field selector, metadata-only,
 * transform) for every controller of the process
 * (client-go's SharedInformerFactory), started together and asked whether all have synced.
 */
import type { KubeClient } from '../client/kube-client.js';
import { Informer, type InformerOptions } from './informer.js';
import { type Logger, silentLogger } from '../logger.js';
import type { ResourceRef } from '../client/resource-path.js';

export interface InformerFactoryOptions {
  readonly client: KubeClient;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** Field managers whose managedFields entries every informer keeps. @default none */
  readonly keepManagedFieldsOf?: readonly string[];
  /** Watch tuning for every informer; see {@link InformerOptions.watch}. */
  readonly watch?: InformerOptions['watch'];
}

export interface InformerForOptions {
  /** @default all namespaces */
  readonly namespace?: string;
  /** Kubernetes label selector syntax, sent as the list and watch's `labelSelector`. @default everything */
  readonly labelSelector?: string;
  /** Kubernetes field selector syntax, sent as the list and watch's `fieldSelector`. @default everything */
  readonly fieldSelector?: string;
  /** Added to the shared informer's kept managers; see {@link Informer.keepManagedFields} (only before start). */
  readonly keepManagedFieldsOf?: readonly string[];
  /**
   * Cache metadata only (`PartialObjectMetadata`), as this kind: see {@link InformerOptions.metadataOnly}.
   * @default whole objects
   */
  readonly metadataOnly?: boolean;
  /** Maps each object before it is cached; see {@link InformerOptions.transform}. Shared by identity. @default none */
  readonly transform?: InformerOptions['transform'];
  /** Fill the informer from a partition of a shared watcher; see {@link InformerOptions.partitionOf}. @default a watch of its own */
  readonly partitionOf?: InformerOptions['partitionOf'];
}

/**
 * Shared informers: one {@link Informer} per (group, version, plural, namespace, labelSelector, fieldSelector) for all
 * controllers in the process (client-go SharedInformerFactory). Ask with `informerFor` while wiring
 * controllers, then `start()` once; an informer asked for after `start()` starts at once.
 *
 * Caveat: label and field selectors are compared as strings; two spellings of the same selector give two informers.
 */
export class InformerFactory {
  private readonly options: InformerFactoryOptions;
  private readonly informers = new Map<string, Informer>();
  private readonly transformIds = new Map<NonNullable<InformerOptions['transform']>, number>();
  private started = false;

  constructor(options: InformerFactoryOptions) {
    this.options = options;
  }

  /**
   * The shared informer for this resource and scope, created on first use.
   * Errors: asking after start for managedFields an informer strips throws (see {@link Informer.keepManagedFields}).
   */
  informerFor(ref: ResourceRef & { readonly kind?: string }, opts: InformerForOptions = {}): Informer {
    const namespace = ref.namespaced ? opts.namespace : undefined;
    if (opts.metadataOnly && !ref.kind) throw new Error(`a metadata-only informer of ${ref.plural} needs the kind's name`);
    const transformId = opts.transform ? this.transformId(opts.transform) : '';
    const partition = opts.partitionOf ? `partition-${opts.partitionOf.value}` : '';
    const key = [ref.group, ref.version, ref.plural, namespace ?? '', opts.labelSelector ?? '', opts.fieldSelector ?? '', opts.metadataOnly ? 'metadata' : '', transformId, partition].join('|');
    let informer = this.informers.get(key);
    if (!informer) {
      const logger = this.options.logger ?? silentLogger;
      informer = new Informer({
        client: this.options.client,
        resource: ref,
        namespace,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        metadataOnly: opts.metadataOnly ? { apiVersion: ref.group ? `${ref.group}/${ref.version}` : ref.version, kind: ref.kind! } : undefined,
        transform: opts.transform,
        keepManagedFieldsOf: [...(this.options.keepManagedFieldsOf ?? []), ...(opts.keepManagedFieldsOf ?? [])],
        logger,
        watch: this.options.watch,
        partitionOf: opts.partitionOf,
      });
      this.informers.set(key, informer);
      if (this.started) informer.start();
    } else {
      informer.keepManagedFields(opts.keepManagedFieldsOf ?? []);
    }
    return informer;
  }

  /** A number per transform function: informers share one only when their transforms are the same function. */
  private transformId(transform: NonNullable<InformerOptions['transform']>): string {
    let id = this.transformIds.get(transform);
    if (id === undefined) this.transformIds.set(transform, (id = this.transformIds.size + 1));
    return `transform-${id}`;
  }

  /** Every informer created so far. */
  all(): Informer[] {
    return [...this.informers.values()];
  }

  /** Starts every informer (and, from now on, every new one). */
  start(): void {
    this.started = true;
    for (const informer of this.informers.values()) informer.start();
  }

  /** Stops every informer; resolves once all watches have ended. */
  async stop(): Promise<void> {
    this.started = false;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /**
   * Started informers whose watch loop is not alive ({@link Informer.alive}): stopped or stuck. Informers
   * not started yet don't count. Empty when all are alive; the `/healthz` "watchers" check names them.
   */
  notAlive(nowMs?: number): Informer[] {
    return [...this.informers.values()].filter((i) => i.isStarted() && !i.alive(nowMs));
  }

  /**
   * Started informers whose watch is blind ({@link Informer.blind}): the server has said nothing to it for
   * longer than a healthy watch stays silent. The `/healthz` "watchers" check names them too.
   */
  blind(nowMs?: number): Informer[] {
    return [...this.informers.values()].filter((i) => i.isStarted() && i.blind(nowMs));
  }

  /** True when every informer created so far is alive (see {@link notAlive}). */
  allAlive(nowMs?: number): boolean {
    return this.notAlive(nowMs).length === 0;
  }

  /** True when every informer created so far has synced. */
  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Resolves when every informer created so far has synced; rejects on `signal` abort (e.g. a 2 min CacheSyncTimeout). */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }
}
