/**
 * The cdk8s app that `cdk8s synth` (`npm run synth`) runs: every operator of operators/index.ts in one
 * App, written to `$CDK8S_OUTDIR` (cdk8s.yaml: `dist`) as one `<operatorName>.k8s.yaml` per operator,
 * holding everything the operator's construct synthesizes (CRD, RBAC, Deployment …).
 *
 * The files are written here rather than by `App.synth()` for two reasons:
 * - one file per operator whatever charts the Operator construct uses inside (cdk8s names files after
 *   charts, and nested charts would get hashed names);
 * - quoting: cdk8s writes YAML 1.1 but leaves strings such as `0o17` plain, which YAML 1.2 readers
 *   and Go's sigs.k8s.io/yaml read as numbers; {@link stringifyManifests} quotes every string that some
 *   reader would misread.
 * Output is deterministic: the same sources give byte-identical files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Chart, Names } from 'cdk8s';
import type { Construct, IConstruct } from 'constructs';
import { stringifyManifests } from '../lib/operator/manifests/manifest-yaml.js';
import type { Operator } from '../lib/operator/operator.js';
import { addOperators } from '../operators/index.js';

/** Synthesizes every operator in a fresh App; returns file name → YAML, in operator order. */
export function synthesize(add: (scope: Construct) => Operator[] = addOperators): Map<string, string> {
  const app = new App();
  const operators = add(app);

  const errors = app.node.findAll().flatMap((construct) => construct.node.validate().map((error) => `${construct.node.path}: ${error}`));
  if (errors.length > 0) throw new Error(`synthesis failed:\n  ${errors.join('\n  ')}`);

  const files = new Map<string, string>();
  const charts = app.charts; // dependency order
  const claimed = new Set<Chart>();
  for (const operator of operators) {
    const own = charts.filter((chart) => chart === operator || isUnder(chart, operator));
    own.forEach((chart) => claimed.add(chart));
    files.set(`${operator.operatorName}.k8s.yaml`, stringifyManifests(own.flatMap((chart) => chart.toJson())));
  }
  for (const chart of charts.filter((c) => !claimed.has(c))) {
    files.set(`${Names.toDnsLabel(chart)}.k8s.yaml`, stringifyManifests(chart.toJson()));
  }
  return files;
}

/** Writes {@link synthesize}'s files into `outdir`; returns their paths. */
export function writeDist(outdir: string): string[] {
  mkdirSync(outdir, { recursive: true });
  return [...synthesize()].map(([file, yaml]) => {
    const path = join(outdir, file);
    writeFileSync(path, yaml);
    return path;
  });
}

function isUnder(construct: IConstruct, ancestor: IConstruct): boolean {
  return construct.node.scopes.includes(ancestor);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeDist(process.env.CDK8S_OUTDIR ?? 'dist');
}
