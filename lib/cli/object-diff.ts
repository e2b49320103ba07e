/**
 * The unified diff of one object as it is in the cluster and as it would be, for `cdk8s-operator diff`
 * (lib/cli/diff-command.ts): both sides are stripped of the fields the API server changes on every
 * write or that say nothing about the desired state ({@link NOISE_METADATA_FIELDS}), as `kubectl diff`
 * hides `metadata.managedFields`, then printed as YAML and compared line by line.
 *
 * Pure: no I/O. The diff itself is the `diff` package's (jsdiff), the YAML the `yaml` package's.
 *
 * @see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_diff/
 */
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';

/**
 * The `metadata` fields left out of both sides: the server sets them on every write (`resourceVersion`,
 * `generation`, `managedFields`' timestamps) or once (`uid`, `creationTimestamp`), so they would differ
 * between the live object and a dry-run answer, and for a create, between nothing and the answer,
 * without saying anything about what changes. The desired-hash annotation is kept: the runtime writes
 * it, and it changes whenever render's output does.
 */
export const NOISE_METADATA_FIELDS: readonly string[] = ['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid'];

/** Lines of context around each change. @default 3, as `diff -u` and `kubectl diff` */
export const DIFF_CONTEXT_LINES = 3;

/** A copy of `object` without the {@link NOISE_METADATA_FIELDS}; `object` itself is not changed. */
export function withoutNoise(object: Record<string, unknown>): Record<string, unknown> {
  const metadata = object.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return { ...object };
  const kept = Object.fromEntries(Object.entries(metadata).filter(([key]) => !NOISE_METADATA_FIELDS.includes(key)));
  return { ...object, metadata: kept };
}

/**
 * An object as the diff compares it: YAML of {@link withoutNoise}, keys in the order the server sent
 * them, lines never folded; '' for an absent object.
 */
export function objectText(object: Record<string, unknown> | undefined): string {
  if (object === undefined) return '';
  return stringify(withoutNoise(object), { lineWidth: 0 });
}

/** The two sides of one object's diff, and how to name them in the `---` / `+++` headers. */
export interface ObjectDiffInput {
  /** The object's name in the headers, `Kind namespace/name` (`ObjectRef.toString()`). */
  readonly name: string;
  /** The object in the cluster now; undefined when it does not exist (it would be created). */
  readonly live: Record<string, unknown> | undefined;
  /** The object as it would be (the dry-run answer); undefined when it would be deleted (pruned). */
  readonly after: Record<string, unknown> | undefined;
}

/**
 * The unified diff (`diff -u` format, {@link DIFF_CONTEXT_LINES} lines of context) from `live` to
 * `after`, with the headers `--- <name> (live)` and `+++ <name> (after apply)`; for a create the old
 * side is `(absent)`, for a prune the new side is `(pruned)`.
 *
 * @returns the diff, ending in a newline; '' when both sides are the same once stripped of noise
 */
export function unifiedObjectDiff(input: ObjectDiffInput): string {
  const before = objectText(input.live);
  const after = objectText(input.after);
  if (before === after) return '';
  const patch = createTwoFilesPatch(
    `${input.name} (${input.live === undefined ? 'absent' : 'live'})`,
    `${input.name} (${input.after === undefined ? 'pruned' : 'after apply'})`,
    before,
    after,
    undefined,
    undefined,
    { context: DIFF_CONTEXT_LINES },
  );
  // jsdiff opens with a line of '=' (an `Index:`-style separator); `diff -u` and `kubectl diff` do not.
  return patch.replace(/^=+\n/, '');
}
