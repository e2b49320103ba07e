/**
 * Executables the package runs as child processes but does not ship (the control plane's binaries, Go,
 * the olm-validate program): whether a file may be executed, and where a program's name would be found
 * on `PATH`.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `path` is a file this process may execute (`access(2)` with `X_OK`). */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The paths `name` would have in each directory of `PATH`, in its order (split on `path.delimiter`,
 * empty entries dropped); none is checked.
 * @param env read for `PATH`; default `process.env`
 */
export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
}
