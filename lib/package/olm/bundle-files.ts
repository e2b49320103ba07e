/**
 * Writes an {@link OlmBundle} as a registry+v1 bundle directory:
 *
 * ```
 * DIR/manifests/<package>.clusterserviceversion.yaml, <group>_<plural>.yaml (CRDs), other manifests
 * DIR/metadata/annotations.yaml
 * DIR/bundle.Dockerfile   (FROM scratch, the annotations as LABELs, COPY manifests and metadata)
 * ```
 *
 * `manifests/` and `metadata/` are emptied first (files left from an earlier bundle would join it);
 * other files in DIR are left alone. YAML is written with {@link stringifyManifests}' quoting.
 *
 * @see https://github.com/operator-framework/operator-registry/blob/master/docs/design/operator-bundle.md
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { stringifyManifests } from '../../operator/manifests/manifest-yaml.js';
import type { OlmBundle } from './cluster-service-version.js';

/** Writes `bundle` into `dir` (created when missing); returns the paths written, relative to `dir`. */
export function writeOlmBundle(dir: string, bundle: OlmBundle): string[] {
  const written: string[] = [];
  for (const sub of ['manifests', 'metadata']) {
    rmSync(join(dir, sub), { recursive: true, force: true });
    mkdirSync(join(dir, sub), { recursive: true });
  }
  for (const [file, manifest] of bundle.manifests) {
    writeFileSync(join(dir, 'manifests', file), stringifyManifests([manifest]));
    written.push(join('manifests', file));
  }
  writeFileSync(join(dir, 'metadata', 'annotations.yaml'), stringify({ annotations: bundle.annotations }));
  written.push(join('metadata', 'annotations.yaml'));
  writeFileSync(join(dir, 'bundle.Dockerfile'), bundleDockerfile(bundle.annotations));
  written.push('bundle.Dockerfile');
  return written;
}

/** The bundle image's Dockerfile: an empty image holding the two directories, labelled with the annotations. */
export function bundleDockerfile(annotations: Readonly<Record<string, string>>): string {
  const labels = Object.entries(annotations).map(([key, value]) => `LABEL ${key}=${value}`);
  return ['FROM scratch', '', ...labels, '', 'COPY manifests /manifests/', 'COPY metadata /metadata/', ''].join('\n');
}
