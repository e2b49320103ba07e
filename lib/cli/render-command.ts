/**
 * `cdk8s-operator render`: what would these custom resources produce? Offline, no cluster.
 *
 * ```
 * cdk8s-operator render -f FILE|- [--operator NAME] [--module PATH] [-n NAMESPACE] [-o yaml|json]
 * ```
 *
 * - Reads every YAML document of FILE (`-` = stdin); each is a custom resource whose operator is found
 *   by apiVersion + kind (or forced with `--operator`).
 * - Validates each CR offline (`operator.parseCustomResource`: the CRD schema's rules, defaults applied), then
 *   renders its children with `renderChildren`. Everything is rendered before anything is printed:
 *   stdout is either the complete result or empty.
 * - A CR without `metadata.uid` gets a deterministic stand-in (see {@link standInUid}); one without a
 *   namespace gets `--namespace` (default `default`), as `kubectl apply` would.
 * - Output: a YAML stream (`---` between documents, YAML 1.1-safe quoting, see {@link stringifyManifests})
 *   or, with `-o json`, one `v1` `List` whose `items` are the manifests.
 *
 * Exit codes: 0 rendered; 2 a CR is invalid (one `error: <Kind>/<name>: <field path>: <reason>` line
 * per failing field on stderr); 1 anything else (unreadable file, YAML syntax error, unknown kind,
 * operator module not loadable, render() failure), with a one-line `error: …` message.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { parseAllDocuments } from 'yaml';
import type { CustomResource } from '../operator/custom-resource.js';
import { CustomResourceValidationError } from '../operator/errors.js';
import { stringifyManifests } from '../operator/manifest-yaml.js';
import type { Operator } from '../operator/operator.js';
import { renderChildren, type Manifest } from '../operator/render-children.js';
import { loadOperators, type OperatorSet } from './load-operators.js';

/** Exit code of an invalid custom resource (schema validation failed). */
export const EXIT_INVALID = 2;
/** Exit code of every other failure. */
export const EXIT_ERROR = 1;

export interface RenderOptions {
  /** Files of custom resources, read in order, `-` for stdin (as `kubectl -f`, repeatable). */
  readonly filename: readonly string[];
  /** Operator name (its `operatorName`) used for every CR instead of the apiVersion + kind lookup. */
  readonly operator?: string;
  /** Module exporting `addOperators`; see `loadOperators`. @default this project's operators */
  readonly module?: string;
  /** Namespace for namespaced CRs that have none. @default 'default', as kubectl */
  readonly namespace?: string;
  /** @default 'yaml' */
  readonly output?: 'yaml' | 'json';
}

/** Where `runRender` reads and writes; the command wires it to the process. */
export interface RenderIo {
  readonly cwd: string;
  readStdin(): Promise<string>;
  writeStdout(text: string): void;
  writeStderr(text: string): void;
}

