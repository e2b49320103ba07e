/**
 * The API server's limits on labels and annotations (apimachinery `ValidateLabels`,
 * `ValidateAnnotations`), checked offline. Each check returns the problem as text, or undefined.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations/#syntax-and-character-set
 */
import { dns1123SubdomainProblem } from './names.js';

/** Longest label value: 63 characters (all ASCII, so also bytes). */
export const LABEL_VALUE_MAX_LENGTH = 63;
/** Largest total size of an object's annotations: 256 KiB, the sum of every key's and value's UTF-8 bytes. */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why `value` is not a label value (≤ 63 of `[A-Za-z0-9._-]`, alphanumeric at both ends, may be empty). */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > LABEL_VALUE_MAX_LENGTH) return `must be no more than ${LABEL_VALUE_MAX_LENGTH} characters (got ${value.length})`;
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/** Why `key` is not a label or annotation key: `[prefix/]name`, prefix a DNS-1123 subdomain, name ≤ 63 of `[A-Za-z0-9._-]`. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "a qualified name must have at most one '/'";
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    if (parts[0].length === 0) return 'prefix part must be non-empty';
    const prefix = dns1123SubdomainProblem(parts[0]);
    if (prefix) return `prefix part ${prefix}`;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return `name part must be no more than 63 characters (got ${name.length})`;
  if (!QUALIFIED_NAME_PART.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

/**
 * Why `annotations` are too large: their keys' and values' UTF-8 bytes add up to more than
 * {@link ANNOTATIONS_MAX_BYTES} minus `reservedBytes` (room kept for annotations added later, e.g. the
 * runtime's desired-hash annotation).
 *
 * @param reservedBytes bytes kept free; default 0: the API server's whole limit
 */
export function annotationsSizeProblem(annotations: Readonly<Record<string, string>>, reservedBytes = 0): string | undefined {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) total += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(String(value), 'utf8');
  const max = ANNOTATIONS_MAX_BYTES - reservedBytes;
  return total > max ? `may not be more than ${max} bytes in total (got ${total})` : undefined;
}

/**
 * Every label and annotation problem of `metadata`, as `metadata.labels["key"]: <problem>` strings.
 *
 * @param reservedAnnotationBytes annotation bytes kept free, see {@link annotationsSizeProblem}; default 0
 */
export function metadataProblems(metadata: { labels?: Readonly<Record<string, unknown>>; annotations?: Readonly<Record<string, unknown>> }, reservedAnnotationBytes = 0): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(metadata.labels ?? {})) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) problems.push(`metadata.labels: key ${JSON.stringify(key)}: ${keyProblem}`);
    const valueProblem = typeof value === 'string' ? labelValueProblem(value) : 'must be a string';
    if (valueProblem) problems.push(`metadata.labels[${JSON.stringify(key)}]: value ${JSON.stringify(value)}: ${valueProblem}`);
  }
  const annotations = metadata.annotations ?? {};
  for (const [key, value] of Object.entries(annotations)) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) problems.push(`metadata.annotations: key ${JSON.stringify(key)}: ${keyProblem}`);
    if (typeof value !== 'string') problems.push(`metadata.annotations[${JSON.stringify(key)}]: must be a string`);
  }
  const size = annotationsSizeProblem(annotations as Record<string, string>, reservedAnnotationBytes);
  if (size) problems.push(`metadata.annotations: ${size}`);
  return problems;
}
