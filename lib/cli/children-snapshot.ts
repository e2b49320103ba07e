/**
 * The children of every CR, read from the API server before and after `dev` reloads the operators
 * (lib/cli/dev-reload.ts), and what changed between the two reads, as a short diff per child.
 *
 * A CR's children are those its `status.children` lists (the runtime's inventory); each is read by the
 * REST path of its kind, resolved from the operators' child kinds. The comparison keeps only the fields
 * server-side appliers (the operators) own, and leaves out `status` (written by the kind's own
 * controller, not by render), the runtime's desired-hash annotation (it changes whenever anything else
 * does) and the fields object-diff's `withoutNoise` leaves out;
 * each changed child is told with the `+`/`-` lines of its unified diff (lib/cli/object-diff.ts).
 */
import { parseApiVersion } from '../operator/kinds.js';
import type { ResolvedKind } from '../operator/kinds.js';
import { type KubeClient, type KubeObject, isApiError } from '../runtime/client/kube-client.js';
import { ResourceClient } from '../runtime/client/resource-client.js';
import { DESIRED_HASH_ANNOTATION } from '../runtime/reconcile/child-diff.js';
import { type FieldSet, type ManagedFieldsEntry, fieldsOf, unionFieldSets } from '../runtime/reconcile/managed-fields.js';
import { unifiedObjectDiff } from './object-diff.js';
import type { OperatorDescription } from './operator-description.js';

/** Children by `Kind namespace/name` (`Kind name` when cluster-scoped). */
export type ChildrenSnapshot = ReadonlyMap<string, KubeObject>;

/** Changed lines shown per child at most; the rest is counted. @default 12: a short diff, one screen for a few children */
export const MAX_DIFF_LINES = 12;

interface Entry {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}

/**
 * Reads the children of every CR of `operators`' kinds, in all namespaces. A child whose kind none of
 * the operators renders, or that is gone, is left out.
 * @throws what a list of CRs throws (a read of a child failing other than 404 too)
 */
export async function snapshotChildren(client: KubeClient, operators: readonly OperatorDescription[]): Promise<ChildrenSnapshot> {
  const kinds = operators.flatMap((o) => o.childKinds);
  const snapshot = new Map<string, KubeObject>();
  const resources = new ResourceClient(client);
  for (const operator of operators) {
    const list = await resources.list(operator.crd).catch((err) => (isApiError(err, 404) ? { items: [] } : Promise.reject(err)));
    for (const cr of list.items) {
      for (const entry of ((cr.status as { children?: Entry[] } | undefined)?.children ?? [])) {
        const { group, version } = parseApiVersion(entry.apiVersion ?? '');
        const kind = kinds.find((k: ResolvedKind) => k.group === group && k.kind === entry.kind);
        if (!kind || !entry.name) continue;
        const label = `${entry.kind} ${entry.namespace ? entry.namespace + '/' : ''}${entry.name}`;
        if (snapshot.has(label)) continue;
        const object = await resources.getIfExists({ ...kind, version }, kind.namespaced ? entry.namespace : undefined, entry.name);
        if (object) snapshot.set(label, object);
      }
    }
  }
  return snapshot;
}

/**
 * What changed from `before` to `after`: per child, `created <child>`, `deleted <child>`, or
 * `changed <child>:` followed by its diff's `+`/`-` lines (at most {@link MAX_DIFF_LINES}, then
 * `… N more lines`), indented by two spaces; sorted by child. Empty when nothing changed.
 */
export function childChanges(before: ChildrenSnapshot, after: ChildrenSnapshot): string[] {
  const lines: string[] = [];
  for (const label of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const old = before.get(label);
    const now = after.get(label);
    if (old === undefined) lines.push(`created ${label}`);
    else if (now === undefined) lines.push(`deleted ${label}`);
    else {
      const diff = unifiedObjectDiff({ name: label, live: comparable(old), after: comparable(now) });
      if (diff === '') continue;
      const changed = diff.split('\n').filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l));
      lines.push(`changed ${label}:`);
      lines.push(...changed.slice(0, MAX_DIFF_LINES).map((l) => `  ${l}`));
      if (changed.length > MAX_DIFF_LINES) lines.push(`  … ${changed.length - MAX_DIFF_LINES} more lines`);
    }
  }
  return lines;
}

/**
 * `object` as compared: only the fields server-side appliers set (the operators: the main-resource
 * managedFields entries of every manager that applies to it), so that what another controller writes
 * (e.g. kube-controller-manager's `deployment.kubernetes.io/revision`) is not shown as the reload's
 * change; the whole object when no manager applies to it. Never `status`, nor the desired-hash
 * annotation (it changes with every other change).
 */
function comparable(object: KubeObject): Record<string, unknown> {
  const entries = ((object.metadata?.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) => (e.subresource ?? '') === '');
  const appliers = new Set(entries.filter((e) => e.operation === 'Apply').map((e) => e.manager));
  const applied = entries.filter((e) => appliers.has(e.manager)).reduce<FieldSet | undefined>((set, e) => unionFieldSets(set ?? {}, e.fieldsV1 ?? {}), undefined);
  const { status: _status, ...rest } = (applied ? { apiVersion: object.apiVersion, kind: object.kind, ...(fieldsOf(object, applied) as object) } : object) as KubeObject & { status?: unknown };
  const metadata: Record<string, unknown> = { ...(rest.metadata ?? {}), name: object.metadata?.name, ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}) };
  const annotations = { ...((metadata.annotations as Record<string, string> | undefined) ?? {}) };
  delete annotations[DESIRED_HASH_ANNOTATION];
  if (Object.keys(annotations).length === 0) delete metadata.annotations;
  else metadata.annotations = annotations;
  return { ...rest, metadata };
}
