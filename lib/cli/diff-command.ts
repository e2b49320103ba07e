/**
 * `cdk8s-operator diff`: what would the operators change in this cluster? Renders custom resources as
 * the runtime would, server-side applies each child as a dry run, and prints a unified diff per child
 * that would change, as `kubectl diff` does. No write reaches the server: only reads and `dryRun=All`
 * writes leave the process ({@link DryRunOnlyClient}).
 *
 * ```
 * cdk8s-operator diff [-f FILE|- …] [--operators a,b] [--module PATH] [-n NAMESPACE]
 *                     [--kubeconfig PATH] [--context NAME]
 * cdk8s-operator diff --all [-o text|json] [--details] [--concurrency N] [same flags but -f]
 * ```
 *
 * Which custom resources:
 * - with `-f`: the documents of the files (`-` = stdin; lists flattened, as `render -f`) whose apiVersion
 *   and kind are a loaded operator's CRD; other documents are ignored with a `note:` line. A CR that
 *   exists in the cluster (same name) is rendered with its live `metadata.uid` (its children's owner)
 *   and `status` (the inventory); one that does not exist gets the stand-in uid `render` uses and has
 *   nothing to prune. A namespaced CR without a namespace gets `-n` (@default 'default', as kubectl).
 *   A CR of a spoke version is validated against its version's schema and converted to the hub first.
 *   A `v1` Namespace of the files is diffed too (lib/cli/diff-targets.ts); the children of CRs in one the
 *   files create are shown as created, unchecked by the server, with a `note:` (kubernetes/kubectl#1331).
 * - without `-f`: every CR of each operator's kind in the cluster (LIST; in `-n` only when given,
 *   @default all namespaces, the runtime's default scope).
 * - `--operators` (comma-separated `operatorName`s) limits both to those operators. @default every loaded operator
 *
 * Each CR is planned by the runtime's reconciler itself, its writes sent as dry runs (lib/cli/upgrade-plan/custom-resource-plan.ts).
 *
 * `--all` (not with `-f`) prints the upgrade plan of the next release's module instead
 * (lib/cli/upgrade-plan/upgrade-plan.ts documents its output and exit codes).
 *
 * Output:
 * - stdout: one unified diff per child that would change (`diff -u` format, 3 lines of context), from
 *   the live object to the dry-run answer, both as YAML without `metadata.managedFields`,
 *   `resourceVersion`, `generation`, `creationTimestamp` and `uid` (lib/cli/object-diff.ts). Headers
 *   name the child: `--- Deployment default/web (live)` / `+++ Deployment default/web (after apply)`; a
 *   child to create is `(absent)` on the old side, one to prune `(pruned)` on the new side.
 * - stderr: one line per child that would change, `<CR>: create|change|adopt|prune <Kind> <ns>/<name>`;
 *   one `error: <CR>: <Kind> <ns>/<name>: <server message>` per refusal (the dry-run apply refused, an
 *   adoption refused, a child of a kind the operator does not own); `error: <CR>: …` for a CR that
 *   cannot be rendered or read; `note: <CR>: being deleted: …` (the runtime only finalizes it).
 *
 * Exit codes (kubectl diff's): 0 nothing would change; 1 something would be created, changed or pruned,
 * and nothing failed;
 * - 2: bad flags or input: an unknown flag, an unreadable or invalid file, no custom resource in it, an
 *   invalid custom resource in it, the operators module or the kubeconfig not loadable, an unknown
 *   `--context` or operator name;
 * - 3: something failed against the cluster: a child refused by the server (or by the adoption rules), a
 *   CR that cannot be rendered (including a missing related object), a read that failed. The diffs of the
 *   other children are still printed.
 *
 * @see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_diff/
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/
 * @see https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run
 */
import { Command, Option } from 'commander';
import { asCustomResource } from '../operator/object-shape.js';
import { ObjectRef } from '../operator/object-ref.js';
import type { Operator } from '../operator/operator.js';
import { ApiClient, type RequestRecord } from '../runtime/client/api-client.js';
import { serverMessageOf } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { withTypeMeta } from '../runtime/client/type-meta.js';
import { DryRunOnlyClient } from './dry-run-client.js';
import { useContext } from './kubeconfig-context.js';
import { loadKubeConfig } from './kubeconfig-loader.js';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { type OperatorSet, loadOperators } from './load-operators.js';
import { synthesizeOperators } from './operator-manifests.js';
import { type InputDocument, readDocuments } from './render-command.js';
import { diffFileNamespaces, fileTargets, withLiveState } from './diff-targets.js';
import { readStdin } from './filename-flag.js';
import { ChildLists, type PlanTarget, planCustomResource } from './upgrade-plan/custom-resource-plan.js';
import { type PlannedOperator, DEFAULT_PLAN_CONCURRENCY, runUpgradePlan } from './upgrade-plan/upgrade-plan.js';
import { type ClusterFlags, type OperatorsFlags, collect, contextOption, kubeconfigOption, moduleOption, operatorsOption } from './shared-flags.js';
import { PROCESS_OUTPUT } from './command-output.js';
import { firstLineOf, messageOf } from '../error-text.js';

