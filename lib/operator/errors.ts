/**
 * Error classes of the synth side (lib/operator).
 *
 * Every error has a machine-readable `reason`, an optional `cause`, and names what failed: the object
 * (`Kind namespace/name`), the schema field path (`spec.foo.bar`) or the construct path.
 *
 * Every public error class is branded (brand.ts): `instanceof` works across two copies of the SDK in
 * one process, e.g. the CLI's and the one a user's operator module loaded.
 */
import { brandClass } from './brand.js';
import type { ObjectRef } from './object-ref.js';

/**
 * The object an error is about, as the error's fields give it: an {@link ObjectRef}, or its `kind` with,
 * when known, `apiVersion`, `namespace` and `name` (an object not yet read, a Lease, a webhook target).
 * A view of ObjectRef's fields, not a second identity: to key, compare or parse an object, use ObjectRef.
 */
export type ObjectReference = Pick<ObjectRef, 'kind'> & Partial<Pick<ObjectRef, 'apiVersion' | 'namespace' | 'name'>>;

/** Formats a reference as `Kind namespace/name` (or `Kind name` when cluster-scoped). */
export function formatObjectReference(ref: ObjectReference): string {
  const name = ref.name ?? '<unnamed>';
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${name}` : `${ref.kind} ${name}`;
}

/** Base class of every error thrown by lib/operator. */
export abstract class OperatorError extends Error {
  static {
    brandClass(this, 'OperatorError');
  }

  /** Machine-readable reason, CamelCase (suitable for a condition or event reason). */
  abstract readonly reason: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
  }
}

/**
 * A zod schema that cannot be expressed as a Kubernetes structural schema.
 * The message starts with the field path, e.g. `spec.foo.bar: union of object and string cannot be
 * expressed as a structural schema`.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 */
export class StructuralSchemaError extends OperatorError {
  static {
    brandClass(this, 'StructuralSchemaError');
  }

  override readonly reason = 'NonStructuralSchema';
  constructor(
    /** Field path of the offending node, e.g. `spec.ports[].port`. */
    readonly path: string,
    /** What is wrong with it. */
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${path}: ${problem}`, options);
  }
}

/** The props given to an `Operator` are inconsistent (bad kind, group, clashing names …). */
export class OperatorConfigError extends OperatorError {
  static {
    brandClass(this, 'OperatorConfigError');
  }

  override readonly reason = 'InvalidOperator';
  constructor(
    /** Construct path of the operator. */
    readonly constructPath: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`operator ${constructPath}: ${detail}`, options);
  }
}

/** A kind that is neither in the built-in table (lib/operator/kinds.ts) nor declared with `owns`. */
export class UnknownKindError extends OperatorError {
  static {
    brandClass(this, 'UnknownKindError');
  }

  override readonly reason = 'UnknownKind';
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(
      `kind ${kind} (${apiVersion}) is not a built-in kind: declare it in the operator's \`owns\` with its plural and namespaced, e.g. { apiVersion: '${apiVersion}', kind: '${kind}', plural: '…', namespaced: true }`,
    );
  }
}

/** One invalid field of a custom resource. */
export interface FieldError {
  /** Field path, e.g. `spec.size` or `spec.ports[0].name`; `metadata.name` for metadata problems. */
  readonly path: string;
  /** Why it is invalid, e.g. `Too small: expected number to be >=1`. */
  readonly reason: string;
}

/**
 * A custom resource failed offline validation (schema, apiVersion/kind, metadata).
 * Message: `Memcached default/sample is invalid: spec.size: Too small: expected number to be >=1`.
 * Not retriable: the CR must change.
 */
export class CustomResourceValidationError extends OperatorError {
  static {
    brandClass(this, 'CustomResourceValidationError');
  }

  override readonly reason = 'Invalid';
  constructor(
    readonly object: ObjectReference,
    readonly fields: readonly FieldError[],
    options?: { cause?: unknown },
  ) {
    super(
      `${formatObjectReference(object)} is invalid: ${fields.map((f) => (f.path ? `${f.path}: ${f.reason}` : f.reason)).join('; ')}`,
      options,
    );
  }
}

/** Why `renderChildren` failed. */
export type RenderErrorReason =
  /** `render()` threw, or cdk8s synthesis/validation failed. */
  | 'RenderFailed'
  /** A child cannot be stamped: other namespace, cluster-scoped under a namespaced CR, bad name … */
  | 'InvalidChild'
  /** A child's kind is unknown (not built in, not in `owns`). */
  | 'UnknownKind'
  /** The CR has no metadata.uid, so no ownerReference can be written. */
  | 'MissingUid'
  /** Two children share apiVersion group, kind, namespace and name. */
  | 'DuplicateChild'
  /** A related-object reference of the CR is malformed (see related.ts). */
  | 'InvalidReference'
  /** A named related object that is not `optional` does not exist; render() did not run. */
  | 'ReferenceNotFound'
  /** The status render() or status() returned breaks the operator's status schema. */
  | 'InvalidStatus'
  /** The operator's `status()` hook threw. */
  | 'StatusFailed'
  /** render() returned something other than nothing or `{ status?, requeueAfter? }`. */
  | 'InvalidResult';

/** `renderChildren` failed for one CR. The message names the CR and, for a child, its construct path. */
export class RenderError extends OperatorError {
  static {
    brandClass(this, 'RenderError');
  }

  /** With `ReferenceNotFound`: the named references that were not found (kind, namespace, name). @default none */
  readonly missing: readonly MissingReference[];

  constructor(
    override readonly reason: RenderErrorReason,
    readonly object: ObjectReference,
    detail: string,
    options?: { cause?: unknown; missing?: readonly MissingReference[] },
  ) {
    super(`render ${formatObjectReference(object)}: ${detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.missing = options?.missing ?? [];
  }
}

/** A related object render needed and did not find (see {@link RenderError.missing}). */
export interface MissingReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/**
 * An error that retrying cannot fix (controller-runtime's `reconcile.TerminalError`): throw it from
 * `render` or `finalize` (or as the `cause` of what you throw) and the controller records it (Stalled
 * condition, Warning event, an error log line, `controller_runtime_terminal_reconcile_errors_total`)
 * without requeueing. It is found through the `cause` chain, wherever the runtime wrapped it
 * (lib/runtime/error-chain.ts `isTerminalError`), and by brand, so one from another copy of the SDK
 * counts too. A later change of the object or its children triggers a new reconcile.
 *
 * @see https://pkg.go.dev/sigs.k8s.io/controller-runtime/pkg/reconcile#TerminalError
 */
export class TerminalError extends Error {
  static {
    brandClass(this, 'TerminalError');
  }

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TerminalError';
  }
}
