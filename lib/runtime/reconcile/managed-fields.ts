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
