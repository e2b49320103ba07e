/**
 * The index from related objects to the CRs that reference them (controller-runtime's field index +
 * `Watches(..., EnqueueRequestsFromMapFunc)`): a change to a referenced object reconciles exactly the
 * CRs that reference it, by name or by a label selector that matches it (before or after the change).
 */
import type { ResolvedKind } from '../operator/kinds.js';
import { selectorMatches, type ResolvedReference } from '../operator/related.js';
import type { KubeObject } from './api-client.js';

interface SelectorEntry {
  readonly namespace?: string;
  readonly selector: Readonly<Record<string, string>>;
}

export class RelatedIndex {
  /** `group/kind|namespace|name` → CR keys referencing it by name. */
  private readonly byName = new Map<string, Set<string>>();
  /** `group/kind` → CR key → selector references of that CR. */
  private readonly bySelector = new Map<string, Map<string, SelectorEntry[]>>();
  /** CR key → what it is indexed under, to replace or remove. */
  private readonly entries = new Map<string, { names: string[]; kinds: string[] }>();

  /** Replaces the references of the CR `crKey` (an empty list removes it). */
  set(crKey: string, references: readonly ResolvedReference[]): void {
    this.remove(crKey);
    const names: string[] = [];
    const kinds = new Set<string>();
    for (const reference of references) {
      const kind = kindKey(reference.kind);
      if (reference.name !== undefined) {
        const key = `${kind}|${reference.namespace ?? ''}|${reference.name}`;
        let keys = this.byName.get(key);
        if (!keys) this.byName.set(key, (keys = new Set()));
        keys.add(crKey);
        names.push(key);
      } else if (reference.selector) {
        let byCr = this.bySelector.get(kind);
        if (!byCr) this.bySelector.set(kind, (byCr = new Map()));
        byCr.set(crKey, [...(byCr.get(crKey) ?? []), { namespace: reference.namespace, selector: reference.selector }]);
        kinds.add(kind);
      }
    }
    if (names.length > 0 || kinds.size > 0) this.entries.set(crKey, { names, kinds: [...kinds] });
  }

  /** Forgets the CR `crKey`. */
  remove(crKey: string): void {
    const entry = this.entries.get(crKey);
    if (!entry) return;
    this.entries.delete(crKey);
    for (const key of entry.names) {
      const keys = this.byName.get(key);
      keys?.delete(crKey);
      if (keys?.size === 0) this.byName.delete(key);
    }
    for (const kind of entry.kinds) {
      const byCr = this.bySelector.get(kind);
      byCr?.delete(crKey);
      if (byCr?.size === 0) this.bySelector.delete(kind);
    }
  }

  /** The CR keys that reference `obj` (of `kind`), sorted. */
  referencing(kind: ResolvedKind, obj: KubeObject): string[] {
    const out = new Set<string>();
    const namespace = obj.metadata?.namespace ?? '';
    const kindId = kindKey(kind);
    for (const crKey of this.byName.get(`${kindId}|${namespace}|${obj.metadata?.name ?? ''}`) ?? []) out.add(crKey);
    for (const [crKey, selectors] of this.bySelector.get(kindId) ?? []) {
      if (selectors.some((s) => (s.namespace === undefined || s.namespace === namespace) && selectorMatches(s.selector, obj.metadata?.labels))) out.add(crKey);
    }
    return [...out].sort();
  }

  /** Number of CRs indexed (tests, debug). */
  get size(): number {
    return this.entries.size;
  }
}

function kindKey(kind: ResolvedKind): string {
  return `${kind.group}/${kind.kind}`;
}
