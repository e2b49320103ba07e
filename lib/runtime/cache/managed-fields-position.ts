/**
 * Where a cached managedFields entry stood in the object's full `metadata.managedFields` list as the API
 * server sent it. The informers keep only our own field manager's entries (informer.ts), so the index of
 * one of them in the stored list cannot be read from the cached object; a JSON patch that addresses an
 * entry needs it (reconcile/created-fields.ts). Remembered per entry object, so nothing is added to the
 * cached JSON.
 */
const positions = new WeakMap<object, number>();

/** Remembers `entry`'s index in the list the server sent. */
export function rememberManagedFieldsPosition(entry: object, index: number): void {
  positions.set(entry, index);
}

/** `entry`'s index in the list the server sent, or undefined when it was not remembered (e.g. a copy). */
export function managedFieldsPosition(entry: object): number | undefined {
  return positions.get(entry);
}
