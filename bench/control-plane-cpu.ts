/**
 * CPU seconds of the local control plane's processes (lib/testing/control-plane.ts), read from /proc, for
 * the benches that put a figure on what the API server does for an operator (bench/peers.ts,
 * bench/apiserver-request-cost.ts).
 */
import { execFileSync } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';

/** Clock ticks per second of /proc's utime and stime. */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** utime + stime, in seconds, of the text of a /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat). */
export function statCpuSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

export const CONTROL_PLANE_COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

/**
 * CPU seconds (utime + stime) of each control-plane component started for `dir` (the processes of
 * {@link CONTROL_PLANE_COMPONENTS} whose command line names it; an operator's `--kubeconfig` names it
 * too, so it is matched by executable name), by executable name.
 */
export async function controlPlaneCpu(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      const name = argv[0]!.replace(/^.*\//, '');
      if (!CONTROL_PLANE_COMPONENTS.includes(name) || !argv.some((arg) => arg.includes(dir))) continue;
      out[name] = (out[name] ?? 0) + statCpuSeconds(await readFile(`/proc/${entry}/stat`, 'utf8'));
    } catch {
      // exited between listing and reading
    }
  }
  return out;
}

/** `after - before` per component, and `total`, rounded to 0.01 s. */
export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const name of Object.keys(after).sort()) {
    const d = after[name]! - (before[name] ?? 0);
    out[name] = Number(d.toFixed(2));
    total += d;
  }
  out.total = Number(total.toFixed(2));
  return out;
}
