/**
 * Storage-version migration: the leader rewrites every stored object of an operator's kind in the CRD's
 * current storage version, then trims the CRD's `status.storedVersions` to that version alone, so that a
 * later release may drop the old version from `spec.versions` (the API server refuses a CRD whose
 * `status.storedVersions` lists a version that `spec.versions` lacks; kube-apiserver 1.35 answers 422
 * `status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions; v1alpha1 was
 * previously a storage version, and must remain in spec.versions until a storage migration ensures no
 * data remains persisted in v1alpha1 and removes v1alpha1 from status.storedVersions`).
 *
 * This is the procedure of the Kubernetes docs, "Versions in CustomResourceDefinitions" → "Upgrade
 * existing objects to a new stored version"
 * (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#upgrade-existing-objects-to-a-new-stored-version),
 * done the way kubernetes-sigs/kube-storage-version-migrator does it (pkg/migrator/core.go: a paginated
 * LIST of 500, a PUT of each object as listed, NotFound counted as done).
 *
 * Contract, per CRD ({@link migrateStorageVersion}):
 * 1. GET the CRD. Nothing to do when `status.storedVersions` is exactly the storage version.
 * 2. LIST every object of the kind across all namespaces in the storage version (pages of `pageSize`;
 *    an expired continue token (410) starts the LIST again), and PUT each back unchanged, with its
 *    `resourceVersion`. kube-apiserver decodes the stored object, converts it to the storage version and
 *    writes it again (measured on kube-apiserver 1.35 by reading etcd: an object stored as v1alpha1 is
 *    stored as v1beta1 after the PUT and its resourceVersion changes; a PUT of an object already stored
 *    in the storage version writes nothing and keeps its resourceVersion, so a pass that is run again is
 *    cheap). An empty merge patch, an empty apply and a JSON patch of only a `test` op re-encode as well;
 *    the PUT is chosen for its precondition: 404 means deleted meanwhile and 409 means written meanwhile,
 *    i.e. already in the storage version; both count as migrated.
 * 3. PUT `/status` of the CRD as read in step 1, with `status.storedVersions: [storageVersion]`. It
 *    carries step 1's resourceVersion, so a CRD changed during the pass (e.g. a new storage version)
 *    gets 409 and nothing is trimmed; the next attempt starts again.
 *
 * Failures ({@link StorageVersionMigrator}): logged at error, a Warning Event regarding the CRD
 * (`StorageVersionMigrationFailed`; in namespace `default`, where Events about cluster-scoped objects go),
 * `cdk8s_operator_storage_version_migrations_total{crd,result="error"}`, and retried with backoff until
 * it succeeds or the migrator stops. A migration runs beside the reconciles and never blocks them.
 *
 * Needs (derived RBAC, lib/operator/manifests/rbac.ts): get on `customresourcedefinitions` and update on
 * `customresourcedefinitions/status`, both for the CRD's name only; list and update on the kind
 * (the CR verbs already grant them), cluster-wide.
 */
import { brandClass } from '../../operator/brand.js';
import { type KubeClient, type KubeObject, isApiError } from '../client/kube-client.js';
import { RuntimeError, objectPrefix } from '../runtime-error.js';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../client/builtin-resources.js';
import type { ListPage } from '../client/list-pages.js';
import { ResourceClient } from '../client/resource-client.js';
import { Counter, type Registry } from 'prom-client';
import { Backoff, sleep } from '../queue/backoff.js';
import { type Logger, errorFields, silentLogger } from '../logger.js';
import type { EventRecorder } from '../events/events.js';
import { migratesStoredVersions, type StorageVersionMigrationSubject } from '../../operator/versions/storage-version-migration.js';
import { messageOf as thrownText } from '../../error-text.js';

