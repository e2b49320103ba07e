/**
 * The new release's CustomResourceDefinition beside the installed one: which versions the upgrade drops,
 * serves or stops serving, where storage moves, and which drop the API server would refuse because
 * `status.storedVersions` still holds the version. Pure: the caller reads the installed CRD.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/
 */
import { canonicalJson } from '../../json-object.js';

/** A version the new CRD no longer lists. */
export interface DroppedVersion {
  readonly name: string;
  /**
   * True when the installed CRD's `status.storedVersions` still holds it: the API server refuses the
   * new CRD until a storage-version migration rewrites every object and trims `storedVersions`.
   */
  readonly stillStored: boolean;
}

/** What changes between the installed CRD and the new one (JSON: `crd` of `diff --all --output json`). */
export interface CrdComparison {
  /** `<plural>.<group>`. */
  readonly name: string;
  /** False when the cluster has no such CRD (nothing else is then filled in). */
  readonly installed: boolean;
  readonly versionsDropped: readonly DroppedVersion[];
  /** Served by the new CRD, not by the installed one. */
  readonly servedAdded: readonly string[];
  /** Served by the installed CRD, not (or no longer listed) by the new one. */
  readonly servedRemoved: readonly string[];
  /** The storage version, when it moves. */
  readonly storageVersion?: { readonly from: string; readonly to: string };
  /** Versions in both whose `schema` differs. */
  readonly schemaChanged: readonly string[];
  /** The installed `status.storedVersions`. */
  readonly storedVersions: readonly string[];
  /**
   * What must happen first, in words, when a dropped version is still stored: the storage-version
   * migration the current release's runtime runs (lib/runtime/startup/storage-version-migration.ts).
   */
  readonly migration?: string;
}

interface CrdVersion {
  readonly name: string;
  readonly served?: boolean;
  readonly storage?: boolean;
  readonly schema?: unknown;
}

const versionsOf = (crd: Record<string, unknown>): CrdVersion[] => ((crd.spec as { versions?: CrdVersion[] } | undefined)?.versions ?? []);

/** The name of a CRD manifest (`metadata.name`, `<plural>.<group>`). */
export function crdName(crd: Record<string, unknown>): string {
  return String((crd.metadata as { name?: unknown } | undefined)?.name ?? '');
}

/** Compares the new CRD manifest with the installed object (undefined: not installed). */
export function compareCrd(next: Record<string, unknown>, installed: Record<string, unknown> | undefined): CrdComparison {
  const name = crdName(next);
  if (installed === undefined) return { name, installed: false, versionsDropped: [], servedAdded: [], servedRemoved: [], schemaChanged: [], storedVersions: [] };
  const before = versionsOf(installed);
  const after = versionsOf(next);
  const stored = (installed.status as { storedVersions?: string[] } | undefined)?.storedVersions ?? [];
  const afterByName = new Map(after.map((v) => [v.name, v]));
  const beforeByName = new Map(before.map((v) => [v.name, v]));
  const versionsDropped = before.filter((v) => !afterByName.has(v.name)).map((v) => ({ name: v.name, stillStored: stored.includes(v.name) }));
  const served = (v: CrdVersion | undefined) => v !== undefined && v.served !== false;
  const servedAdded = after.filter((v) => served(v) && !served(beforeByName.get(v.name))).map((v) => v.name);
  const servedRemoved = before.filter((v) => served(v) && !served(afterByName.get(v.name))).map((v) => v.name);
  const storageBefore = before.find((v) => v.storage)?.name;
  const storageAfter = after.find((v) => v.storage)?.name;
  const schemaChanged = after.filter((v) => beforeByName.has(v.name) && canonicalJson(beforeByName.get(v.name)?.schema) !== canonicalJson(v.schema)).map((v) => v.name);
  const blocked = versionsDropped.filter((v) => v.stillStored).map((v) => v.name);
  return {
    name, installed: true, versionsDropped, servedAdded, servedRemoved, schemaChanged, storedVersions: stored,
    ...(storageBefore !== undefined && storageAfter !== undefined && storageBefore !== storageAfter ? { storageVersion: { from: storageBefore, to: storageAfter } } : {}),
    ...(blocked.length > 0
      ? { migration: `${blocked.join(', ')} still in status.storedVersions: the API server refuses this CRD until the running release's storage-version migration rewrites every ${name} object in ${storageBefore ?? 'the storage version'} and trims storedVersions (its Event StorageVersionMigrated); deploy the new release after it` }
      : {}),
  };
}

/** True when the comparison shows anything the upgrade changes. */
export function crdChanges(comparison: CrdComparison): boolean {
  return !comparison.installed || comparison.versionsDropped.length + comparison.servedAdded.length + comparison.servedRemoved.length + comparison.schemaChanged.length > 0 || comparison.storageVersion !== undefined;
}
