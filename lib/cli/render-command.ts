/**
 * `cdk8s-operator render`: what would these custom resources produce, given this cluster state? Offline,
 * no cluster.
 *
 * ```
 * cdk8s-operator render -f FILE|- [-f FILE …] [--operator NAME] [--module PATH] [-n NAMESPACE] [-o yaml|json]
 * ```
 *
 * - Reads every YAML document of every FILE (`-` = stdin) and splits them in two:
 *   - custom resources: documents whose apiVersion + kind is a loaded operator's CRD (with `--operator`,
 *     every document of that operator's group and kind, any version);
 *   - cluster state: every other document (a ConfigMap a CR references, a child as it exists with its
 *     status, anything else; what no render reads is ignored).
 *   At least one custom resource is required: without one the command fails with
 *   `no custom resource in the input` and the known kinds.
 * - For each CR, render's `context` is built from the state:
 *   - `context.related`: looked up in every state object (`relatedLookupOf`), by the operator's
 *     `related` declarations; a required named object that is missing is an error naming it;
 *   - `context.observed`: the state objects that are this CR's children. Two passes: the CR is rendered
 *     once with nothing observed to learn its children's identities (API group, kind, namespace,
 *     name), then, when state objects match some of them, again with those objects observed; the
 *     second render's result is the output. A child that only the second render creates is therefore
 *     never observed.
 * - Validates each CR offline (`operator.parseCustomResource`: the CRD schema's rules, defaults applied),
 *   then as the API server would on create, against the operator's CRD with apiextensions-apiserver's
 *   own code, its CEL rules (`celRule`) included (lib/validator, {@link assertCustomResourceAccepted}),
 *   then renders it with `renderCustomResource`. Everything is rendered before anything is printed:
 *   stdout is either the complete result or empty.
 * - A CR without `metadata.uid` gets the stand-in {@link STAND_IN_UID}, the uid `renderForSnapshot` gives
 *   too, so a CR renders the same ownerReferences here as in a snapshot test; a CR or state
 *   object of a namespaced kind without a namespace gets `--namespace` (default `default`), as
 *   `kubectl apply` would. A state object's kind counts as namespaced unless the built-in kind table,
 *   an operator's CRD or an operator's `owns`/`related` declarations say it is cluster-scoped.
 * - Validates every child of a built-in kind with the API server's own create validation, offline
 *   (lib/validator: Kubernetes' code at the control plane's version, compiled to WebAssembly, loaded
 *   once per process): a child the server would refuse is an error line naming it, the server's field
 *   path and message, and the CR that rendered it:
 *   `error: Service default/db-headless: spec.ports[1].name: Required value (rendered by Database default/orders)`.
 *   Children of other kinds (CRDs) are not checked by it.
 * - Output: the children as a YAML stream (`---` between documents, YAML 1.1-safe quoting, see
 *   {@link stringifyManifests}) or, with `-o json`, one `v1` `List` whose `items` are the manifests.
 * - Notes on stderr, one line each, for what a render decided besides its children:
 *   `note: <Kind> <ns>/<name>: status {…}` (the status it returned, validated),
 *   `note: …: requeueAfter 300s`, and `note: …: Job default/demo-migrate waits for StatefulSet default/demo-db`
 *   for every child that `dependsOn` others. Notes do not change the exit code.
 *
 * Exit codes: 0 rendered; 2 a CR is invalid (one `error: <Kind>/<name>: <field path>: <reason>` line
 * per failing field on stderr; a CEL rule's: `error: Widget/w: spec.min: Forbidden: min must not exceed max`,
 * the server's path and message) or the API server would refuse a child (one line per refused field, as
 * above); 1 anything else (including a validator that cannot load: missing or corrupt file) (unreadable file, YAML syntax error, no custom resource,
 * a required related object missing from the input, operator module not loadable, render() failure),
 * with a one-line `error: …` message. A throw in the operator's own code starts with where it was thrown,
 * `error: /path/operators.ts:10:33: render Shard default/a: render() threw: …` (tsx maps it to the `.ts`
 * line), so the line is found in the user's module.
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import type { CustomResource } from '../operator/custom-resource.js';
import { asCustomResource, asKubeResource } from '../operator/object-shape.js';
import { CustomResourceValidationError, type MissingReference, RenderError, formatObjectReference } from '../operator/errors.js';
import { lookupBuiltInKind, parseApiVersion, resolveKind } from '../operator/kinds.js';
import { stringifyManifests } from '../operator/manifests/manifest-yaml.js';
import type { Operator } from '../operator/operator.js';
import { ObjectRef } from '../operator/object-ref.js';
import { relatedLookupOf, renderCustomResource, type Manifest, type RenderOutput } from '../operator/render/render-children.js';
import { withOperatorStatus } from '../operator/render/custom-status.js';
import type { KubeResource } from '../operator/render/render-context.js';
import { STAND_IN_UID } from '../operator/render/stand-in-uid.js';
import { assertCustomResourceAccepted } from '../validator/assert-custom-resource-accepted.js';
import { refusedChildrenProblems } from '../validator/child-refused-error.js';
import { validateBuiltInObjects } from '../validator/validate-built-in-objects.js';
import { packageRoot } from '../package-root.js';
import { thrownAt } from './load-error-location.js';
import { loadOperators, type OperatorSet } from './load-operators.js';
import { readStdin } from './filename-flag.js';
import { collect, moduleOption } from './shared-flags.js';
import { PROCESS_OUTPUT } from './command-output.js';
import { firstLineOf } from '../error-text.js';

/** Exit code of an invalid custom resource (schema validation failed). */
export const EXIT_INVALID = 2;
/** Exit code of every other failure. */
export const EXIT_ERROR = 1;

