/**
 * Keeps the webhook CA in the `caBundle` of the operator's CRD conversion webhook and webhook
 * configurations, whenever they change (self-managed certificates; cert-manager's CA injector does this
 * in cert-manager mode).
 *
 * Each target is watched by name (a list + watch with `fieldSelector=metadata.name=<name>`, which RBAC
 * authorizes against `resourceNames`). On every event where a target's `caBundle` is missing or differs
 * from the current CA (a CRD or configuration re-applied from the synthesized YAML, which has none, or
 * replaced with `kubectl replace`, or created after the operator started), the CA is written back with a
 * JSON patch that touches only the `caBundle` fields, guarded by `test` operations on what it assumes
 * (the webhook's name at that index), so no other manager's field is rewritten and no resourceVersion
 * race is lost: a patch whose guard fails (422) waits for the next event. Failures are logged at warn
 * and retried with backoff.
 *
 * The Secret is the one source of the CA: before each write the injector asks `confirmCa` for the CA the
 * Secret holds now (read again; created create-only when missing), adopts it when it differs from its
 * own (another replica created the Secret anew), and writes nothing when the target already holds it.
 * So two replicas never write different CAs over each other. A write that is undone (the target differs
 * again within `undoneWindowMs` of it, e.g. a GitOps tool re-applying the YAML without caBundle, or an
 * old replica) is told (warn log naming the manager that undid it, and `metrics.undone`), and the
 * next write waits, doubling each time it is undone again (`undoneBackoff`, bounded); a write that stays
 * resets it.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#contacting-the-webhook
 * @see https://datatracker.ietf.org/doc/html/rfc6902#section-4.6 (JSON patch `test`)
 */
import type { ObjectReference } from '../../operator/errors.js';
import { CUSTOM_RESOURCE_DEFINITIONS as CRD, MUTATING_WEBHOOK_CONFIGURATIONS as MUTATING, VALIDATING_WEBHOOK_CONFIGURATIONS as VALIDATING } from '../client/builtin-resources.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { isApiError } from '../client/kube-client.js';
import type { ResourceRef } from '../client/resource-path.js';
import { ResourceClient } from '../client/resource-client.js';
import { Watcher } from '../cache/watcher.js';
import { Backoff } from '../queue/backoff.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';

/** Where to write the CA bundle (self-managed). */
export interface CaBundleTargets {
  /** CRD names whose `spec.conversion.webhook.clientConfig` gets the CA. */
  readonly customResourceDefinitions: readonly string[];
  readonly validatingWebhookConfigurations: readonly string[];
  readonly mutatingWebhookConfigurations: readonly string[];
}

/** One JSON patch operation (RFC 6902) of a caBundle write. */
export type CaBundlePatchOperation = { readonly op: 'test' | 'add'; readonly path: string; readonly value: unknown };

/** A target: a resource and a name. */
export interface CaBundleTarget {
  readonly resource: ResourceRef;
  readonly name: string;
}

/** The targets of {@link CaBundleTargets}, each with its resource. */
export function caBundleTargetList(targets: CaBundleTargets): CaBundleTarget[] {
  return [
    ...targets.customResourceDefinitions.map((name) => ({ resource: CRD, name })),
    ...targets.validatingWebhookConfigurations.map((name) => ({ resource: VALIDATING, name })),
    ...targets.mutatingWebhookConfigurations.map((name) => ({ resource: MUTATING, name })),
  ];
}

const KIND_OF_TARGET: Readonly<Record<string, string>> = {
  [CRD.plural]: 'CustomResourceDefinition',
  [VALIDATING.plural]: 'ValidatingWebhookConfiguration',
  [MUTATING.plural]: 'MutatingWebhookConfiguration',
};

/** The target as an object reference (`CustomResourceDefinition <name>` …), for errors. */
export function targetReference(target: CaBundleTarget): ObjectReference {
  return { apiVersion: `${target.resource.group}/${target.resource.version}`, kind: KIND_OF_TARGET[target.resource.plural] ?? target.resource.plural, name: target.name };
}

/** `customresourcedefinitions/<name>`, for logs. */
export function describeTarget(target: CaBundleTarget): string {
  return `${target.resource.plural}.${target.resource.group}/${target.name}`;
}

/**
 * The JSON patch that sets `caBundle` (base64 of the CA's PEM) where `obj` lacks it or has another;
 * empty when nothing differs. A CRD without a conversion webhook clientConfig gets nothing (its conversion
 * is not ours to add); each webhook of a configuration is guarded by a `test` of its name.
 */
