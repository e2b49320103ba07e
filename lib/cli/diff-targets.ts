/**
 * The custom resources `cdk8s-operator diff -f` plans (lib/cli/diff-command.ts): the CRs among the
 * documents of its files, in the hub version, and each with what the cluster says of it.
 */
import type { CustomResource } from '../operator/custom-resource.js';
import { CustomResourceValidationError } from '../operator/errors.js';
import type { Operator } from '../operator/operator.js';
import { STAND_IN_UID } from '../operator/stand-in-uid.js';
import type { KubeClient, KubeObject } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { type InputDocument, documentLocation } from './render-command.js';
import type { PlanTarget } from './upgrade-plan/custom-resource-plan.js';

/** The CRs of the `-f` documents, with the namespace and hub version they are rendered in. */
export function fileTargets(documents: readonly InputDocument[], operators: readonly Operator[], defaultNamespace: string): {
  crs: { operator: Operator; cr: CustomResource }[];
  invalid: string[];
  notes: string[];
} {
  const crs: { operator: Operator; cr: CustomResource }[] = [];
  const invalid: string[] = [];
  const notes: string[] = [];
  for (const document of documents) {
    const { object } = document;
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
      crs.push({ operator, cr: hub as unknown as CustomResource });
    } catch (error) {
      if (!(error instanceof CustomResourceValidationError)) throw error;
      const ref = `${String(object.kind)}/${String(metadata.name ?? '<unnamed>')}`;
      for (const field of error.fields) invalid.push(field.path ? `${ref}: ${field.path}: ${field.reason}` : `${ref}: ${field.reason}`);
    }
  }
  return { crs, invalid, notes };
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
  const rendered = { ...cr, metadata: { ...cr.metadata, uid }, ...(status === undefined ? {} : { status }) } as unknown as CustomResource;
  return { operator, cr: rendered, ...(live ? { live: { ...live, apiVersion: live.apiVersion ?? operator.crd.apiVersion, kind: live.kind ?? operator.crd.kind } } : {}) };
}
