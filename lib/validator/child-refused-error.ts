/**
 * `ChildRefusedError`: rendered children the API server would refuse, with the server's own field paths
 * and messages, and `refusedChildrenProblems`, the lines naming each refused child.
 */
import { brandClass } from '../operator/brand.js';
import { formatObjectReference, OperatorError } from '../operator/errors.js';
import type { BuiltInVerdict } from './validate-built-in-objects.js';

/**
 * One line per refused field: `Service default/db-headless: spec.ports[1].name: Required value`
 * (a cluster-scoped child: `ClusterRole reader: …`; no field cause: the whole reason).
 */
export function refusedChildrenProblems(verdicts: readonly BuiltInVerdict[]): string[] {
  return verdicts.filter((verdict) => verdict.verdict === 'invalid').flatMap((verdict) => {
    const who = formatObjectReference(verdict);
    if (verdict.errors.length === 0) return [`${who}: ${verdict.reason ?? 'refused'}`];
    return verdict.errors.map((error) => `${who}: ${error.field ? `${error.field}: ` : ''}${error.message}`);
  });
}

/**
 * Children the API server would refuse on create (Kubernetes' own validation, run offline).
 * Message: `the API server would refuse 1 child: Service default/db-headless: spec.ports[1].name: Required value`.
 * Not retriable: render must change.
 */
export class ChildRefusedError extends OperatorError {
  static {
    brandClass(this, 'ChildRefusedError');
  }

  override readonly reason = 'ChildRefused';
  /** One line per refused field, see {@link refusedChildrenProblems}. */
  readonly problems: readonly string[];

  constructor(readonly verdicts: readonly BuiltInVerdict[]) {
    const refused = verdicts.filter((verdict) => verdict.verdict === 'invalid');
    const problems = refusedChildrenProblems(refused);
    super(`the API server would refuse ${refused.length} ${refused.length === 1 ? 'child' : 'children'}: ${problems.join('; ')}`);
    this.problems = problems;
  }
}
