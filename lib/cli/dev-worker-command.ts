/**
 * `cdk8s-operator dev-worker` (hidden): the child process in which `dev` runs the operators, so that a
 * reload loads their module afresh (an ES module cannot be unloaded from a process). Started by
 * lib/cli/operator-host.ts through bin/cdk8s-operator.js, which registers tsx as for any command; it
 * talks to its parent over the IPC channel only ({@link WorkerMessage}, {@link HostMessage}):
 *
 * 1. sends `spawned` once the SDK is loaded (a spare worker waits here, so that a reload costs only the
 *    user's module); on `load`, loads `--module` (or this repository's operators) and picks
 *    `--operators`; sends `loaded` with each operator's description (lib/cli/operator-description.ts),
 *    or `load-failed` with the error as `file:line:col: message` (lib/cli/load-error-location.ts), and
 *    exits;
 * 2. on `start` (with the loaded kubeconfig's clusters, users and contexts, lib/cli/loaded-kubeconfig.ts): serves the operators' webhooks on 127.0.0.1 (fresh port and
 *    CA) and installs their CRDs and webhook configurations pointed there, or installs the CRDs alone
 *    (server-side apply: unchanged ones stay as they are); starts one Manager (no leader election, no
 *    RBAC self-check) and sends `started`; then `idle` once every controller's queue is empty and no
 *    reconcile runs (every CR listed at start has been reconciled once);
 * 3. on `pause`: stops the Manager (graceful: no write of this version follows), the webhook server
 *    and tracing, and sends `paused`; the module stays loaded, so a `start` that follows starts this
 *    version again (dev-reload.ts does so when the version loaded after it fails to start);
 * 4. on `stop`, or when the parent goes away: stops as `pause` does, sends `stopped`, and exits 0.
 *
 * SIGINT and SIGTERM are left to the parent (a Ctrl-C reaches the whole process group): it stops this
 * process once it has removed what it created, which may need the operators' finalizers.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Operator } from '../operator/operator.js';
import { packageRoot } from '../package-root.js';
import { Manager } from '../runtime/manager.js';
import { sleep } from '../runtime/queue/backoff.js';
import { type Tracing, startTracing } from '../runtime/tracing/tracing-from-env.js';
import { installCRDs } from '../testing/install-crds.js';
import { type LocalWebhooks, serveWebhooksLocally } from '../testing/local-webhooks.js';
import { type LogFormat, createCliLogger } from './cli-logger.js';
import { formatLoadError } from './load-error-location.js';
import { loadOperators, operatorsModulePath } from './load-operators.js';
import { type OperatorDescription, describeOperator } from './operator-description.js';
import { type KubeConfigParts, LoadedKubeConfig } from './loaded-kubeconfig.js';
import { type OperatorsFlags, moduleOption, operatorsOption } from './shared-flags.js';

/** Reconcile bindings `dev`'s text log leaves out (see createCliLogger's textOmits). */
const DEV_TEXT_OMITS = ['reconcileID', 'controller', 'controllerKind', 'namespace'];

/** What the parent sends. */
export type HostMessage =
  | { readonly type: 'load' }
  | { readonly type: 'start'; readonly kubeconfig: KubeConfigParts; readonly logLevel: string; readonly logFormat: LogFormat }
  | { readonly type: 'pause' }
  | { readonly type: 'stop' };

/** What the worker sends. */
export type WorkerMessage =
  | { readonly type: 'spawned' }
  | { readonly type: 'loaded'; readonly operators: OperatorDescription[] }
  | { readonly type: 'load-failed'; readonly error: string }
  | { readonly type: 'started'; readonly webhooks?: { readonly url: string; readonly paths: readonly string[] } }
  | { readonly type: 'start-failed'; readonly error: string }
  | { readonly type: 'idle' }
  | { readonly type: 'paused' }
  | { readonly type: 'stopped' };

/** How often the worker looks whether its controllers are idle, in ms. */
const IDLE_POLL_MS = 100;

