/**
 * Finds the operators a command works with: this project's own (operators/index.ts) or a user's module.
 * `render` uses it today and `run` will: both see exactly the same operators.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Operator } from '../operator/operator.js';

/**
 * What an operators module exports, as `addOperators` or as its default export: adds one construct per
 * operator to `scope` and returns them. A second parameter, if declared, receives
 * {@link LoadOperatorsOptions.moduleOptions}.
 */
export type AddOperators = (scope: Construct) => Operator[];

/** The project's own operators, used when no module is given. */
const BUILT_IN_MODULE = fileURLToPath(new URL('../../operators/index.ts', import.meta.url));

export interface LoadOperatorsOptions {
  /**
   * Path of a module that exports `addOperators(scope)` (named or default), relative to `cwd`.
   * TypeScript works when the process runs under tsx, as `bin/cdk8s-operator.js` does.
   * @default this project's operators/index.ts, the three example operators
   */
  readonly modulePath?: string;
  /** Directory `modulePath` is resolved against. @default process.cwd(), the caller's directory */
  readonly cwd?: string;
  /**
   * Passed as the second argument of `addOperators`, for settings read at the edge (e.g. a credentials
   * key read from a mounted file). @default undefined
   */
  readonly moduleOptions?: unknown;
}

/** The module could not be loaded, exports no `addOperators`, or its operators clash. */
export class OperatorLoadError extends Error {
  constructor(
    /** `ModuleNotLoaded`, `NoAddOperators`, `NotAnOperator`, `DuplicateOperator`. */
    readonly reason: 'ModuleNotLoaded' | 'NoAddOperators' | 'NotAnOperator' | 'DuplicateOperator',
    /** The module's resolved path. */
    readonly modulePath: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${modulePath}: ${detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OperatorLoadError';
  }
}

/**
 * The loaded operators, constructed in one fresh App, with lookups by operator name and by the
 * (apiVersion, kind) of the custom resource each one reconciles.
 */
export class OperatorSet {
  private readonly byName = new Map<string, Operator>();
  private readonly byKind = new Map<string, Operator>();

  constructor(
    /** The App the operators were added to (their synth side: CRD, RBAC, Deployment). */
    readonly app: App,
    /** In the order `addOperators` returned them. */
    readonly operators: readonly Operator[],
    modulePath: string,
  ) {
    for (const operator of operators) {
      const kindKey = OperatorSet.kindKey(operator.crd.apiVersion, operator.crd.kind);
      const clash = this.byName.get(operator.operatorName) ?? this.byKind.get(kindKey);
      if (clash !== undefined) {
        throw new OperatorLoadError('DuplicateOperator', modulePath,
          `operators ${clash.operatorName} and ${operator.operatorName} share a name or the kind ${operator.crd.kind} (${operator.crd.apiVersion})`);
      }
      this.byName.set(operator.operatorName, operator);
      this.byKind.set(kindKey, operator);
    }
  }

  /** Operator names, in load order. */
  names(): string[] {
    return this.operators.map((operator) => operator.operatorName);
  }

  /**
   * The operators named in `names` (comma-separated `operatorName`s, in that order), or all of them
   * when `names` is empty or undefined.
   * @throws Error naming the unknown ones and listing the known ones
   */
  pick(names: string | undefined): Operator[] {
    const wanted = names?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
    if (wanted.length === 0) return [...this.operators];
    const unknown = wanted.filter((name) => !this.byName.has(name));
    if (unknown.length > 0) throw new Error(`unknown operator(s) ${unknown.join(', ')}; known: ${this.names().join(', ')}`);
    return wanted.map((name) => this.byName.get(name)!);
  }

  /** The operator called `name` (its `operatorName`), or undefined. */
  get(name: string): Operator | undefined {
    return this.byName.get(name);
  }

  /** The operator whose CRD is `apiVersion` + `kind` (e.g. `cache.example.com/v1alpha1`, `Memcached`), or undefined. */
  forKind(apiVersion: string, kind: string): Operator | undefined {
    return this.byKind.get(OperatorSet.kindKey(apiVersion, kind));
  }

  private static kindKey(apiVersion: string, kind: string): string {
    return `${apiVersion}\u0000${kind}`;
  }
}

/**
 * Imports the operators module and adds its operators to a fresh App.
 *
 * @throws OperatorLoadError when the module can't be imported, has no `addOperators`, returns
 *   something that isn't an operator, or two operators share a name or a kind.
 */
export async function loadOperators(options: LoadOperatorsOptions = {}): Promise<OperatorSet> {
  const modulePath = options.modulePath === undefined
    ? BUILT_IN_MODULE
    : isAbsolute(options.modulePath) ? options.modulePath : resolve(options.cwd ?? process.cwd(), options.modulePath);

  let module: Record<string, unknown>;
  try {
    module = await import(pathToFileURL(modulePath).href) as Record<string, unknown>;
  } catch (error) {
    throw new OperatorLoadError('ModuleNotLoaded', modulePath, `cannot load the module: ${firstLine(error)}`, { cause: error });
  }

  const addOperators = findAddOperators(module);
  if (addOperators === undefined) {
    throw new OperatorLoadError('NoAddOperators', modulePath,
      'the module must export `addOperators(scope: Construct): Operator[]`, named or as its default export');
  }

  const app = new App();
  const added: unknown = (addOperators as (scope: Construct, options?: unknown) => unknown)(app, options.moduleOptions);
  if (!Array.isArray(added)) {
    throw new OperatorLoadError('NotAnOperator', modulePath, 'addOperators must return an array of operators');
  }
  added.forEach((candidate, index) => {
    if (!looksLikeOperator(candidate)) {
      throw new OperatorLoadError('NotAnOperator', modulePath, `addOperators returned a non-operator at index ${index}`);
    }
  });
  return new OperatorSet(app, added as Operator[], modulePath);
}

function findAddOperators(module: Record<string, unknown>): AddOperators | undefined {
  const candidates = [module.addOperators, module.default, (module.default as Record<string, unknown> | undefined)?.addOperators];
  return candidates.find((candidate): candidate is AddOperators => typeof candidate === 'function');
}

/**
 * Duck-typed rather than `instanceof`: a user's module may resolve its own copy of this SDK, whose
 * Operator class is a different object.
 */
function looksLikeOperator(value: unknown): value is Operator {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Partial<Record<keyof Operator, unknown>>;
  return typeof candidate.render === 'function'
    && typeof candidate.validate === 'function'
    && typeof candidate.operatorName === 'string'
    && typeof candidate.crd === 'object' && candidate.crd !== null;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0];
}
