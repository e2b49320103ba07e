/**
 * The parent's side of `dev`'s operators process (lib/cli/dev-worker-command.ts): one child process per
 * loaded version of the operators module. {@link OperatorHost.spawn} starts it (the SDK loads);
 * `load()` loads the module (or rejects with the error as `file:line:col: message`, the child gone); `start()` installs
 * the CRDs (and webhooks) and starts the operators; `idle()` resolves once they have reconciled every CR
 * once; `pause()` stops them gracefully and keeps the process, its module loaded (a `start()` after it
 * starts this version again); `stop()` stops them gracefully and waits for the process to end.
 *
 * The child is `node bin/cdk8s-operator.js dev-worker`, so it gets tsx exactly as the `dev` process did
 * (bin/cdk8s-operator.js), and inherits stdout and stderr (the operators' log goes to stderr).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { packageRoot } from '../package-root.js';
import type { LogFormat } from './cli-logger.js';
import type { HostMessage, WorkerMessage } from './dev-worker-command.js';
import type { OperatorDescription } from './operator-description.js';

/** The operators module could not be loaded; `message` is `file:line:col: message` where known. */
export class OperatorModuleError extends Error {
  override readonly name = 'OperatorModuleError';
}

/** Options of {@link OperatorHost.load}. */
export interface OperatorHostOptions {
  /** The operators module, absolute. @default this repository's operators (in a checkout) */
  readonly modulePath?: string;
  /** Comma-separated operator names. @default all */
  readonly operators?: string;
}

/** One version of the operators, in its own process: spawned, then loaded, started, stopped. */
export class OperatorHost {
  /** Resolves with the exit code (null: killed) when the process ends. */
  readonly exited: Promise<number | null>;
  private readonly waiters = new Set<{ types: WorkerMessage['type'][]; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }>();
  private readonly seen: WorkerMessage[] = [];
  private exitCode: number | null | undefined;
  private described: readonly OperatorDescription[] | undefined;

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => {
      this.gone(code);
      resolve(code);
    }));
    child.on('message', (message: WorkerMessage) => this.receive(message));
    child.on('error', () => undefined); // a failed spawn or send: the exit that follows is what is reported
  }

  /**
   * Starts a process that loads the SDK and waits for {@link load} (a spare, so that a reload costs
   * only the user's module).
   */
  static spawn(options: OperatorHostOptions): OperatorHost {
    const args = ['dev-worker'];
    if (options.modulePath !== undefined) args.push('--module', options.modulePath);
    if (options.operators !== undefined) args.push('--operators', options.operators);
    return new OperatorHost(fork(join(packageRoot(), 'bin', 'cdk8s-operator.js'), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] }));
  }

  /** {@link spawn}, then {@link load}. */
  static async load(options: OperatorHostOptions): Promise<OperatorHost> {
    const host = OperatorHost.spawn(options);
    await host.load();
    return host;
  }

  /**
   * Loads the operators module in the process.
   * @returns the operators, as the process described them
   * @throws OperatorModuleError with `file:line:col: message` when the module cannot be loaded, exports
   *   no operators, or throws at load (the process has ended then); Error when the process ended
   */
  async load(): Promise<readonly OperatorDescription[]> {
    await this.next(['spawned']);
    this.send({ type: 'load' });
    const answer = await this.next(['loaded', 'load-failed']);
    if (answer.type === 'load-failed') {
      await this.exited;
      throw new OperatorModuleError(answer.error);
    }
    this.described = answer.type === 'loaded' ? answer.operators : [];
    return this.described;
  }

  /** The operators, as the process described them once loaded; empty before. */
  get operators(): readonly OperatorDescription[] {
    return this.described ?? [];
  }

  /**
   * Installs the CRDs (and serves the webhooks, their configurations pointed at them) and starts the
   * operators against the cluster of `kubeConfig`.
   * @returns where the webhooks are served, when the operators have any
   * @throws Error with the child's message when installing or starting fails, or when it exits
   */
  async start(kubeConfig: KubeConfigView, log: { level: string; format: LogFormat }): Promise<{ webhooks?: { url: string; paths: readonly string[] } }> {
    this.send({ type: 'start', kubeconfig: { clusters: kubeConfig.clusters, users: kubeConfig.users, contexts: kubeConfig.contexts, currentContext: kubeConfig.currentContext }, logLevel: log.level, logFormat: log.format });
    const answer = await this.next(['started', 'start-failed']);
    if (answer.type === 'start-failed') throw new Error(answer.error);
    return answer.type === 'started' && answer.webhooks ? { webhooks: answer.webhooks } : {};
  }

  /** Resolves once the operators have reconciled every CR they listed at start (their queues ran empty). */
  async idle(): Promise<void> {
    await this.next(['idle']);
  }

  /**
   * Stops the operators gracefully (reconciles in flight finish; none of their writes follows) and keeps
   * the process with its module loaded: {@link start} starts this version again.
   * @throws Error when the process has exited (then nothing of it runs either)
   */
  async pause(): Promise<void> {
    this.send({ type: 'pause' });
    await this.next(['paused']);
    // What the run before the pause said is no answer to the next start.
    for (let i = this.seen.length - 1; i >= 0; i--) if (['started', 'start-failed', 'idle'].includes(this.seen[i].type)) this.seen.splice(i, 1);
  }

  /** Stops the operators gracefully (or a process not loaded yet) and waits for the process to end; never throws. */
  async stop(): Promise<void> {
    if (this.exitCode === undefined && this.child.connected) this.child.send({ type: 'stop' } satisfies HostMessage);
    await this.exited;
  }

  private send(message: HostMessage): void {
    if (!this.child.connected) throw new Error(`the operators process has exited (code ${this.exitCode})`);
    this.child.send(message);
  }

  /** The first message of one of `types` (one already received counts). */
  private next(types: WorkerMessage['type'][]): Promise<WorkerMessage> {
    const index = this.seen.findIndex((m) => types.includes(m.type));
    if (index >= 0) return Promise.resolve(this.seen.splice(index, 1)[0]);
    if (this.exitCode !== undefined) return Promise.reject(new Error(`the operators process has exited (code ${this.exitCode})`));
    return new Promise((resolve, reject) => this.waiters.add({ types, resolve, reject }));
  }

  private receive(message: WorkerMessage): void {
    for (const waiter of this.waiters) {
      if (waiter.types.includes(message.type)) {
        this.waiters.delete(waiter);
        waiter.resolve(message);
        return;
      }
    }
    this.seen.push(message);
  }

  private gone(code: number | null): void {
    this.exitCode = code;
    for (const waiter of this.waiters) waiter.reject(new Error(`the operators process exited (${code === null ? 'killed' : `code ${code}`})`));
    this.waiters.clear();
  }
}
