/**
 * The construct side of the storage-version migration (the run side is
 * lib/runtime/startup/storage-version-migration.ts): which operators the runtime migrates, what RBAC that
 * needs, and what synth says about versions an operator retired.
 *
 * Safe order to retire a version (Kubernetes docs, "Versions in CustomResourceDefinitions" → "Upgrade
 * existing objects to a new stored version"; kubebuilder's multi-version tutorial asks the same):
 * 1. release N: the old version stays in `versions` (served, or `served: false`), storage is the new one;
 *    its operator's leader rewrites every stored object in the storage version and trims the CRD's
 *    `status.storedVersions` to it (Event `StorageVersionMigrated` regarding the CRD);
 * 2. release N+1: drop the version from `versions` and list it in `retiredVersions`.
 * Applying N+1's CRD before N's migration trimmed `status.storedVersions` is refused by the API server
 * (kube-apiserver 1.35: `status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions;
 * v1alpha1 was previously a storage version, and must remain in spec.versions until a storage migration
 * ensures no data remains persisted in v1alpha1 and removes v1alpha1 from status.storedVersions`).
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#upgrade-existing-objects-to-a-new-stored-version
 */

/** On the operator's own CRD (by name only): the migration reads its versions and storedVersions. */
export const CRD_READ_VERBS = ['get'] as const;
/** On the operator's own CRD's `status` subresource (by name only): the migration trims `storedVersions` with a PUT. */
export const CRD_STATUS_VERBS = ['update'] as const;
/** The API group of CustomResourceDefinitions. */
export const CRD_GROUP = 'apiextensions.k8s.io';

/** What decides whether an operator's runtime migrates stored versions (lib/operator's `Operator` satisfies it). */
export interface StorageVersionMigrationSubject {
  /** Every version of the kind, the hub first. @default one version */
  readonly versions?: readonly unknown[];
  /** The single namespace the operator watches. @default all namespaces */
  readonly watchNamespace?: string;
}

/**
 * True when the runtime's leader runs the storage-version migration for this operator: it has more than
 * one version (only then can objects be stored in a version that is not the storage version) and it
 * watches all namespaces (a namespaced Role can neither read a CRD nor list every object of the kind;
 * an operator that watches one namespace has to migrate with another tool, e.g.
 * kubernetes-sigs/kube-storage-version-migrator, before it drops a version).
 */
export function migratesStoredVersions(operator: StorageVersionMigrationSubject): boolean {
  return (operator.versions?.length ?? 1) > 1 && operator.watchNamespace === undefined;
}

/** What {@link retiredVersionProblems} and {@link retiredVersionWarnings} read. */
export interface RetiredVersionsInput {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  /** Versions declared now (hub and spokes). */
  readonly versions: readonly string[];
  /** `OperatorProps.retiredVersions`, as given. */
  readonly retiredVersions: readonly string[];
  /** The single namespace the operator watches (then no migration runs, and the warnings say so). @default all namespaces */
  readonly watchNamespace?: string;
}

/**
 * Problems with `retiredVersions`, one sentence each naming the field: a retired version that is still
 * declared, or listed twice, or not a version name.
 */
export function retiredVersionProblems(input: RetiredVersionsInput, nameProblem: (name: string) => string | undefined): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  input.retiredVersions.forEach((version, i) => {
    const at = `retiredVersions[${i}]`;
    const why = typeof version === 'string' ? nameProblem(version) : 'must be a version name';
    if (why !== undefined) problems.push(`${at} ${JSON.stringify(version)} ${why}`);
    if (input.versions.includes(version)) problems.push(`${at} ${JSON.stringify(version)} is still declared (the hub or in versions); a version is either served or retired`);
    if (seen.has(version)) problems.push(`${at} ${JSON.stringify(version)} is listed twice`);
    seen.add(version);
  });
  return problems;
}

/**
 * What synth warns about each retired version: the API server refuses this CRD while the cluster's CRD
 * still lists the version in `status.storedVersions`, which only a migration by the previous release
 * (or by hand) clears. Synth cannot see the cluster, so it names the check to make.
 */
export function retiredVersionWarnings(input: RetiredVersionsInput): string[] {
  const crd = `${input.plural}.${input.group}`;
  return input.retiredVersions.map((version) => {
    const how =
      input.watchNamespace === undefined
        ? `the previous release's operator (which still declared ${version}, with storage on another version) rewrites stored objects and trims it`
        : `this operator watches one namespace, so its runtime does not migrate: run kubernetes-sigs/kube-storage-version-migrator (or rewrite every object and trim status.storedVersions by hand)`;
    return (
      `${input.kind} ${input.group}/${version} is retired: the API server refuses this CustomResourceDefinition while ` +
      `status.storedVersions of ${crd} still lists ${version}; ${how}. Check before applying: ` +
      `kubectl get crd ${crd} -o jsonpath='{.status.storedVersions}'`
    );
  });
}

/** Metadata type under which the Operator records synth warnings on its construct node. */
export const SYNTH_WARNING_METADATA = 'cdk8s-operator-sdk/warning';
