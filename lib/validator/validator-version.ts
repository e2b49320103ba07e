/**
 * The Kubernetes version a validator file was built from, read from the Go build information inside it
 * (the `dep\tk8s.io/kubernetes\t<version>` line of its module list), without instantiating it: what
 * `cdk8s-operator --version` prints.
 */
import { readFileSync } from 'node:fs';

const MARKER = Buffer.from('\tk8s.io/kubernetes\t');

/** e.g. `v1.37.2`; undefined when the file holds no such line. @throws Error when the file cannot be read */
export function validatorFileKubernetesVersion(file: string): string | undefined {
  const bytes = readFileSync(file);
  const at = bytes.indexOf(MARKER);
  if (at < 0) return undefined;
  const start = at + MARKER.length;
  const end = bytes.indexOf('\t', start);
  const version = bytes.subarray(start, end < 0 ? start + 64 : end).toString('utf8');
  return /^v\d+\.\d+\.\d+[\w.+-]*$/.test(version) ? version : undefined;
}
