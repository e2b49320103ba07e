/**
 * `dev`'s reload: it watches the operators module and the local files it imports
 * (lib/cli/import-graph.ts; files under `node_modules` are not watched), and on a change (events
 * debounced into one batch, lib/cli/change-batch.ts) it:
 *
 * 1. loads the module again in a new operators process (lib/cli/operator-host.ts). When it does not
 *    compile, or throws at load, it prints `reload failed: file:line:col: message` and the previous
 *    version keeps running;
 * 2. asks the API server whether it accepts the new version's CRDs (server-side apply with
 *    `dryRun=All`, as the new version will apply them: nothing is changed). When it refuses one (e.g. a
 *    version renamed while objects are stored in it), it prints `reload failed: CRD <name>: …` with the
 *    server's own message, and the previous version keeps running, reconciling as before;
 * 3. reads every CR's children from the API server (lib/cli/children-snapshot.ts);
 * 4. pauses the previous version (graceful: reconciles in flight finish, then none of its writes
 *    follows; its process keeps its module), then starts the new one, which re-applies the CRDs and
 *    webhook configurations (server-side apply: only a changed one changes; its webhooks are served on
 *    a new port, the configurations pointed there) and reconciles every CR. When the new one fails to
 *    start or to reconcile every CR once (it throws, its process exits), it is stopped,
 *    `reload failed: the new version did not start: …` is printed, and the previous version starts again
 *    in its process (its CRDs and webhook configurations applied again): `the previous version keeps
 *    running (started again)`. Otherwise the previous version's process is stopped;
 * 5. once those reconciles are done, reads the children again and prints a short diff per child that
 *    changed, and `reloaded in 2.1s (load 0.6s, stop 0.3s, start 0.8s, reconcile 0.2s): 1 child changed`
 *    (the phases: loading the new version, stopping the previous one, installing the CRDs and starting
 *    the new one, its reconciles of every CR).
 *
 * The control plane, the samples and `dev`'s own process stay. File watching is chokidar's (atomic
 * saves, editors that replace a file by renaming, are followed; node:fs.watch loses a file replaced so).
 *
 * @see https://github.com/paulmillr/chokidar
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
 */
import { relative } from 'node:path';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { type FSWatcher, watch } from 'chokidar';
import { CUSTOM_RESOURCE_DEFINITIONS } from '../runtime/client/builtin-resources.js';
import { type KubeClient, isApiError } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { INSTALL_CRDS_FIELD_MANAGER } from '../testing/install-crds.js';
import { ChangeBatch } from './change-batch.js';
import { childChanges, snapshotChildren } from './children-snapshot.js';
import type { LogFormat } from './cli-logger.js';
import { localImportGraph } from './import-graph.js';
import { OperatorHost } from './operator-host.js';
import type { OperatorDescription } from './operator-description.js';

/** Options of {@link DevReload.start}. */
export interface DevReloadOptions {
  /** The operators module, absolute. */
  readonly modulePath: string;
  /** Comma-separated operator names (`--operators`). @default all */
  readonly operators?: string;
  readonly kubeConfig: KubeConfigView;
  /** Reads the children around a reload. */
  readonly client: KubeClient;
  /** The operators' log. */
  readonly log: { readonly level: string; readonly format: LogFormat };
  /** The version running now. */
  readonly host: OperatorHost;
  /** Progress lines (stderr). */
  readonly print: (line: string) => void;
  /**
   * Called with a new version's operators before it replaces the running one; a throw refuses the
   * version (told like a load failure). @default none
   */
  readonly admit?: (operators: readonly OperatorDescription[]) => Promise<void> | void;
  /** Called with where the new version serves its webhooks, after it started. @default none */
  readonly onWebhooks?: (webhooks: { url: string; paths: readonly string[] }) => void;
  /** Quiet period of the debounce, in ms. @default 200 (see ChangeBatch) */
  readonly quietMs?: number;
}

/** The watch-and-reload loop of `dev` (see the module doc). */
export class DevReload {
  private files = new Set<string>();
  private spare: OperatorHost | undefined;
  private running: Promise<void> = Promise.resolve();
  private readonly batch: ChangeBatch;
  private closed = false;
  private readonly followed = new WeakSet<OperatorHost>();

