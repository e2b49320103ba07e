/**
 * Where a `cdk8s-operator` command writes: its standard output (what a script reads) and its standard
 * error (progress, `note:` and `error:` lines). A command's `run…` function takes them as part of its
 * io, so that tests collect the text; the registered command passes the process's own.
 */

/** A command's two output streams. */
export interface CommandOutput {
  writeStdout(text: string): void;
  writeStderr(text: string): void;
}

/** The process's standard output and standard error. */
export const PROCESS_OUTPUT: CommandOutput = {
  writeStdout: (text) => process.stdout.write(text),
  writeStderr: (text) => process.stderr.write(text),
};
