/**
 * `cdk8s-operator diff`: what would the operators change in this cluster? Renders custom resources as
 * the runtime would, server-side applies each child as a dry run, and prints a unified diff per child
 * that would change, as `kubectl diff` does. No write reaches the server: only GETs, LISTs and
 * `dryRun=All` PATCHes leave the process ({@link DryRunOnlyClient}).
 *
 * ```
 * cdk8s-operator diff [-f FILE|- …] [--operators a,b] [--module PATH] [-n NAMESPACE]
 *                     [--kubeconfig PATH] [--context NAME]
 * ```
 *
 * Which custom resources:
 * - with `-f`: the documents of the files (`-` = stdin; lists flattened, as `render -f`) whose apiVersion
 *   and kind are a loaded operator's CRD; other documents are ignored with a `note:` line. A CR that
 *   exists in the cluster (same name) is rendered with its live `metadata.uid` (its children's owner)
 *   and `status` (the inventory); one that does not exist gets the stand-in uid `render` uses and has
 *   nothing to prune. A namespaced CR without a namespace gets `-n` (@default 'default', as kubectl).
 *   A CR of a spoke version is validated against its version's schema and converted to the hub first.
 *   A `v1` Namespace document of the files is diffed too (a `dryRun=All` server-side apply, field manager
 *   `kubectl`, as `kubectl apply --server-side`): `create Namespace <name>` when it does not exist. The
 *   children of CRs in such a namespace cannot be dry-run applied (the API server answers 404 for the
 *   missing namespace): they are shown as created from the render, with a `note:` that the server did
 *   not check them (kubernetes/kubectl#1331).
 * - without `-f`: every CR of each operator's kind in the cluster (LIST; in `-n` only when given,
 *   @default all namespaces, the runtime's default scope).
 * - `--operators` (comma-separated `operatorName`s) limits both to those operators. @default every loaded operator
 *
 * Each CR, as the runtime's reconcile does it (lib/runtime/reconcile/reconciler.ts):
 * 1. Its children in the cluster: one LIST per child kind, selected by `app.kubernetes.io/managed-by=<operator>`
 *    (the label the runtime's child informers select on), in the CR's namespace (all namespaces for a
 *    cluster-scoped CR or kind). Those owned by the CR are render's `context.observed`.
 * 2. Its related objects (the operator's `related` declarations, resolved by `resolveReferences`): a GET
 *    per named object, a LIST per label selector; with a declared `scope`, a LIST the API server filters
 *    by it too (what the runtime's cache holds). A missing required one stops this CR, as the runtime
 *    waits for it (`ReferenceNotFound`).
 * 3. `renderCustomResource` (the runtime's render), then the desired-hash annotation (`withDesiredHash`).
 * 4. Per child: a GET of its name; the adoption rules (`ChildAdoption`: a name taken by an object the CR
 *    did not make is refused unless adoption is allowed); then `applyObject` with `dryRun=All`, the
 *    operator's name as field manager and `force`, as the runtime applies. Children that `dependsOn`
 *    others are applied as they will be once their dependencies are ready.
 * 5. Prune: the listed children owned by the CR and managed by the operator that are no longer rendered
 *    (`selectPrunable`), and the inventory entries (`status.children`) of kinds the operator no longer
 *    watches that are still there and ours (`inventoryObjectToPrune`: a GET each).
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
 *   cannot be rendered or read; `note: <CR>: being deleted: …` for a CR being deleted (the runtime only
 *   finalizes it: nothing to diff).
 *
 * Exit codes (kubectl diff's: 0 no differences, 1 differences, > 1 an error):
 * - 0: nothing would change;
 * - 1: something would be created, changed or pruned, and nothing failed;
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
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { CustomResource } from '../operator/custom-resource.js';
import { CustomResourceValidationError, RenderError } from '../operator/errors.js';
import { kindKey, type ResolvedKind } from '../operator/kinds.js';
import { MANAGED_BY_LABEL, toLabelValue } from '../operator/labels.js';
import { ObjectRef } from '../operator/object-ref.js';
import type { Operator } from '../operator/operator.js';
import { resolveReferences, resolveRelatedKinds } from '../operator/related.js';
import { relatedLookupOf, renderCustomResource, type RenderOutput } from '../operator/render-children.js';
import type { KubeResource } from '../operator/render-context.js';
import { STAND_IN_UID } from '../operator/stand-in-uid.js';
import { ApiClient, type RequestRecord } from '../runtime/client/api-client.js';
import { type KubeClient, type KubeObject, isApiError, serverMessageOf } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { NAMESPACES } from '../runtime/client/builtin-resources.js';
import { withTypeMeta } from '../runtime/client/type-meta.js';
import { ChildAdoption } from '../runtime/reconcile/adoption.js';
import { applyObject } from '../runtime/reconcile/apply.js';
import { withDesiredHash } from '../runtime/reconcile/child-diff.js';
import { inventoryObjectToPrune, readInventory } from '../runtime/reconcile/inventory.js';
import { isOwnedBy } from '../runtime/reconcile/ownership.js';
import { selectPrunable } from '../runtime/reconcile/prune.js';
import { DryRunOnlyClient } from './dry-run-client.js';
import { useContext } from './kubeconfig-context.js';
import { loadKubeConfig } from './kubeconfig-loader.js';
import type { KubeConfigView } from './loaded-kubeconfig.js';
import { loadOperators } from './load-operators.js';
import { unifiedObjectDiff } from './object-diff.js';
import { type InputDocument, documentLocation, parseDocuments } from './render-command.js';
import { collectFilenames, readStdin } from './filename-flag.js';

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
export interface DiffOptions {
  /**
   * Files of custom resources (`-f`, repeatable, `-` for stdin); documents of other kinds are ignored.
   * @default none: every CR of the operators' kinds in the cluster
   */
  readonly filename?: readonly string[];
  /** Comma-separated operator names (`--operators`, their `operatorName`). @default every loaded operator */
  readonly operators?: string;
  /**
   * Module exporting `addOperators` (`--module`), relative to {@link DiffIo.cwd}; see `loadOperators`.
   * @default in a checkout of this repository, its example operators (operators/index.ts); required where
   *   the SDK is installed as a package
   */
  readonly module?: string;
  /**
   * `-n`: with `-f`, the namespace of namespaced CRs that have none; without `-f`, the one namespace
   * whose CRs are diffed.
   * @default with `-f` 'default' (as kubectl); without, all namespaces (the runtime's default scope)
   */
  readonly namespace?: string;
  /**
   * Path of a kubeconfig file (`--kubeconfig`).
   * @default `$KUBECONFIG`, else the in-cluster config in a pod, else `~/.kube/config` (as `run`,
   *   lib/cli/kubeconfig-loader.ts)
   */
  readonly kubeconfig?: string;
  /** The kubeconfig context to use (`--context`). @default the kubeconfig's `current-context` */
  readonly context?: string;
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
    .option('-f, --filename <file>', 'YAML file of custom resources (several documents allowed; repeatable; - reads stdin); default: every custom resource in the cluster', collectFilenames, [])
    .option('--operators <names>', 'comma-separated operator names; default: all')
    .option('--module <path>', "module exporting addOperators(scope) (named or default); default: this project's operators")
    .option('-n, --namespace <namespace>', 'with -f: namespace of custom resources that have none (default: default); without: only this namespace (default: all)')
    .option('--kubeconfig <path>', 'kubeconfig file; default: $KUBECONFIG, then in-cluster config, then ~/.kube/config')
    .option('--context <name>', "kubeconfig context; default: the kubeconfig's current-context")
    .addHelpText('after', [
      '',
      'Nothing is written: only GETs, LISTs and dry-run (dryRun=All) server-side applies are sent.',
      'Diffs go to stdout; one line per change ("<CR>: create|change|adopt|prune <Kind> <ns>/<name>") and errors to stderr.',
      'Exit codes: 0 nothing would change, 1 something would, 2 bad flags or input, 3 a child refused or a failure against the cluster.',
    ].join('\n'))
    // Bad flags are exit 2 here (1 means "differences"); help and --version stay 0.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE))
    .action(async (options: DiffOptions) => {
      process.exitCode = await runDiff(options, {
        cwd: process.cwd(),
        readStdin,
        writeStdout: (text) => process.stdout.write(text),
        writeStderr: (text) => process.stderr.write(text),
      });
    });
}

