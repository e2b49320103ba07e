/**
 * A field path as error messages print it (`spec.ports[0].name`), in a file of its own: the runtime's
 * render step formats paths without loading validate.ts (structural-schema.ts and zod), which only the
 * construct side needs.
 */

/** Formats a zod issue path under a prefix: `spec` + `['ports', 0, 'name']` → `spec.ports[0].name`. */
export function formatFieldPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      out += /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `${out ? '.' : ''}${key}` : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}
