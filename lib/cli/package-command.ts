/**
 * `cdk8s-operator package <format>`: the operators of an app packaged for a deployment tool. Each
 * format is a subcommand in its own file (`helm`: package-helm-command.ts, a chart; `olm`:
 * package-olm-command.ts, an Operator Lifecycle Manager bundle), whose heavy code is imported only when
 * it runs.
 */
import type { Command } from 'commander';
import { registerPackageHelmCommand } from './package-helm-command.js';
import { registerPackageOlmCommand } from './package-olm-command.js';

/** The subcommands of `package`, in help order. */
const FORMATS: readonly ((parent: Command) => void)[] = [registerPackageHelmCommand, registerPackageOlmCommand];

/** Adds `package` and its subcommands to the `cdk8s-operator` program. */
export function registerPackageCommand(program: Command): void {
  const command = program
    .command('package')
    .description('package the operators for a deployment tool (helm: a chart; olm: an OLM bundle)');
  for (const register of FORMATS) register(command);
}