/** Runs the worker (see the module doc); returns when it has stopped. */
export async function runDevWorker(options: OperatorsFlags): Promise<void> {
  const send = (message: WorkerMessage) => new Promise<void>((resolve) => process.send!(message, undefined, {}, () => resolve()));
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  process.on('SIGTERM', ignore);

  let operators: Operator[] = [];
  let manager: Manager | undefined;
  let tracing: Tracing | undefined;
  let webhooks: LocalWebhooks | undefined;
  let crdDir: string | undefined;
  const stopping = new AbortController();
  // Aborted by `pause` and `stop`: the run a `start` began ends (a `start` under way sends no failure).
  let run = new AbortController();
  const halt = async () => {
    run.abort();
    await manager?.stop().catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    await webhooks?.close().catch(() => undefined);
    if (crdDir) await rm(crdDir, { recursive: true, force: true });
    manager = undefined;
    tracing = undefined;
    webhooks = undefined;
    crdDir = undefined;
  };
  const pause = async () => {
    await halt();
    if (process.connected) await send({ type: 'paused' });
  };
  const stop = async () => {
    if (stopping.signal.aborted) return;
    stopping.abort();
    await halt();
    if (process.connected) await send({ type: 'stopped' });
    process.exit(0);
  };
  process.on('disconnect', () => void stop());

  const load = async () => {
    try {
      operators = (await loadOperators({ modulePath: options.module })).pick(options.operators);
      await send({ type: 'loaded', operators: operators.map(describeOperator) });
    } catch (err) {
      await send({ type: 'load-failed', error: formatLoadError(err, operatorsModulePath(options.module) ?? '--module', packageRoot()) });
      process.exit(1);
    }
  };

  const start = async (message: Extract<HostMessage, { type: 'start' }>) => {
    run = new AbortController();
    const signal = AbortSignal.any([stopping.signal, run.signal]);
    let running: Manager;
    try {
      const kubeConfig = new LoadedKubeConfig(message.kubeconfig);
      // One short line per event in the dev loop: the CR is the line's name and `key`; the reconcile's
      // other bindings (its ID, controller and kind, namespace) stay in the JSON format.
      const logger = createCliLogger({ level: message.logLevel, format: message.logFormat, destination: 2, textOmits: DEV_TEXT_OMITS });
      if (operators.some((o) => o.webhook)) {
        webhooks = await serveWebhooksLocally({ kubeConfig, operators, logger });
        await webhooks.install(60_000);
      } else {
        crdDir = await mkdtemp(join(tmpdir(), 'cdk8s-operator-dev-'));
        const files: string[] = [];
        for (const operator of operators) {
          const file = join(crdDir, `${operator.operatorName}.crd.json`);
          await writeFile(file, JSON.stringify(operator.customResourceDefinition.toJson()));
          files.push(file);
        }
        await installCRDs(kubeConfig, files, 60_000);
      }
      // Spans as `run` sends them, when the OTEL_* variables ask for it (lib/runtime/tracing/tracing-from-env.ts).
      tracing = await startTracing({ serviceName: operators.map((o) => o.operatorName).join('-'), logger });
      manager = running = new Manager({ kubeConfig, operators, logger, tracer: tracing.tracer });
      await running.start(signal);
      await send({ type: 'started', ...(webhooks ? { webhooks: { url: webhooks.webhook.url, paths: webhooks.server.paths } } : {}) });
    } catch (err) {
      if (!signal.aborted) await send({ type: 'start-failed', error: (err as Error).message });
      return;
    }
    while (!signal.aborted && !running.controllers.every((c) => c.queue.len() === 0 && c.active === 0)) await sleep(IDLE_POLL_MS);
    if (!signal.aborted) await send({ type: 'idle' });
  };

  await new Promise<void>((resolve) => {
    process.on('message', (message: HostMessage) => {
      if (message.type === 'load') void load();
      else if (message.type === 'start') void start(message);
      else if (message.type === 'pause') void pause();
      else if (message.type === 'stop') void stop().then(resolve);
    });
    void send({ type: 'spawned' });
  });
}

/** Adds the hidden `dev-worker` command to the `cdk8s-operator` program (only `dev` starts it). */
export function registerDevWorkerCommand(program: Command): void {
  program
    .command('dev-worker', { hidden: true })
    .description('the child process in which dev runs the operators (started by dev; not for direct use)')
    .addOption(moduleOption())
    .addOption(operatorsOption())
    .action(async (opts: OperatorsFlags) => {
      if (!process.send) {
        process.stderr.write('error: dev-worker is started by `cdk8s-operator dev`, over an IPC channel\n');
        process.exitCode = 2;
        return;
      }
      await runDevWorker(opts);
    });
}
