import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { CustomResource } from 'cdk8s-operator-sdk';

/**
 * Reads the custom resources in a sample file that sits next to an operator (`new URL('./sample.yaml',
 * import.meta.url)`), so the same YAML serves as documentation, `kubectl apply -f` input and the
 * operator's `examples`. Read once, when the operator is constructed; render() never touches the disk.
 *
 * @throws Error naming the file when it doesn't parse or holds no object.
 */
export function loadSamples<Spec>(file: URL): CustomResource<Spec>[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const samples: CustomResource<Spec>[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      throw new Error(`${file.pathname}: ${doc.errors[0].message}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new Error(`${file.pathname}: a sample must be a mapping (a custom resource)`);
    }
    samples.push(value as CustomResource<Spec>);
  }
  if (samples.length === 0) throw new Error(`${file.pathname}: no custom resource in the file`);
  return samples;
}
