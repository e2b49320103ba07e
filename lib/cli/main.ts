/**
 * The `cdk8s-operator` command line (bin/cdk8s-operator.js runs it): one commander program whose
 * subcommands (`render`, `run`, `diff`, `env`, `dev`, `init`, `create`, `package`, `deploy`, `undeploy`; and the hidden `dev-worker`, the child process `dev` runs the operators in) live in their own files (listed in commands.ts) and are imported
 * only when named, so `run` in an operator's container loads no synth, scaffolding or control-plane
 * code. Running this module parses `process.argv` (top-level await); it exports nothing.
 */
import { Command } from 'commander';
import { COMMANDS } from './commands.js';
import { packageRoot, packageVersion } from '../package-root.js';
import { setValidatorPackageRoot } from '../validator/validator-wasm-file.js';

setValidatorPackageRoot(packageRoot());

/** The `cdk8s-operator` command line. Flags and environment are read here and in synth/ only. */
const program = new Command('cdk8s-operator')
  .description('Operators as cdk8s constructs: render, run and test them against a real API server.')
  .version(await versionLine(), '-V, --version', "print the SDK version and the Kubernetes version of its children's validator")
  // `init --version v1` / `create operator --version v1` name an API version, as in kubebuilder: the
  // program's own --version is read only before a subcommand.
  .enablePositionalOptions()
  .showHelpAfterError();

/**
 * `0.1.0 (children validated by Kubernetes v1.37.2)` when --version is asked for (reading the
 * validator's version costs a read of its file), else just the SDK version.
 */
async function versionLine(): Promise<string> {
  if (process.argv[2] !== '--version' && process.argv[2] !== '-V') return packageVersion();
  const { locateValidatorWasm } = await import('../validator/validator-wasm-file.js');
  const { validatorFileKubernetesVersion } = await import('../validator/validator-version.js');
  const { file } = locateValidatorWasm();
  let kubernetes = 'unknown: the validator is missing';
  try {
    if (file !== undefined) kubernetes = validatorFileKubernetesVersion(file) ?? `unknown: ${file} names none`;
  } catch (error) {
    kubernetes = `unknown: ${(error as Error).message}`;
  }
  return `${packageVersion()} (children validated by Kubernetes ${kubernetes})`;
}

// The first argument names the subcommand (program options come before it only for --version/--help):
// register just that one; otherwise (help, a typo) all of them, so help and suggestions list every one.
const named = process.argv[2];
const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
for (const register of await Promise.all(wanted.map((name) => COMMANDS[name]!()))) register(program);

await program.parseAsync(process.argv);
