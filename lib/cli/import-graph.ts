/**
 * The local import graph of an operators module: the module and every file it imports, directly or
 * through others, that belongs to the user's code (not under `node_modules`), as absolute paths. `dev`
 * watches these files and reloads the operators when one changes (lib/cli/dev-reload.ts).
 *
 * The graph is esbuild's (the compiler tsx runs on): a bundle of the module with every package left
 * external and nothing written, whose metafile lists the inputs it resolved, with the project's
 * tsconfig `paths`. Static `import`/`export … from`, `require('…')` with a literal, and `import('…')`
 * with a literal are followed; a path computed at run time is not.
 *
 * @see https://esbuild.github.io/api/#metafile
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import { build } from 'esbuild';

/**
 * The files `modulePath` (absolute) imports and itself, sorted; files under `node_modules` left out.
 * @throws Error with esbuild's first message (`file:line:col: text`) when a file cannot be parsed or
 *   an import cannot be resolved
 */
export async function localImportGraph(modulePath: string): Promise<string[]> {
  const result = await build({
    entryPoints: [modulePath],
    absWorkingDir: dirname(modulePath),
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  }).catch((err: { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }) => {
    const [first] = err.errors ?? [];
    if (!first) throw err;
    const at = first.location ? `${resolve(dirname(modulePath), first.location.file)}:${first.location.line}:${first.location.column + 1}: ` : '';
    throw new Error(`${at}${first.text}`, { cause: err });
  });
  const root = dirname(modulePath);
  return Object.keys(result.metafile.inputs)
    .filter((input) => !/(^|[\\/])node_modules[\\/]/.test(input) && !input.includes(':'))
    .map((input) => (isAbsolute(input) ? input : resolve(root, input)))
    .sort();
}
