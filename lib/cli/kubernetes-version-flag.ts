/**
 * `--kubernetes-version MINOR` (`env up`): which Kubernetes of the tested range the local control plane
 * runs. The range and why its oldest is what it is: docs/reference/kubernetes-versions.md; the minors
 * come from testedKubernetesMinors (lib/testing/control-plane-release.ts).
 */
import { InvalidArgumentError } from 'commander';
import { testedKubernetesMinor, testedKubernetesMinors } from '../testing/control-plane-release.js';

/** `--kubernetes-version`'s help text, naming the tested minors (`1.37 (default), 1.35`). */
export function kubernetesVersionHelp(): string {
  const [newest, ...older] = testedKubernetesMinors();
  return `Kubernetes minor of the control plane: ${[`${newest} (default)`, ...older].join(', ')}; its binaries come from the cache, a download or a Go build as without it`;
}

/**
 * Parses `--kubernetes-version`: `1.35`, `v1.35`, or the pinned patch (`1.35.4`) → `1.35`.
 * @throws InvalidArgumentError naming the tested minors for any other value
 */
export function parseKubernetesVersion(value: string): string {
  try {
    return testedKubernetesMinor(value)!;
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}
