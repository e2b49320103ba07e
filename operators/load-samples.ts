import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { CustomResource, KubeResource } from 'cdk8s-operator-sdk';

/**
 * Reads the objects in a sample file that sits next to an operator (`new URL('./sample.yaml',
 * import.meta.url)`), so the same YAML serves as documentation, `kubectl apply -f` input and the
 * operator's `examples`: its custom resources, and beside them the related objects they reference (a
 * ConfigMap). Read once, when the operator is constructed; render() never touches the disk.
 *
 * @throws Error naming the file when it doesn't parse or holds no object.
 */
export function loadSamples<Spec>(file: URL): (CustomResource<Spec> | KubeResource)[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const samples: (CustomResource<Spec> | KubeResource)[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new Error(`${file.pathname}: ${doc.errors[0].message}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new Error(`${file.pathname}: a sample must be a mapping (a custom resource or an object it references)`);
    }
    samples.push(value as CustomResource<Spec>);
  }
  if (samples.length === 0) throw new Error(`${file.pathname}: no custom resource in the file`);
  return samples;
}
