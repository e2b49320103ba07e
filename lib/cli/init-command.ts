/**
 * `cdk8s-operator init [dir]`: a new operator project that works as generated, like `kubebuilder init`,
 * `operator-sdk init` or `cdk8s init`.
 *
 * ```
 * cdk8s-operator init [dir] [--name NAME] [--kind KIND] [--group GROUP] [--version VERSION]
 *                     [--sdk-version SPEC] [--force] [--no-install]
 * ```
 *
 * Writes into DIR (default `.`, created when missing) a CommonJS TypeScript cdk8s app with one operator:
 * package.json (the SDK, its peers and cdk8s-plus-28, devDependencies pinned exactly), tsconfig.json,
 * cdk8s.yaml, main.ts, operators/index.ts (`addOperators`), operators/<kind>/index.ts (spec + render),
 * operators/<kind>/sample.yaml, test/<kind>.test.ts, jest.config.js, Dockerfile, .dockerignore,
 * .gitignore and README.md. Then runs `npm install --no-audit --no-fund` in DIR (not with `--no-install`)
 * and prints the next steps. In the result, `npm test`, `npm run synth` (`cdk8s synth --check-upgrade=false`,
 * quiet offline) and `npm run dev` pass.
 *
 * - `--name`: the npm package, image and default group label. @default DIR's basename
 * - `--kind`: @default `WebApp`; `--group`: @default `<name>.example.com`; `--version`: @default `v1alpha1`,
 *   each checked with the rule the Operator construct applies
 * - `--sdk-version`: the npm spec of cdk8s-operator-sdk. @default `^<this SDK's version>`. A tarball
 *   (`file:<path>.tgz`) is copied to `vendor/` in the project, which package.json and the Dockerfile use.
 * - DIR must be empty (a `.git` alone is fine) unless `--force`, which overwrites the generated files.
 *
 * Exit codes: 0 generated (and installed); 2 a flag is invalid (`error: --flag "value" <rule>`);
 * 1 DIR is not empty, a file can't be written, or `npm install` failed (the files stay; run it again).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { packageVersion } from '../package-root.js';
import { checkFlag, DEFAULT_API_VERSION, operatorNaming, projectNameProblem } from './scaffold/api-coordinates.js';
import { operatorFiles } from './scaffold/operator-templates.js';
import { operatorsIndexTs } from './scaffold/operators-index.js';
import {
  cdk8sYaml,
  dockerfile,
  dockerignore,
  gitignore,
  INTEGRATION_TEST,
  integrationTestTs,
  jestConfigJs,
  mainTs,
  OPERATORS_MODULE,
  packageJson,
  readme,
  tsconfigJson,
  type ProjectSettings,
} from './scaffold/project-templates.js';
import { ScaffoldError } from './scaffold/scaffold-error.js';
import { writeScaffold, type ScaffoldFile } from './scaffold/write-files.js';
import { PROCESS_OUTPUT } from './command-output.js';

/** The kind `init` scaffolds when `--kind` isn't given. */
export const DEFAULT_KIND = 'WebApp';

/** Exit code for an invalid flag. */
const EXIT_INVALID = 2;

/** The flags of `cdk8s-operator init`, and its `[dir]` argument. */
export interface InitOptions {
  /** The project directory, relative to the caller's cwd; created when missing. @default '.', as `cdk8s init` and `kubebuilder init` */
  readonly dir?: string;
  /**
   * Project name (`--name`): the npm package, the image and the API group's first label; a DNS-1123 label.
   * @default the directory's basename (ScaffoldError `InvalidFlag` asking for `--name` when that is no
   *   DNS-1123 label)
   */
  readonly name?: string;
  /** CamelCase kind of the first operator (`--kind`). @default {@link DEFAULT_KIND} ('WebApp'): the placeholder operator serves HTTP */
  readonly kind?: string;
  /**
   * API group (`--group`), a DNS subdomain with a dot.
   * @default `<name>.example.com`: example.com is reserved for examples (RFC 2606), a placeholder to
   *   replace with a domain one owns before release
   */
  readonly group?: string;
  /** API version (`--version`). @default {@link DEFAULT_API_VERSION} ('v1alpha1'): a new API starts at alpha (Kubernetes API versioning) */
  readonly version?: string;
  /**
   * npm spec of cdk8s-operator-sdk in the generated package.json (`--sdk-version`); a `file:<path>.tgz` is
   * copied into the project's vendor/. @default `^<this SDK's version>`: the SDK that generated the files
   */
  readonly sdkVersion?: string;
  /** Write into a non-empty directory, overwriting the generated files (`--force`). @default false: a non-empty directory fails (`NotEmpty`, exit 1) */
  readonly force?: boolean;
  /** Run `npm install` in the project (`--no-install` sets false). @default true: the project's tests and synth run as generated */
  readonly install?: boolean;
}

