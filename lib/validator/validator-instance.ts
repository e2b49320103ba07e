/**
 * The validator's WebAssembly instance: loaded lazily, once per process, and called synchronously as
 * often as needed (a Go `wasip1` reactor built with `-buildmode=c-shared`, tools/validator/exports.go:
 * `_initialize` runs the Go runtime and the scheme's registrations once; each request is JSON written
 * into its memory).
 *
 * V8 runs it with its baseline compiler only (`--liftoff-only`, set for the whole process before the
 * module is compiled): on a busy 2-core machine optimising the module (61 MB at the time, 66 MB since custom resources) in the background took
 * 3 s of CPU and 130 MB more memory, while the baseline code validates a child in under a millisecond
 * (`npm run bench:validator`). Other WebAssembly in the process is then baseline-compiled as well.
 *
 * Each function is validated when it is first compiled (`--wasm-lazy-validation`; V8 already compiles
 * lazily) instead of all of them before the module loads: a `render` calls a small part of the
 * module, and validating the rest took about three quarters of the load (compile 198 → 40–60 ms
 * nearly idle, `npm run bench:validator`). The sections are still checked at load; a corrupt
 * function body then traps at its first call, which {@link ValidatorInstance.call} reports as a
 * {@link ValidatorLoadError} naming the file, as a load error would.
 *
 * The WASI instance gets no preopened directories (no file access), no environment and one argument, its name (klog's init reads os.Args[0]).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import v8 from 'node:v8';
import { locateValidatorWasm, VALIDATOR_WASM_ENV } from './validator-wasm-file.js';

/** The validator could not be loaded or answered nonsense: never a silent pass. */
export class ValidatorLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ValidatorLoadError';
  }
}

/** The part of the WebAssembly JS API used here (TypeScript declares it only with the DOM library). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}
// cast: the project's lib settings carry no WebAssembly declarations
const WebAssemblyJs = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

interface ValidatorExports {
  readonly memory: { readonly buffer: ArrayBuffer };
  input(length: number): number;
  validate(): number;
  output(): number;
  version(): number;
}

/** A loaded validator: JSON in, JSON out. */
export interface ValidatorInstance {
  /** The file it was loaded from. */
  readonly file: string;
  /** Kubernetes version of the code inside, e.g. `v1.37.2`. */
  readonly kubernetesVersion: string;
  /** Validates a JSON array of objects; returns the JSON array of verdicts. */
  call(requestJson: string): string;
}

/** The V8 flags set for the whole process before the module is compiled (see the module doc). */
export const VALIDATOR_V8_FLAGS: readonly string[] = ['--liftoff-only', '--wasm-lazy-validation'];

let loaded: ValidatorInstance | undefined;

/**
 * The process's validator, loaded on first use.
 * @throws ValidatorLoadError naming the file (or the places looked at) when it is missing or corrupt
 */
export function validatorInstance(): ValidatorInstance {
  loaded ??= load();
  return loaded;
}

/**
 * How many times this process has compiled and initialised a validator module (any file): once per
 * file, however many realms load this module (see {@link processModules}).
 */
export function validatorCompilations(): number {
  return processModules().compilations;
}

/** A compiled, initialised validator module, as every realm of the process shares it. */
interface InstantiatedModule {
  readonly exports: ValidatorExports;
  readonly kubernetesVersion: string;
}

/** What the process's realms share: the instantiated module of each validator file, and a count. */
interface ProcessModules {
  readonly byFile: Map<string, InstantiatedModule>;
  compilations: number;
}

const PROCESS_MODULES = Symbol.for('cdk8s-operator-sdk.validator-modules');

/**
 * The validator modules of the whole process, by file. A test runner gives each test file a realm of
 * its own (jest: a vm context with fresh modules), so `loaded` above starts empty in each; without
 * this every test file that renders compiled and initialised the 66 MB module again (0.4 s of load
 * and about 180 MB, docs/concepts/render.md), 24 times in one jest worker over the 48 files of
 * test/operator, test/testing, test/validator and test/operators. Kept on the `node:v8` module object:
 * core modules are evaluated once per process, so every realm gets the same object. Each realm still
 * wraps the shared exports with its own classes (a trap is a ValidatorLoadError of the caller's realm).
 */
