/**
 * The CLI as a real child process for an integration test: `node bin/cdk8s-operator.js <args>` (e.g.
 * `['run', '--operators', …]`), started from the repository root with this process's environment less
 * jest's own settings (its `NODE_OPTIONS` and worker variables: see `commandEnv` in run-command.ts) and
 * the caller's `env` on top (an `undefined` value removes a variable). stdout and stderr are collected
 * together, in the order they arrive.
 *
 * Every process started here is remembered: {@link killCliProcesses} (in `afterAll`) SIGKILLs those still
 * running, so a failed test leaves none behind. A test that checks how the CLI ends sends its own signal
 * (`child.kill('SIGTERM')`) and waits for {@link CliProcess.exited}.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { commandEnv } from './run-command.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** One JSON log line of the CLI (pino: `level` 30 info, 40 warn, 50 error). */
export interface LogLine {
  readonly level: number;
  readonly msg: string;
  /** The CR's name, on lines about one CR. */
  readonly name?: string;
  readonly [field: string]: unknown;
}

/** A started CLI process. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** What it printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Its JSON log lines so far (the lines of {@link output} that start with `{`), parsed. */
  logLines(): LogLine[];
  /** Resolves with its exit code once it has exited (null: ended by a signal). */
  readonly exited: Promise<number | null>;
}

const started: ChildProcess[] = [];

/** Starts `node bin/cdk8s-operator.js ...args` in the repository root. */
export function startCli(args: readonly string[], env: Record<string, string | undefined> = {}): CliProcess {
  const child = spawn(process.execPath, ['bin/cdk8s-operator.js', ...args], {
    cwd: REPO,
    env: commandEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logLines = () =>
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
  return { child, output: () => text, logLines, exited };
}

/**
 * SIGKILLs every process {@link startCli} started that is still running (a stopped one, SIGSTOP, is
 * continued first so the kill is not left pending), and waits until each has exited.
 */
export async function killCliProcesses(): Promise<void> {
  const running = started.filter((child) => child.exitCode === null && child.signalCode === null);
  const exits = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
  for (const child of running) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await Promise.all(exits);
}
