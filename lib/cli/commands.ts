/**
 * The subcommands of `cdk8s-operator`, in help order, each loaded only when needed: `run` in an
 * operator's container loads no synth, scaffolding or control-plane code (node-forge, the kwok stages,
 * templates). main.ts registers them; the docs test parses the docs' command lines against the same
 * list, so a new subcommand is known to both at once.
 */
import type { Command } from 'commander';

/** Subcommand name → a loader of its `register…Command(program)`. `dev-worker` is hidden: the process `dev` runs the operators in. */
export const COMMANDS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  render: async () => (await import('./render-command.js')).registerRenderCommand,
  run: async () => (await import('./run-command.js')).registerRunCommand,
  diff: async () => (await import('./diff-command.js')).registerDiffCommand,
  deploy: async () => (await import('./deploy-command.js')).registerDeployCommand,
  undeploy: async () => (await import('./undeploy-command.js')).registerUndeployCommand,
  env: async () => (await import('./env-command.js')).registerEnvCommand,
  dev: async () => (await import('./dev-command.js')).registerDevCommand,
  'dev-worker': async () => (await import('./dev-worker-command.js')).registerDevWorkerCommand,
  init: async () => (await import('./init-command.js')).registerInitCommand,
  create: async () => (await import('./create-command.js')).registerCreateCommand,
  package: async () => (await import('./package-command.js')).registerPackageCommand,
};