/** The kind to migrate (lib/operator's ResolvedKind satisfies it). */
export interface MigratedKind {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** `<plural>.<group>`, the CRD's name. */
export function crdName(kind: Pick<MigratedKind, 'group' | 'plural'>): string {
  return `${kind.plural}.${kind.group}`;
}

export const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** What {@link planStorageVersionMigration} reads from a CRD. */
export interface CrdVersionsView {
  readonly spec?: { readonly versions?: readonly { readonly name?: string; readonly storage?: boolean }[] };
  readonly status?: { readonly storedVersions?: readonly string[] };
}

/** What a CRD needs: nothing, or a migration from `staleVersions` to `storageVersion`. */
export type StorageVersionPlan =
  | { readonly action: 'none'; readonly storageVersion: string }
  | { readonly action: 'migrate'; readonly storageVersion: string; readonly staleVersions: readonly string[] };

/**
 * Pure: the CRD's storage version and the versions in `status.storedVersions` besides it.
 * @throws StorageVersionMigrationError (reason `NoStorageVersion`) when no version has `storage: true`
 */
export function planStorageVersionMigration(name: string, crd: CrdVersionsView): StorageVersionPlan {
  const storage = (crd.spec?.versions ?? []).filter((v) => v.storage === true && typeof v.name === 'string');
  if (storage.length !== 1) throw new StorageVersionMigrationError(name, 'NoStorageVersion', `spec.versions has ${storage.length} storage versions, expected 1`);
  const storageVersion = storage[0]!.name!;
  const stored = crd.status?.storedVersions ?? [];
  const staleVersions = [...new Set(stored.filter((v) => v !== storageVersion))].sort();
  // storedVersions without the storage version itself (a CRD just created) is left to the API server.
  if (staleVersions.length === 0) return { action: 'none', storageVersion };
  return { action: 'migrate', storageVersion, staleVersions };
}

/** Which part of a migration failed: the CRD's versions, reading it, listing, rewriting an object, trimming `storedVersions`. */
export type StorageVersionMigrationFailureReason = 'NoStorageVersion' | 'ReadCrdFailed' | 'ListFailed' | 'RewriteFailed' | 'TrimFailed';

/**
 * A part of a migration failed; `reason` says which, `cause` holds the server's answer. The object is the
 * CRD: `storage-version migration of CustomResourceDefinition <plural>.<group>: <reason>: …`.
 * Step `storage-version-migration`; branded.
 */
export class StorageVersionMigrationError extends RuntimeError {
  static {
    brandClass(this, 'StorageVersionMigrationError');
  }

  override readonly step = 'storage-version-migration';
  constructor(
    /** The CRD, `<plural>.<group>`. */
    readonly crd: string,
    override readonly reason: StorageVersionMigrationFailureReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    const object = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd };
    super(`storage-version migration of ${objectPrefix(object)}${reason}: ${detail}`, { ...options, objectRef: object });
    this.name = 'StorageVersionMigrationError';
  }
}

/** The outcome of one pass of {@link migrateStorageVersion}. */
export interface StorageVersionMigrationResult {
  readonly crd: string;
  readonly storageVersion: string;
  /** The versions trimmed from `status.storedVersions`; empty when there was nothing to do. */
  readonly trimmedVersions: readonly string[];
  /** Objects listed and PUT back (including those that were then 404 or 409). */
  readonly objects: number;
}

export interface MigrateStorageVersionOptions {
  /** Objects per LIST page. @default 500, kube-storage-version-migrator's chunk size */
  readonly pageSize?: number;
  readonly signal?: AbortSignal;
  /** Called with the CRD as read in step 1. */
  readonly onCrd?: (crd: KubeObject) => void;
  /** Called after each object is handled (tests, progress). */
  readonly onObject?: (object: KubeObject, outcome: 'rewritten' | 'gone' | 'conflict') => void;
}

/**
 * One pass of the contract above for one kind.
 * @throws StorageVersionMigrationError naming the CRD, the failing step and (for a rewrite) the object;
 *   the server's ApiError is its `cause`
 */