/** Exit code: nothing would change. */
export const EXIT_NO_CHANGES = 0;
/** Exit code: something would be created, changed or pruned (and nothing failed). */
export const EXIT_CHANGES = 1;
/** Exit code: bad flags or input (see the module doc). */
export const EXIT_USAGE = 2;
/** Exit code: something failed against the cluster (a refusal, a render, a read). */
export const EXIT_FAILED = 3;

/** The user agent of the command's requests, so an audit log tells them apart from the runtime's. */
export const DIFF_USER_AGENT = 'cdk8s-operator-sdk/diff';

/** The flags of `cdk8s-operator diff`. */
export interface DiffOptions extends OperatorsFlags, ClusterFlags {
  /**
   * Files of custom resources (`-f`, repeatable, `-` for stdin); documents of other kinds are ignored.
   * @default none: every CR of the operators' kinds in the cluster
   */
  readonly filename?: readonly string[];
  /**
   * `-n`: with `-f`, the namespace of namespaced CRs that have none; without `-f`, the one namespace
   * whose CRs are diffed.
   * @default with `-f` 'default' (as kubectl); without, all namespaces (the runtime's default scope)
   */
  readonly namespace?: string;
  /** `--all`: the upgrade plan of every live CR (lib/cli/upgrade-plan/upgrade-plan.ts); not with `-f`. @default false */
  readonly all?: boolean;
  /** With `--all`: `text` (a summary table) or `json` (the whole plan). @default 'text' */
  readonly output?: 'text' | 'json';
  /** With `--all`, text output: each changed or invalid CR with its diffs. @default false */
  readonly details?: boolean;
  /** With `--all`: CRs planned at once (a string from the command line). @default 8 */
  readonly concurrency?: number | string;
}

/** Where `runDiff` reads and writes; the command wires it to the process. */
export interface DiffIo {
  /** Directory `--module` is resolved against (the `-f` files are read relative to the process's). */
  readonly cwd: string;
  /** The whole of stdin, for `-f -`. */
  readStdin(): Promise<string>;
  /** The unified diffs. */
  writeStdout(text: string): void;
  /** One line per change, `note:` and `error:` lines. */
  writeStderr(text: string): void;
  /** Read for `KUBECONFIG` and the in-cluster variables. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Called after every API request (tests count them by method). @default none */
  readonly onRequest?: (record: RequestRecord) => void;
}

/** Adds `diff` to the `cdk8s-operator` program. */
export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description('show what the operators would change in a cluster: render, server-side apply as a dry run, print a unified diff per child')
    .option('-f, --filename <file>', 'YAML file of custom resources (several documents allowed; repeatable; - reads stdin); default: every custom resource in the cluster', collect, [])
    .addOption(operatorsOption())
    .addOption(moduleOption())
    .option('-n, --namespace <namespace>', 'with -f: namespace of custom resources that have none (default: default); without: only this namespace (default: all)')
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .option('--all', 'the upgrade plan: every live custom resource rendered by this (next) release, its CRD, webhooks and RBAC beside the installed ones; not with -f')
    .addOption(new Option('-o, --output <format>', 'with --all: text (summary table) or json (the whole plan)').choices(['text', 'json']).default('text'))
    .option('--details', 'with --all, text output: each changed or invalid custom resource with its diffs')
    .option('--concurrency <n>', `with --all: custom resources planned at once (default ${DEFAULT_PLAN_CONCURRENCY})`)
    .addHelpText('after', [
      '',
      "Nothing is written: the runtime's reconcile runs with every write a dry run (dryRun=All).",
      'Diffs go to stdout; one line per change ("<CR>: create|change|adopt|prune <Kind> <ns>/<name>") and errors to stderr.',
      'Exit codes: 0 nothing would change, 1 something would, 2 bad flags or input, 3 a child refused or a failure against the cluster.',
    ].join('\n'))
    // Bad flags are exit 2 here (1 means "differences"); help and --version stay 0.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE))
    .action(async (options: DiffOptions) => {
      process.exitCode = await runDiff(options, {
        cwd: process.cwd(),
        readStdin,
        ...PROCESS_OUTPUT,
      });
    });
}

