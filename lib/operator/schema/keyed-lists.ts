/**
 * Keyed lists: the lists that server-side apply treats as maps (`x-kubernetes-list-type: map`, keyed by
 * `x-kubernetes-list-map-keys`) or sets (`x-kubernetes-list-type: set`). Server-side apply rejects an
 * object whose map-list has two items with the same key (or an item without a key field that has no
 * default), or whose set-list has a value twice. {@link keyedListProblems} finds these offline, so
 * `renderChildren` reports them as `InvalidChild` instead of the apply failing.
 *
 * The table of built-in kinds ({@link BUILT_IN_KEYED_LISTS}) is generated data:
 * keyed-lists.generated.ts, which imports nothing, is written by `npm run generate:keyed-lists`
 * (tools/generate-keyed-lists.ts) from the OpenAPI v3 of the local control plane's kube-apiserver (the
 * version pinned in tools/control-plane/kube/go.mod). This file types it; the import runs one way only.
 * test/integration/server-limits-differential.test.ts derives the table again from the live server and
 * fails when they differ, printing the ready-to-commit file.
 *
 * @see https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy
 */
import { BUILT_IN_KEYED_LIST_DATA } from './keyed-lists.generated.js';

/** How one field of a definition leads to keyed lists. */
export interface KeyedListField {
  /** The field is an object of this definition. */
  readonly object?: string;
  /** The field is a map-list keyed by these fields of its items. */
  readonly listMapKeys?: readonly string[];
  /** Defaults of key fields (the server fills an omitted key with it before comparing). */
  readonly keyDefaults?: Readonly<Record<string, unknown>>;
  /** The field is a set-list: its values must be unique. */
  readonly listSet?: boolean;
  /** The field is a list (of any type) whose items are of this definition. */
  readonly items?: string;
  /** The field is a string-keyed map whose values are of this definition. */
  readonly values?: string;
}

/** Root definitions per `apiVersion/Kind`, and the fields of every definition that lead to keyed lists. */
export interface KeyedListSchema {
  readonly kinds: Readonly<Record<string, string>>;
  readonly definitions: Readonly<Record<string, Readonly<Record<string, KeyedListField>>>>;
}

/**
 * The keyed lists of the built-in kinds (lib/operator/kinds.ts) that have any, from
 * keyed-lists.generated.ts (regenerate with `npm run generate:keyed-lists`, never edit by hand).
 */
export const BUILT_IN_KEYED_LISTS: KeyedListSchema = BUILT_IN_KEYED_LIST_DATA;

/**
 * Every duplicate or missing key in the keyed lists of `object` (of kind `apiVersion`/`kind`), as
 * `<field path>: <problem>` strings, e.g.
 * `spec.template.spec.containers[0].env: duplicate entries for key name="LOG_LEVEL" (items 0 and 2)`.
 * A kind outside `schema` (a custom resource) has none. Pure.
 *
 * @param schema default {@link BUILT_IN_KEYED_LISTS}, the built-in kinds' lists; tests pass their own
 */
export function keyedListProblems(object: unknown, apiVersion: string, kind: string, schema: KeyedListSchema = BUILT_IN_KEYED_LISTS): string[] {
  const root = schema.kinds[`${apiVersion}/${kind}`];
  const problems: string[] = [];
  if (root) walk(object, root, '', schema, problems);
  return problems;
}

function walk(value: unknown, definition: string, path: string, schema: KeyedListSchema, problems: string[]): void {
  const fields = schema.definitions[definition];
  if (!fields || typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const record = value as Record<string, unknown>;
  for (const [field, shape] of Object.entries(fields)) {
    const child = record[field];
    if (child === undefined || child === null) continue;
    const at = path ? `${path}.${field}` : field;
    if (shape.object) walk(child, shape.object, at, schema, problems);
    if (shape.values && typeof child === 'object' && !Array.isArray(child)) {
      for (const [key, v] of Object.entries(child as Record<string, unknown>)) walk(v, shape.values, `${at}[${JSON.stringify(key)}]`, schema, problems);
    }
    if (!Array.isArray(child)) continue;
    if (shape.listMapKeys) checkListMap(child, shape.listMapKeys, shape.keyDefaults ?? {}, at, problems);
    if (shape.listSet) checkListSet(child, at, problems);
    if (shape.items) child.forEach((item, i) => walk(item, shape.items!, `${at}[${i}]`, schema, problems));
  }
}

function checkListMap(items: unknown[], keys: readonly string[], defaults: Readonly<Record<string, unknown>>, path: string, problems: string[]): void {
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const record = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of keys) {
      const v = record[key] ?? defaults[key];
      if (v === undefined || v === null) {
        problems.push(`${path}[${i}]: omits key field ${JSON.stringify(key)} (and it has no default)`);
        return;
      }
      parts.push(`${key}=${JSON.stringify(v)}`);
    }
    const id = parts.join(',');
    const first = seen.get(id);
    if (first === undefined) seen.set(id, i);
    else problems.push(`${path}: duplicate entries for key ${id} (items ${first} and ${i})`);
  });
}

function checkListSet(items: unknown[], path: string, problems: string[]): void {
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const id = JSON.stringify(item);
    const first = seen.get(id);
    if (first === undefined) seen.set(id, i);
    else problems.push(`${path}: duplicate value ${id} (items ${first} and ${i})`);
  });
}
