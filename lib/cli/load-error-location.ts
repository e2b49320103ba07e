/**
 * Where loading an operators module failed, as one line an editor or terminal can jump to:
 * `file:line:col: message` (what `dev` prints when a reload fails, lib/cli/dev-reload.ts).
 *
 * - A syntax error is esbuild's (tsx compiles TypeScript with it): its `TransformError` message lists
 *   `file:line:col: ERROR: text` lines, the first of which is used.
 * - An error thrown while the module ran (at load, or in `addOperators`) is located by the first frame
 *   of its stack in the user's code: not in `node_modules`, not a Node internal, and not in the SDK
 *   itself when another frame is (tsx's source maps make the line and column those of the `.ts` file).
 * - Otherwise the error's first line, prefixed with the module's path.
 *
 * Pure: no I/O.
 */
import { fileURLToPath } from 'node:url';
import { hasBrand } from '../operator/brand.js';
import { firstLineOf, messageOf } from '../error-text.js';

/** A place in a file: absolute path, 1-based line and column. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** esbuild's `file:line:col: ERROR: text` line. */
const ESBUILD_ERROR = /^(.+?):(\d+):(\d+): ERROR: (.*)$/m;
/** A V8 stack frame: `at fn (file:line:col)` or `at file:line:col`. */
const STACK_FRAME = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/;

/**
 * The first location of `stack` in the user's code (see the module doc), or undefined.
 * @param sdkRoot the SDK's package root: its frames are skipped while a user frame follows
 */
export function userFrameOf(stack: string, sdkRoot?: string): SourceLocation | undefined {
  const frames: SourceLocation[] = [];
  for (const line of stack.split('\n')) {
    const match = STACK_FRAME.exec(line);
    if (!match) continue;
    let file = match[1];
    if (file.startsWith('file://')) file = fileURLToPath(file);
    if (!file.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(file)) continue; // node:internal, native, eval
    if (/[\\/]node_modules[\\/]/.test(file)) continue;
    frames.push({ file, line: Number(match[2]), column: Number(match[3]) });
  }
  const user = sdkRoot === undefined ? undefined : frames.find((f) => !f.file.startsWith(sdkRoot.replace(/[\\/]$/, '') + '/'));
  return user ?? frames[0];
}

/**
 * `file:line:col: message` for an error loading `modulePath` (see the module doc).
 * @param error what loading threw (an `OperatorLoadError`'s `cause` is looked into)
 * @param modulePath the operators module, named when no location is found
 * @param sdkRoot the SDK's package root, whose frames are skipped while a user frame follows
 */
export function formatLoadError(error: unknown, modulePath: string, sdkRoot?: string): string {
  const causes: unknown[] = [];
  for (let e: unknown = error; e !== undefined && causes.length < 5; e = (e as { cause?: unknown }).cause) causes.push(e);
  for (const e of causes) {
    const message = messageOf(e);
    const esbuild = ESBUILD_ERROR.exec(message);
    if (esbuild) return `${esbuild[1]}:${esbuild[2]}:${esbuild[3]}: ${esbuild[4]}`;
  }
  // The innermost error is what the user's code threw; an OperatorLoadError wraps it.
  const thrown = causes[causes.length - 1];
  const message = firstLine(thrown);
  const at = thrown instanceof Error && thrown.stack ? userFrameOf(thrown.stack, sdkRoot) : undefined;
  if (at) return `${at.file}:${at.line}:${at.column}: ${message}`;
  const outer = firstLineOf(error);
  return outer.startsWith(modulePath) ? outer : `${modulePath}: ${outer}`;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name === 'Error' ? '' : error.name + ': '}${error.message}` : String(error);
  return text.split('\n', 1)[0];
}

/**
 * Where the user's code threw `error`, found through its `cause` chain: the innermost error that is not
 * one of the SDK's own (a render's throw wrapped in a `RenderError`), located by {@link userFrameOf}.
 * Undefined when the whole chain is the SDK's (its message names the object and field) or has no stack.
 * @param sdkRoot the SDK's package root, whose frames are skipped while a user frame follows
 */
export function thrownAt(error: unknown, sdkRoot?: string): SourceLocation | undefined {
  const causes: unknown[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && causes.length < 8 && !causes.includes(e); e = (e as { cause?: unknown }).cause) causes.push(e);
  for (const e of causes.reverse()) {
    if (hasBrand(e, 'OperatorError') || hasBrand(e, 'RuntimeError')) continue;
    const stack = e && typeof e === 'object' ? (e as { stack?: unknown }).stack : undefined;
    const at = typeof stack === 'string' ? userFrameOf(stack, sdkRoot) : undefined;
    if (at) return at;
  }
  return undefined;
}
