/**
 * `cdk8s-operator package`: ship operators in a package manager's format. Its subcommands live in
 * their own files: `package olm` (package-olm-command.ts).
 */
import type { Command } from 'commander';
import { registerPackageOlmCommand } from './package-olm-command.js';

/** Adds `package` and its subcommands to the `cdk8s-operator` program. */
export function registerPackageCommand(program: Command): void {
  const packageCommand = program
    .command('package')
    .description('package operators for installation: an OLM bundle');
  registerPackageOlmCommand(packageCommand);
}
