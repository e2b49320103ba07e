/**
 * One control plane component (etcd, kube-apiserver, …) running as a child process in its own process
 * group, with its stdout and stderr appended to a log file.
 *
 * Stopping kills the whole group (SIGTERM, then SIGKILL after a grace period), so helpers a component
 * may start die with it.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** What to run and where its output goes. */
export interface ComponentProcessSpec {
  /** Component name used in messages, e.g. `kube-apiserver`. */
  readonly name: string;
  /** Absolute path of the executable. */
  readonly command: string;
  /** Its arguments (flags), without the executable. */
  readonly args: readonly string[];
  /** File that receives stdout and stderr (appended). */
  readonly logPath: string;
  /** Environment of the process. @default process.env, this process's own */
  readonly env?: NodeJS.ProcessEnv;
}

/** How a process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Sends `signal` to process group `pgid`. Returns false when the group no longer exists. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** `[state, pgrp]` of a process from /proc/<pid>/stat, or undefined when it is gone or there is no procfs. */
function procStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) S ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/**
 * True while a live (non-zombie) process of group `pgid` exists.
 *
 * A zombie has released its ports and memory; it only waits to be reaped by its parent, which for a
 * component started by another process (`env up`) is PID 1 and may take seconds. Without procfs
 * (macOS), zombies count as alive.
 */
export function isProcessGroupAlive(pgid: number): boolean {
  if (!signalProcessGroup(pgid, 0)) return false;
  if (!existsSync('/proc/self/stat')) return true;
  const leader = procStat(pgid);
  if (leader && leader.state !== 'Z') return true;
  // The leader is a zombie or gone, yet the group exists: look for a live member.
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const member = procStat(Number(entry));
    if (member && member.pgrp === pgid && member.state !== 'Z') return true;
  }
  return false;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stops process group `pgid`: SIGTERM, then SIGKILL once `graceMs` has passed, then waits up to 5 s more
 * for the group to disappear.
 *
 * @param graceMs time between SIGTERM and SIGKILL, in ms; default 5000: room for a clean exit on SIGTERM,
 *   yet a bound on a stop (kube-apiserver with connected clients drains for a long time)
 * @returns true when the group is gone, false if it survived SIGKILL (e.g. a process stuck in the kernel).
 */
export async function stopProcessGroup(pgid: number, graceMs = 5000): Promise<boolean> {
  if (!signalProcessGroup(pgid, 'SIGTERM')) return true;
  const termDeadline = Date.now() + graceMs;
  while (Date.now() < termDeadline) {
    if (!isProcessGroupAlive(pgid)) return true;
    await sleep(50);
  }
  signalProcessGroup(pgid, 'SIGKILL');
  const killDeadline = Date.now() + 5000;
  while (Date.now() < killDeadline) {
    if (!isProcessGroupAlive(pgid)) return true;
    await sleep(50);
  }
  return !isProcessGroupAlive(pgid);
}

/**
 * Last `lines` lines of a log file; '' when it cannot be read.
 * Reads at most the last 64 KiB.
 *
 * @param lines how many lines; default 40: the tail that start-up errors quote, enough to show why a
 *   component exited
 */
export async function readLogTail(path: string, lines = 40): Promise<string> {
  try {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const length = Math.min(size, 64 * 1024);
      const buffer = Buffer.alloc(length);
      await file.read(buffer, 0, length, size - length);
      return buffer.toString('utf8').split('\n').slice(-lines - 1).join('\n').trimEnd();
    } finally {
      await file.close();
    }
  } catch {
    return '';
  }
}

/** Synchronous variant of {@link readLogTail}, for exit handlers (`lines` default 40, as there). */
export function readLogTailSync(path: string, lines = 40): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines - 1).join('\n').trimEnd();
  } catch {
    return '';
  }
}

/** A running (or exited) component process. Create with {@link ComponentProcess.start}. */
export class ComponentProcess {
  /** Set once the process has exited (only observed while this Node process is its parent). */
  exit: ProcessExit | undefined;
  /** Resolves when the process exits. */
  readonly exited: Promise<ProcessExit>;

  private constructor(
    readonly spec: ComponentProcessSpec,
    /** Process id; also the process group id (spawned detached). */
    readonly pid: number,
    exited: Promise<ProcessExit>,
  ) {
    this.exited = exited.then((exit) => (this.exit = exit));
  }

  get name(): string {
    return this.spec.name;
  }

  /** The process group id (same as the pid: each component leads its own group). */
  get pgid(): number {
    return this.pid;
  }

  /**
   * Spawns the component detached (its own process group), stdin closed, output appended to `logPath`.
   * The child is unref'd: it does not keep this Node process alive (a test run that forgot `stop()`
   * still ends; the owner's exit handlers and watchdog then stop the component).
   *
   * @throws Error if the executable cannot be spawned (missing, not executable).
   */
  static async start(spec: ComponentProcessSpec): Promise<ComponentProcess> {
    const logFd = openSync(spec.logPath, 'a');
    try {
      const child = spawn(spec.command, [...spec.args], {
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env: spec.env ?? process.env,
      });
      const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
      const pid = await new Promise<number>((resolve, reject) => {
        child.once('spawn', () => resolve(child.pid!));
        child.once('error', (err) => reject(new Error(`cannot start ${spec.name} (${spec.command}): ${err.message}`, { cause: err })));
      });
      child.unref();
      return new ComponentProcess(spec, pid, exited);
    } finally {
      closeSync(logFd); // the child has its own copy
    }
  }

  /**
   * Stops the whole process group; see {@link stopProcessGroup}. Resolves once it is gone and the
   * leader has been reaped (its {@link exited} resolved), so no zombie is left behind.
   * @param graceMs time between SIGTERM and SIGKILL, in ms; default 5000, as {@link stopProcessGroup}
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.exit === undefined) {
      await stopProcessGroup(this.pgid, graceMs);
      // Gone from its group is not yet reaped by this process: wait for the leader's exit event (Node
      // reaps it with waitpid and then emits it), bounded in case this process is not its parent. The
      // timer is a referenced one: the child is unref'd, so without it an otherwise idle process could
      // end before the exit event is delivered.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
    } else {
      // The leader is gone, but a helper in its group may still run.
      signalProcessGroup(this.pgid, 'SIGKILL');
    }
  }

  /** SIGKILLs the process group at once, synchronously (for `exit` handlers). */
  killNow(): void {
    signalProcessGroup(this.pgid, 'SIGKILL');
  }

  /** The last `lines` lines of the component's log (default 40, see {@link readLogTail}). */
  logTail(lines = 40): Promise<string> {
    return readLogTail(this.spec.logPath, lines);
  }
}