/** Where `init` writes its messages, and how it installs (tests replace both). */
export interface InitIo {
  /** The next steps. */
  writeStdout(text: string): void;
  /** The files written, progress and `error: …` lines. */
  writeStderr(text: string): void;
  /** Directory `dir` and a `file:` `sdkVersion` are resolved against. @default process.cwd() */
  readonly cwd?: string;
  /** Runs `npm install` in `dir`; resolves to its exit code. @default npm with inherited output */
  readonly npmInstall?: (dir: string) => Promise<number>;
}

/** The files of a new project, in the order they are written; paths relative to the project directory. */
export function projectFiles(project: ProjectSettings): ScaffoldFile[] {
  return [
    { path: 'package.json', content: packageJson(project) },
    { path: 'tsconfig.json', content: tsconfigJson() },
    { path: 'cdk8s.yaml', content: cdk8sYaml() },
    { path: 'main.ts', content: mainTs(project) },
    { path: OPERATORS_MODULE, content: operatorsIndexTs(project.name, project.operator) },
    ...operatorFiles(project.operator),
    { path: INTEGRATION_TEST, content: integrationTestTs() },
    { path: 'jest.config.js', content: jestConfigJs() },
    { path: 'Dockerfile', content: dockerfile(project) },
    { path: '.dockerignore', content: dockerignore() },
    { path: '.gitignore', content: gitignore() },
    { path: 'README.md', content: readme(project) },
  ];
}

/**
 * Runs `init`; returns the exit code (0, 1, or 2 for an invalid flag: see the module doc). Failures are
 * not thrown: they end with an `error: …` line on `io.writeStderr`.
 */
export async function runInit(options: InitOptions, io: InitIo): Promise<number> {
  const dir = resolve(io.cwd ?? process.cwd(), options.dir ?? '.');
  let project: ProjectSettings;
  try {
    project = projectSettings(options, dir, io.cwd ?? process.cwd());
  } catch (error) {
    io.writeStderr(`error: ${(error as Error).message}\n`);
    return error instanceof ScaffoldError ? EXIT_INVALID : 1;
  }
  try {
    await mkdir(dir, { recursive: true });
    const present = (await readdir(dir)).filter((entry) => entry !== '.git');
    if (present.length > 0 && !options.force) {
      const shown = present.sort().slice(0, 5).join(', ') + (present.length > 5 ? ', …' : '');
      throw new ScaffoldError('NotEmpty', `${dir} is not empty (${shown}): choose an empty directory, or pass --force to overwrite the generated files`);
    }
    const written = await writeScaffold(dir, projectFiles(project), { overwrite: options.force ?? false });
    if (project.vendoredSdk) {
      await mkdir(dirname(join(dir, project.vendoredSdk.path)), { recursive: true });
      await copyFile(project.vendoredSdk.from, join(dir, project.vendoredSdk.path));
      written.push(project.vendoredSdk.path);
    }
    io.writeStderr(`created ${project.name} in ${dir}:\n${written.map((path) => `  ${path}\n`).join('')}`);
  } catch (error) {
    io.writeStderr(`error: ${(error as Error).message}\n`);
    return 1;
  }

  if (options.install ?? true) {
    io.writeStderr('running npm install …\n');
    const code = await (io.npmInstall ?? npmInstall)(dir).catch((error: Error) => {
      io.writeStderr(`error: cannot run npm: ${error.message}\n`);
      return 1;
    });
    if (code !== 0) {
      io.writeStderr(`error: npm install exited ${code} in ${dir}; the project is written: fix the cause and run npm install there\n`);
      return 1;
    }
  }
  io.writeStdout(nextSteps(dir, io.cwd ?? process.cwd(), project, options.install ?? true));
  return 0;
}

