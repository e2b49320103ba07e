/**
 * The flags several `cdk8s-operator` commands take with the same meaning, defined once: `--module` and
 * `--operators` (which operators: deploy, dev, dev-worker, diff, package, render, run, undeploy),
 * `--kubeconfig` and `--context` (which cluster: run, diff, deploy, undeploy; dev with its own help, as
 * there they switch from the local control plane to your cluster), `--log-level` and `--log-format`
 * (run, dev). Each function returns a new commander `Option`, for `command.addOption`. Also the value
 * parsers several flags share.
 */
import { InvalidArgumentError, Option } from 'commander';
import type { LogFormat } from './cli-logger.js';

/** `--module` and `--operators`, parsed: which operators a command works with (see `loadOperators`). */
export interface OperatorsFlags {
  /**
   * Module exporting `addOperators(scope)`, named or default (`--module`), relative to the command's
   * working directory.
   * @default in a checkout of this repository, its example operators (operators/index.ts); required where
   *   the SDK is installed as a package (`OperatorLoadError` `NoModule`, exit 1)
   */
  readonly module?: string;
  /** Comma-separated operator names (`--operators`, their `operatorName`). @default every loaded operator */
  readonly operators?: string;
}

/** `--kubeconfig` and `--context`, parsed: the cluster of `run`, `diff`, `deploy` and `undeploy`. */
export interface ClusterFlags {
  /**
   * Path of a kubeconfig file (`--kubeconfig`).
   * @default `$KUBECONFIG`, else the in-cluster config in a pod, else `~/.kube/config`, as client-node
   *   loads them (the steps in lib/cli/kubeconfig-loader.ts)
   */
  readonly kubeconfig?: string;
  /** The kubeconfig context to use (`--context`). @default the kubeconfig's `current-context` */
  readonly context?: string;
}

/** `--module <path>`. */
export function moduleOption(): Option {
  return new Option('--module <path>', "module exporting addOperators(scope) (named or default); default: this project's operators");
}

/** `--operators <names>`. */
export function operatorsOption(): Option {
  return new Option('--operators <names>', 'comma-separated operator names; default: all');
}

/** `--kubeconfig <path>`; `description` for a command where it means more than which file (dev). */
export function kubeconfigOption(description = 'kubeconfig file; default: $KUBECONFIG, then in-cluster config, then ~/.kube/config'): Option {
  return new Option('--kubeconfig <path>', description);
}

/** `--context <name>`; `description` for a command where it means more than which context (dev). */
export function contextOption(description = "kubeconfig context; default: the kubeconfig's current-context"): Option {
  return new Option('--context <name>', description);
}

/**
 * `--log-level <level>`.
 * @param defaultLevel a level, shown by commander as the default; or `{ note }`, a default that depends on other flags, said in the help
 */
export function logLevelOption(defaultLevel: string | { readonly note: string }): Option {
  const levels = 'trace, debug, info, warn, error';
  if (typeof defaultLevel === 'string') return new Option('--log-level <level>', `pino log level (${levels})`).default(defaultLevel);
  return new Option('--log-level <level>', `pino log level (${levels}; default: ${defaultLevel.note})`);
}

/** `--log-format <format>`, with the command's default. */
export function logFormatOption(defaultFormat: LogFormat): Option {
  return new Option('--log-format <format>', 'json (one object per line) or text (for humans)').default(defaultFormat);
}

/** commander's argument parser for a repeatable flag (`-f`, `--maintainer`, `--link`): appends each value, in the order given. */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/**
 * commander's argument parser for a count (`--max-concurrent-reconciles`, `--fake-nodes`).
 * @throws InvalidArgumentError (commander prints it) unless a whole number ≥ 1
 */
export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be an integer >= 1');
  return n;
}