/** One custom resource to diff: the object to render, and the live one when it exists. */
interface Target {
  readonly operator: Operator;
  /** The CR as it is rendered (hub version, namespace and uid set). */
  readonly cr: CustomResource;
  /** The CR in the cluster; undefined for a CR of a file that does not exist yet. */
  readonly live?: KubeObject;
}

/** What one CR's diff found. */
export interface CustomResourceDiff {
  /** `Kind ns/name` of the CR. */
  readonly cr: string;
  /** The unified diffs, one per child that would change, in render order, then the pruned ones. */
  readonly diffs: readonly string[];
  /** `create|change|adopt|prune <Kind> <ns>/<name>`, one per child that would change. */
  readonly changes: readonly string[];
  /** One message per refusal or failure (`<Kind> <ns>/<name>: <server message>`). */
  readonly errors: readonly string[];
  /** What the runtime would do instead of applying (a CR being deleted is finalized). */
  readonly notes: readonly string[];
}

/** Runs the command; returns the exit code (see the module doc). Failures are not thrown. */
export async function runDiff(options: DiffOptions, io: DiffIo): Promise<number> {
  const usage = (message: string): number => {
    io.writeStderr(`error: ${message}\n`);
    return EXIT_USAGE;
  };

  const documents: InputDocument[] = [];
  for (const filename of options.filename ?? []) {
    const source = filename === '-' ? '<stdin>' : filename;
    let text: string;
    try {
      text = filename === '-' ? await io.readStdin() : await readFile(filename, 'utf8');
    } catch (error) {
      return usage(`cannot read ${source}: ${firstLine(error)}`);
    }
    try {
      documents.push(...parseDocuments(text, source));
    } catch (error) {
      return usage(firstLine(error));
    }
  }

  let operators: Operator[];
  try {
    operators = (await loadOperators({ modulePath: options.module, cwd: io.cwd })).pick(options.operators);
  } catch (error) {
    return usage(firstLine(error));
  }

  let kubeConfig: KubeConfigView;
  try {
    kubeConfig = await loadKubeConfig(options.kubeconfig, io.env ?? process.env);
    if (options.context !== undefined) useContext(kubeConfig, options.context);
  } catch (error) {
    return usage(firstLine(error));
  }

  const api = new ApiClient({ kubeConfig, userAgent: DIFF_USER_AGENT, onRequest: io.onRequest });
  const client = new DryRunOnlyClient(api);
  /** Namespaces the `-f` files create (absent from the cluster). */
  const pendingNamespaces = new Set<string>();
  let namespacesChanged = false;
  try {
    let targets: Target[];
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
      for (const namespace of fromFiles.namespaces) {
        try {
          const found = await namespaceDiff(client, namespace);
          if (found.diff !== '') {
            io.writeStdout(found.diff);
            io.writeStderr(`${documentLocation(namespace)}: ${found.live ? 'change' : 'create'} Namespace ${documentName(namespace)}\n`);
            namespacesChanged = true;
          }
          if (!found.live) pendingNamespaces.add(documentName(namespace));
        } catch (error) {
          io.writeStderr(`error: ${documentLocation(namespace)}: Namespace ${documentName(namespace)}: ${serverMessageOf(error)}\n`);
          return EXIT_FAILED;
        }
      }
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
            targets.push({ operator, cr: live as unknown as CustomResource, live });
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
      const result = await diffCustomResource(client, target, children, pendingNamespaces);
      for (const diff of result.diffs) io.writeStdout(diff);
      for (const change of result.changes) io.writeStderr(`${result.cr}: ${change}\n`);
      for (const error of result.errors) io.writeStderr(`error: ${result.cr}: ${error}\n`);
      for (const note of result.notes) io.writeStderr(`note: ${result.cr}: ${note}\n`);
      if (result.changes.length > 0) changed = true;
      if (result.errors.length > 0) failed = true;
    }
    return failed ? EXIT_FAILED : changed ? EXIT_CHANGES : EXIT_NO_CHANGES;
  } finally {
    api.close();
  }
}

