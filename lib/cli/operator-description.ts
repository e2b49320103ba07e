/**
 * What `dev` needs to know of an operator, as plain JSON: the operators run in a child process
 * (lib/cli/dev-worker-command.ts), so that a reload loads their module afresh, and the `dev` process
 * itself (lib/cli/dev-command.ts) never imports the user's module; it reads this description, sent over
 * the child's IPC channel, to apply the samples, follow them, and diff the children around a reload.
 */
import { ApiObject } from 'cdk8s';
import type { ResolvedKind } from '../operator/kinds.js';
import { parseApiVersion } from '../operator/kinds.js';
import type { Operator } from '../operator/operator.js';
import { CUSTOM_RESOURCE_DEFINITIONS, MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from '../runtime/client/builtin-resources.js';
import type { KubeObject } from '../runtime/client/kube-client.js';
import type { ObjectLocation, ResourceRef } from '../runtime/client/resource-path.js';

/** A sample object beside the CRs (`exampleRelated`), with where it is written. */
export interface RelatedSample {
  /** Its resource, in the sample's own version. */
  readonly ref: ResourceRef;
  /** Its namespace when its kind is namespaced. */
  readonly namespace?: string;
  readonly object: KubeObject;
}

/** One operator, as JSON. */
export interface OperatorDescription {
  readonly operatorName: string;
  /** The CR's kind, in the hub version. */
  readonly crd: ResolvedKind;
  /** Every version of the kind, the hub first, and whether it is served. */
  readonly versions: readonly { readonly name: string; readonly served: boolean }[];
  /** Whether it serves webhooks (conversion or admission). */
  readonly webhook: boolean;
  /** The sample CRs (`examples`), as given. */
  readonly examples: readonly KubeObject[];
  /** The sample objects beside them, in apply order. */
  readonly exampleRelated: readonly RelatedSample[];
  /** Where each CRD and webhook configuration `dev` installs for it is, and its `Kind name` label. */
  readonly installedObjects: readonly (readonly [ObjectLocation, string])[];
  /** The kinds of the children it renders (to read them around a reload). */
  readonly childKinds: readonly ResolvedKind[];
  /** Its CustomResourceDefinition, as installed (compared around a reload). */
  readonly customResourceDefinition: KubeObject;
}

/** The resource of each kind `dev` installs (and removes, unless it was there before), by kind. */
const INSTALLED_RESOURCES: Record<string, ResourceRef> = { CustomResourceDefinition: CUSTOM_RESOURCE_DEFINITIONS, ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS, MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS };

/** The description of a loaded operator. */
export function describeOperator(operator: Operator): OperatorDescription {
  const exampleRelated: RelatedSample[] = [];
  for (const object of operator.exampleRelated as KubeObject[]) {
    const { group, version } = parseApiVersion(object.apiVersion ?? '');
    const kind = Object.values(operator.relatedKinds).find((k) => k.kind === object.kind && k.group === group);
    if (!kind) continue; // the Operator constructor refuses such an example
    exampleRelated.push({ ref: { ...kind, version }, ...(kind.namespaced && object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}), object });
  }
  return {
    operatorName: operator.operatorName,
    crd: { ...operator.crd },
    versions: operator.versions.map((v) => ({ name: v.name, served: v.served })),
    webhook: operator.webhook !== undefined,
    examples: operator.examples.map((example) => ({ ...example, metadata: { ...example.metadata } })),
    exampleRelated,
    installedObjects: operator.node
      .findAll()
      .filter((c): c is ApiObject => ApiObject.isApiObject(c) && c.kind in INSTALLED_RESOURCES)
      .map((o): [ObjectLocation, string] => [{ ref: INSTALLED_RESOURCES[o.kind], name: o.name }, `${o.kind} ${o.name}`]),
    childKinds: operator.childKinds(),
    customResourceDefinition: operator.customResourceDefinition.toJson() as KubeObject,
  };
}
