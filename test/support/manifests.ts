import type { Manifest } from '../../lib/operator/render/render-children.js';

/** The kinds of rendered manifests, sorted: what a test compares against a list. */
export function kinds(manifests: readonly Manifest[]): string[] {
  return manifests.map((m) => m.kind).sort();
}

/** The first manifest of `kind`; throws naming the kinds that are there when there is none. */
export function find(manifests: readonly Manifest[], kind: string): Record<string, any> {
  const found = manifests.find((m) => m.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} in ${kinds(manifests).join(', ')}`);
  return found;
}
