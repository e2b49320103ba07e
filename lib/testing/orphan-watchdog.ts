/**
 * A watchdog process that stops a control plane when the process that started it dies, however it
 * dies (SIGKILL, a crash, a test runner that exits without running our `exit` handler: Jest's sandboxed
 * `process` object never sees the real signals).
 *
 * It is a small plain-JavaScript Node process, detached and unref'd. Every 500 ms it checks that the
 * owner pid is alive; once it is not, it reads the state file (`control-plane.json`, see
 * control-plane-state.ts) and sends SIGTERM, then SIGKILL after 3 s, to every recorded process group
 * whose leader still runs the recorded executable, then removes the dir if the state says so.
 * It exits by itself when the state file disappears (a normal `stop()`).
 */
import { spawn } from 'node:child_process';

// Plain JavaScript, run with `node -e`: it must not depend on a TypeScript loader.
const WATCHDOG_SCRIPT = `
const fs = require('node:fs');
const [ownerPid, statePath] = process.argv.slice(1);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
const groupAlive = (pgid) => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
const ours = (c) => {
  try { return fs.readFileSync('/proc/' + c.pid + '/cmdline', 'utf8').split('\\0')[0] === c.command; }
  catch { return !fs.existsSync('/proc/self/cmdline') && groupAlive(c.pgid); }
};
const readState = () => { try { return JSON.parse(fs.readFileSync(statePath, 'utf8')); } catch { return undefined; } };
const signalAll = (components, signal) => { for (const c of components) { try { process.kill(-c.pgid, signal); } catch {} } };
const tick = setInterval(() => {
  if (!fs.existsSync(statePath)) process.exit(0);
  if (alive(Number(ownerPid))) return;
  clearInterval(tick);
  const state = readState();
  if (!state) process.exit(0);
  const components = state.components.filter(ours);
  signalAll(components, 'SIGTERM');
  const deadline = Date.now() + 3000;
  const wait = setInterval(() => {
    const left = components.filter((c) => groupAlive(c.pgid));
    if (left.length > 0 && Date.now() < deadline) return;
    clearInterval(wait);
    signalAll(left, 'SIGKILL');
    if (state.removeDirOnStop) fs.rmSync(state.dir, { recursive: true, force: true });
    else fs.rmSync(statePath, { force: true });
    process.exit(0);
  }, 100);
}, 500);
`;

/** A started watchdog; `stop()` ends it (call it on a normal stop, before removing the state file). */
export interface OrphanWatchdog {
  /** Process id of the watchdog. */
  readonly pid: number;
  stop(): void;
}

/**
 * Starts a watchdog for the control plane whose state file is `statePath`, owned by `ownerPid`.
 * The state file may be written (and rewritten) after this call.
 *
 * @param statePath absolute path of the control plane's `control-plane.json`
 * @param ownerPid the process whose death stops the control plane; default `process.pid`, this process
 *
 * @throws Error if Node cannot spawn the watchdog.
 */
export async function startOrphanWatchdog(statePath: string, ownerPid: number = process.pid): Promise<OrphanWatchdog> {
  // No NODE_OPTIONS: the test process's loaders (--import tsx, --experimental-vm-modules) are not needed.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['-e', WATCHDOG_SCRIPT, String(ownerPid), statePath], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid!));
    child.once('error', (err) => reject(new Error(`cannot start the control plane watchdog: ${err.message}`, { cause: err })));
  });
  child.unref();
  return {
    pid,
    stop: () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
