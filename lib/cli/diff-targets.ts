/**
 * The custom resources `cdk8s-operator diff -f` plans (lib/cli/diff-command.ts): the CRs among the
 * documents of its files, in the hub version, and each with what the cluster says of it.
 */
import type { CustomResource } from '../operator/custom-resource.js';
import { asCustomResource } from '../operator/object-shape.js';
import { CustomResourceValidationError } from '../operator/errors.js';
import type { Operator } from '../operator/operator.js';
import { STAND_IN_UID } from '../operator/render/stand-in-uid.js';
import { type KubeClient, type KubeObject, serverMessageOf } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { NAMESPACES } from '../runtime/client/builtin-resources.js';
import { withTypeMeta } from '../runtime/client/type-meta.js';
import { applyObject } from '../runtime/reconcile/apply.js';
import { unifiedObjectDiff } from './object-diff.js';
import { type InputDocument, documentLocation } from './render-command.js';
import type { PlanTarget } from './upgrade-plan/custom-resource-plan.js';

/** The CRs of the `-f` documents, with the namespace and hub version they are rendered in. */
export function fileTargets(documents: readonly InputDocument[], operators: readonly Operator[], defaultNamespace: string): {
  crs: { operator: Operator; cr: CustomResource }[];
  /** The `v1` Namespace documents (with a name). */
  namespaces: InputDocument[];
  invalid: string[];
  notes: string[];
} {
  const crs: { operator: Operator; cr: CustomResource }[] = [];
  const namespaces: InputDocument[] = [];
  const invalid: string[] = [];
  const notes: string[] = [];
  for (const document of documents) {
    const { object } = document;
    if (object.apiVersion === 'v1' && object.kind === 'Namespace' && documentName(document) !== '') {
      namespaces.push(document);
      continue;
    }
    const operator = operators.find((o) => o.crd.kind === object.kind && o.versions.some((v) => object.apiVersion === `${o.crd.group}/${v.name}`));
    if (operator === undefined) {
      notes.push(`${documentLocation(document)}: ${String(object.kind)} (${String(object.apiVersion)}) is no custom resource of ${operators.map((o) => o.operatorName).join(', ')}; ignored`);
      continue;
    }
    const metadata = (typeof object.metadata === 'object' && object.metadata !== null ? object.metadata : {}) as Record<string, unknown>;
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : operator.crd.namespaced ? defaultNamespace : undefined;
    const placed = { ...object, metadata: { ...metadata, ...(namespace === undefined ? {} : { namespace }) } };
    try {
      const hub = operator.convertToHub(placed);
      operator.parseCustomResource(hub); // an invalid CR in a file is bad input, found before any request
      crs.push({ operator, cr: asCustomResource(hub) });
    } catch (error) {
      if (!(error instanceof CustomResourceValidationError)) throw error;
      const ref = `${String(object.kind)}/${String(metadata.name ?? '<unnamed>')}`;
      for (const field of error.fields) invalid.push(field.path ? `${ref}: ${field.path}: ${field.reason}` : `${ref}: ${field.reason}`);
    }
  }
  return { crs, namespaces, invalid, notes };
}

/** `metadata.name` of a document, '' when it has none. */
export function documentName(document: InputDocument): string {
  const name = (document.object.metadata as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : '';
}

/**
 * A Namespace document of the files against the cluster: the live one (undefined when absent) and the
 * diff to the answer of a `dryRun=All` server-side apply (field manager `kubectl`, as
 * `kubectl apply --server-side`).
 * @throws what the GET or the dry-run apply throws, but a 404 of the GET
 */
export async function namespaceDiff(client: KubeClient, document: InputDocument): Promise<{ live?: KubeObject; diff: string }> {
  const name = documentName(document);
  const found = await new ResourceClient(client).getIfExists(NAMESPACES, undefined, name);
  const live = found && withTypeMeta(found, 'v1', 'Namespace');
  const after = await applyObject(client, NAMESPACES, document.object as KubeObject, { fieldManager: 'kubectl', dryRun: true });
  return { ...(live ? { live } : {}), diff: unifiedObjectDiff({ name: `Namespace ${name}`, live, after: withTypeMeta(after, 'v1', 'Namespace') }) };
}

/**
 * A CR of a file, with what the cluster says of it: the live CR's `metadata.uid` (its children's
 * owner) and `status` (the inventory) when it exists, else the stand-in uid.
 * @throws what the GET throws, but a 404
 */
export async function withLiveState(client: KubeClient, operator: Operator, cr: CustomResource): Promise<PlanTarget> {
  const name = cr.metadata?.name;
  let live: KubeObject | undefined;
  if (typeof name === 'string' && name !== '') {
    live = await new ResourceClient(client).getIfExists(operator.crd, cr.metadata.namespace, name);
  }
  const uid = live?.metadata?.uid ?? STAND_IN_UID;
  const status = live?.status;
  const rendered = asCustomResource({ ...cr, metadata: { ...cr.metadata, uid }, ...(status === undefined ? {} : { status }) });
  return { operator, cr: rendered, ...(live ? { live: { ...live, apiVersion: live.apiVersion ?? operator.crd.apiVersion, kind: live.kind ?? operator.crd.kind } } : {}) };
}

/**
 * Diffs the files' Namespace documents ({@link namespaceDiff}), writing each diff to stdout and a
 * `create|change Namespace` line to stderr. Returns whether any would change and the names absent
 * from the cluster, or undefined after writing the error of one that failed.
 */
export async function diffFileNamespaces(
  client: KubeClient,
  namespaces: readonly InputDocument[],
  io: { writeStdout(text: string): void; writeStderr(text: string): void },
): Promise<{ changed: boolean; pending: string[] } | undefined> {
  let changed = false;
  const pending: string[] = [];
  for (const namespace of namespaces) {
    try {
      const found = await namespaceDiff(client, namespace);
      if (found.diff !== '') {
        io.writeStdout(found.diff);
        io.writeStderr(`${documentLocation(namespace)}: ${found.live ? 'change' : 'create'} Namespace ${documentName(namespace)}\n`);
        changed = true;
      }
      if (!found.live) pending.push(documentName(namespace));
    } catch (error) {
      io.writeStderr(`error: ${documentLocation(namespace)}: Namespace ${documentName(namespace)}: ${serverMessageOf(error)}\n`);
      return undefined;
    }
  }
  return { changed, pending };
}
