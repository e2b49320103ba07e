/**
 * What the benchmark scripts wait with: a condition polled until it holds (bounded), and a child process
 * stopped gracefully (SIGTERM, then SIGKILL after a grace period).
 */
import type { ChildProcess } from 'node:child_process';

/** Polls `check` every `everyMs` until it is true. @throws Error naming `what` after `timeoutMs` */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Sends `child` SIGTERM and waits for its exit; SIGKILL after `graceMs`. Call only while it runs. */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}
