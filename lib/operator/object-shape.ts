/**
 * The checked narrowing of a plain object (a live object from the API server, a cached object, a
 * document read from a file) to the SDK's object shapes, in place of double casts: each
 * function checks what its shape requires (`apiVersion`, `kind`, `metadata.name`) and returns the same
 * object, not a copy.
 *
 * The shapes, and why there are more than one:
 * - {@link KubeResource} (render-context.ts): an object as render() reads it, every field read-only;
 * - {@link CustomResource} (custom-resource.ts): a custom resource, `spec` typed by the operator's schema;
 * - `Manifest` (render/render-children.ts): a child as render writes it, to be applied;
 * - `KubeObject` (lib/runtime/client/kube-client.ts): what the client sends and receives, every field
 *   optional, since the client takes any JSON the server does.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/#required-fields
 */
import type { CustomResource } from './custom-resource.js';
import { formatObjectReference } from './errors.js';
import type { KubeResource } from './render/render-context.js';

/**
 * The object as a {@link KubeResource}: the same object, once its `apiVersion` and `kind` are strings and
 * `metadata.name` is a string.
 *
 * @throws TypeError naming the object (`Kind namespace/name`) and the field path that is missing
 */
export function asKubeResource(object: object): KubeResource {
  assertObjectShape(object);
  return object as KubeResource;
}

/**
 * The object as a {@link CustomResource}: the same object, checked as {@link asKubeResource} checks it.
 * `spec` is not checked against the operator's schema (`Operator.parseCustomResource` does that).
 *
 * @throws TypeError naming the object (`Kind namespace/name`) and the field path that is missing
 */
export function asCustomResource<Spec = unknown, Status = unknown>(object: object): CustomResource<Spec, Status> {
  assertObjectShape(object);
  return object as CustomResource<Spec, Status>;
}

function assertObjectShape(object: object): asserts object is { apiVersion: string; kind: string; metadata: { name: string } } {
  const fields = object as { apiVersion?: unknown; kind?: unknown; metadata?: unknown };
  const metadata = typeof fields.metadata === 'object' && fields.metadata !== null ? (fields.metadata as { name?: unknown; namespace?: unknown }) : undefined;
  const missing =
    typeof fields.apiVersion !== 'string' ? 'apiVersion'
    : typeof fields.kind !== 'string' ? 'kind'
    : metadata === undefined ? 'metadata'
    : typeof metadata.name !== 'string' ? 'metadata.name'
    : undefined;
  if (missing === undefined) return;
  const name = formatObjectReference({
    kind: typeof fields.kind === 'string' ? fields.kind : '<no kind>',
    ...(typeof metadata?.namespace === 'string' ? { namespace: metadata.namespace } : {}),
    ...(typeof metadata?.name === 'string' ? { name: metadata.name } : {}),
  });
  throw new TypeError(`${name} is not a Kubernetes object: ${missing} must be ${missing === 'metadata' ? 'an object' : 'a string'}`);
}
