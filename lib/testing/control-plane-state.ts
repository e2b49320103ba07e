/**
 * The state file of a local control plane (`<dir>/control-plane.json`): which processes run it and
 * where its kubeconfig is. It lets another process (`cdk8s-operator env status|down`) inspect or stop a
 * control plane it did not start.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ComponentProcess, isProcessGroupAlive, signalProcessGroup, stopProcessGroup } from './component-process.js';

/** File name of the state file inside the control plane's dir. */
export const CONTROL_PLANE_STATE_FILE = 'control-plane.json';

/** One component process as recorded in the state file. */
export interface ComponentState {
  /** e.g. `etcd`, `kube-apiserver`, `kube-controller-manager`, `kube-scheduler`, `kwok`. */
  readonly name: string;
  /** Process id. */
  readonly pid: number;
  /** Process group id (the component leads its own group, so equal to pid). */
  readonly pgid: number;
  /** Executable path, checked against /proc/<pid>/cmdline before signalling (guards against pid reuse). */
  readonly command: string;
  /**
   * Arguments it was started with, so that another process can start it again.
   * @default absent: state files written before arguments were recorded (then it cannot be restarted)
   */
  readonly args?: readonly string[];
  /** HOME of its own, when it was started with one (kwok, which would otherwise read ~/.kwok). @default the starting process's HOME */
  readonly home?: string;
  /** Absolute path of its log file (stdout and stderr, appended). */
  readonly logPath: string;
}

/** Content of `control-plane.json` (format version 1). */
export interface ControlPlaneState {
  /** Format version of the file. */
  readonly version: 1;
  /** The control plane's dir (absolute), which holds this file. */
  readonly dir: string;
  /** Absolute path of the admin kubeconfig. */
  readonly kubeconfigPath: string;
  /** API server URL, e.g. `https://127.0.0.1:41234`. */
  readonly server: string;
  /** etcd client URL, e.g. `http://127.0.0.1:41235`. */
  readonly etcdEndpoint: string;
  /** Remove `dir` when stopping (the control plane created it); otherwise only this file is removed. */
  readonly removeDirOnStop: boolean;
  /** pid of the process that started the control plane. */
  readonly ownerPid: number;
  /** ISO 8601 start time. */
  readonly startedAt: string;
  /** Components in start order. */
  readonly components: readonly ComponentState[];
}

/** Writes the state file atomically (temp file + rename). */
export async function writeControlPlaneState(state: ControlPlaneState): Promise<void> {
  const path = join(state.dir, CONTROL_PLANE_STATE_FILE);
  await writeFile(`${path}.tmp`, JSON.stringify(state, null, 2) + '\n');
  await rename(`${path}.tmp`, path);
}

/**
 * Reads `<dir>/control-plane.json`.
 * @returns undefined when there is no state file.
 * @throws Error when the file exists but is not a version 1 state file.
 */
