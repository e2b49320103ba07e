/**
 * `ours` as production runs it, for the benches that start the memcached operator as a process
 * (bench/peers.ts, bench/cluster-pods.ts): lib/ and operators/ compiled by bench/tsconfig.ours.json into
 * bench/.out/ ({@link OURS_OUT}), no TypeScript loader. Run it as
 * `node bench/.out/lib/cli/main.js run --module bench/.out/operators/index.js …`.
 */
import { execFileSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Where {@link buildOurs} writes the compiled lib/ and operators/. */
export const OURS_OUT = join(repoRoot, 'bench/.out');

/**
 * Compiles lib/ and operators/ into bench/.out (incremental) with the example samples next to them, and
 * makes bench/.out the package `cdk8s-operator-sdk`: the compiled examples import it by name, which node
 * resolves by self-reference through the nearest package.json. Its entries are the compiled lib/ beside
 * them (tsconfig.json `paths`, .ts → .js), one copy with the CLI's, as under tsx; the repository's own
 * package.json names out/, which may be missing or stale.
 */
export async function buildOurs(): Promise<void> {
  execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', join(repoRoot, 'bench/tsconfig.ours.json')], { stdio: 'inherit' });
  const { name: packageName, version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };
  const { paths } = (JSON.parse(await readFile(join(repoRoot, 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions;
  const exports = Object.fromEntries(Object.entries(paths).map(([entry, [source]]) => [`.${entry.slice(packageName.length)}`, source.replace(/\.ts$/, '.js')]));
  await writeFile(join(OURS_OUT, 'package.json'), `${JSON.stringify({ name: packageName, version, private: true, type: 'module', exports }, null, 2)}\n`);
  for (const name of await readdir(join(repoRoot, 'operators'), { withFileTypes: true })) {
    if (!name.isDirectory()) continue;
    const sample = join(repoRoot, 'operators', name.name, 'sample.yaml');
    await writeFile(join(OURS_OUT, 'operators', name.name, 'sample.yaml'), await readFile(sample)).catch(() => undefined);
  }
}

