/**
 * What one reconcile decided for one child, told to a listener as it is decided: the reconciler's
 * `onChildDecision` (reconciler.ts). `cdk8s-operator diff` runs the reconciler with writes sent as dry
 * runs and prints these (lib/cli/upgrade-plan/custom-resource-plan.ts), so it shows what `run` does
 * because it is the same code.
 */
import type { KubeObject } from '../client/kube-client.js';

/**
 * - `create`: absent, created (POST, or an apply after the name turned out to be ours);
 * - `update`: applied on top of an existing object (render changed, drift, or adopted: see `adopted`);
 * - `unchanged`: no apply needed ({@link decideApply}), or ours already applied on top of this version;
 * - `waiting`: not applied: a `dependsOn` dependency is not ready;
 * - `prune`: deleted (no longer rendered);
 * - `failed`: the apply or delete was refused (or the kind is not owned): see `error`.
 */
export type ChildDecisionAction = 'create' | 'update' | 'unchanged' | 'waiting' | 'prune' | 'failed';

/** One child's decision. */
export interface ChildDecision {
  readonly action: ChildDecisionAction;
  /** The desired child (render's, with its desired hash); for `prune`, the object deleted. */
  readonly object: KubeObject;
  /** The object before: the cache's, or what the lookup after a taken name found. @default none: absent */
  readonly live?: KubeObject;
  /** The API server's answer to the create or apply (`create`, `update`). */
  readonly after?: KubeObject;
  /** For an `update` of an object this CR did not make: the field managers whose fields were taken over. */
  readonly adopted?: readonly string[];
  /** For `waiting`: the children it waits for (`Kind ns/name`). */
  readonly waitingFor?: readonly string[];
  /** For `failed`: the error, naming the child. */
  readonly error?: Error;
}

/** Called once per child and reconcile, as it is decided (in any order within a dependency level). Must not throw. */
export type ChildDecisionListener = (cr: KubeObject, decision: ChildDecision) => void;
