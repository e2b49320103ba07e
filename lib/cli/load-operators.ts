/**
 * Finds the operators a command works with: this repository's own (operators/index.ts, in a checkout) or
 * a user's module (`--module`). `render`, `run` and `dev` all load them here, so they see exactly the same
 * operators.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { App } from 'cdk8s';
import type { Construct } from 'constructs';
import { hasBrand } from '../operator/brand.js';
import type { Operator } from '../operator/operator.js';
import { packageRoot } from '../package-root.js';
import { importUserModule } from './import-user-module.js';
import { firstLineOf } from '../error-text.js';

/**
 * What an operators module exports, as `addOperators` or as its default export: adds one construct per
 * operator to `scope` and returns them. A second parameter, if declared, receives
 * {@link LoadOperatorsOptions.moduleOptions}.
 */
export type AddOperators = (scope: Construct) => Operator[];

/**
 * This repository's example operators, used when no module is given. They exist only in a checkout of
 * the repository: the published package ships no operators, so `--module` is required there.
 */
function builtInModule(): string | undefined {
  const path = join(packageRoot(), 'operators', 'index.ts');
  return existsSync(path) ? path : undefined;
}

/** Options of {@link loadOperators}. */
export interface LoadOperatorsOptions {
  /**
   * Path of a module that exports `addOperators(scope)` (named or default), relative to `cwd`.
   * TypeScript works when the process runs under tsx, as `bin/cdk8s-operator.js` does.
   * @default in a checkout of this repository, its operators/index.ts (the three example operators);
   *   required where the SDK is installed as a package
   */
  readonly modulePath?: string;
  /** Directory `modulePath` is resolved against. @default process.cwd(), the caller's directory */
  readonly cwd?: string;
  /**
   * Passed as the second argument of `addOperators`, for settings read at the edge (e.g. a credentials
   * key read from a mounted file). @default undefined: the CLI passes none, so `addOperators` sees only its
   *   scope
   */
  readonly moduleOptions?: unknown;
}

/** The module could not be loaded, exports no `addOperators`, or its operators clash. */
export class OperatorLoadError extends Error {
  constructor(
    /** `NoModule`, `ModuleNotLoaded`, `NoAddOperators`, `NotAnOperator`, `DuplicateOperator`. */
    readonly reason: 'NoModule' | 'ModuleNotLoaded' | 'NoAddOperators' | 'NotAnOperator' | 'DuplicateOperator',
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
      // Every other served version of the kind finds the same operator (its CRs convert to the hub).
      for (const version of operator.versions.slice(1)) this.byKind.set(OperatorSet.kindKey(`${operator.crd.group}/${version.name}`, operator.crd.kind), operator);
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
 * An operator is told by its brand (operator/brand.ts, `hasBrand(x, 'Operator')`): the user's module may load its own copy of
 * the SDK (CommonJS next to this ESM copy), whose Operator class is a different object.
 *
 * @param options default `{}`: this repository's operators (in a checkout only)
 * @throws OperatorLoadError when no module is given outside this repository, the module can't be
 *   imported, has no `addOperators`, returns something that isn't an operator, or two operators share
 *   a name or a kind.
 */
export async function loadOperators(options: LoadOperatorsOptions = {}): Promise<OperatorSet> {
  const modulePath = operatorsModulePath(options.modulePath, options.cwd);
  if (modulePath === undefined) {
    throw new OperatorLoadError('NoModule', '--module', 'no operators module given: pass --module PATH, a module that exports `addOperators(scope): Operator[]`');
  }

  let module: Record<string, unknown>;
  try {
    module = await importUserModule(modulePath);
  } catch (error) {
    throw new OperatorLoadError('ModuleNotLoaded', modulePath, `cannot load the module: ${firstLineOf(error)}`, { cause: error });
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
    // the brand, not `instanceof`: importing the Operator class would load the construct side (zod, the CRD generator)
    if (!hasBrand(candidate, 'Operator')) {
      throw new OperatorLoadError('NotAnOperator', modulePath, `addOperators returned a non-operator at index ${index}`);
    }
  });
  return new OperatorSet(app, added as Operator[], modulePath);
}

/**
 * The absolute path of the operators module {@link loadOperators} loads for `modulePath` (resolved
 * against `cwd`, default the working directory): in a checkout of this repository with no `modulePath`,
 * its operators/index.ts; undefined when there is none.
 */
export function operatorsModulePath(modulePath: string | undefined, cwd?: string): string | undefined {
  if (modulePath === undefined) return builtInModule();
  return isAbsolute(modulePath) ? modulePath : resolve(cwd ?? process.cwd(), modulePath);
}

function findAddOperators(module: Record<string, unknown>): AddOperators | undefined {
  const candidates = [module.addOperators, module.default, (module.default as Record<string, unknown> | undefined)?.addOperators];
  return candidates.find((candidate): candidate is AddOperators => typeof candidate === 'function');
}