/** The flags of `cdk8s-operator render`. */
export interface RenderOptions {
  /**
   * Files of custom resources and cluster-state objects (children as they exist, related objects), read
   * in order, `-` for stdin (as `kubectl -f`, repeatable).
   */
  readonly filename: readonly string[];
  /**
   * Operator name (`--operator`, its `operatorName`): the CRs are the documents of its group and kind, any version.
   * @default none: a document is a CR when its apiVersion and kind are a loaded operator's
   */
  readonly operator?: string;
  /**
   * Module exporting `addOperators` (`--module`), relative to {@link RenderIo.cwd}; see `loadOperators`.
   * @default in a checkout of this repository, its example operators (operators/index.ts); required where
   *   the SDK is installed as a package
   */
  readonly module?: string;
  /** Namespace for namespaced CRs and state objects that have none (`-n`). @default 'default', as kubectl */
  readonly namespace?: string;
  /** `-o`: `yaml` (documents separated by `---`, as `cdk8s synth` writes) or `json`. @default 'yaml' */
  readonly output?: 'yaml' | 'json';
}

/** Where `runRender` reads and writes; the command wires it to the process. */
export interface RenderIo {
  /** Directory `--module` is resolved against (the `-f` files are read relative to the process's). */
  readonly cwd: string;
  /** The whole of stdin, for `-f -`. */
  readStdin(): Promise<string>;
  /** The rendered manifests, all at once, only when every CR rendered. */
  writeStdout(text: string): void;
  /** `note: …` and `error: …` lines. */
  writeStderr(text: string): void;
}

/** Adds `render` to the `cdk8s-operator` program. */
export function registerRenderCommand(program: Command): void {
  program
    .command('render')
    .description('render the children of custom resources offline, without a cluster')
    .requiredOption('-f, --filename <file>',
      'YAML file (several documents allowed; repeatable; - reads stdin) of custom resources and of the cluster state render reads: '
      + 'related objects (e.g. a referenced ConfigMap) and children as they exist (with status); other documents are ignored', collect, [])
    .option('--operator <name>', "render the documents of this operator's kind (any version) as its custom resources, instead of finding operators by apiVersion and kind")
    .addOption(moduleOption())
    .option('-n, --namespace <namespace>', 'namespace for custom resources and namespaced state objects that have none', 'default')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .addHelpText('after', [
      '',
      'Custom resources are rendered with context.related looked up in the other documents, and context.observed set to',
      'the documents that are their children (same group, kind, namespace and name as a child they render).',
      'Status, requeueAfter and waiting children are reported on stderr as "note: <Kind> <ns>/<name>: ..." lines.',
      'Exit codes: 0 rendered, 2 a custom resource is invalid, 1 any other error (including a missing related object).',
      'Nothing is printed on stdout unless every CR rendered.',
    ].join('\n'))
    .action(async (options: RenderOptions) => {
      process.exitCode = await runRender(options, {
        cwd: process.cwd(),
        readStdin,
        ...PROCESS_OUTPUT,
      });
    });
}

