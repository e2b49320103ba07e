/**
 * A file-based catalog (github.com/operator-framework/operator-registry, docs/design/opm-tooling.md)
 * of OLM bundle directories, as `cdk8s-operator package olm` writes them, for a test that installs them
 * with OLM (olm-cluster.ts serves it with `opm serve`).
 *
 * Each bundle becomes a package of its own: an `olm.package`, one `olm.channel` holding the bundle, and
 * the `olm.bundle` that `opm render` makes of the directory. Rendered from a directory (not an image),
 * that entry has no image and carries every manifest inline as an `olm.bundle.object` property, so OLM
 * installs it without pulling anything (operator-lifecycle-manager pkg/controller/registry/resolver:
 * source_registry.go keeps the bundle when `BundlePath` is empty, step_resolver.go then calls
 * NewStepsFromBundle instead of starting an unpack Job).
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { runOpm, type OlmTools } from './olm.js';

/** An object as OLM's tests read it: a Kubernetes object with any fields. */
export type OlmObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [key: string]: any };

/** One bundle as it is in the catalog. */
export interface CatalogBundle {
  /** The bundle directory. */
  readonly dir: string;
  /** The OLM package (`opm render`'s, from the bundle's metadata/annotations.yaml). */
  readonly packageName: string;
  /** The bundle's ClusterServiceVersion, as written in its manifests/ directory. */
  readonly csv: OlmObject;
  /** The CSV's `metadata.name` (the bundle's name in the catalog). */
  readonly csvName: string;
  /** How many files the bundle's manifests/ directory holds. */
  readonly manifestCount: number;
  /** The `olm.bundle` entry `opm render` made of the bundle directory. */
  readonly catalogEntry: { readonly image: string; readonly properties: readonly { readonly type: string }[] };
}

/**
 * Renders each bundle directory with `opm render`, writes the catalog to `<catalogDir>/<package>/catalog.yaml`
 * (one package each, its bundle the only entry of `channel`, the package's default channel) and checks
 * the whole catalog with `opm validate`.
 *
 * @param channel the channel of every package; @default 'alpha': `package olm`'s default `--channels`
 * @throws Error when a bundle has no ClusterServiceVersion, or with opm's output when opm fails (a
 *   bundle it cannot read, a catalog it finds invalid)
 */
export async function writeFileBasedCatalog(tools: OlmTools, catalogDir: string, bundleDirs: readonly string[], channel = 'alpha'): Promise<CatalogBundle[]> {
  const bundles: CatalogBundle[] = [];
  await mkdir(catalogDir, { recursive: true });
  for (const dir of bundleDirs) {
    const manifests = await readdir(join(dir, 'manifests'));
    const csvFile = manifests.find((f) => f.endsWith('.clusterserviceversion.yaml'));
    if (!csvFile) throw new Error(`${dir}/manifests holds no *.clusterserviceversion.yaml (files: ${manifests.join(', ')})`);
    const csv = parse(await readFile(join(dir, 'manifests', csvFile), 'utf8')) as OlmObject;
    const rendered = parseAllDocuments(await runOpm(tools, ['render', dir, '--output', 'yaml'], catalogDir)).map((d) => d.toJS() as Record<string, any>);
    const catalogEntry = rendered.find((d) => d.schema === 'olm.bundle');
    if (!catalogEntry) throw new Error(`opm render ${dir} made no olm.bundle (schemas: ${rendered.map((d) => d.schema).join(', ')})`);
    const packageName = catalogEntry.package as string;
    bundles.push({ dir, packageName, csv, csvName: csv.metadata.name, manifestCount: manifests.length, catalogEntry: catalogEntry as CatalogBundle['catalogEntry'] });
    await mkdir(join(catalogDir, packageName), { recursive: true });
    await writeFile(join(catalogDir, packageName, 'catalog.yaml'), [
      { schema: 'olm.package', name: packageName, defaultChannel: channel },
      { schema: 'olm.channel', package: packageName, name: channel, entries: [{ name: csv.metadata.name }] },
      ...rendered,
    ].map((doc) => stringify(doc)).join('---\n'));
  }
  await runOpm(tools, ['validate', catalogDir], catalogDir);
  return bundles;
}
