/**
 * Ordering between the children of one render: `dependsOn(child, ...dependencies)` holds a child back
 * (it is neither created nor updated) until every dependency exists and is ready; `readyWhen(child,
 * predicate)` replaces the built-in readiness rules for one child.
 *
 * Both are recorded as construct metadata on the child (so they work across two copies of the SDK), and
 * `dependsOn` also adds a construct dependency, so `cdk8s synth` orders the manifests the same way.
 * Only dependencies declared with `dependsOn` make a child wait: construct dependencies that cdk8s-plus
 * adds on its own (a StatefulSet on its headless Service) do not.
 *
 * A waiting child is reported in `status.children` (`ready: false`, `waitingFor`) and in the
 * `Reconciling` condition's message; it is never pruned while it waits. Readiness is re-evaluated when
 * a dependency changes (it is a child, so its events reconcile the CR).
 */
import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import type { KubeResource } from './render-context.js';

/** Construct metadata type of a `dependsOn` entry; data: the dependency constructs. */
export const DEPENDS_ON_METADATA = 'cdk8s-operator-sdk:dependsOn';
/** Construct metadata type of a `readyWhen` entry; data: the predicate. */
export const READY_WHEN_METADATA = 'cdk8s-operator-sdk:readyWhen';

/** A readiness predicate: given the child as it exists (never undefined), true when it counts as ready. Must be pure. */
export type ReadyPredicate = (observed: KubeResource) => boolean;

/**
 * Holds `child` back until every one of `dependencies` exists and is ready. Each argument is an
 * `ApiObject` or a construct holding ApiObjects. `child` stands for every ApiObject below it (all of
 * them wait); a dependency stands for its primary object: its default child (`Resource`, as in every
 * cdk8s-plus construct, so a StatefulSet's headless Service is not waited for), else every ApiObject
 * below it.
 *
 * @example
 * const db = new kplus.StatefulSet(scope, 'db', { … });
 * const migrate = new kplus.Job(scope, 'migrate', { … });
 * dependsOn(migrate, db); // the Job is created once the StatefulSet is ready
 */
export function dependsOn(child: IConstruct, ...dependencies: IConstruct[]): void {
  if (dependencies.length === 0) return;
  child.node.addMetadata(DEPENDS_ON_METADATA, dependencies);
  child.node.addDependency(...dependencies);
}

/**
 * Decides when `child` counts as ready, instead of the built-in rules (Deployment/StatefulSet rolled
 * out, Job complete, PVC bound, any other kind: it exists). The predicate decides for the primary
 * object of `child` (the ApiObject itself, or a construct's default child `Resource`, else every
 * ApiObject below it); other objects of the construct keep the built-in rules.
 *
 * @example
 * readyWhen(db, (sts) => (sts.status?.readyReplicas ?? 0) >= 1);
 */
export function readyWhen(child: IConstruct, predicate: ReadyPredicate): void {
  child.node.addMetadata(READY_WHEN_METADATA, predicate);
}

/** The ordering of one rendered ApiObject: what it waits for, and its readiness predicate. */
export interface ChildOrdering {
  /** The objects it waits for (`dependsOn`); empty when it waits for none. */
  readonly waitsFor: readonly ApiObject[];
  /** Its `readyWhen` predicate. @default none: the built-in readiness rules */
  readonly readyWhen?: ReadyPredicate;
}

/**
 * The ordering declared for `apiObject`, on itself or any construct above it up to (not including)
 * `root`. The nearest `readyWhen` wins; `dependsOn` entries add up. An object never waits for itself.
 */
export function orderingOf(apiObject: ApiObject, root: IConstruct): ChildOrdering {
  const waitsFor = new Set<ApiObject>();
  let predicate: ReadyPredicate | undefined;
  for (let scope: IConstruct | undefined = apiObject; scope && scope !== root; scope = scope.node.scope) {
    for (const entry of scope.node.metadata) {
      if (entry.type === READY_WHEN_METADATA && predicate === undefined && primaryApiObjects(scope).includes(apiObject)) predicate = entry.data as ReadyPredicate;
      if (entry.type === DEPENDS_ON_METADATA) {
        for (const dependency of entry.data as IConstruct[]) {
          for (const target of primaryApiObjects(dependency)) if (target !== apiObject) waitsFor.add(target);
        }
      }
    }
  }
  return { waitsFor: [...waitsFor], readyWhen: predicate };
}

/** The ApiObject itself; a construct's default child when it is an ApiObject; else every ApiObject below. */
export function primaryApiObjects(construct: IConstruct): ApiObject[] {
  if (ApiObject.isApiObject(construct)) return [construct];
  const primary = construct.node.defaultChild;
  if (primary !== undefined && ApiObject.isApiObject(primary)) return [primary];
  return construct.node.findAll().filter((c): c is ApiObject => ApiObject.isApiObject(c));
}
