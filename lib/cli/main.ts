/**
 * The `cdk8s-operator` command line (bin/cdk8s-operator.js runs it): one commander program whose
 * subcommands (`render`, `run`, `diff`, `env`, `dev`, `init`, `create`) live in their own files and are imported
 * only when named, so `run` in an operator's container loads no synth, scaffolding or control-plane
 * code. Running this module parses `process.argv` (top-level await); it exports nothing.
 */
import { Command } from 'commander';
import { packageVersion } from '../package-root.js';

/**
 * The subcommands, in help order, each loaded only when needed: `run` in an operator's container loads
 * no synth, scaffolding or control-plane code (node-forge, the kwok stages, templates).
 */
const COMMANDS: Record<string, () => Promise<(program: Command) => void>> = {
  render: async () => (await import('./render-command.js')).registerRenderCommand,
  run: async () => (await import('./run-command.js')).registerRunCommand,
  diff: async () => (await import('./diff-command.js')).registerDiffCommand,
  env: async () => (await import('./env-command.js')).registerEnvCommand,
  dev: async () => (await import('./dev-command.js')).registerDevCommand,
  init: async () => (await import('./init-command.js')).registerInitCommand,
  create: async () => (await import('./create-command.js')).registerCreateCommand,
};

/** The `cdk8s-operator` command line. Flags and environment are read here and in synth/ only. */
const program = new Command('cdk8s-operator')
  .description('Operators as cdk8s constructs: render, run and test them against a real API server.')
  .version(packageVersion(), '-V, --version', 'print the SDK version')
  // `init --version v1` / `create operator --version v1` name an API version, as in kubebuilder: the
  // program's own --version is read only before a subcommand.
  .enablePositionalOptions()
  .showHelpAfterError();

// The first argument names the subcommand (program options come before it only for --version/--help):
// register just that one; otherwise (help, a typo) all of them, so help and suggestions list every one.
const named = process.argv[2];
const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
for (const register of await Promise.all(wanted.map((name) => COMMANDS[name]!()))) register(program);

await program.parseAsync(process.argv);
