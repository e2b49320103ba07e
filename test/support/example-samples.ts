/**
 * Creates an operator's samples in one namespace, as `dev` applies them: the related objects beside the
 * CRs in `examples` first (a CR that requires one would otherwise wait for it), then the CRs.
 */
import { parseApiVersion } from '../../lib/operator/kinds.js';
import type { Operator } from '../../lib/operator/operator.js';
import type { KubeClient, KubeObject } from '../../lib/runtime/client/kube-client.js';
import { resourcePath } from '../../lib/runtime/client/resource-path.js';

/** Creates `operator`'s example related objects and CRs in `namespace`; returns each CR's path. */
export async function createExampleSamples(client: KubeClient, operator: Operator, namespace: string): Promise<string[]> {
  for (const object of operator.exampleRelated as unknown as KubeObject[]) {
    const kind = Object.values(operator.relatedKinds).find((k) => k.kind === object.kind && k.group === parseApiVersion(object.apiVersion ?? '').group)!;
    const body = { ...object, metadata: { ...object.metadata, ...(kind.namespaced ? { namespace } : {}) } };
    await client.request('POST', resourcePath(kind, kind.namespaced ? namespace : undefined), { body });
  }
  const paths: string[] = [];
  for (const example of operator.examples as unknown as KubeObject[]) {
    const collection = resourcePath(operator.crd, namespace);
    await client.request('POST', collection, { body: { ...example, metadata: { ...example.metadata, namespace } } });
    paths.push(`${collection}/${example.metadata!.name}`);
  }
  return paths;
}