  private constructor(
    private readonly options: DevReloadOptions,
    private readonly watcher: FSWatcher,
    private current: OperatorHost | undefined,
  ) {
    this.batch = new ChangeBatch((paths) => (this.running = this.reload(paths)), options.quietMs);
  }

  /** Starts watching the module and the files it imports; resolves once the watches are set. */
  static async start(options: DevReloadOptions): Promise<DevReload> {
    const files = await localImportGraph(options.modulePath).catch(() => [options.modulePath]);
    const watcher = watch(files, { ignoreInitial: true, atomic: true });
    const reload = new DevReload(options, watcher, undefined);
    reload.follow(options.host);
    reload.files = new Set(files);
    for (const event of ['add', 'change', 'unlink'] as const) watcher.on(event, (path: string) => reload.batch.add(path));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    reload.spawnSpare();
    return reload;
  }

  /** The files watched now (absolute, sorted). */
  get watched(): string[] {
    return [...this.files].sort();
  }

  /** The version running now; undefined after a version failed to start (until the next change). */
  get host(): OperatorHost | undefined {
    return this.current;
  }

  /** Stops watching; waits for a reload under way; stops the spare process. The running version is the caller's to stop. */
  async close(): Promise<void> {
    this.closed = true;
    this.batch.close();
    await this.watcher.close();
    await this.running;
    await this.spare?.stop();
    this.spare = undefined;
  }

  private async reload(paths: string[]): Promise<void> {
    if (this.closed) return;
    try {
      await this.swap(paths);
    } finally {
      this.spawnSpare();
    }
  }

  /**
   * Spawns the process the next reload loads in, so that the SDK is loaded before the change comes
   * (a reload then costs the user's module, the swap and the reconciles).
   */
  private spawnSpare(): void {
    if (this.closed || this.spare) return;
    this.spare = OperatorHost.spawn({ modulePath: this.options.modulePath, operators: this.options.operators });
  }

  private async swap(paths: string[]): Promise<void> {
    const { print, modulePath } = this.options;
    const started = Date.now();
    const phases: [string, number][] = [];
    let mark = started;
    const phase = (name: string) => {
      phases.push([name, Date.now() - mark]);
      mark = Date.now();
    };
    const root = modulePath.slice(0, modulePath.lastIndexOf('/') + 1);
    print(`reloading: ${paths.map((p) => relative(root, p) || p).join(', ')} changed`);
    const next = this.spare ?? OperatorHost.spawn({ modulePath, operators: this.options.operators });
    this.spare = undefined;
    try {
      await next.load();
      phase('load');
    } catch (err) {
      print(`reload failed: ${(err as Error).message}`);
      print(this.current ? 'the previous version keeps running' : 'no operators run until the next change');
      return;
    }
    try {
      await this.options.admit?.(next.operators);
    } catch (err) {
      await next.stop();
      print(`reload failed: ${(err as Error).message}`);
      print(this.current ? 'the previous version keeps running' : 'no operators run until the next change');
      return;
    }
    await this.watchGraph();
    if (this.closed) {
      await next.stop();
      return;
    }
    // The previous version runs on until the API server has said it accepts the new CRDs.
    const refusals = await crdRefusals(this.options.client, next.operators);
    if (refusals.length > 0) {
      await next.stop();
      for (const refusal of refusals) print(`reload failed: ${refusal}`);
      print(this.current ? 'the previous version keeps running' : 'no operators run until the next change');
      return;
    }
    const previous = this.current;
    const described = [...(previous?.operators ?? []), ...next.operators];
    const before = await snapshotChildren(this.options.client, described).catch(() => new Map());
    // One writer at a time: the previous version stops writing (its process and module stay) before the
    // new one starts; it is stopped for good only once the new one has started and reconciled every CR.
    this.current = undefined;
    const paused = await previous?.pause().then(() => previous, () => undefined);
    phase('stop');
    try {
      const { webhooks } = await next.start(this.options.kubeConfig, this.options.log);
      phase('start');
      if (webhooks) this.options.onWebhooks?.(webhooks);
      for (const line of crdChanges(previous?.operators ?? [], next.operators)) print(line);
      await next.idle();
      phase('reconcile');
    } catch (err) {
      await next.stop();
      print(`reload failed: the new version did not start: ${(err as Error).message}`);
      await this.resume(paused);
      return;
    }
    this.follow(next);
    await paused?.stop();
    const after = await snapshotChildren(this.options.client, described).catch(() => new Map());
    const changes = childChanges(before, after);
    for (const line of changes) print(`  ${line}`);
    const count = changes.filter((l) => !l.startsWith('  ')).length;
    const took = phases.map(([name, ms]) => `${name} ${seconds(ms)}`).join(', ');
    print(`reloaded in ${seconds(Date.now() - started)} (${took}): ${count === 0 ? 'no child changed' : `${count} ${count === 1 ? 'child' : 'children'} changed`}`);
  }

