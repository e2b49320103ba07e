/**
 * Offline checks of the two selector languages a list or watch takes as query parameters, so that a bad
 * selector in a declaration is refused at synth (construct) time with the field path and the reason,
 * instead of an informer whose list the API server answers with 400 at run time.
 *
 * Both were checked against kube-apiserver's answers to lists with these query parameters (test cases in
 * test/operator/related-scope.test.ts).
 *
 * - Label selectors (apimachinery `labels.Parse`): comma-separated requirements, each `key`, `!key`,
 *   `key=value`, `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n` or `key<n`
 *   (n an integer); keys are qualified names (`[prefix/]name`), values label values. The empty string
 *   selects everything.
 * - Field selectors (apimachinery `fields.ParseSelector`): comma-separated `key=value`, `key==value` or
 *   `key!=value` (values may be empty; `\,` `\=` `\!` `\\` are escapes; `=` must be escaped). Which keys a kind supports (every kind:
 *   `metadata.name`, `metadata.namespace`; Pods also `spec.nodeName`, `status.phase`, …) is the API
 *   server's to say: an unsupported one is refused by its list (400 `field label not supported`).
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/field-selectors/
 */
import { labelValueProblem, qualifiedNameProblem } from './metadata-limits.js';

/** Why `text` is not a valid Kubernetes label selector (string form), or undefined when it is. */
export function labelSelectorProblem(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  for (const requirement of splitOutsideParentheses(text)) {
    const problem = labelRequirementProblem(requirement.trim());
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Why `text` is not a valid Kubernetes field selector, or undefined when it is. */
export function fieldSelectorProblem(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  for (const term of splitUnescaped(text)) {
    const match = /^([^=!]*?)(==|!=|=)(.*)$/s.exec(term);
    if (!match) return `${JSON.stringify(term)}: a field selector term must be key=value, key==value or key!=value`;
    const key = match[1].trim();
    if (key === '') return `${JSON.stringify(term)}: the field is empty`;
    if (!/^[A-Za-z0-9._/-]+$/.test(key)) return `${JSON.stringify(term)}: field ${JSON.stringify(key)} must be a dotted field path such as status.phase`;
    const problem = escapedValueProblem(match[3]);
    if (problem !== undefined) return `${JSON.stringify(term)}: ${problem}`;
  }
  return undefined;
}

/** A field selector value may hold `\\`, `\,`, `\=` and `\!` (escapes) and no unescaped `=` (`fields.UnescapeValue`). */
function escapedValueProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '\\') {
      if (!['\\', ',', '=', '!'].includes(value[i + 1] ?? '')) return `invalid escape sequence in value ${JSON.stringify(value)} (the escapes are \\\\ \\, \\= \\!)`;
      i++;
    } else if (char === '=') return `unescaped "=" in value ${JSON.stringify(value)} (one operator per term; escape it as \\=)`;
  }
  return undefined;
}

function labelRequirementProblem(requirement: string): string | undefined {
  if (requirement === '') return 'an empty requirement (a stray comma)';
  const quoted = JSON.stringify(requirement);
  const set = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/s.exec(requirement);
  if (set) {
    // `key in ()` is accepted by the API server (it matches nothing), so it is not refused here either.
    const values = set[3].trim() === '' ? [] : set[3].split(',').map((v) => v.trim());
    return keyProblem(set[1], quoted) ?? values.map((v) => valueProblem(v, quoted)).find((p) => p !== undefined);
  }
  if (/\s(in|notin)\s/.test(` ${requirement} `) && /[()]/.test(requirement)) return `${quoted}: a set requirement is key in (v1,v2) or key notin (v1,v2)`;
  const exists = /^(!?)\s*([^=!<>()\s,]+)$/.exec(requirement);
  if (exists) return keyProblem(exists[2], quoted);
  const compare = /^([^=!<>()\s,]+)\s*(==|!=|=|>|<)\s*(.*)$/s.exec(requirement);
  if (!compare) return `${quoted}: a requirement is key, !key, key=value, key!=value, key in (…), key notin (…), key>n or key<n`;
  const [, key, operator, value] = compare;
  const problem = keyProblem(key, quoted);
  if (problem !== undefined) return problem;
  if (operator === '>' || operator === '<') {
    return /^-?\d+$/.test(value.trim()) ? undefined : `${quoted}: '${operator}' needs an integer value`;
  }
  return valueProblem(value.trim(), quoted);
}

function keyProblem(key: string, quoted: string): string | undefined {
  const problem = qualifiedNameProblem(key);
  return problem === undefined ? undefined : `${quoted}: key ${JSON.stringify(key)}: ${problem}`;
}

function valueProblem(value: string, quoted: string): string | undefined {
  const problem = labelValueProblem(value);
  return problem === undefined ? undefined : `${quoted}: value ${JSON.stringify(value)}: ${problem}`;
}

/** Splits at commas that are not inside `( … )`. */
function splitOutsideParentheses(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

/** Splits at commas not escaped by a backslash. */
function splitUnescaped(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\' && i + 1 < text.length) {
      current += char + text[i + 1];
      i++;
    } else if (char === ',') {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}
