/**
 * Admission hooks of an operator, as the construct side declares them: `validateAdmission(cr, oldCr,
 * context)` returns field violations, `mutateAdmission(cr, context)` returns the changed object (the
 * runtime computes the JSON Patch). Both see the CR in the hub version (the webhook configurations use
 * `matchPolicy: Equivalent`, so the API server converts requests in other versions first).
 *
 * Put in the CRD (zod refinements the schema expresses, `celRule`) what it can check: it runs in the API
 * server, without a round trip. The webhook is for what CEL cannot express, such as rules that read
 * other objects in the cluster.
 *
 * What the runtime guarantees around the hooks (lib/runtime/webhook/admission-ratchet.ts,
 * admission-deadline.ts): UPDATEs of terminating objects and metadata-only UPDATEs skip both hooks;
 * validation ratchets as the API server's CRD validation does (KEP-4008: only violations at a path whose
 * value the update changed, or that the old object lacks, deny); the whole hook is bounded by the
 * webhook's `timeoutSeconds` minus a margin, and answers with a denial naming the read it waited for.
 *
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/
 */

/** One invalid field, as an admission hook reports it. */
export interface FieldViolation {
  /** Field path, e.g. `spec.replicas` or `metadata.name`. */
  readonly path: string;
  /** Why, e.g. `must be at most 2 (ConfigMap memcached-policy, maxReplicas)`. */
  readonly message: string;
}

/** A reference to an object an admission hook reads. */
export interface AdmissionObjectReference {
  readonly apiVersion: string;
  readonly kind: string;
  /** Absent for cluster-scoped kinds. */
  readonly namespace?: string;
  readonly name: string;
}

/** What an admission hook gets besides the CR. */
export interface AdmissionContext {
  /** `CREATE` or `UPDATE`. */
  readonly operation: 'CREATE' | 'UPDATE';
  /** The request is a dry run: the hook must not write anything (hooks never do: sideEffects None). */
  readonly dryRun: boolean;
  /** Who sent the request. */
  readonly userInfo: { readonly username?: string; readonly groups?: readonly string[] };
  /**
   * Aborted at the review's deadline (the webhook's `timeoutSeconds` minus a margin, see `get`): pass it
   * to any I/O of the hook's own (e.g. `fetch(url, { signal })`). The answer never waits past the deadline
   * either way; this only stops work nobody waits for.
   */
  readonly signal: AbortSignal;
  /**
   * Reads one object from the API server (a live GET, not a cache), or undefined when it does not exist.
   * Kinds outside the built-in table need `plural` and `namespaced` in the operator's `webhook.reads`,
   * which also derives the RBAC `get` permission.
   *
   * Bounded by the review's deadline: the webhook's `timeoutSeconds` (default 10) minus a margin of 1 s
   * (at most a fifth of it), shared with the rest of the hook. At the deadline the read is aborted and
   * the request denied with a 504 `Timeout` naming it (`reading ConfigMap ns/name did not finish within
   * 9000 ms …`), so the API server gets an answer before it gives up; under `failurePolicy: Ignore`
   * the request is allowed with that message as a warning.
   * @throws Error on any other failure; the request is then refused (failurePolicy does not apply: the hook answered)
   */
  get(ref: AdmissionObjectReference): Promise<Record<string, unknown> | undefined>;
}
