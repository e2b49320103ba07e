import { Command } from 'commander';
import { packageVersion } from '../package-root.js';
import { registerCreateCommand } from './create-command.js';
import { registerDevCommand } from './dev-command.js';
import { registerEnvCommand } from './env-command.js';
import { registerInitCommand } from './init-command.js';
import { registerRenderCommand } from './render-command.js';
import { registerRunCommand } from './run-command.js';

/** The `cdk8s-operator` command line. Flags and environment are read here and in synth/ only. */
const program = new Command('cdk8s-operator')
  .description('Operators as cdk8s constructs: render, run and test them against a real API server.')
  .version(packageVersion(), '-V, --version', 'print the SDK version')
  // `init --version v1` / `create operator --version v1` name an API version, as in kubebuilder: the
  // program's own --version is read only before a subcommand.
  .enablePositionalOptions()
  .showHelpAfterError();

registerRenderCommand(program);
registerRunCommand(program);
registerEnvCommand(program);
registerDevCommand(program);
registerInitCommand(program);
registerCreateCommand(program);

await program.parseAsync(process.argv);