/** The CRs of the `-f` documents, with the namespace and hub version they are rendered in. */
function fileTargets(documents: readonly InputDocument[], operators: readonly Operator[], defaultNamespace: string): {
  crs: { operator: Operator; cr: CustomResource }[];
  /** The `v1` Namespace documents (with a name). */
  namespaces: InputDocument[];
  invalid: string[];
  notes: string[];
} {
  const crs: { operator: Operator; cr: CustomResource }[] = [];
  const namespaces: InputDocument[] = [];
  const invalid: string[] = [];
  const notes: string[] = [];
  for (const document of documents) {
    const { object } = document;
    if (object.apiVersion === 'v1' && object.kind === 'Namespace' && documentName(document) !== '') {
      namespaces.push(document);
      continue;
    }
    const operator = operators.find((o) => o.crd.kind === object.kind && o.versions.some((v) => object.apiVersion === `${o.crd.group}/${v.name}`));
    if (operator === undefined) {
      notes.push(`${documentLocation(document)}: ${String(object.kind)} (${String(object.apiVersion)}) is no custom resource of ${operators.map((o) => o.operatorName).join(', ')}; ignored`);
      continue;
    }
    const metadata = (typeof object.metadata === 'object' && object.metadata !== null ? object.metadata : {}) as Record<string, unknown>;
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : operator.crd.namespaced ? defaultNamespace : undefined;
    const placed = { ...object, metadata: { ...metadata, ...(namespace === undefined ? {} : { namespace }) } };
    try {
      const hub = operator.convertToHub(placed);
      operator.parseCustomResource(hub); // an invalid CR in a file is bad input, found before any request
      crs.push({ operator, cr: hub as unknown as CustomResource });
    } catch (error) {
      if (!(error instanceof CustomResourceValidationError)) throw error;
      const ref = `${String(object.kind)}/${String(metadata.name ?? '<unnamed>')}`;
      for (const field of error.fields) invalid.push(field.path ? `${ref}: ${field.path}: ${field.reason}` : `${ref}: ${field.reason}`);
    }
  }
  return { crs, namespaces, invalid, notes };
}

