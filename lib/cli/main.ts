import { Command } from 'commander';
import { registerDevCommand } from './dev-command.js';
import { registerEnvCommand } from './env-command.js';
import { registerRenderCommand } from './render-command.js';
import { registerRunCommand } from './run-command.js';

/** The `cdk8s-operator` command line. Flags and environment are read here and in synth/ only. */
const program = new Command('cdk8s-operator')
  .description('Operators as cdk8s constructs: render, run and test them against a real API server.')
  .showHelpAfterError();

registerRenderCommand(program);
registerRunCommand(program);
registerEnvCommand(program);
registerDevCommand(program);

await program.parseAsync(process.argv);
