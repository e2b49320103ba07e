/**
 * `cdk8s-operator create operator`: adds one more operator to a project that `init` generated, as
 * `kubebuilder create api` does.
 *
 * ```
 * cdk8s-operator create operator --kind KIND [--group GROUP] [--version VERSION] [--dir DIR]
 * ```
 *
 * Writes `operators/<kind>/index.ts` (spec + render), `operators/<kind>/sample.yaml` and
 * `test/<kind>.test.ts` (kind in kebab-case), and registers the operator in `operators/index.ts`: its
 * import above the `// +cdk8s-operator:scaffold:imports` line, `new <Kind>Operator(scope, { deployment })`
 * above `// +cdk8s-operator:scaffold:operators`. Everything is checked before anything is written.
 *
 * - `--group`: @default `<package.json name>.example.com`, the group `init` gave the first operator
 * - `--version`: @default `v1alpha1`
 * - `--dir`: the project. @default `.`
 *
 * Exit codes: 0 created; 2 a flag is invalid; 1 DIR is not such a project, the operator's files or
 * registration already exist, a scaffold marker is missing, or a file can't be written.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_API_VERSION, operatorNaming, projectNameProblem, type OperatorNaming } from './scaffold/api-coordinates.js';
import { operatorFiles } from './scaffold/operator-templates.js';
import { registerOperator } from './scaffold/operators-index.js';
import { OPERATORS_MODULE } from './scaffold/project-templates.js';
import { ScaffoldError } from './scaffold/scaffold-error.js';
import { writeScaffold } from './scaffold/write-files.js';
import { PROCESS_OUTPUT } from './command-output.js';

/** The flags of `cdk8s-operator create operator`. */
export interface CreateOperatorOptions {
  /** CamelCase kind (`--kind`, required), e.g. `Cache`. */
  readonly kind: string;
  /**
   * API group (`--group`), a DNS subdomain with a dot.
   * @default `<package.json name>.example.com`, the group `init` gave the first operator; without a name
   *   that is a DNS-1123 label in package.json the flag is required (ScaffoldError `InvalidFlag`, exit 2)
   */
  readonly group?: string;
  /** API version (`--version`). @default {@link DEFAULT_API_VERSION} ('v1alpha1'): a new API starts at alpha (Kubernetes API versioning) */
  readonly version?: string;
  /** The project directory (`--dir`), relative to the caller's cwd. @default '.': run inside the project */
  readonly dir?: string;
}

/** Where `create operator` writes its messages. */
export interface CreateIo {
  /** The files created and the next steps. */
  writeStdout(text: string): void;
  /** `error: …` lines. */
  writeStderr(text: string): void;
  /** Directory `dir` is resolved against. @default process.cwd() */
  readonly cwd?: string;
}

/**
 * Runs `create operator`; returns the exit code (0; 2 for an invalid flag; 1 otherwise: see the module
 * doc). Failures are not thrown: they end with an `error: …` line on `io.writeStderr`.
 */
export async function runCreateOperator(options: CreateOperatorOptions, io: CreateIo): Promise<number> {
  const dir = resolve(io.cwd ?? process.cwd(), options.dir ?? '.');
  try {
    const indexPath = join(dir, OPERATORS_MODULE);
    if (!existsSync(indexPath)) {
      throw new ScaffoldError('NotAProject', `${dir} has no ${OPERATORS_MODULE}: run \`cdk8s-operator init\` first, or pass --dir with the project`);
    }
    const op = operatorNaming({
      kind: options.kind,
      group: options.group ?? (await defaultGroup(dir)),
      version: options.version ?? DEFAULT_API_VERSION,
    });
    const files = operatorFiles(op);
    const existing = [`operators/${op.kebab}`, ...files.map((file) => file.path)].filter((path) => existsSync(join(dir, path)));
    if (existing.length > 0) {
      throw new ScaffoldError('AlreadyExists', `an operator for ${op.kind} exists already: ${existing.join(', ')}; choose another --kind`);
    }
    const index = registerOperator(await readFile(indexPath, 'utf8'), op, OPERATORS_MODULE);

    await writeScaffold(dir, files, { overwrite: false });
    await writeFile(indexPath, index);
    io.writeStdout(summary(op, files.map((file) => file.path)));
    return 0;
  } catch (error) {
    io.writeStderr(`error: ${(error as Error).message}\n`);
    return error instanceof ScaffoldError && error.reason === 'InvalidFlag' ? 2 : 1;
  }
}

/**
 * `<package.json name>.example.com`, the group `init` defaults to.
 * @throws ScaffoldError `InvalidFlag` asking for --group when the name can't give one
 */
async function defaultGroup(dir: string): Promise<string> {
  let name: unknown;
  try {
    name = (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name;
  } catch {
    name = undefined;
  }
  if (typeof name !== 'string' || projectNameProblem(name) !== undefined) {
    throw new ScaffoldError('InvalidFlag', `--group is required: ${join(dir, 'package.json')} has no name to derive <name>.example.com from`);
  }
  return `${name}.example.com`;
}

function summary(op: OperatorNaming, paths: readonly string[]): string {
  return `created the ${op.kind} operator (${op.apiVersion}, ${op.operatorName}):\n`
    + paths.map((path) => `  ${path}\n`).join('')
    + `  ${OPERATORS_MODULE} (registered)\n`
    + `\nNext: edit its spec and render, then \`npm test\` (writes its first snapshot) and \`npm run dev\`.\n`;
}

/** Adds `create operator` to the `cdk8s-operator` program. `--version` is the API version (see registerInitCommand). */
export function registerCreateCommand(program: Command): void {
  const create = program.command('create').description('add to a project that cdk8s-operator init generated');
  create
    .command('operator')
    .description('add an operator (its spec, render, sample and test) and register it in operators/index.ts')
    .requiredOption('--kind <kind>', 'CamelCase kind the operator reconciles, e.g. Cache')
    .option('--group <group>', 'API group, a DNS subdomain with a dot (default: <package.json name>.example.com)')
    .option('--version <version>', 'API version', DEFAULT_API_VERSION)
    .option('--dir <dir>', 'the project directory', '.')
    .action(async (opts: CreateOperatorOptions) => {
      process.exitCode = await runCreateOperator(opts, PROCESS_OUTPUT);
    });
}