/** One document of the input, with where it came from. */
export interface InputDocument {
  readonly object: Record<string, unknown>;
  /** File name, or `<stdin>`. */
  readonly source: string;
  /** 1-based document number within `source` (empty documents count). */
  readonly index: number;
  /** 1-based position in the document's `items` when the document is a list (`kind: List`). @default none: the document is no list */
  readonly item?: number;
}

/** Where a document came from, for messages: `file: document 2` or `file: document 2, item 3`. */
export function documentLocation(document: InputDocument): string {
  return `${document.source}: document ${document.index}${document.item === undefined ? '' : `, item ${document.item}`}`;
}

/**
 * The documents of the `-f` files, in the order given (`-` reads `readStdin`).
 * @throws Error `cannot read <file>: <why>` when a file cannot be read; parseDocuments' error when one does not parse
 */
export async function readDocuments(filenames: readonly string[], readStdin: () => Promise<string>): Promise<InputDocument[]> {
  const documents: InputDocument[] = [];
  for (const filename of filenames) {
    const source = filename === '-' ? '<stdin>' : filename;
    const text = await (filename === '-' ? readStdin() : readFile(filename, 'utf8')).catch((error: unknown) => {
      throw new Error(`cannot read ${source}: ${firstLineOf(error)}`, { cause: error });
    });
    documents.push(...parseDocuments(text, source));
  }
  return documents;
}

