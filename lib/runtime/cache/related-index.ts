/**
 * The index from related objects to the CRs that reference them (controller-runtime's field index +
 * `Watches(..., EnqueueRequestsFromMapFunc)`): a change to a referenced object reconciles exactly the
 * CRs that reference it, by name or by a label selector that matches it (before or after the change).
 */
import { kindKey, type ResolvedKind } from '../../operator/kinds.js';
import { ObjectRef } from '../../operator/object-ref.js';
import { selectorMatches, type ResolvedReference } from '../../operator/render/related.js';
import type { KubeObject } from '../client/kube-client.js';

interface SelectorEntry {
  readonly namespace?: string;
  readonly selector: Readonly<Record<string, string>>;
}

export class RelatedIndex {
  /** {@link ObjectRef.key} of an object → CR keys referencing it by name. */
  private readonly byName = new Map<string, Set<string>>();
  /**
   * Selector slot → CR key → that CR's selector references filed there. A selector is filed under its
   * anchor, one of its `key=value` pairs (every pair must match, so an object can only match it if it has
   * the anchor's label): `group/kind` + NUL + the smallest key and its value; an empty selector (it
   * matches every object of the kind) under `group/kind` + NUL alone. An object's candidates are the
   * slots of its own labels, so a change costs O(its labels + candidates), not O(CRs).
   */
  private readonly bySelector = new Map<string, Map<string, SelectorEntry[]>>();
  /** CR key → what it is indexed under, to replace or remove. */
  private readonly entries = new Map<string, { names: string[]; slots: string[] }>();

  /** Replaces the references of the CR `crKey` (an empty list removes it). */
  set(crKey: string, references: readonly ResolvedReference[]): void {
    this.remove(crKey);
    const names: string[] = [];
    const slots = new Set<string>();
    for (const reference of references) {
      const kind = kindKey(reference.kind);
      if (reference.name !== undefined) {
        const key = new ObjectRef({ ...reference.kind, namespace: reference.namespace, name: reference.name }).key();
        let keys = this.byName.get(key);
        if (!keys) this.byName.set(key, (keys = new Set()));
        keys.add(crKey);
        names.push(key);
      } else if (reference.selector) {
        const slot = slotOf(kind, anchorOf(reference.selector));
        let byCr = this.bySelector.get(slot);
        if (!byCr) this.bySelector.set(slot, (byCr = new Map()));
        byCr.set(crKey, [...(byCr.get(crKey) ?? []), { namespace: reference.namespace, selector: reference.selector }]);
        slots.add(slot);
      }
    }
    if (names.length > 0 || slots.size > 0) this.entries.set(crKey, { names, slots: [...slots] });
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
    for (const slot of entry.slots) {
      const byCr = this.bySelector.get(slot);
      byCr?.delete(crKey);
      if (byCr?.size === 0) this.bySelector.delete(slot);
    }
  }

  /** The CR keys that reference `obj` (of `kind`), sorted. */
  referencing(kind: ResolvedKind, obj: KubeObject): string[] {
    const out = new Set<string>();
    const namespace = obj.metadata?.namespace ?? '';
    const kindId = kindKey(kind);
    for (const crKey of this.byName.get(new ObjectRef({ ...kind, namespace, name: obj.metadata?.name ?? '' }).key()) ?? []) out.add(crKey);
    const labels = obj.metadata?.labels;
    const slots = [slotOf(kindId, undefined), ...Object.entries(labels ?? {}).map((pair) => slotOf(kindId, pair))];
    for (const slot of slots) {
      for (const [crKey, selectors] of this.bySelector.get(slot) ?? []) {
        if (selectors.some((s) => (s.namespace === undefined || s.namespace === namespace) && selectorMatches(s.selector, labels))) out.add(crKey);
      }
    }
    return [...out].sort();
  }

  /** Number of CRs indexed (tests, debug). */
  get size(): number {
    return this.entries.size;
  }
}

/** The pair a selector is filed under: its smallest key and that key's value; none for an empty selector. */
function anchorOf(selector: Readonly<Record<string, string>>): [string, string] | undefined {
  let anchor: [string, string] | undefined;
  for (const [key, value] of Object.entries(selector)) if (anchor === undefined || key < anchor[0]) anchor = [key, value];
  return anchor;
}

function slotOf(kindId: string, pair: readonly [string, string] | undefined): string {
  return pair ? `${kindId}\0${pair[0]}\0${pair[1]}` : `${kindId}\0`;
}
