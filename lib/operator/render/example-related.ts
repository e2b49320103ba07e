/**
 * The related objects of an operator's examples, as synth renders the examples to derive the child
 * kinds (and so the RBAC): the objects that stand beside the CRs in `examples` (a ConfigMap next to the
 * CR in sample.yaml), and for a named one that is missing, a stand-in with only apiVersion, kind and
 * metadata. Each stand-in handed out is recorded, so a render that fails on one (it read `data` of a
 * ConfigMap that has none) can say which stand-in it was given and how to replace it.
 */
import type { KubeResource } from './render-context.js';
import { relatedLookupOf, type RelatedLookup } from './render-children.js';

/** A {@link RelatedLookup} for rendering one example offline, and the stand-ins it handed out. */
export interface ExampleRelatedLookup {
  readonly lookup: RelatedLookup;
  /** `Kind namespace/name` of each stand-in handed out, in the order render asked for them. */
  readonly standIns: readonly string[];
}

/**
 * The lookup over `objects` (the non-CR objects of `examples`): a named object that is among them is
 * returned as given; one that is not gets a stand-in (recorded); selectors match only `objects`.
 */
export function exampleRelatedLookup(objects: readonly KubeResource[]): ExampleRelatedLookup {
  const given = relatedLookupOf(objects);
  const standIns: string[] = [];
  const lookup: RelatedLookup = {
    get: (kind, namespace, name) => {
      const found = given.get(kind, namespace, name);
      if (found) return found;
      const ref = `${kind.kind} ${namespace ? `${namespace}/` : ''}${name}`;
      if (!standIns.includes(ref)) standIns.push(ref);
      return { apiVersion: kind.apiVersion, kind: kind.kind, metadata: { name, ...(namespace ? { namespace } : {}) } };
    },
    select: (kind, namespace, selector) => given.select(kind, namespace, selector),
  };
  return { lookup, standIns };
}
