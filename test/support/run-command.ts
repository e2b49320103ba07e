/**
 * Runs a command to its end for a test: its exit code and output, with a time limit. Never throws for a
 * non-zero exit; rejects when the command cannot start or overruns `timeoutMs` (it is then killed).
 */
import { spawn } from 'node:child_process';

/** What a command printed and how it ended (`code` null: killed by a signal). */
export interface CommandResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunCommandOptions {
  readonly cwd: string;
  /** The whole environment of the command. @default this process's, less jest's NODE_OPTIONS and worker variables */
  readonly env?: NodeJS.ProcessEnv;
  /** @default 600000 (10 min: an npm install on a busy machine) */
  readonly timeoutMs?: number;
}

/** This process's environment without what jest sets for itself (its workers, --experimental-vm-modules). */
export function commandEnv(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('JEST_') && key !== 'NODE_OPTIONS'));
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export function runCommand(command: string, args: readonly string[], options: RunCommandOptions): Promise<CommandResult> {
  const timeoutMs = options.timeoutMs ?? 600_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? commandEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${command} ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
