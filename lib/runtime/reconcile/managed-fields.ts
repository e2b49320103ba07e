/**
 * managedFields entries (metav1.ManagedFieldsEntry) and the take-over of fields other managers set by
 * create or update, as kubectl's client-side to server-side apply migration does (client-go
 * `util/csaupgrade`).
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#upgrading-from-client-side-apply-to-server-side-apply
 */
/** metav1.ManagedFieldsEntry, as the API server sends it. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update' | string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: FieldSet;
  subresource?: string;
}

/** A FieldsV1 trie: keys `f:<name>`, `k:<key json>`, `v:<value json>`, `i:<index>`, `.` (the node itself); leaves are `{}`. */
export interface FieldSet {
  [key: string]: FieldSet;
}

/**
 * The managedFields after our field manager took over every field other managers set with create or
 * update on the main resource (operation `Update`, subresource ''), as client-go's
 * `csaupgrade.UpgradeManagedFields` does for the managers it is given, here for all of them:
 * - our `Apply` entry on the main resource is the target; without one, the most recent `Update` entry
 *   becomes it (renamed, operation `Apply`);
 * - every `Update` entry of the target's apiVersion is merged into it (a field set cannot be converted
 *   between versions); every main-resource `Update` entry is then dropped;
 * - `Apply` entries of other managers and entries of subresources (e.g. `status`) are kept as they are,
 *   so their fields stay theirs.
 *
 * @param options.from the managers whose `Update` entries are taken over (e.g. only our own, for the
 *   fields our create set: created-fields.ts); @default every manager (adoption)
 * @returns the new entries, or undefined when there is nothing to take over
 */
export function takeOverManagedFields(entries: readonly ManagedFieldsEntry[] | undefined, fieldManager: string, options: { readonly from?: readonly string[] } = {}): ManagedFieldsEntry[] | undefined {
  const list = (entries ?? []).map((entry) => ({ ...entry }));
  const from = options.from;
  const isUpdate = (entry: ManagedFieldsEntry) => entry.operation === 'Update' && (entry.subresource ?? '') === '' && (from === undefined || from.includes(entry.manager ?? ''));
  if (!list.some(isUpdate)) return undefined;
  let target = list.find((entry) => entry.manager === fieldManager && entry.operation === 'Apply' && (entry.subresource ?? '') === '');
  if (!target) {
    // Entries are sorted most recent first, as csaupgrade assumes.
    const newest = list.find(isUpdate) as ManagedFieldsEntry;
    target = { ...newest, manager: fieldManager, operation: 'Apply', fieldsV1: {} };
    list.splice(list.indexOf(newest), 0, target);
  }
  for (const entry of list) {
    if (isUpdate(entry) && entry.apiVersion === target.apiVersion) target.fieldsV1 = unionFieldSets(target.fieldsV1 ?? {}, entry.fieldsV1 ?? {});
  }
  target.fieldsType ??= 'FieldsV1';
  return list.filter((entry) => !isUpdate(entry));
}

/** The union of two FieldsV1 tries. */
export function unionFieldSets(a: FieldSet, b: FieldSet): FieldSet {
  const out: FieldSet = { ...a };
  for (const [key, child] of Object.entries(b)) out[key] = key in out ? unionFieldSets(out[key] as FieldSet, child) : child;
  return out;
}

/**
 * The part of `value` that the FieldsV1 trie `set` names: for a map, the entries with an `f:<name>`
 * key; for a list, the items an `k:<key json>` (every key equal), `v:<value json>` or `i:<index>` key
 * names; a leaf of the trie (`{}`) keeps the whole value under it. `.` (the node itself) adds nothing.
 * Used to show only what a field manager set, e.g. one operator's fields of a child.
 *
 * @param value a decoded object (or part of one); not modified
 * @param set the trie of one managedFields entry (`fieldsV1`), or a union of several ({@link unionFieldSets})
 * @returns a new value of the same shape with only the named fields; `value` itself when `set` is a leaf
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
 */
export function fieldsOf(value: unknown, set: FieldSet): unknown {
  const keys = Object.keys(set).filter((key) => key !== '.');
  if (keys.length === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, index) => {
      const child = listItemSet(set, keys, item, index);
      if (child) out.push(fieldsOf(item, child));
    });
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value as Record<string, unknown>)) {
    const child = set[`f:${name}`];
    if (child) out[name] = fieldsOf(field, child);
  }
  return out;
}

/** The trie of a list item: its `k:`, `v:` or `i:` entry in `set`, or undefined when none names it. */
function listItemSet(set: FieldSet, keys: readonly string[], item: unknown, index: number): FieldSet | undefined {
  for (const key of keys) {
    if (key === `i:${index}`) return set[key];
    if (key.startsWith('v:') && sameJson(parseJson(key.slice(2)), item)) return set[key];
    if (key.startsWith('k:') && item !== null && typeof item === 'object') {
      const wanted = parseJson(key.slice(2));
      if (wanted !== null && typeof wanted === 'object' && Object.entries(wanted).every(([k, v]) => sameJson(v, (item as Record<string, unknown>)[k]))) return set[key];
    }
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