export async function migrateStorageVersion(
  client: Pick<KubeClient, 'request'>,
  kind: MigratedKind,
  options: MigrateStorageVersionOptions = {},
): Promise<StorageVersionMigrationResult> {
  const name = crdName(kind);
  const signal = options.signal;
  const resources = new ResourceClient(client);
  let crd: KubeObject & CrdVersionsView;
  try {
    crd = await resources.get(CUSTOM_RESOURCE_DEFINITIONS, undefined, name, { signal });
  } catch (cause) {
    throw new StorageVersionMigrationError(name, 'ReadCrdFailed', `GET failed: ${messageOf(cause)}`, { cause });
  }
  options.onCrd?.(crd);
  const plan = planStorageVersionMigration(name, crd);
  if (plan.action === 'none') return { crd: name, storageVersion: plan.storageVersion, trimmedVersions: [], objects: 0 };

  const ref = { group: kind.group, version: plan.storageVersion, plural: kind.plural, namespaced: kind.namespaced };
  const apiVersion = `${kind.group}/${plan.storageVersion}`;
  const limit = options.pageSize ?? 500;
  let objects = 0;
  const pages = resources.pages(ref, undefined, { limit, signal, onExpiredContinue: 'restart' }); // an expired continue token: start again; what was rewritten already costs nothing the second time
  for (;;) {
    let page: IteratorResult<ListPage>;
    try {
      page = await pages.next();
    } catch (cause) {
      throw new StorageVersionMigrationError(name, 'ListFailed', `LIST ${apiVersion} ${kind.plural} failed: ${messageOf(cause)}`, { cause });
    }
    if (page.done) break;
    for (const item of page.value.items) {
      const meta = item.metadata ?? {};
      const object = { ...item, apiVersion, kind: kind.kind };
      let outcome: 'rewritten' | 'gone' | 'conflict' = 'rewritten';
      try {
        await resources.update(ref, object, { signal });
      } catch (cause) {
        if (isApiError(cause, 404)) outcome = 'gone';
        else if (isApiError(cause, 409)) outcome = 'conflict';
        else {
          const who = `${kind.kind} ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name}`;
          throw new StorageVersionMigrationError(name, 'RewriteFailed', `PUT of ${who} in ${apiVersion} failed: ${messageOf(cause)}`, { cause });
        }
      }
      objects++;
      options.onObject?.(item, outcome);
    }
  }

  const trimmed = { ...crd, status: { ...(crd.status as object), storedVersions: [plan.storageVersion] } };
  try {
    await resources.updateStatus(CUSTOM_RESOURCE_DEFINITIONS, trimmed, { signal });
  } catch (cause) {
    const why = isApiError(cause, 409) ? 'the CRD changed during the migration; it starts again' : messageOf(cause);
    throw new StorageVersionMigrationError(name, 'TrimFailed', `setting status.storedVersions to [${plan.storageVersion}] failed: ${why}`, { cause });
  }
  return { crd: name, storageVersion: plan.storageVersion, trimmedVersions: plan.staleVersions, objects };
}

/** The migration's metrics, registered once per registry. */
export interface StorageVersionMigrationMetrics {
  /** `cdk8s_operator_storage_version_migrations_total{crd,result}`: passes that trimmed (`success`) or failed (`error`). */
  readonly migrations: Counter<'crd' | 'result'>;
  /**
   * `cdk8s_operator_storage_version_migrated_objects_total{crd,outcome}`: objects handled, by outcome:
   * `rewritten` (our PUT), `conflict` (written by someone else since the LIST, e.g. a status write,
   * so already re-encoded), `gone` (deleted since the LIST).
   */
  readonly objects: Counter<'crd' | 'outcome'>;
}

/** The migration's counters in `registry` (created on first use, shared after). */
export function storageVersionMigrationMetrics(registry: Registry): StorageVersionMigrationMetrics {
  const counter = <L extends string>(name: string, help: string, labelNames: L[]): Counter<L> =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
  return {
    migrations: counter('cdk8s_operator_storage_version_migrations_total', 'Storage-version migrations that trimmed status.storedVersions (success) or failed (error), by CRD', ['crd', 'result']),
    objects: counter('cdk8s_operator_storage_version_migrated_objects_total', 'Objects the storage-version migration handled, by CRD and outcome (rewritten, conflict: written meanwhile, gone: deleted meanwhile)', ['crd', 'outcome']),
  };
}

export interface StorageVersionMigratorOptions {
  /** Reads and writes; the manager's fenced writer, so nothing is sent once leadership is lost. */
  readonly client: Pick<KubeClient, 'request'>;
  /** The kinds to migrate, each an operator's CRD. */
  readonly kinds: readonly MigratedKind[];
  /** Warning Events on failure, a Normal Event on a trim; regarding the CRD. @default none */
  readonly events?: (kind: MigratedKind) => EventRecorder | undefined;
  /** @default silentLogger */
  readonly logger?: Logger;
  /** @default none */
  readonly metrics?: StorageVersionMigrationMetrics;
  /** Delay after a failed pass: from `initialMs`, doubling, up to `maxMs`. @default { initialMs: 5000, maxMs: 300000 } */
  readonly retry?: { readonly initialMs?: number; readonly maxMs?: number };
  /** Objects per LIST page. @default 500 */
  readonly pageSize?: number;
}

/**
 * Runs {@link migrateStorageVersion} for each kind, one after another, in the background, each until it
 * succeeds once (a later storage-version change comes with a new CRD, normally with a new release, i.e.
 * a restart: then it runs again). Every failure is told (log at error, Warning Event, metric) and retried
 * with backoff. `start()` returns at once; `stop()` aborts and waits.
 */
export class StorageVersionMigrator {
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private readonly logger: Logger;