export async function readControlPlaneState(dir: string): Promise<ControlPlaneState | undefined> {
  const path = join(dir, CONTROL_PLANE_STATE_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const state = JSON.parse(text) as ControlPlaneState;
  if (state.version !== 1 || !Array.isArray(state.components)) {
    throw new Error(`${path} is not a control plane state file (version 1)`);
  }
  return state;
}

/**
 * True when the recorded component still runs: its process group exists and, where /proc is available,
 * its pid still runs the recorded executable (a reused pid is not ours).
 */
export function isComponentAlive(component: ComponentState): boolean {
  if (!isProcessGroupAlive(component.pgid)) return false;
  const cmdlinePath = `/proc/${component.pid}/cmdline`;
  if (!existsSync('/proc/self/cmdline')) return true; // no procfs (macOS): trust the group id
  try {
    const argv0 = readFileSync(cmdlinePath, 'utf8').split('\0')[0];
    return argv0 === component.command;
  } catch {
    // The leader is gone (or a zombie) while other group members live: still ours.
    return true;
  }
}

/** Liveness of each component of a state file. */
export interface ComponentLiveness {
  readonly name: string;
  readonly pid: number;
  readonly alive: boolean;
}

/** Checks every recorded component; see {@link isComponentAlive}. */
export function componentLiveness(state: ControlPlaneState): ComponentLiveness[] {
  return state.components.map((c) => ({ name: c.name, pid: c.pid, alive: isComponentAlive(c) }));
}

/** Stop order: the API clients first, then kube-apiserver, then etcd. */
function stopOrder(components: readonly ComponentState[]): ComponentState[][] {
  const last = ['kube-apiserver', 'etcd'];
  const clients = components.filter((c) => !last.includes(c.name));
  return [clients, ...last.map((name) => components.filter((c) => c.name === name))].filter((group) => group.length > 0);
}

/**
 * Stops the control plane recorded in `<dir>/control-plane.json` from any process: clients, then
 * kube-apiserver, then etcd; each process group gets SIGTERM, then SIGKILL after `graceMs`.
 * Removes the dir when the state says so, otherwise only the state file.
 *
 * @param graceMs time between SIGTERM and SIGKILL of each process group, in ms; default 5000, as
 *   `stopProcessGroup` (component-process.ts)
 * @returns the names of the components that were still running, or undefined when there is no state file.
 * @throws Error if a process group survives SIGKILL.
 */
export async function stopControlPlaneFromState(dir: string, graceMs = 5000): Promise<string[] | undefined> {
  const state = await readControlPlaneState(dir);
  if (!state) return undefined;
  const stopped: string[] = [];
  const survivors: string[] = [];
  for (const group of stopOrder(state.components)) {
    await Promise.all(
      group.map(async (component) => {
        if (!isComponentAlive(component)) return;
        stopped.push(component.name);
        if (!(await stopProcessGroup(component.pgid, graceMs))) survivors.push(`${component.name} (pgid ${component.pgid})`);
      }),
    );
  }
  if (survivors.length > 0) throw new Error(`control plane in ${dir}: still running after SIGKILL: ${survivors.join(', ')}`);
  // Components started by another process are reparented to PID 1 and stay zombies until it reaps
  // them; wait (up to 10 s) so that, once this resolves, no process of ours shows up anywhere.
  const reapDeadline = Date.now() + 10_000;
  while (Date.now() < reapDeadline && state.components.some((c) => signalProcessGroup(c.pgid, 0))) {
    await new Promise((r) => setTimeout(r, 100));
  }
  if (state.removeDirOnStop) {
    await rm(dir, { recursive: true, force: true });
  } else {
    await rm(join(dir, CONTROL_PLANE_STATE_FILE), { force: true });
  }
  return stopped;
}

/** Names of the components a state file records, for messages. */
function componentNames(state: ControlPlaneState): string {
  return state.components.map((c) => c.name).join(', ');
}

function recordedComponent(state: ControlPlaneState, name: string): ComponentState {
  const component = state.components.find((c) => c.name === name);
  if (!component) throw new Error(`control plane in ${state.dir} has no component "${name}" (it has ${componentNames(state)})`);
  return component;
}

/**
 * Stops one recorded component (SIGTERM to its process group, SIGKILL after `graceMs`) and keeps it in
 * the state file, so that {@link startComponentFromState} can start it again and `env status` shows it as
 * not running. Fault tests use this: a stopped etcd, a restarted kube-apiserver.
 *
 * @param name the component's name in the state file, e.g. `etcd`, `kube-apiserver`
 * @param graceMs time between SIGTERM and SIGKILL, in ms; default 5000, as `stopProcessGroup`
 * @returns false when it was not running.
 * @throws Error when there is no state file, no such component, or it survives SIGKILL.
 */
export async function stopComponentFromState(dir: string, name: string, graceMs = 5000): Promise<boolean> {
  const state = await readControlPlaneState(dir);
  if (!state) throw new Error(`no control plane state in ${dir}`);
  const component = recordedComponent(state, name);
  if (!isComponentAlive(component)) return false;
  if (!(await stopProcessGroup(component.pgid, graceMs))) throw new Error(`${name} (pgid ${component.pgid}) still runs after SIGKILL`);
  return true;
}

/**
 * Starts one recorded component again, detached, with the executable and arguments it was first started
 * with (same ports, data dir and certificates), its output appended to the same log, and records its new
 * pid. Readiness is the caller's to wait for.
 *
 * @returns the component as now recorded.
 * @throws Error when there is no state file, no such component, it still runs, the state file predates
 *   recorded arguments, or the executable cannot be spawned.
 */
export async function startComponentFromState(dir: string, name: string): Promise<ComponentState> {
  const state = await readControlPlaneState(dir);
  if (!state) throw new Error(`no control plane state in ${dir}`);
  const component = recordedComponent(state, name);
  if (isComponentAlive(component)) throw new Error(`${name} already runs (pid ${component.pid})`);
  if (!component.args) throw new Error(`${name}: the state file in ${dir} does not record its arguments (written by an older version); run env down and env up`);
  const env = component.home === undefined ? undefined : { ...process.env, HOME: component.home };
  const proc = await ComponentProcess.start({ name, command: component.command, args: component.args, logPath: component.logPath, env });
  const restarted: ComponentState = { ...component, pid: proc.pid, pgid: proc.pgid };
  await writeControlPlaneState({ ...state, components: state.components.map((c) => (c.name === name ? restarted : c)) });
  return restarted;
}