/** `metadata.name` of a document, '' when it has none. */
function documentName(document: InputDocument): string {
  const name = (document.object.metadata as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : '';
}

/**
 * A Namespace document of the files against the cluster: the live one (undefined when absent) and the
 * diff to the answer of a `dryRun=All` server-side apply (field manager `kubectl`).
 * @throws what the GET or the dry-run apply throws, but a 404 of the GET
 */
async function namespaceDiff(client: KubeClient, document: InputDocument): Promise<{ live?: KubeObject; diff: string }> {
  const name = documentName(document);
  const found = await new ResourceClient(client).getIfExists(NAMESPACES, undefined, name);
  const live = found && withTypeMeta(found, 'v1', 'Namespace');
  const after = await applyObject(client, NAMESPACES, document.object as KubeObject, { fieldManager: 'kubectl', dryRun: true });
  return { ...(live ? { live } : {}), diff: unifiedObjectDiff({ name: `Namespace ${name}`, live, after: withTypeMeta(after, 'v1', 'Namespace') }) };
}

/**
 * A CR of a file, with what the cluster says of it: the live CR's `metadata.uid` (its children's
 * owner) and `status` (the inventory) when it exists, else the stand-in uid.
 * @throws what the GET throws, but a 404
 */
async function withLiveState(client: KubeClient, operator: Operator, cr: CustomResource): Promise<Target> {
  const name = cr.metadata?.name;
  let live: KubeObject | undefined;
  if (typeof name === 'string' && name !== '') {
    live = await new ResourceClient(client).getIfExists(operator.crd, cr.metadata.namespace, name);
  }
  const uid = live?.metadata?.uid ?? STAND_IN_UID;
  const status = live?.status;
  const rendered = { ...cr, metadata: { ...cr.metadata, uid }, ...(status === undefined ? {} : { status }) } as unknown as CustomResource;
  return { operator, cr: rendered, ...(live ? { live: { ...live, apiVersion: live.apiVersion ?? operator.crd.apiVersion, kind: live.kind ?? operator.crd.kind } } : {}) };
}

/**
 * The children of the operators' kinds in the cluster, listed once per operator, kind and namespace
 * (label `app.kubernetes.io/managed-by=<operator>`, the runtime's child informers' selector), with the
 * managedFields entries of other managers dropped, as the runtime's child caches keep them.
 */
class ChildLists {
  private readonly lists = new Map<string, Promise<KubeObject[]>>();

  constructor(private readonly client: KubeClient) {}

  /** @throws what the LIST throws */
  of(operator: Operator, kind: ResolvedKind, namespace: string | undefined): Promise<KubeObject[]> {
    const scope = kind.namespaced ? namespace : undefined;
    const key = `${operator.operatorName}|${kindKey(kind)}|${scope ?? ''}`;
    let list = this.lists.get(key);
    if (list === undefined) {
      const labelSelector = `${MANAGED_BY_LABEL}=${toLabelValue(operator.operatorName)}`;
      list = new ResourceClient(this.client).list(kind, scope, { labelSelector }).then(({ items }) => items.map((item) => withTypeMeta(item, kind.apiVersion, kind.kind)));
      this.lists.set(key, list);
    }
    return list;
  }
}

/**
 * Diffs one CR: renders it as the runtime would, dry-run applies every child and finds what would be
 * pruned (see the module doc). Never throws: failures are in `errors`.
 */
async function diffCustomResource(client: KubeClient, target: Target, children: ChildLists, pendingNamespaces: ReadonlySet<string>): Promise<CustomResourceDiff> {
  const { operator, cr } = target;
  const who = ObjectRef.of(cr).toString();
  const diffs: string[] = [];
  const changes: string[] = [];
  const errors: string[] = [];
  const notes: string[] = [];
  const result = (): CustomResourceDiff => ({ cr: who, diffs, changes, errors, notes });
  if (target.live?.metadata?.deletionTimestamp) {
    notes.push('being deleted: the runtime finalizes it and applies nothing (its children go with it)');
    return result();
  }
  const uid = cr.metadata.uid ?? STAND_IN_UID;
  const fieldManager = operator.operatorName;
  const childKinds = operator.childKinds();
  const crNamespace = operator.crd.namespaced ? cr.metadata.namespace : undefined;

  // 1. The children in the cluster (for context.observed and for prune).
  const listed = new Map<ResolvedKind, KubeObject[]>();
  try {
    for (const kind of childKinds) listed.set(kind, await children.of(operator, kind, crNamespace));
  } catch (error) {
    errors.push(`cannot list its children: ${serverMessageOf(error)}`);
    return result();
  }
  const observed = [...listed.values()].flat()
    .filter((child) => target.live !== undefined && isOwnedBy(child, uid))
    .map((child) => withOwnManagedFields(child, fieldManager) as unknown as KubeResource);

  // 2. The related objects it references; 3. render.
  let output: RenderOutput;
  try {
    const related = await fetchRelated(client, operator, cr);
    output = renderCustomResource(operator, cr, { observed, related: relatedLookupOf(related) });
  } catch (error) {
    if (error instanceof RenderError && error.reason === 'ReferenceNotFound') {
      errors.push(`${firstLine(error)} (the runtime waits for it: nothing is applied or pruned until it exists)`);
    } else {
      errors.push(error instanceof CustomResourceValidationError || error instanceof RenderError ? firstLine(error) : `cannot render: ${serverMessageOf(error)}`);
    }
    return result();
  }
  const desired = output.children.map(withDesiredHash);

  // 4. Each child: adoption rules, then a dry-run server-side apply.
  const adoption = new ChildAdoption({ client, fieldManager, policy: operator.adoption });
  for (const child of desired) {
    const ref = ObjectRef.of(child);
    const kind = childKinds.find((k) => kindKey(k) === kindKey(ref));
    if (kind === undefined) {
      errors.push(`${ref}: kind ${child.kind} (${child.apiVersion}) is not among the operator's child kinds; declare it in \`owns\``);
      continue;
    }
    let live: KubeObject | undefined;
    let adopted = false;
    try {
      live = await new ResourceClient(client).get(kind, ref.namespace, ref.name);
    } catch (error) {
      if (!isApiError(error, 404)) {
        errors.push(`${ref}: ${serverMessageOf(error)}`);
        continue;
      }
    }
    try {
      if (live !== undefined) {
        live = { ...live, apiVersion: live.apiVersion ?? child.apiVersion, kind: live.kind ?? child.kind };
        // The runtime's cache holds the objects with our label; any other object under the name goes through adoption.
        if (live.metadata?.labels?.[MANAGED_BY_LABEL] === toLabelValue(fieldManager)) adoption.refuseOtherController(live, cr as unknown as KubeObject);
        else adopted = adoption.decide(kind, live, cr as unknown as KubeObject) !== undefined;
      }
      const after = await applyObject(client, kind, child, { fieldManager, dryRun: true });
      const diff = unifiedObjectDiff({ name: ref.toString(), live, after });
      if (diff === '') continue;
      diffs.push(diff);
      changes.push(`${live === undefined ? 'create' : adopted ? 'adopt' : 'change'} ${ref}`);
    } catch (error) {
      // applyObject names the object and keeps the API error as the cause.
      if ((isApiError(error, 404) || isApiError((error as Error).cause, 404)) && ref.namespace !== undefined && pendingNamespaces.has(ref.namespace)) {
        // Its namespace comes with the files: what the render says, unchecked by the server.
        diffs.push(unifiedObjectDiff({ name: ref.toString(), live: undefined, after: child }));
        changes.push(`create ${ref}`);
        notes.push(`${ref}: not checked by the API server: its namespace ${ref.namespace} is created by the files`);
        continue;
      }
      errors.push(`${ref}: ${serverMessageOf(error)}`);
    }
  }

  // 5. Prune: only a CR in the cluster has children to prune.
  if (target.live === undefined) return result();
  for (const kind of childKinds) {
    for (const obj of selectPrunable(listed.get(kind) ?? [], desired, uid, fieldManager)) {
      diffs.push(unifiedObjectDiff({ name: ObjectRef.of(obj).toString(), live: obj, after: undefined }));
      changes.push(`prune ${ObjectRef.of(obj)}`);
    }
  }
  const wanted = new Set(desired.map((child) => ObjectRef.of(child).key()));
  const watched = new Set(childKinds.map((kind) => kindKey(kind)));
  for (const entry of readInventory(target.live)) {
    const ref = ObjectRef.fromEntry(entry);
    if (wanted.has(ref.key()) || watched.has(kindKey(ref))) continue;
    try {
      const found = await inventoryObjectToPrune(entry, { client, ownerUid: uid, fieldManager, retiredKinds: operator.retiredKinds });
      if (found === undefined) continue;
      const object = { ...found.object, apiVersion: found.object.apiVersion ?? entry.apiVersion, kind: found.object.kind ?? entry.kind };
      diffs.push(unifiedObjectDiff({ name: ref.toString(), live: object, after: undefined }));
      changes.push(`prune ${ref}`);
    } catch (error) {
      errors.push(`${ref}: ${serverMessageOf(error)}`);
    }
  }
  return result();
}

/**
 * The related objects `cr` references (the operator's `related` declarations): a GET per name (a 404
 * is no object), a LIST per label selector. Nothing when the references cannot be resolved: render then
 * says why. A declaration with a `scope` sees what the runtime's cache would hold: nothing in a
 * namespace outside `scope.namespaces`, and a LIST with its selectors added (a name as
 * `metadata.name=<name>` in the field selector), so the API server filters as it does for the informer.
 * @throws what a read throws, but a 404
 */
async function fetchRelated(client: KubeClient, operator: Operator, cr: CustomResource): Promise<KubeResource[]> {
  const declarations = operator.related ?? {};
  if (Object.keys(declarations).length === 0) return [];
  let references;
  try {
    references = resolveReferences(declarations, operator.relatedKinds ?? resolveRelatedKinds(declarations), operator.parseCustomResource(cr));
  } catch {
    return [];
  }
  const objects: KubeResource[] = [];
  for (const reference of references) {
    const withKind = (item: KubeObject) => ({ ...withTypeMeta(item, reference.kind.apiVersion, reference.kind.kind) }) as KubeResource;
    // A declared cache scope hides what the runtime would not cache: the server applies it here too.
    const scope = declarations[reference.related]?.scope;
    if (scope?.namespaces && reference.namespace !== undefined && !scope.namespaces.includes(reference.namespace)) continue;
    if (reference.name !== undefined && !scope) {
      try {
        objects.push(withKind(await new ResourceClient(client).get(reference.kind, reference.namespace, reference.name)));
      } catch (error) {
        if (!isApiError(error, 404)) throw error;
      }
      continue;
    }
    const labels = [Object.entries(reference.selector ?? {}).map(([key, value]) => `${key}=${value}`).join(','), scope?.labelSelector ?? ''];
    const fields = [reference.name !== undefined ? `metadata.name=${reference.name}` : '', scope?.fieldSelector ?? ''];
    const joined = (parts: string[]) => parts.filter((part) => part.trim() !== '').join(',') || undefined;
    objects.push(...(await new ResourceClient(client).list(reference.kind, reference.namespace, { labelSelector: joined(labels), fieldSelector: joined(fields) })).items.map(withKind));
  }
  return objects;
}

/** `obj` with only `fieldManager`'s managedFields entries, as the runtime's child caches keep it. */
function withOwnManagedFields(obj: KubeObject, fieldManager: string): KubeObject {
  const managedFields = (obj.metadata?.managedFields ?? []).filter((entry) => (entry as { manager?: string }).manager === fieldManager);
  return { ...obj, metadata: { ...obj.metadata, managedFields } };
}

/** The API server's own words for a failure (re-exported: the one copy is in lib/runtime/client/kube-client.ts). */
export { serverMessageOf };

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0];
}