/** Runs the command; returns the exit code (see the module doc). Failures are not thrown. */
export async function runDiff(options: DiffOptions, io: DiffIo): Promise<number> {
  const usage = (message: string): number => {
    io.writeStderr(`error: ${message}\n`);
    return EXIT_USAGE;
  };

  if (options.all === true && (options.filename?.length ?? 0) > 0) return usage('--all plans every live custom resource: it takes no -f');
  let documents: InputDocument[];
  try {
    documents = await readDocuments(options.filename ?? [], () => io.readStdin());
  } catch (error) {
    return usage(firstLineOf(error));
  }

  const concurrency = options.concurrency === undefined ? DEFAULT_PLAN_CONCURRENCY : Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) return usage(`--concurrency: ${String(options.concurrency)}: not a whole number >= 1`);
  let set: OperatorSet | undefined;
  let operators: Operator[];
  let planned: PlannedOperator[] = [];
  try {
    set = await loadOperators({ modulePath: options.module, cwd: io.cwd });
    operators = set.pick(options.operators);
  } catch (error) {
    return usage(firstLineOf(error));
  }
  try {
    if (options.all === true) planned = synthesizeOperators(set, operators);
  } catch (error) {
    return usage(messageOf(error)); // names every construct path and problem
  }

  let kubeConfig: KubeConfigView;
  try {
    kubeConfig = await loadKubeConfig(options.kubeconfig, io.env ?? process.env);
    if (options.context !== undefined) useContext(kubeConfig, options.context);
  } catch (error) {
    return usage(firstLineOf(error));
  }

  const api = new ApiClient({ kubeConfig, userAgent: DIFF_USER_AGENT, onRequest: io.onRequest });
  const client = new DryRunOnlyClient(api);
  const pendingNamespaces = new Set<string>(); // the `-f` files' Namespaces absent from the cluster
  let namespacesChanged = false;
  try {
    if (options.all === true) {
      return await runUpgradePlan({
        operators: planned, client, namespace: options.namespace, output: options.output, details: options.details, concurrency,
        writeStdout: (text) => io.writeStdout(text), writeStderr: (text) => io.writeStderr(text),
      });
    }
    let targets: PlanTarget[];
    if (options.filename !== undefined && options.filename.length > 0) {
      const fromFiles = fileTargets(documents, operators, options.namespace ?? 'default');
      for (const note of fromFiles.notes) io.writeStderr(`note: ${note}\n`);
      if (fromFiles.invalid.length > 0) {
        for (const line of fromFiles.invalid) io.writeStderr(`error: ${line}\n`);
        return EXIT_USAGE;
      }
      if (fromFiles.crs.length === 0) {
        return usage(`no custom resource in the input; known kinds: ${operators.map((o) => `${o.crd.kind} (${o.crd.apiVersion})`).join(', ')}`);
      }
      // The files' Namespaces first: a CR's children may go in one that only the files create.
      const namespaces = await diffFileNamespaces(client, fromFiles.namespaces, io);
      if (namespaces === undefined) return EXIT_FAILED;
      namespacesChanged = namespaces.changed;
      for (const name of namespaces.pending) pendingNamespaces.add(name);
      targets = [];
      for (const { operator, cr } of fromFiles.crs) {
        try {
          targets.push(await withLiveState(client, operator, cr));
        } catch (error) {
          io.writeStderr(`error: ${ObjectRef.of(cr)}: cannot read it from the cluster: ${serverMessageOf(error)}\n`);
          return EXIT_FAILED;
        }
      }
    } else {
      targets = [];
      for (const operator of operators) {
        try {
          const { items } = await new ResourceClient(client).list(operator.crd, options.namespace);
          for (const item of items) {
            const live = withTypeMeta(item, operator.crd.apiVersion, operator.crd.kind);
            targets.push({ operator, cr: asCustomResource(live), live });
          }
        } catch (error) {
          io.writeStderr(`error: cannot list ${operator.crd.kind} (${operator.crd.apiVersion}): ${serverMessageOf(error)}\n`);
          return EXIT_FAILED;
        }
      }
    }

    let changed = namespacesChanged;
    let failed = false;
    const children = new ChildLists(client);
    for (const target of targets) {
      const result = await planCustomResource(client, target, children, pendingNamespaces);
      const changes = result.children.filter((child) => child.action !== 'unchanged');
      for (const child of changes) io.writeStdout(child.diff ?? '');
      for (const child of changes) {
        const ref = `${child.kind} ${child.namespace ? `${child.namespace}/` : ''}${child.name}`;
        io.writeStderr(`${result.cr}: ${child.action === 'update' ? 'change' : child.action} ${ref}\n`);
      }
      for (const error of result.errors) io.writeStderr(`error: ${result.cr}: ${error}\n`);
      for (const note of result.notes) io.writeStderr(`note: ${result.cr}: ${note}\n`);
      if (changes.length > 0) changed = true;
      if (result.errors.length > 0) failed = true;
    }
    return failed ? EXIT_FAILED : changed ? EXIT_CHANGES : EXIT_NO_CHANGES;
  } finally {
    api.close();
  }
}

/** The API server's own words for a failure (re-exported: the one copy is in lib/runtime/client/kube-client.ts). */
export { serverMessageOf };
