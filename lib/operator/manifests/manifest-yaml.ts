/**
 * Manifests as YAML text: the one serializer for what `cdk8s synth` writes (synth/main.ts) and what
 * `cdk8s-operator render` prints.
 *
 * Why not cdk8s's own `Yaml.stringify`: it writes YAML 1.1 but leaves strings such as `0o17` or `0x1F`
 * plain, which YAML 1.2 readers read back as numbers. Here every string that a YAML 1.1 or a YAML 1.2
 * reader would misread is double-quoted.
 *
 * @see https://yaml.org/type/bool.html (the YAML 1.1 booleans: yes/no/on/off/y/n …)
 * @see https://yaml.org/spec/1.2.2/#1032-tag-resolution (YAML 1.2 core schema)
 */
import { Document, parse, visit, type Tags } from 'yaml';

/**
 * Serializes manifests as a YAML stream (`---` between documents) that every common reader reads back
 * as the same values: a string that a YAML 1.1 reader (yes/no/on/off/y/n, 0755, 1_000, 12:30 …) or a
 * YAML 1.2 reader (0o17, 0x1F …) would take for another type is double-quoted, in keys and values.
 * Multi-line strings are written as block scalars. No line folding. No `%YAML` directive.
 *
 * Deterministic: the same input gives the same bytes (keys keep their insertion order).
 *
 * @param manifests plain JSON values, one YAML document each
 * @returns the stream, ending in a newline; '' for no manifests
 */
export function stringifyManifests(manifests: readonly unknown[]): string {
  return manifests.map((manifest) => {
    // Without the merge tag: it would write every `<<` plain, whatever the node's type.
    const doc = new Document(manifest, { version: '1.1', customTags: withoutMergeTag });
    visit(doc, {
      Scalar(_key, node) {
        if (typeof node.value === 'string' && isAmbiguous(node.value)) node.type = 'QUOTE_DOUBLE';
      },
    });
    return doc.toString({ lineWidth: 0 });
  }).join('---\n');
}

/**
 * Plain scalars that YAML 1.1 gives a type of their own, which a `parse` of the bare string doesn't
 * reveal: `<<` (the merge key: a plain `<<` key is applied as a merge by Go's yaml packages and PyYAML)
 * and `=` (the value type, which PyYAML resolves and then cannot construct).
 *
 * @see https://yaml.org/type/merge.html
 * @see https://yaml.org/type/value.html
 */
const YAML_11_SPECIAL = new Set(['<<', '=']);

function withoutMergeTag(tags: Tags): Tags {
  return tags.filter((tag) => tag !== 'merge' && (typeof tag === 'string' || tag.tag !== 'tag:yaml.org,2002:merge'));
}

/** A single-line string that some YAML reader would not read back as the same string when unquoted. */
function isAmbiguous(value: string): boolean {
  if (value.includes('\n')) return false; // written as a block scalar, always a string
  if (YAML_11_SPECIAL.has(value)) return true;
  for (const version of ['1.1', '1.2'] as const) {
    try {
      if (parse(value, { version }) !== value) return true;
    } catch {
      return true;
    }
  }
  return false;
}