/**
 * The project's settings from the flags, defaults filled in. A `--sdk-version file:<path>.tgz` is
 * resolved against `cwd` and becomes `file:vendor/<file>` (see {@link ProjectSettings.vendoredSdk}).
 * @param dir the project directory; its basename is the default name
 * @param cwd where `init` runs; default `process.cwd()`
 * @throws ScaffoldError `InvalidFlag` naming the flag
 */
export function projectSettings(options: InitOptions, dir: string, cwd = process.cwd()): ProjectSettings {
  const name = options.name ?? basename(dir);
  if (options.name === undefined && projectNameProblem(name) !== undefined) {
    throw new ScaffoldError('InvalidFlag',
      `--name: the directory name ${JSON.stringify(name)} can't name the project (${projectNameProblem(name)}); pass --name`);
  }
  checkFlag('--name', name, projectNameProblem);
  const sdkSpec = options.sdkVersion ?? `^${packageVersion()}`;
  checkFlag('--sdk-version', sdkSpec, (spec) => (spec.trim() === '' ? 'must not be empty' : undefined));
  const operator = operatorNaming({
    kind: options.kind ?? DEFAULT_KIND,
    group: options.group ?? `${name}.example.com`,
    version: options.version ?? DEFAULT_API_VERSION,
  });
  // A tarball (`file:….tgz`, relative to where init runs) is copied into the project, so that the
  // project and its image build don't depend on a path on this machine.
  const tarball = /^file:(.+\.tgz)$/.exec(sdkSpec)?.[1];
  if (tarball === undefined) return { name, sdkVersion: sdkSpec, operator };
  const from = resolve(cwd, tarball);
  checkFlag('--sdk-version', sdkSpec, () => (existsSync(from) ? undefined : `names a tarball that does not exist (${from})`));
  const path = `vendor/${basename(tarball)}`;
  return { name, sdkVersion: `file:${path}`, operator, vendoredSdk: { from, path } };
}

function nextSteps(dir: string, cwd: string, project: ProjectSettings, installed: boolean): string {
  const cd = resolve(cwd) === dir ? [] : [`cd ${dir}`];
  const steps = [
    ...cd,
    ...(installed ? [] : ['npm install']),
    'npm test                  # snapshot-test the render of the sample',
    'npm run synth             # CRD, RBAC and Deployment in dist/',
    'npm run dev               # run the operator against a local control plane until its sample is Ready',
  ];
  return `\n${project.operator.kind} operator ready in ${dir}. Next:\n\n${steps.map((s) => `  ${s}\n`).join('')}\n`
    + `Add another operator with: npx cdk8s-operator create operator --kind <Kind>\n`;
}

/** `npm install --no-audit --no-fund` in `dir`, its output on ours. */
function npmInstall(dir: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
  });
}

/**
 * Adds `init` to the `cdk8s-operator` program.
 *
 * `init --version` is the API version, as in `kubebuilder create api`: the program's own `--version`
 * (the SDK's version) is therefore read only before a subcommand (commander's positional options).
 */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('generate a new operator project (cdk8s app, one operator with a sample and a snapshot test, Dockerfile)')
    .argument('[dir]', 'project directory, created when missing', '.')
    .option('--name <name>', 'project name: npm package, image and default group (default: the directory name)')
    .option('--kind <kind>', 'CamelCase kind of the first operator', DEFAULT_KIND)
    .option('--group <group>', 'API group, a DNS subdomain with a dot (default: <name>.example.com)')
    .option('--version <version>', 'API version', DEFAULT_API_VERSION)
    .option('--sdk-version <spec>', `npm spec of cdk8s-operator-sdk in package.json (default: ^${packageVersion()})`)
    .option('--force', 'write into a non-empty directory, overwriting the generated files', false)
    .option('--no-install', 'skip npm install')
    .action(async (dir: string, opts: Omit<InitOptions, 'dir'>) => {
      process.exitCode = await runInit(
        { ...opts, dir },
        PROCESS_OUTPUT,
      );
    });
}
