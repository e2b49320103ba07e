/**
 * The objects an operator synthesizes (CRD, Namespace, RBAC, Deployment, Services, webhook objects),
 * made in-process from the loaded operators (lib/cli/load-operators.ts), exactly as synth/main.ts writes
 * them for `cdk8s synth`: the operator's chart and the charts under it, in cdk8s's dependency order. So
 * `deploy` works from a consumer project without a `dist/` directory, on the same constructs `dev` and
 * `render` load.
 */
import type { Chart } from 'cdk8s';
import type { IConstruct } from 'constructs';
import type { Operator } from '../operator/operator.js';
import type { Manifest } from './deploy-plan.js';
import type { OperatorSet } from './load-operators.js';

/** One operator's synthesized objects. */
export interface OperatorManifests {
  readonly operator: Operator;
  readonly objects: readonly Manifest[];
}

/**
 * Synthesizes `operators` (picked from `set`), after running the construct validations of each one's
 * subtree (the `cdk8s synth` checks, e.g. a Deployment without `image`).
 * @throws Error `synthesis failed:` listing every `<construct path>: <problem>`, or what a Lazy value throws
 *   (e.g. a ChildRefusedError for an example's child the API server would refuse)
 */
export function synthesizeOperators(set: OperatorSet, operators: readonly Operator[]): OperatorManifests[] {
  const errors = operators.flatMap((operator) =>
    operator.node.findAll().flatMap((construct) => construct.node.validate().map((error) => `${construct.node.path}: ${error}`)),
  );
  if (errors.length > 0) throw new Error(`synthesis failed:\n  ${errors.join('\n  ')}`);
  const charts: Chart[] = set.app.charts; // dependency order
  return operators.map((operator) => ({
    operator,
    objects: charts.filter((chart) => chart === operator || isUnder(chart, operator)).flatMap((chart) => chart.toJson() as Manifest[]),
  }));
}

function isUnder(construct: IConstruct, ancestor: IConstruct): boolean {
  return construct.node.scopes.includes(ancestor);
}