  constructor(private readonly options: StorageVersionMigratorOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Starts the passes; idempotent. `done()` resolves when every kind has succeeded (or on stop). */
  start(): void {
    this.running ??= Promise.all(this.options.kinds.map((kind) => this.runKind(kind))).then(() => undefined);
  }

  /** Resolves once every kind has succeeded, or after {@link stop}. */
  done(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    this.abort.abort(new Error('storage-version migration stopped'));
    await this.running;
  }

  private async runKind(kind: MigratedKind): Promise<void> {
    const signal = this.abort.signal;
    const backoff = new Backoff({ initialMs: this.options.retry?.initialMs ?? 5_000, maxMs: this.options.retry?.maxMs ?? 300_000 });
    const name = crdName(kind);
    // Events regard the CRD (kubectl describe crd shows them); its uid once read.
    const regarding: KubeObject = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } };
    while (!signal.aborted) {
      try {
        const result = await migrateStorageVersion(this.options.client, kind, {
          signal,
          pageSize: this.options.pageSize,
          onObject: (_object, outcome) => this.options.metrics?.objects.inc({ crd: name, outcome }),
          onCrd: (crd) => {
            regarding.metadata = { name, uid: crd.metadata?.uid };
          },
        });
        if (result.trimmedVersions.length > 0) {
          this.options.metrics?.migrations.inc({ crd: name, result: 'success' });
          const note = `rewrote ${result.objects} objects in ${result.storageVersion}; status.storedVersions is now [${result.storageVersion}] (was also ${result.trimmedVersions.join(', ')})`;
          this.logger.info({ crd: name, storageVersion: result.storageVersion, trimmedVersions: result.trimmedVersions, objects: result.objects }, 'storage-version migration done');
          void this.options.events?.(kind)?.normal(regarding, 'StorageVersionMigrated', 'Migrate', note);
        } else {
          this.logger.debug({ crd: name, storageVersion: result.storageVersion }, 'storage-version migration: nothing stored in other versions');
        }
        return;
      } catch (err) {
        if (signal.aborted) return;
        const delayMs = backoff.next();
        this.options.metrics?.migrations.inc({ crd: name, result: 'error' });
        this.logger.error({ crd: name, retryInMs: delayMs, ...errorFields(err) }, 'storage-version migration failed; retrying');
        void this.options.events?.(kind)?.warning(regarding, 'StorageVersionMigrationFailed', 'Migrate', `${messageOf(err)}; retrying in ${Math.round(delayMs / 1000)} s`);
        await sleep(delayMs, signal);
      }
    }
  }
}

function messageOf(err: unknown): string {
  const message = thrownText(err);
  // A ClusterRole from before this SDK version lacks the CRD grants: say how to get them.
  return isApiError(err, 403) ? `${message} (re-run cdk8s synth and apply the operator's RBAC: it grants what the migration needs)` : message;
}

/** An operator as {@link storageVersionMigratorFor} reads it (lib/operator's `Operator` satisfies it). */
export interface MigratingOperator extends StorageVersionMigrationSubject {
  readonly operatorName: string;
  readonly crd: MigratedKind;
}

export interface StorageVersionMigratorForOptions extends Omit<StorageVersionMigratorOptions, 'kinds' | 'events' | 'metrics'> {
  /** The single namespace the manager watches: then nothing is migrated. @default all namespaces */
  readonly namespace?: string;
  /** The Event recorder of each operator, by operatorName. @default none */
  readonly events?: (operatorName: string) => EventRecorder | undefined;
  /** Registry of the operator's metrics. @default none */
  readonly registry?: Registry;
}

/**
 * The migrator of the manager's operators that {@link migratesStoredVersions} picks, or undefined when
 * none does (or the manager watches one namespace: it cannot see every object).
 */
export function storageVersionMigratorFor(operators: readonly MigratingOperator[], options: StorageVersionMigratorForOptions): StorageVersionMigrator | undefined {
  if (options.namespace !== undefined) return undefined;
  const migrating = operators.filter((o) => migratesStoredVersions(o));
  if (migrating.length === 0) return undefined;
  const byCrd = new Map(migrating.map((o) => [crdName(o.crd), o]));
  return new StorageVersionMigrator({
    ...options,
    kinds: [...byCrd.values()].map((o) => o.crd),
    events: (kind) => options.events?.(byCrd.get(crdName(kind))!.operatorName),
    metrics: options.registry ? storageVersionMigrationMetrics(options.registry) : undefined,
  });
}
