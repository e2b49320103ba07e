/**
 * The shape of a custom resource as render(), validation and the runtime see it: what an `Operator`'s
 * hooks (render, finalize, admission, conversion) get and the testing helpers take.
 *
 * @see https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/object-meta/
 */

/** Object metadata as the runtime and render() see it (subset of ObjectMeta). */
export interface CustomResourceMetadata {
  /** The CR's name, unique per namespace (its allowed form: the operator's `crNameRule`). */
  readonly name: string;
  /** Its namespace; absent for a cluster-scoped kind (validation gives a namespaced CR without one `default`). */
  readonly namespace?: string;
  /** Set by the API server at creation; absent in a sample until offline helpers give it `STAND_IN_UID`. */
  readonly uid?: string;
  /** Set by the API server; grows with every change outside `metadata` and `status` (the status subresource). */
  readonly generation?: number;
  /** Set by the API server; an opaque version of the object, changing with every write. */
  readonly resourceVersion?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly finalizers?: string[];
  /** RFC 3339 time the deletion was asked for; set while finalizers hold the CR back. */
  readonly deletionTimestamp?: string;
}

/** A custom resource: `spec` typed by the operator's zod schema. */
export interface CustomResource<Spec = unknown, Status = unknown> {
  /** `<group>/<version>` of the operator's kind. */
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: CustomResourceMetadata;
  readonly spec: Spec;
  /** What the runtime and render wrote (see crd.ts's status contract); absent on a new CR. */
  readonly status?: Status;
}