function processModules(): ProcessModules {
  const held = Reflect.get(v8, PROCESS_MODULES) as ProcessModules | undefined; // cast: only this function sets the key
  if (held !== undefined) return held;
  const created: ProcessModules = { byFile: new Map(), compilations: 0 };
  Reflect.set(v8, PROCESS_MODULES, created);
  return created;
}

function load(): ValidatorInstance {
  const { file, candidates } = locateValidatorWasm();
  if (file === undefined) {
    const looked = candidates.length > 0 ? `none of ${candidates.join(', ')} exists` : `no cdk8s-operator-sdk package found from ${process.cwd()}`;
    throw new ValidatorLoadError(`the built-in kinds' validator is missing: ${looked} `
      + `(set ${VALIDATOR_WASM_ENV}, or in a checkout of cdk8s-operator-sdk run npm run build)`);
  }
  const modules = processModules();
  const shared = modules.byFile.get(file) ?? instantiateShared(modules, file);
  const wasm = shared.exports;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  return {
    file,
    kubernetesVersion: shared.kubernetesVersion,
    call(requestJson: string): string {
      if (modules.byFile.get(file) !== shared) {
        // another realm's call trapped and dropped the shared module: load a new one
        loaded = undefined;
        return validatorInstance().call(requestJson);
      }
      try {
        const request = encoder.encode(requestJson);
        const address = wasm.input(request.length);
        new Uint8Array(wasm.memory.buffer, address, request.length).set(request);
        const length = wasm.validate(); // first: validating may grow the memory, and moves the output
        return decoder.decode(new Uint8Array(wasm.memory.buffer, wasm.output(), length));
      } catch (error) {
        // a trap leaves the instance unusable: the next call, in any realm, loads a new one
        loaded = undefined;
        if (modules.byFile.get(file) === shared) modules.byFile.delete(file);
        throw new ValidatorLoadError(`the built-in kinds' validator ${file} failed: ${(error as Error).message}`, { cause: error });
      }
    },
  };
}

/** Instantiates the module in `file` and keeps it as the process's module of that file. */
function instantiateShared(modules: ProcessModules, file: string): InstantiatedModule {
  const module = instantiate(file);
  modules.compilations += 1;
  modules.byFile.set(file, module);
  return module;
}

/** Reads, compiles, instantiates and initialises the module in `file`. */
function instantiate(file: string): InstantiatedModule {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new ValidatorLoadError(`cannot read the built-in kinds' validator ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    for (const flag of VALIDATOR_V8_FLAGS) v8.setFlagsFromString(flag);
    const module = new WebAssemblyJs.Module(bytes);
    const wasi = newWasi();
    const instance = new WebAssemblyJs.Instance(module, wasi.getImportObject());
    wasi.initialize(instance);
    // Not named `exports`: compiled to CommonJS (a consumer's ts-jest), that local would shadow the
    // module's `exports` through which VALIDATOR_V8_FLAGS is read above.
    const wasm = instance.exports as unknown as ValidatorExports; // cast: a module's exports are untyped; ours are these
    for (const name of ['input', 'validate', 'output', 'version'] as const) {
      if (typeof wasm[name] !== 'function') throw new Error(`it exports no function ${name}`);
    }
    const length = wasm.version();
    const kubernetesVersion = new TextDecoder().decode(new Uint8Array(wasm.memory.buffer, wasm.output(), length));
    return { exports: wasm, kubernetesVersion };
  } catch (error) {
    throw new ValidatorLoadError(`cannot load the built-in kinds' validator ${file}: ${(error as Error).message}`, { cause: error });
  }
}

interface Wasi {
  getImportObject(): Record<string, unknown>;
  initialize(instance: object): void;
}

/**
 * node:wasi, loaded only now: Node 20 prints an ExperimentalWarning when the module is first loaded,
 * which would reach every user of the CLI and the testing helpers; that one warning is dropped.
 */
function newWasi(): Wasi {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const message = typeof warning === 'string' ? warning : warning.message;
    if (/^WASI is an experimental feature/.test(message)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    const { WASI } = createRequire(join(process.cwd(), 'index.js'))('node:wasi') as { WASI: new (options: object) => Wasi };
    return new WASI({ version: 'preview1', args: ['validator'], env: {}, preopens: {}, returnOnExit: true });
  } finally {
    process.emitWarning = emitWarning;
  }
}