/** Runs the command; returns the exit code. */
export async function runRender(options: RenderOptions, io: RenderIo): Promise<number> {
  const fail = (message: string): number => {
    io.writeStderr(`error: ${message}\n`);
    return EXIT_ERROR;
  };
  const defaultNamespace = options.namespace ?? 'default';

  let documents: InputDocument[];
  try {
    documents = await readDocuments(options.filename, () => io.readStdin());
  } catch (error) {
    return fail(firstLineOf(error));
  }

  let operators: OperatorSet;
  try {
    operators = await loadOperators({ modulePath: options.module, cwd: io.cwd });
  } catch (error) {
    return fail(firstLineOf(error));
  }
  let forced: Operator | undefined;
  if (options.operator !== undefined) {
    forced = operators.get(options.operator);
    if (forced === undefined) return fail(`no operator named ${options.operator}; known: ${operators.names().join(', ')}`);
  }

  // Split the documents into custom resources and cluster state.
  const crs: { object: Record<string, unknown>; operator: Operator }[] = [];
  const state: KubeResource[] = [];
  /** The state objects given without a namespace (placed in `defaultNamespace`). */
  const unnamespaced = new Set<KubeResource>();
  for (const document of documents) {
    const operator = operatorOf(document.object, operators, forced);
    if (operator !== undefined) {
      crs.push({ object: document.object, operator });
      continue;
    }
    const metadata = document.object.metadata as Record<string, unknown> | undefined;
    if (typeof metadata?.name !== 'string' || metadata.name === '') {
      return fail(`${documentLocation(document)} (${String(document.object.kind)} ${String(document.object.apiVersion)}) has no metadata.name`);
    }
    const placed = withDefaultNamespace(document.object, operators, defaultNamespace);
    if (placed !== (document.object as unknown)) unnamespaced.add(placed);
    state.push(placed);
  }
  if (crs.length === 0) return fail(noCustomResourceMessage(documents, operators, forced));

  const related = relatedLookupOf(state);
  const invalid: string[] = [];
  const failed: string[] = [];
  const manifests: Manifest[] = [];
  /** The CR that rendered each manifest, same index. */
  const renderedBy: string[] = [];
  const notes: string[] = [];
  for (const { object, operator } of crs) {
    const standIn = withStandIns(object, operator, defaultNamespace);
    let hub: Record<string, unknown> = standIn;
    try {
      // a spoke version's CR is validated against its own schema, then renders as the hub
      hub = operator.convertToHub(standIn);
      // zod first (its messages follow the operator's schema), then the server's verdict on the CR as
      // given (its own version), CEL rules included, before render sees it
      operator.parseCustomResource(hub);
      assertCustomResourceAccepted(operator, standIn);
      const cr = asCustomResource(hub);
      const output = renderWithState(operator, cr, state, related);
      manifests.push(...output.children);
      const who = formatObjectReference({ kind: cr.kind, namespace: cr.metadata.namespace, name: cr.metadata.name });
      renderedBy.push(...output.children.map(() => who));
      notes.push(...notesOf(cr, output));
    } catch (error) {
      if (error instanceof CustomResourceValidationError) {
        const ref = `${String(object.kind)}/${String((hub.metadata as { name?: unknown } | undefined)?.name ?? '<unnamed>')}`;
        for (const field of error.fields) invalid.push(field.path ? `${ref}: ${field.path}: ${field.reason}` : `${ref}: ${field.reason}`);
      } else if (error instanceof RenderError && error.reason === 'ReferenceNotFound') {
        failed.push(`${firstLineOf(error)} (${missingHint(error.missing, state, unnamespaced)})`);
      } else {
        // A throw in the user's render: where it was thrown, first, as a compiler prints it.
        const at = thrownAt(error, packageRoot());
        failed.push(at ? `${at.file}:${at.line}:${at.column}: ${firstLineOf(error)}` : firstLineOf(error));
      }
    }
  }

  if (failed.length === 0 && invalid.length === 0) {
    try {
      const verdicts = validateBuiltInObjects(manifests);
      verdicts.forEach((verdict, i) => invalid.push(...refusedChildrenProblems([verdict]).map((line) => `${line} (rendered by ${renderedBy[i]})`)));
    } catch (error) {
      failed.push(firstLineOf(error));
    }
  }

  for (const line of [...invalid, ...failed]) io.writeStderr(`error: ${line}\n`);
  if (failed.length > 0) return EXIT_ERROR;
  if (invalid.length > 0) return EXIT_INVALID;

  io.writeStdout(options.output === 'json'
    ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }, null, 2)}\n`
    : stringifyManifests(manifests));
  for (const note of notes) io.writeStderr(`note: ${note}\n`);
  return 0;
}

/**
 * Renders `cr` with `related` looked up in the state, in two passes (see the module doc): first with
 * nothing observed, then, if some state objects are its children, with those observed. The operator's
 * `status()` fields are merged into the status as `run` writes them (custom-status.ts).
 *
 * @throws CustomResourceValidationError / RenderError like renderCustomResource (and `StatusFailed` /
 *   `InvalidStatus` from status())
 */
export function renderWithState(
  operator: Operator,
  cr: CustomResource,
  state: readonly KubeResource[],
  related = relatedLookupOf(state),
): RenderOutput {
  const first = renderCustomResource(operator, cr, { related });
  const observed = observedChildren(first.children, state);
  if (observed.length === 0) return withOperatorStatus(operator, cr, first, { related });
  return withOperatorStatus(operator, cr, renderCustomResource(operator, cr, { related, observed }), { related, observed });
}

/**
 * The state objects that are one of `children` (same API group, kind, namespace and name; the namespace
 * is not compared for a cluster-scoped child, which has none).
 */
export function observedChildren(children: readonly Manifest[], state: readonly KubeResource[]): KubeResource[] {
  const namespaced = new Set(children.map((child) => ObjectRef.of(child).key()));
  const clusterScoped = new Set(children.filter((child) => child.metadata.namespace === undefined).map((child) => ObjectRef.of(child).key()));
  return state.filter((object) => namespaced.has(ObjectRef.of(object).key())
    || clusterScoped.has(ObjectRef.of({ ...object, metadata: { ...object.metadata, namespace: undefined } }).key()));
}

/** The `note:` lines (without the prefix `note: `) of one rendered CR: status, requeueAfter, waiting children. */
export function notesOf(cr: CustomResource, output: RenderOutput): string[] {
  const who = formatObjectReference({ kind: cr.kind, namespace: cr.metadata.namespace, name: cr.metadata.name });
  const lines: string[] = [];
  if (output.status !== undefined) lines.push(`status ${JSON.stringify(output.status)}`);
  if (output.requeueAfterMs !== undefined) lines.push(`requeueAfter ${output.requeueAfterMs / 1000}s`);
  for (const [child, dependencies] of output.waitsFor) {
    if (dependencies.length > 0) lines.push(`${ObjectRef.fromKey(child)} waits for ${dependencies.map((key) => ObjectRef.fromKey(key).toString()).join(', ')}`);
  }
  return lines.map((line) => `${who}: ${line}`);
}

function operatorOf(object: Record<string, unknown>, operators: OperatorSet, forced: Operator | undefined): Operator | undefined {
  const apiVersion = String(object.apiVersion);
  const kind = String(object.kind);
  if (forced === undefined) return operators.forKind(apiVersion, kind);
  return kind === forced.crd.kind && parseApiVersion(apiVersion).group === forced.crd.group ? forced : undefined;
}

function noCustomResourceMessage(documents: readonly InputDocument[], operators: OperatorSet, forced: Operator | undefined): string {
  const kinds = [...new Set(documents.map(({ object }) => `${String(object.kind)} (${String(object.apiVersion)})`))];
  const found = kinds.length === 0 ? 'the input is empty'
    : `no operator for kind ${kinds.slice(0, 5).join(', ')}${kinds.length > 5 ? `, … (${kinds.length} kinds)` : ''}`;
  const known = forced === undefined ? `known kinds: ${knownKinds(operators)}`
    : `--operator ${forced.operatorName} renders ${forced.crd.kind} (${forced.crd.group})`;
  return `no custom resource in the input (${found}); ${known}`;
}

/**
 * Whether state objects of this kind live in a namespace: the built-in kind table, then the loaded
 * operators' CRDs and `owns`/`related` declarations; a kind none of them knows counts as namespaced.
 */
function isNamespacedKind(apiVersion: string, kind: string, operators: OperatorSet): boolean {
  const builtIn = lookupBuiltInKind(apiVersion, kind);
  if (builtIn !== undefined) return builtIn.namespaced;
  const { group } = parseApiVersion(apiVersion);
  for (const operator of operators.operators) {
    if (operator.crd.kind === kind && operator.crd.group === group) return operator.crd.namespaced;
    for (const declared of [...operator.owns, ...Object.values(operator.related)]) {
      if (declared.kind !== kind || parseApiVersion(declared.apiVersion).group !== group) continue;
      try {
        return resolveKind(declared).namespaced;
      } catch {
        // not resolvable from the declaration alone; keep looking
      }
    }
  }
  return true;
}

/**
 * What to do about references render did not find in the `-f` objects: `add it with -f`, or, when an
 * object of that kind and name was given in another namespace, where it went and how to move it (an
 * object given without a namespace is in `-n`'s, `default` by default, as kubectl places it).
 */
function missingHint(missing: readonly MissingReference[], state: readonly KubeResource[], unnamespaced: ReadonlySet<KubeResource>): string {
  const hints = missing.map((ref) => {
    const elsewhere = state.find((o) => o.kind === ref.kind && o.metadata.name === ref.name && parseApiVersion(o.apiVersion).group === parseApiVersion(ref.apiVersion).group);
    if (!elsewhere || ref.namespace === undefined) return undefined;
    const where = elsewhere.metadata.namespace;
    return unnamespaced.has(elsewhere)
      ? `-f gave ${ref.kind} ${ref.name} without a namespace, so it is in ${where} (-n): give it metadata.namespace: ${ref.namespace}, or pass -n ${ref.namespace}`
      : `-f gave ${ref.kind} ${where}/${ref.name}, in namespace ${where}, not ${ref.namespace}`;
  });
  return hints.every((h) => h === undefined) ? 'add it with -f' : hints.filter((h) => h !== undefined).join('; ');
}

function withDefaultNamespace(object: Record<string, unknown>, operators: OperatorSet, defaultNamespace: string): KubeResource {
  const metadata = object.metadata as Record<string, unknown>;
  if (typeof metadata.namespace === 'string' || !isNamespacedKind(String(object.apiVersion), String(object.kind), operators)) {
    return asKubeResource(object);
  }
  return asKubeResource({ ...object, metadata: { ...metadata, namespace: defaultNamespace } });
}

/**
 * Parses a YAML stream into objects that have an apiVersion and a kind; empty documents are skipped.
 * A list (`kind: List` or `<Kind>List` with an `items` array, what `kubectl get -o yaml` prints) stands
 * for its items, as kubectl's resource builder flattens lists.
 * @throws Error `<source>:<line>:<column>: <problem>` for a syntax error, or naming the document (and the
 *   list item) that isn't a Kubernetes object.
 */
export function parseDocuments(text: string, source: string): InputDocument[] {
  const documents: InputDocument[] = [];
  parseAllDocuments(text).forEach((doc, index) => {
    const syntaxError = doc.errors[0];
    if (syntaxError !== undefined) {
      const position = syntaxError.linePos?.[0];
      const where = position === undefined ? `${source}` : `${source}:${position.line}:${position.col}`;
      throw new Error(`${where}: invalid YAML: ${syntaxError.message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '')}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const document = { source, index: index + 1 };
    const object = kubernetesObject(value, document);
    if (!isList(object)) {
      documents.push({ object, ...document });
      return;
    }
    (object.items as unknown[]).forEach((item, i) => documents.push({ object: kubernetesObject(item, { ...document, item: i + 1 }), ...document, item: i + 1 }));
  });
  return documents;
}

