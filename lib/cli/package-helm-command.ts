/**
 * `cdk8s-operator package helm`: a Helm chart of the app's operators (lib/package/helm/helm-chart.ts).
 *
 * ```
 * cdk8s-operator package helm --out DIR [--module PATH] [--operators NAMES]
 *                             [--name NAME] [--chart-version VERSION] [--app-version VERSION]
 * ```
 *
 * - Loads the operators as `render`, `run` and `dev` do (lib/cli/load-operators.ts: `--module`, default
 *   this repository's operators in a checkout) and synthesizes them.
 * - Chart.yaml: `name` from `--name`, else the nearest package.json's `name` (a scope dropped);
 *   `version` from `--chart-version`, else that package.json's `version`; `appVersion` from
 *   `--app-version`, else that `version`. The nearest package.json is the module's (searched upwards
 *   from the module's directory), else the current directory's.
 * - Writes Chart.yaml, values.yaml, values.schema.json, crds/ and templates/ into DIR (crds/ and
 *   templates/ are replaced), and prints each path written, one a line.
 *
 * Exit codes: 0 written; 2 a flag is invalid or missing (`error: …` naming it); 1 anything else (the
 * module cannot be loaded, synthesis fails, a file can't be written), with one `error: …` line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { type OperatorsFlags, moduleOption, operatorsOption } from './shared-flags.js';
import { messageOf } from '../error-text.js';

/** Exit code of an invalid flag. */
const EXIT_USAGE = 2;

/** The flags of `package helm`. */
export interface PackageHelmOptions extends OperatorsFlags {
  /** Chart directory, relative to the cwd; created when missing. Required. */
  readonly out: string;
  /** Chart name. @default the package.json `name`, scope dropped */
  readonly name?: string;
  /** Chart version (SemVer 2). @default the package.json `version` */
  readonly chartVersion?: string;
  /** appVersion. @default the package.json `version` */
  readonly appVersion?: string;
}

/** The nearest package.json at or above `dir`, parsed, or undefined. */
function nearestPackageJson(dir: string): { name?: string; version?: string } | undefined {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const file = join(current, 'package.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (dirname(current) === current) return undefined;
  }
}

/**
 * Runs `package helm`; returns the exit code. Writes the paths to `out.stdout`, errors to `out.stderr`.
 */
export async function runPackageHelm(options: PackageHelmOptions, io: { cwd: string; stdout: (text: string) => void; stderr: (text: string) => void }): Promise<number> {
  const { loadOperators } = await import('./load-operators.js');
  const { chartMetadataProblems, chartNameOf, helmChartFiles, writeHelmChart } = await import('../package/helm/helm-chart.js');
  try {
    const set = await loadOperators({ modulePath: options.module, cwd: io.cwd });
    const operators = set.pick(options.operators);
    const moduleDir = options.module === undefined ? io.cwd : dirname(isAbsolute(options.module) ? options.module : resolve(io.cwd, options.module));
    const pkg = nearestPackageJson(moduleDir) ?? nearestPackageJson(io.cwd) ?? {};
    const name = options.name ?? (pkg.name === undefined ? undefined : chartNameOf(pkg.name));
    const version = options.chartVersion ?? pkg.version;
    if (name === undefined || version === undefined) {
      io.stderr(`error: ${name === undefined ? '--name' : '--chart-version'} is required: no package.json with a ${name === undefined ? 'name' : 'version'} was found above ${moduleDir}\n`);
      return EXIT_USAGE;
    }
    const metadata = { name, version, appVersion: options.appVersion ?? pkg.version ?? version };
    const problems = chartMetadataProblems(metadata);
    if (problems.length > 0) {
      for (const problem of problems) io.stderr(`error: ${problem}\n`);
      return EXIT_USAGE;
    }
    const out = resolve(io.cwd, options.out);
    for (const path of writeHelmChart(out, helmChartFiles(operators, metadata))) io.stdout(`${join(options.out, path)}\n`);
    return 0;
  } catch (error) {
    io.stderr(`error: ${messageOf(error)}\n`);
    return 1;
  }
}

/** Adds `helm` to the `package` command. */
export function registerPackageHelmCommand(parent: Command): void {
  parent
    .command('helm')
    .description("write a Helm chart of the operators: templates that render exactly what `cdk8s synth` does at the default values, CRDs in crds/, values.schema.json")
    .requiredOption('--out <dir>', 'chart directory (created when missing; its crds/ and templates/ are replaced)')
    .addOption(moduleOption())
    .addOption(operatorsOption())
    .option('--name <name>', "chart name; default: the nearest package.json's name, scope dropped")
    .option('--chart-version <version>', "chart version (SemVer 2); default: the nearest package.json's version")
    .option('--app-version <version>', "appVersion; default: the nearest package.json's version")
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE))
    .action(async (options: PackageHelmOptions) => {
      process.exitCode = await runPackageHelm(options, {
        cwd: process.cwd(),
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
      });
    });
}
