/**
 * Object names: the DNS-1123 / DNS-1035 rules of Kubernetes and which rule (and length) applies to a
 * child's kind. Each check returns the problem as text, in the API server's wording, or undefined.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
 */
import { kindKey, type ResolvedKind } from '../kinds.js';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Checks a DNS-1123 subdomain (≤ 253): the rule for most object names. Returns the problem or undefined. */
export function dns1123SubdomainProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > 253) return `must be no more than 253 characters (got ${name.length})`;
  if (!DNS1123_SUBDOMAIN.test(name)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Checks a DNS-1123 label (≤ 63): namespaces, and the names of the kinds {@link nameRuleFor} lists. */
export function dns1123LabelProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > 63) return `must be no more than 63 characters (got ${name.length})`;
  if (!DNS1123_LABEL.test(name)) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** How names of a kind are validated. */
export interface NameRule {
  /** `dns1123-subdomain` (most kinds), `dns1123-label`, `dns1035-label` (Service: starts with a letter) or `path-segment` (RBAC). */
  readonly format: 'dns1123-subdomain' | 'dns1123-label' | 'dns1035-label' | 'path-segment';
  readonly maxLength: number;
}

const LABEL_KINDS = new Set([kindKey({ group: '', kind: 'Namespace' }), kindKey({ group: 'batch', kind: 'Job' })]);
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/**
 * The name rule of a kind:
 * - Service: DNS-1035 label, ≤ 63 (its name becomes a DNS label and env var prefix);
 * - Namespace: DNS-1123 label, ≤ 63;
 * - Job: DNS-1123 label, ≤ 63. The API server accepts a DNS-1123 subdomain of ≤ 63 (the name becomes the
 *   `batch.kubernetes.io/job-name` label value), but an Indexed Job's pods get the hostname
 *   `<name>-<index>`, which must be a DNS label, so we refuse dots;
 * - StatefulSet: DNS-1123 label, ≤ 52: the API server accepts 63, but the controller labels every pod
 *   `controller-revision-hash: <name>-<10-character hash>`, a label value (≤ 63), so with a longer name
 *   no pod is ever created (kubernetes/kubernetes#64023);
 * - CronJob: DNS-1123 subdomain, ≤ 52 (the controller appends an 11-character suffix for its Jobs);
 * - RBAC kinds: path segment (no `/` or `%`, not `.` or `..`), ≤ 253 (the API server sets no length
 *   limit; we keep the usual one);
 * - everything else: DNS-1123 subdomain, ≤ 253.
 *
 * test/integration/server-limits-differential.test.ts checks each rule against the API server's verdict
 * on generated names.
 */
export function nameRuleFor(kind: Pick<ResolvedKind, 'group' | 'kind'>): NameRule {
  if (kind.group === '' && kind.kind === 'Service') return { format: 'dns1035-label', maxLength: 63 };
  if (kind.group === 'apps' && kind.kind === 'StatefulSet') return { format: 'dns1123-label', maxLength: 52 };
  if (LABEL_KINDS.has(kindKey(kind))) return { format: 'dns1123-label', maxLength: 63 };
  if (kind.group === 'batch' && kind.kind === 'CronJob') return { format: 'dns1123-subdomain', maxLength: 52 };
  if (kind.group === RBAC_GROUP) return { format: 'path-segment', maxLength: 253 };
  return { format: 'dns1123-subdomain', maxLength: 253 };
}

/** Returns why `name` is invalid under `rule`, or undefined. */
export function nameProblem(name: string, rule: NameRule): string | undefined {
  switch (rule.format) {
    case 'dns1035-label':
      if (name.length > rule.maxLength) return `must be no more than ${rule.maxLength} characters (got ${name.length})`;
      if (!/^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
        return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
      }
      return undefined;
    case 'dns1123-label': {
      const problem = dns1123LabelProblem(name);
      if (problem) return problem;
      return name.length > rule.maxLength ? `must be no more than ${rule.maxLength} characters (got ${name.length})` : undefined;
    }
    case 'path-segment':
      if (name === '' || name === '.' || name === '..') return 'may not be empty, "." or ".."';
      if (/[/%]/.test(name)) return 'may not contain "/" or "%"';
      return name.length > rule.maxLength ? `must be no more than ${rule.maxLength} characters (got ${name.length})` : undefined;
    default: {
      const problem = dns1123SubdomainProblem(name);
      if (problem) return problem;
      return name.length > rule.maxLength ? `must be no more than ${rule.maxLength} characters (got ${name.length})` : undefined;
    }
  }
}

/** Why `kind` can't be a custom resource's kind (CamelCase, `[A-Z][A-Za-z0-9]*`), or undefined. */
export function kindNameProblem(kind: string): string | undefined {
  return /^[A-Z][A-Za-z0-9]*$/.test(kind) ? undefined : 'must be CamelCase ([A-Z][A-Za-z0-9]*), e.g. WebApp';
}

/**
 * Why `group` can't be a custom resource's API group (a DNS subdomain with at least one dot, as the CRD
 * `spec.group` requires), or undefined.
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#create-a-customresourcedefinition
 */
export function apiGroupProblem(group: string): string | undefined {
  const problem = dns1123SubdomainProblem(group);
  if (problem !== undefined) return problem;
  return group.includes('.') ? undefined : 'must be a DNS subdomain with at least one dot, e.g. apps.example.com';
}

/**
 * Why `version` can't be an API version (`v1`, `v1beta1`, `v1alpha2`: the forms Kubernetes sorts by
 * stability), or undefined.
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#version-priority
 */
export function apiVersionProblem(version: string): string | undefined {
  return /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/.test(version) ? undefined : 'must look like v1, v1beta1 or v1alpha2';
}
