/**
 * Writes a scaffold's files into its target directory, and nowhere else.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';

/** A file to write: its path relative to the target directory, and its text. */
export interface ScaffoldFile {
  readonly path: string;
  readonly content: string;
}

/**
 * Writes each file under `dir`, creating folders as needed.
 * @param dir the project directory; the files' paths are relative to it
 * @param options.overwrite replace files that exist (`init --force`); otherwise an existing file fails the
 *   write (EEXIST), which callers rule out beforehand
 * @returns the paths written, as given, in order
 * @throws Error when a path would leave `dir` (a bug in a template, never user input), before anything
 *   is written; the file system's error (EEXIST, EACCES …) when a write fails, the files before it written
 */
export async function writeScaffold(dir: string, files: readonly ScaffoldFile[], options: { overwrite: boolean }): Promise<string[]> {
  const root = resolve(dir);
  const targets = files.map((file) => {
    const target = resolve(root, file.path);
    const rel = relative(root, target);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`refusing to write ${file.path}: outside ${root}`);
    return { target, content: file.content };
  });
  for (const { target, content } of targets) {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content, { flag: options.overwrite ? 'w' : 'wx' });
  }
  return files.map((file) => file.path);
}
