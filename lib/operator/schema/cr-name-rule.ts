/**
 * Which names a custom resource of an operator may have: the CRD refuses the others at creation (its
 * schema restricts `metadata.name`), and offline validation refuses the same ones.
 *
 * Why: the API server accepts any DNS-1123 subdomain (dots, a leading digit, up to 253 characters) as a
 * CR's name, but the children that render names after the CR often cannot carry it. A Service named like
 * its CR must be a DNS-1035 label of at most 63 characters. Without the rule, such a CR is accepted and
 * then stalls with a render error about the Service; with it, `kubectl apply` says at once:
 * `metadata.name: Invalid value: "a.b": ...`.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/names/
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
 *   (restrictions on `metadata.name` and `metadata.generateName` are the only ones allowed on metadata)
 */
import { nameProblem } from './names.js';
import type { JSONSchemaProps } from './structural-schema.js';

/** The rule for the names of an operator's custom resources. */
export interface CrNameRule {
  /**
   * `dns1035-label`: lowercase alphanumerics and `-`, starting with a letter (the rule of Service names);
   * `dns1123-label`: the same, a leading digit allowed; `dns1123-subdomain`: dots allowed too (the API
   * server's own rule for every CR).
   */
  readonly format: 'dns1035-label' | 'dns1123-label' | 'dns1123-subdomain';
  /** Longest name, in characters: 1 to 253, at most 63 for the label formats. */
  readonly maxLength: number;
}

/**
 * A DNS-1035 label of at most 63 characters: the strictest name a child named after its CR commonly
 * needs (a Service; the examples' Services are named so). Relax it with the Operator's `crNameRule`,
 * e.g. `{ format: 'dns1123-subdomain', maxLength: 253 }` for an operator whose children never carry the
 * CR's name.
 */
export const DEFAULT_CR_NAME_RULE: CrNameRule = { format: 'dns1035-label', maxLength: 63 };

const PATTERNS: Record<Exclude<CrNameRule['format'], 'dns1123-subdomain'>, string> = {
  'dns1035-label': '^[a-z]([-a-z0-9]*[a-z0-9])?$',
  'dns1123-label': '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
};

/** Why `rule` itself is unusable (a length outside its format's bounds), or undefined. */
export function crNameRuleProblem(rule: CrNameRule): string | undefined {
  const most = rule.format === 'dns1123-subdomain' ? 253 : 63;
  if (!Number.isInteger(rule.maxLength) || rule.maxLength < 1 || rule.maxLength > most) {
    return `crNameRule.maxLength must be a whole number from 1 to ${most} for ${rule.format} (got ${rule.maxLength})`;
  }
  return undefined;
}

/** True when the rule adds nothing to the API server's own (a DNS-1123 subdomain of at most 253). */
function isServerRule(rule: CrNameRule): boolean {
  return rule.format === 'dns1123-subdomain' && rule.maxLength >= 253;
}

/** `a DNS-1035 label of at most 63 characters`. */
function describeRule(rule: CrNameRule): string {
  const what = { 'dns1035-label': 'a DNS-1035 label', 'dns1123-label': 'a DNS-1123 label', 'dns1123-subdomain': 'a DNS-1123 subdomain' }[rule.format];
  return `${what} of at most ${rule.maxLength} characters`;
}

/** The message offline validation gives for a name the rule refuses. */
export function crNameRuleMessage(rule: CrNameRule): string {
  return `must be ${describeRule(rule)}, because the operator's children carry the name (the Operator's crNameRule)`;
}

/**
 * The schema of `metadata` for the root of the CRD's schema, or undefined when `rule` is the API
 * server's own. A CRD may restrict `metadata.name` (and nothing else of metadata) with `maxLength` and
 * `pattern`; the server then reports `metadata.name: Invalid value: "a.b": ...` at creation.
 * (A root CEL rule with `fieldPath: .metadata.name` is refused: "must be a valid path".)
 */
export function crNameSchema(rule: CrNameRule): JSONSchemaProps | undefined {
  if (isServerRule(rule)) return undefined;
  const name: JSONSchemaProps = { type: 'string', maxLength: rule.maxLength };
  if (rule.format !== 'dns1123-subdomain') name.pattern = PATTERNS[rule.format];
  return { type: 'object', properties: { name } };
}

/** Why `name` breaks `rule` ({@link crNameRuleMessage}), or undefined. */
export function crNameProblem(name: string, rule: CrNameRule): string | undefined {
  if (isServerRule(rule)) return undefined;
  return nameProblem(name, rule) === undefined ? undefined : crNameRuleMessage(rule);
}