  /**
   * Starts the paused previous version again after the new one failed to start (its CRDs and webhook
   * configurations applied again, over the new version's); tells whether operators run now.
   */
  private async resume(paused: OperatorHost | undefined): Promise<void> {
    const { print } = this.options;
    if (!paused) {
      print('no operators run until the next change');
      return;
    }
    try {
      const { webhooks } = await paused.start(this.options.kubeConfig, this.options.log);
      this.follow(paused);
      if (webhooks) this.options.onWebhooks?.(webhooks);
      print('the previous version keeps running (started again)');
    } catch (err) {
      await paused.stop();
      print(`error: the previous version did not start again: ${(err as Error).message}; no operators run until the next change`);
    }
  }

  /** Makes `host` the running version; tells when its process ends on its own. */
  private follow(host: OperatorHost): void {
    this.current = host;
    if (this.followed.has(host)) return;
    this.followed.add(host);
    void host.exited.then((code) => {
      if (this.current !== host || this.closed) return;
      this.current = undefined;
      this.options.print(`error: the operators process exited (code ${code}); no operators run until the next change`);
    });
  }

  /** Watches the new import graph (files no longer imported are let go); keeps the old one when it can't be read. */
  private async watchGraph(): Promise<void> {
    const files = await localImportGraph(this.options.modulePath).catch(() => undefined);
    if (!files) return;
    const next = new Set(files);
    const added = files.filter((f) => !this.files.has(f));
    const removed = [...this.files].filter((f) => !next.has(f));
    if (added.length > 0) this.watcher.add(added);
    if (removed.length > 0) this.watcher.unwatch(removed);
    this.files = next;
  }
}

/**
 * The API server's refusals of `operators`' CRDs, one line each (`CRD <name>: the API server refused it
 * (422 Invalid): <its message>`), from a server-side apply with `dryRun=All` (the field manager and force
 * of the apply the worker makes, lib/testing/install-crds.ts): nothing is changed. Empty when it accepts
 * every one. An answer that is not a refusal (4xx) is not one: the start that follows tells it.
 */
export async function crdRefusals(client: KubeClient, operators: readonly OperatorDescription[]): Promise<string[]> {
  const refusals: string[] = [];
  const resources = new ResourceClient(client);
  for (const operator of operators) {
    const crd = operator.customResourceDefinition;
    const name = crd.metadata?.name ?? `${operator.crd.plural}.${operator.crd.group}`;
    try {
      await resources.apply(CUSTOM_RESOURCE_DEFINITIONS, { ...crd, metadata: { ...crd.metadata, name } }, { fieldManager: INSTALL_CRDS_FIELD_MANAGER, force: true, dryRun: true });
    } catch (err) {
      if (!isApiError(err) || err.code < 400 || err.code >= 500) continue;
      const message = typeof err.status?.message === 'string' ? err.status.message : err.message;
      refusals.push(`CRD ${name}: the API server refused it (${err.code} ${err.reason}): ${message}`);
    }
  }
  return refusals;
}

/** `CRD <name> changed` / `added` / `removed` lines between two versions' operators. */
export function crdChanges(before: readonly OperatorDescription[], after: readonly OperatorDescription[]): string[] {
  const name = (o: OperatorDescription) => `${o.crd.plural}.${o.crd.group}`;
  const old = new Map(before.map((o) => [name(o), JSON.stringify(o.customResourceDefinition)]));
  const now = new Map(after.map((o) => [name(o), JSON.stringify(o.customResourceDefinition)]));
  const lines: string[] = [];
  for (const [crd, json] of now) {
    if (!old.has(crd)) lines.push(`CRD ${crd} added`);
    else if (old.get(crd) !== json) lines.push(`CRD ${crd} changed: re-applied`);
  }
  for (const crd of old.keys()) if (!now.has(crd)) lines.push(`CRD ${crd} no longer loaded (left installed)`);
  return lines;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
