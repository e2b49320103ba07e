/**
 * RFC 6902 JSON Patch between two JSON values, as a mutating admission webhook answers
 * (`patchType: JSONPatch`). Objects are compared key by key (`add`, `remove`, `replace`); arrays and
 * scalars that differ are replaced whole. Keys are escaped per RFC 6901 (`~` → `~0`, `/` → `~1`).
 *
 * @see https://datatracker.ietf.org/doc/html/rfc6902
 */
import { isJsonObject } from '../../json-object.js';

/** One operation of a JSON Patch. */
export type JsonPatchOperation =
  | { readonly op: 'add' | 'replace'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string };

/** The operations that turn `from` into `to` (empty when equal). Keys are visited in sorted order. */
export function jsonPatch(from: unknown, to: unknown, path = ''): JsonPatchOperation[] {
  if (isJsonObject(from) && isJsonObject(to)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of [...new Set([...Object.keys(from), ...Object.keys(to)])].sort()) {
      const at = `${path}/${escape(key)}`;
      const a = Object.hasOwn(from, key) ? from[key] : undefined; // never an inherited `valueOf`
      const b = Object.hasOwn(to, key) ? to[key] : undefined;
      if (b === undefined && a !== undefined) ops.push({ op: 'remove', path: at });
      else if (a === undefined && b !== undefined) ops.push({ op: 'add', path: at, value: b });
      else if (a !== undefined) ops.push(...jsonPatch(a, b, at));
    }
    return ops;
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  return [{ op: 'replace', path, value: to }];
}

/** Applies a patch made by {@link jsonPatch} (tests, and checking a patch before it is sent). */
export function applyJsonPatch(value: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root = structuredClone(value);
  for (const op of ops) {
    if (op.path === '') {
      if (op.op === 'remove') throw new Error('cannot remove the root');
      root = structuredClone(op.value);
      continue;
    }
    const keys = op.path.slice(1).split('/').map(unescape);
    const last = keys.pop()!;
    let parent = root as Record<string, unknown>;
    for (const key of keys) parent = parent[key] as Record<string, unknown>;
    if (op.op === 'remove') delete parent[last];
    else Object.defineProperty(parent, last, { value: structuredClone(op.value), enumerable: true, writable: true, configurable: true }); // also `__proto__`
  }
  return root;
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function unescape(key: string): string {
  return key.replace(/~1/g, '/').replace(/~0/g, '~');
}
