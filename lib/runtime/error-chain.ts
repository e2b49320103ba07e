/**
 * Finding an error through its `cause` chain, as controller-runtime's `errors.Is(err,
 * reconcile.TerminalError(nil))` unwraps (pkg/internal/controller/controller.go): a layer that wraps an
 * error to add what it was doing (render → {@link RenderError}, the reconciler → {@link ReconcileError})
 * never hides what the error is.
 *
 * Class checks use the brand (lib/operator/brand.ts) where the class is branded, so an error made by
 * another copy of the SDK in the process (a user's operator module with its own node_modules) is found too.
 */
import { hasBrand } from '../operator/brand.js';
import { ApiError } from './client/kube-client.js';
import { RuntimeError } from './runtime-error.js';

/** Longest chain walked; a longer (or cyclic) chain is cut there. */
const MAX_DEPTH = 32;

/** `err`, then its `cause`, its cause's `cause` …: at most {@link MAX_DEPTH} links, each at most once. */
export function* causeChain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current = err;
  for (let depth = 0; depth < MAX_DEPTH && current !== undefined && current !== null && !seen.has(current); depth++) {
    seen.add(current);
    yield current;
    current = typeof current === 'object' ? (current as { cause?: unknown }).cause : undefined;
  }
}

/** The first error of `err`'s cause chain (itself included) for which `test` holds. */
export function findCause<T>(err: unknown, test: (candidate: unknown) => candidate is T): T | undefined {
  for (const candidate of causeChain(err)) if (test(candidate)) return candidate;
  return undefined;
}

/**
 * True when `err` or any error in its `cause` chain is a `TerminalError` (from any copy of the SDK):
 * retrying cannot fix it, so the controller does not requeue it.
 */
export function isTerminalError(err: unknown): boolean {
  return findCause(err, (candidate): candidate is object => hasBrand(candidate, 'TerminalError')) !== undefined;
}

/**
 * The first {@link RuntimeError} of `err`'s cause chain (itself included), from any copy of the SDK: the
 * step that failed and its reason, e.g. the `CredentialsError` under an `AccessReviewError`.
 */
export function runtimeErrorOf(err: unknown): RuntimeError | undefined {
  return findCause(err, (candidate): candidate is RuntimeError => candidate instanceof RuntimeError);
}

/** The first {@link ApiError} (the API server's answer) in `err`'s cause chain. */
export function apiErrorOf(err: unknown): ApiError | undefined {
  return findCause(err, (candidate): candidate is ApiError => candidate instanceof ApiError);
}

/** The API server's own words for a failure: see kube-client.ts (the one copy). */
export { serverMessageOf } from './client/kube-client.js';
