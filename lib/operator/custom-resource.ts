/** The shape of a custom resource as render(), validation and the runtime see it. */

/** Object metadata as the runtime and render() see it (subset of ObjectMeta). */
export interface CustomResourceMetadata {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly finalizers?: string[];
  readonly deletionTimestamp?: string;
}

/** A custom resource: `spec` typed by the operator's zod schema. */
export interface CustomResource<Spec = unknown, Status = unknown> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: CustomResourceMetadata;
  readonly spec: Spec;
  readonly status?: Status;
}