/** Adds `render` to the `cdk8s-operator` program. */
export function registerRenderCommand(program: Command): void {
  program
    .command('render')
    .description('render the children of custom resources offline, without a cluster')
    .requiredOption('-f, --filename <file>', 'YAML file of custom resources (several documents allowed; repeatable); - reads stdin', collect, [])
    .option('--operator <name>', 'render every CR with this operator instead of finding it by apiVersion and kind')
    .option('--module <path>', "module exporting addOperators(scope) (named or default); default: this project's operators")
    .option('-n, --namespace <namespace>', 'namespace for CRs that have none', 'default')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .addHelpText('after', '\nExit codes: 0 rendered, 2 a custom resource is invalid, 1 any other error. Nothing is printed on stdout unless every CR rendered.')
    .action(async (options: RenderOptions) => {
      process.exitCode = await runRender(options, {
        cwd: process.cwd(),
        readStdin,
        writeStdout: (text) => process.stdout.write(text),
        writeStderr: (text) => process.stderr.write(text),
      });
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Runs the command; returns the exit code. */
export async function runRender(options: RenderOptions, io: RenderIo): Promise<number> {
  const fail = (message: string): number => {
    io.writeStderr(`error: ${message}\n`);
    return EXIT_ERROR;
  };

  const objects: Record<string, unknown>[] = [];
  for (const filename of options.filename) {
    let text: string;
    const source = filename === '-' ? '<stdin>' : filename;
    try {
      text = filename === '-' ? await io.readStdin() : await readFile(filename, 'utf8');
    } catch (error) {
      return fail(`cannot read ${source}: ${errorMessage(error)}`);
    }
    try {
      objects.push(...parseCustomResources(text, source));
    } catch (error) {
      return fail(errorMessage(error));
    }
  }

  let operators: OperatorSet;
  try {
    operators = await loadOperators({ modulePath: options.module, cwd: io.cwd });
  } catch (error) {
    return fail(errorMessage(error));
  }
  let forced: Operator | undefined;
  if (options.operator !== undefined) {
    forced = operators.get(options.operator);
    if (forced === undefined) return fail(`no operator named ${options.operator}; known: ${operators.names().join(', ')}`);
  }

  const invalid: string[] = [];
  const failed: string[] = [];
  const manifests: Manifest[] = [];
  for (const object of objects) {
    const apiVersion = String(object.apiVersion);
    const kind = String(object.kind);
    const operator = forced ?? operators.forKind(apiVersion, kind);
    if (operator === undefined) {
      failed.push(`no operator for kind ${kind} (${apiVersion}); known kinds: ${knownKinds(operators)}`);
      continue;
    }
    const standIn = withStandIns(object, operator, options.namespace ?? 'default');
    try {
      const cr = operator.convertToHub(standIn as unknown as Record<string, unknown>) as unknown as CustomResource; // a spoke version's CR renders as the hub
      operator.parseCustomResource(cr);
      manifests.push(...renderChildren(operator, cr));
    } catch (error) {
      if (error instanceof CustomResourceValidationError) {
        const ref = `${kind}/${standIn.metadata.name ?? '<unnamed>'}`;
        for (const field of error.fields) invalid.push(field.path ? `${ref}: ${field.path}: ${field.reason}` : `${ref}: ${field.reason}`);
      } else {
        failed.push(errorMessage(error));
      }
    }
  }

  for (const line of [...invalid, ...failed]) io.writeStderr(`error: ${line}\n`);
  if (failed.length > 0) return EXIT_ERROR;
  if (invalid.length > 0) return EXIT_INVALID;

  io.writeStdout(options.output === 'json'
    ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }, null, 2)}\n`
    : stringifyManifests(manifests));
  return 0;
}

/**
 * Parses a YAML stream into objects that have an apiVersion and a kind; empty documents are skipped.
 * @throws Error `<source>:<line>:<column>: <problem>` for a syntax error, or naming the document that
 *   isn't a custom resource.
 */
export function parseCustomResources(text: string, source: string): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  parseAllDocuments(text).forEach((doc, index) => {
    const syntaxError = doc.errors[0];
    if (syntaxError !== undefined) {
      const position = syntaxError.linePos?.[0];
      const where = position === undefined ? `${source}` : `${source}:${position.line}:${position.col}`;
      throw new Error(`${where}: invalid YAML: ${syntaxError.message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '')}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const isObject = typeof value === 'object' && !Array.isArray(value);
    if (!isObject || typeof (value as Record<string, unknown>).apiVersion !== 'string' || typeof (value as Record<string, unknown>).kind !== 'string') {
      throw new Error(`${source}: document ${index + 1} is not a Kubernetes object (apiVersion and kind are required)`);
    }
    objects.push(value as Record<string, unknown>);
  });
  if (objects.length === 0) throw new Error(`${source}: no custom resource in the input`);
  return objects;
}

/**
 * A stand-in `metadata.uid` for a CR that has none (one that was never created in a cluster): the
 * SHA-256 of `apiVersion/kind/namespace/name`, formatted as a UUID. Deterministic, so rendering the same
 * file twice gives the same output, and distinct per CR.
 */
export function standInUid(apiVersion: string, kind: string, namespace: string, name: string): string {
  const hex = createHash('sha256').update(`${apiVersion}/${kind}/${namespace}/${name}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function withStandIns(object: Record<string, unknown>, operator: Operator, defaultNamespace: string): CustomResource {
  const metadata = (typeof object.metadata === 'object' && object.metadata !== null ? object.metadata : {}) as Record<string, unknown>;
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace
    : operator.crd.namespaced ? defaultNamespace : undefined;
  const name = typeof metadata.name === 'string' ? metadata.name : undefined;
  const uid = typeof metadata.uid === 'string' || name === undefined ? metadata.uid
    : standInUid(String(object.apiVersion), String(object.kind), namespace ?? '', name);
  return {
    ...object,
    metadata: { ...metadata, ...(namespace === undefined ? {} : { namespace }), ...(uid === undefined ? {} : { uid }) },
  } as unknown as CustomResource;
}

function knownKinds(operators: OperatorSet): string {
  return operators.operators.map((operator) => `${operator.crd.kind} (${operator.crd.apiVersion})`).join(', ');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function errorMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0];
}