export function caBundlePatch(resource: ResourceRef, obj: KubeObject, caBundle: string): CaBundlePatchOperation[] {
  if (resource.plural === CRD.plural) {
    const config = (obj.spec as { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } } | undefined)?.conversion?.webhook?.clientConfig;
    if (!config || config.caBundle === caBundle) return [];
    return [{ op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: caBundle }];
  }
  const ops: CaBundlePatchOperation[] = [];
  const webhooks = (obj.webhooks as { name?: string; clientConfig?: { caBundle?: string } }[] | undefined) ?? [];
  webhooks.forEach((webhook, i) => {
    if (!webhook.clientConfig || webhook.clientConfig.caBundle === caBundle) return;
    ops.push({ op: 'test', path: `/webhooks/${i}/name`, value: webhook.name }, { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle });
  });
  return ops;
}

/** Counts of caBundle writes (metrics/metrics.ts: `cdk8s_operator_webhook_ca_bundle_writes_total`). */
export interface CaBundleWriteMetrics {
  /** One caBundle written into `object` (`describeTarget`). */
  written(object: string): void;
  /** One write into `object` undone within `undoneWindowMs`. */
  undone(object: string): void;
}

export interface CaBundleInjectorOptions {
  readonly client: KubeClient;
  readonly targets: CaBundleTargets;
  /** The CA PEM to write; {@link CaBundleInjector.setCa} changes it. */
  readonly caPem: string;
  /**
   * The CA PEM the Secret holds now, asked before each write (ServingCertificate: the Secret read
   * again, created create-only when missing). A rejection is a failed write (logged, retried with `backoff`).
   * @default the current CA, unconfirmed
   */
  readonly confirmCa?: () => Promise<string>;
  /** Retry delays after a failed write. @default 200 ms → 30 s, ×2, +50 % jitter */
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number };
  /** A write is undone when the target differs again within this long of it. @default 30000 ms */
  readonly undoneWindowMs?: number;
  /** Delay before writing again after an undone write. @default 1 s → 5 min, ×2, +50 % jitter */
  readonly undoneBackoff?: { readonly initialMs?: number; readonly maxMs?: number };
  /** @default none */
  readonly metrics?: CaBundleWriteMetrics;
  readonly logger?: Logger;
}

/** Per target: its watch, the failure backoff, the undone-write backoff and the last write. */
interface TargetState {
  readonly target: CaBundleTarget;
  readonly watcher: Watcher;
  readonly backoff: Backoff;
  readonly undoneBackoff: Backoff;
  /** When the last write succeeded (Date.now()), if any. */
  writtenAt?: number;
  /** A write waits until then after an undone one. */
  notBefore?: number;
}

/** Watches the targets and writes the CA into them whenever they lack it; see the module doc. */
export class CaBundleInjector {
  private readonly options: CaBundleInjectorOptions;
  private readonly logger: Logger;
  private caBundle: string;
  private readonly watchers = new Map<string, TargetState>();
  /** Per target: a write running, and whether another event came meanwhile. */
  private readonly writing = new Map<string, { again: boolean }>();
  private readonly retryTimers = new Set<ReturnType<typeof setTimeout>>();
  private stopped = false;

  constructor(options: CaBundleInjectorOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.caBundle = Buffer.from(options.caPem).toString('base64');
    for (const target of caBundleTargetList(options.targets)) {
      const key = describeTarget(target);
      const watcher = new Watcher({
        client: options.client,
        resource: target.resource,
        fieldSelector: `metadata.name=${target.name}`,
        logger: this.logger,
        onChange: (event) => {
          if (event.type !== 'delete') this.reconcile(key);
        },
      });
      this.watchers.set(key, {
        target,
        watcher,
        backoff: new Backoff({ initialMs: options.backoff?.initialMs ?? 200, maxMs: options.backoff?.maxMs ?? 30_000 }),
        undoneBackoff: new Backoff({ initialMs: options.undoneBackoff?.initialMs ?? 1000, maxMs: options.undoneBackoff?.maxMs ?? 300_000 }),
      });
    }
  }

  /** Starts watching every target. */
  start(): void {
    for (const { watcher } of this.watchers.values()) watcher.start();
  }

  /** A new CA (self-managed rotation of the CA): every target that exists is checked again. */
  setCa(caPem: string): void {
    const next = Buffer.from(caPem).toString('base64');
    if (next === this.caBundle) return;
    this.caBundle = next;
    for (const key of this.watchers.keys()) this.reconcile(key);
  }

