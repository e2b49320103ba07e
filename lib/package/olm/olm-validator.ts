/**
 * Operator Framework's own bundle validators, as `operator-sdk bundle validate DIR --select-optional
 * suite=operatorframework` runs them (the default bundle validators, then OperatorHub, standard
 * capabilities and categories, deprecated APIs and good practices), from the Go program
 * tools/olm-validate (github.com/operator-framework/api at the version its go.mod pins), run as a child
 * process that prints its results as JSON.
 *
 * Where the program is, first found wins:
 * 1. the file `CDK8S_OPERATOR_OLM_VALIDATE` names;
 * 2. where tools/olm-validate/build.sh writes it: `${CDK8S_OPERATOR_SDK_CACHE:-~/.cache/cdk8s-operator-sdk}/olm-validate/<api version>/olm-validate`,
 *    for the package root that holds tools/olm-validate/go.mod (a checkout, or the installed package,
 *    which ships the directory so that `bash node_modules/cdk8s-operator-sdk/tools/olm-validate/build.sh`
 *    builds it; Go ≥ 1.26 needed);
 * 3. `olm-validate` on PATH.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isExecutable, onPath } from '../../executable-file.js';

/** Environment variable naming the olm-validate binary, ahead of every other place. */
export const OLM_VALIDATE_ENV = 'CDK8S_OPERATOR_OLM_VALIDATE';

/** One error or warning, as the validators report it. */
export interface OlmFinding {
  /** operator-framework/api's ErrorType, e.g. `CSVFileNotValid`, `FieldNotFound`. */
  readonly type: string;
  /** `error` or `warning`. */
  readonly level: string;
  readonly field?: string;
  readonly detail?: string;
  /** The validator's own message, e.g. `Error: Value memcached-operator.v0.1.0: csv.Spec.Provider.Name not specified`. */
  readonly message: string;
}

/** The validators' results for one bundle directory. */
export interface OlmValidationReport {
  /** The operator-framework/api version the program was built with, e.g. `v0.45.0`. */
  readonly validatorVersion: string;
  readonly results: readonly { readonly name: string; readonly errors: readonly OlmFinding[]; readonly warnings: readonly OlmFinding[] }[];
}

/** The errors of a report, each as `<result name>: <message>`. */
export function reportErrors(report: OlmValidationReport): string[] {
  return report.results.flatMap((r) => r.errors.map((e) => `${r.name}: ${e.message}`));
}

/** The warnings of a report, each as `<result name>: <message>`. */
export function reportWarnings(report: OlmValidationReport): string[] {
  return report.results.flatMap((r) => r.warnings.map((e) => `${r.name}: ${e.message}`));
}

/**
 * The olm-validate binary to run, and every place looked at (for the message when there is none).
 * @param packageRoot the SDK's package root (its tools/olm-validate/go.mod gives the cache path)
 */
export function locateOlmValidator(packageRoot: string | undefined, env: NodeJS.ProcessEnv = process.env): { file?: string; candidates: string[] } {
  const fromEnv = env[OLM_VALIDATE_ENV];
  if (fromEnv) return { file: existsSync(fromEnv) ? fromEnv : undefined, candidates: [`${fromEnv} (${OLM_VALIDATE_ENV})`] };
  const candidates: string[] = [];
  const built = packageRoot === undefined ? undefined : cachedBuild(packageRoot, env);
  if (built) candidates.push(built);
  candidates.push(...onPath('olm-validate', env));
  return { file: candidates.find(isExecutable), candidates: built ? [built, 'olm-validate on PATH'] : ['olm-validate on PATH'] };
}

/** Where tools/olm-validate/build.sh of `packageRoot` writes the binary, or undefined when it has no tools/olm-validate. */
export function cachedBuild(packageRoot: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const goMod = join(packageRoot, 'tools', 'olm-validate', 'go.mod');
  if (!existsSync(goMod)) return undefined;
  const version = /^\s*(?:require\s+)?github\.com\/operator-framework\/api\s+(v\S+)/m.exec(readFileSync(goMod, 'utf8'))?.[1];
  if (version === undefined) return undefined;
  const cacheRoot = env.CDK8S_OPERATOR_SDK_CACHE || join(homedir(), '.cache', 'cdk8s-operator-sdk');
  return join(cacheRoot, 'olm-validate', version, 'olm-validate');
}

/**
 * Runs the validators over the bundle in `dir`.
 * @param options.k8sVersion Kubernetes version the bundle targets (`--k8s-version`, e.g. `1.35`), for the
 *   deprecated-API and OperatorHub checks. @default none: those checks use their own default
 * @throws Error when the program fails to run, exits non-zero or prints no JSON
 */
export async function runOlmValidator(binary: string, dir: string, options: { k8sVersion?: string } = {}): Promise<OlmValidationReport> {
  const args = [...(options.k8sVersion ? [`--k8s-version=${options.k8sVersion}`] : []), dir];
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(binary, args, { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, out, err) => {
      if (error) reject(new Error(`${binary} ${args.join(' ')} failed: ${error.message}${err ? `\n${err.trim()}` : ''}`, { cause: error }));
      else resolve(out);
    });
  });
  try {
    return JSON.parse(stdout) as OlmValidationReport;
  } catch (cause) {
    throw new Error(`${binary} printed no JSON report: ${stdout.slice(0, 200)}`, { cause });
  }
}
