/**
 * The one error of the scaffolding commands (`cdk8s-operator init`, `create operator`, and the files
 * under lib/cli/scaffold/ they use): a machine-readable `reason` and a message naming the flag or file.
 * The commands print `error: <message>` and exit 2 for `InvalidFlag`, 1 for the other reasons.
 */

/** Why `cdk8s-operator init` or `create operator` refused to write, or could not. */
export type ScaffoldErrorReason =
  /** A flag's value breaks the rule the Operator construct applies to it (the message names the flag). */
  | 'InvalidFlag'
  /** `init` into a directory that already holds files, without `--force`. */
  | 'NotEmpty'
  /** `create operator` for a kind whose folder, test or registration already exists. */
  | 'AlreadyExists'
  /** `create operator` in a directory that is not a project `init` generated (no operators/index.ts). */
  | 'NotAProject'
  /** operators/index.ts lacks a scaffold marker comment, so there is nowhere to register the operator. */
  | 'MarkerMissing';

/** A scaffolding command refused (bad flag, existing files) before writing anything. */
export class ScaffoldError extends Error {
  constructor(
    readonly reason: ScaffoldErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ScaffoldError';
  }
}