  /** Stops the watches and pending retries; resolves once the watches ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    await Promise.all([...this.watchers.values()].map(({ watcher }) => watcher.stop()));
  }

  /** Writes the CA into the target `key` when its cached object lacks it; one write per target at a time. */
  private reconcile(key: string): void {
    if (this.stopped) return;
    const running = this.writing.get(key);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.writing.set(key, state);
    void this.write(key).finally(() => {
      this.writing.delete(key);
      if (state.again) this.reconcile(key);
    });
  }

  private async write(key: string): Promise<void> {
    const entry = this.watchers.get(key)!;
    const { target, watcher, backoff } = entry;
    const obj = watcher.get(target.name);
    if (!obj) return;
    if (caBundlePatch(target.resource, obj, this.caBundle).length === 0) {
      backoff.reset();
      return;
    }
    try {
      // The Secret decides: adopt its CA when another replica made a new one; write nothing it does not hold.
      if (this.options.confirmCa) this.adopt(await this.options.confirmCa());
      if (this.stopped) return;
      const ops = caBundlePatch(target.resource, watcher.get(target.name) ?? obj, this.caBundle);
      if (ops.length === 0) {
        backoff.reset();
        return;
      }
      if (this.delayedAfterUndo(key, entry, obj)) return;
      await new ResourceClient(this.options.client).patch(target.resource, undefined, target.name, { type: 'json', body: ops });
      backoff.reset();
      entry.writtenAt = Date.now();
      this.options.metrics?.written(key);
      this.logger.info({ object: key, resourceVersion: obj.metadata?.resourceVersion }, 'wrote the webhook caBundle (it was missing or differed)');
    } catch (err) {
      if (this.stopped) return;
      // 422 from a failed `test`: the object changed under us; its watch event brings the new state. 404: deleted.
      if (isApiError(err, 422, 404)) {
        this.logger.info({ object: key, ...errorFields(err) }, 'caBundle patch guard failed; waiting for the next version');
        return;
      }
      const delayMs = backoff.next();
      this.logger.warn({ object: key, delayMs, ...errorFields(err) }, 'could not write the webhook caBundle; retrying');
      this.retryIn(key, delayMs);
    }
  }

  /** Takes `caPem` (the Secret's) as the CA to write, checking every other target again when it changed. */
  private adopt(caPem: string): void {
    const next = Buffer.from(caPem).toString('base64');
    if (next === this.caBundle) return;
    this.logger.info({}, 'the webhook Secret holds another CA (made by another replica): writing that one');
    this.setCa(caPem);
  }

  /**
   * Whether the write into `key` must wait because its last one was undone: the target differs again
   * within `undoneWindowMs` of our write. Tells it (warn, metric), and schedules the write after the
   * undone backoff; a write that stayed longer resets that backoff.
   */
  private delayedAfterUndo(key: string, entry: TargetState, obj: KubeObject): boolean {
    const now = Date.now();
    if (entry.notBefore !== undefined) {
      if (now < entry.notBefore) {
        this.retryIn(key, entry.notBefore - now);
        return true;
      }
      entry.notBefore = undefined; // the delayed write: its backoff stays until a write stays
      return false;
    }
    const undone = entry.writtenAt !== undefined && now - entry.writtenAt < (this.options.undoneWindowMs ?? 30_000);
    if (!undone) {
      entry.undoneBackoff.reset();
      return false;
    }
    const delayMs = entry.undoneBackoff.next();
    entry.notBefore = now + delayMs;
    this.options.metrics?.undone(key);
    this.logger.warn(
      { object: key, undoneBy: lastManager(obj), undoneInARow: entry.undoneBackoff.failures, delayMs },
      'the webhook caBundle written was undone by another writer; writing it again after a delay (the Secret holds the CA to keep: make the other writer leave caBundle alone)',
    );
    this.retryIn(key, delayMs);
    return true;
  }

  private retryIn(key: string, delayMs: number): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.reconcile(key);
    }, delayMs);
    timer.unref();
    this.retryTimers.add(timer);
  }
}

/** The manager of `obj`'s most recent managedFields entry (who wrote it last), for logs. */
function lastManager(obj: KubeObject): string | undefined {
  const entries = (obj.metadata?.managedFields ?? []) as { manager?: string; time?: string }[];
  let last: { manager?: string; time?: string } | undefined;
  for (const entry of entries) if (!last || (entry.time ?? '') >= (last.time ?? '')) last = entry;
  return last?.manager;
}
