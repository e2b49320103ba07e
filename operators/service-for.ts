import { ApiObject, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';

export interface ServiceForProps {
  /** Service name. */
  readonly name: string;
  /** Labels of the pods to route to (see `selectByLabels`). */
  readonly selectLabels: Readonly<Record<string, string>>;
  readonly ports: kplus.ServicePort[];
}

/**
 * A ClusterIP Service that selects pods by labels. Unlike `workload.exposeViaService()`, it doesn't
 * select by cdk8s-plus's construct-path label, and it leaves out the empty `externalIPs: []` that
 * cdk8s-plus always writes: the API server drops empty lists, so the live object would never contain it
 * and the child would look changed on every reconcile.
 */
export function serviceFor(scope: Construct, id: string, props: ServiceForProps): kplus.Service {
  const service = new kplus.Service(scope, id, { metadata: { name: props.name }, ports: props.ports });
  for (const [key, value] of Object.entries(props.selectLabels)) service.selectLabel(key, value);
  ApiObject.of(service).addJsonPatch(JsonPatch.remove('/spec/externalIPs'));
  return service;
}