/** A list as kubectl flattens it: a `kind` ending in `List` with an `items` array. */
function isList(object: Record<string, unknown>): boolean {
  return String(object.kind).endsWith('List') && Array.isArray(object.items);
}

function kubernetesObject(value: unknown, where: Omit<InputDocument, 'object'>): Record<string, unknown> {
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject || typeof (value as Record<string, unknown>).apiVersion !== 'string' || typeof (value as Record<string, unknown>).kind !== 'string') {
    throw new Error(`${documentLocation({ ...where, object: {} })} is not a Kubernetes object (apiVersion and kind are required)`);
  }
  return value as Record<string, unknown>;
}

/** A CR read from a file, its namespace and uid stood in; not yet validated (its name may be missing). */
type StandIn = Record<string, unknown> & { readonly kind: string; readonly metadata: { readonly name?: string; readonly namespace?: string } };

function withStandIns(object: Record<string, unknown>, operator: Operator, defaultNamespace: string): StandIn {
  const metadata = (typeof object.metadata === 'object' && object.metadata !== null ? object.metadata : {}) as Record<string, unknown>;
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace
    : operator.crd.namespaced ? defaultNamespace : undefined;
  const name = typeof metadata.name === 'string' ? metadata.name : undefined;
  const uid = typeof metadata.uid === 'string' || name === undefined ? metadata.uid : STAND_IN_UID;
  return {
    ...object,
    kind: String(object.kind), // a string: kubernetesObject checked it
    metadata: { ...metadata, ...(name === undefined ? {} : { name }), ...(namespace === undefined ? {} : { namespace }), ...(uid === undefined ? {} : { uid }) },
  };
}

function knownKinds(operators: OperatorSet): string {
  return operators.operators.map((operator) => `${operator.crd.kind} (${operator.crd.apiVersion})`).join(', ');
}
