/**
 * Dependency levels: the order in which a reconcile applies the desired children when some wait for
 * others (`dependsOn`, child-ordering.ts). The children of one level wait for none of each other, so
 * their applies go out together (one round trip per level instead of one per child).
 */
import { ObjectRef } from '../../operator/object-ref.js';
import type { KubeObject } from '../client/kube-client.js';

/**
 * The desired children in dependency levels: level 0 waits for nothing among them, each later level only
 * for children of earlier levels (`waitsFor` entries naming no desired child are ignored here, and
 * reported by the child). Render order is kept within a level. Members of a cycle, and whatever waits
 * for them, come last as one level; each then waits for a dependency that is not ready yet, and reports it.
 *
 * @param waitsFor {@link ObjectRef.key} of a child → keys of the children it waits for (`RenderOutput.waitsFor`)
 * @returns no level when there are no children
 */
export function dependencyLevels(children: readonly KubeObject[], waitsFor: ReadonlyMap<string, readonly string[]>): KubeObject[][] {
  if (waitsFor.size === 0) return children.length > 0 ? [[...children]] : [];
  const refKey = (child: KubeObject) => ObjectRef.of(child).key();
  const keys = new Set(children.map(refKey));
  const done = new Set<string>();
  const levels: KubeObject[][] = [];
  let rest = [...children];
  while (rest.length > 0) {
    const level = rest.filter((child) => (waitsFor.get(refKey(child)) ?? []).every((dependency) => done.has(dependency) || !keys.has(dependency)));
    if (level.length === 0) {
      levels.push(rest);
      break;
    }
    for (const child of level) done.add(refKey(child));
    levels.push(level);
    rest = rest.filter((child) => !done.has(refKey(child)));
  }
  return levels;
}
