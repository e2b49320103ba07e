/**
 * A Helm chart (apiVersion v2) for the operators of an app, as files: `Chart.yaml`, `values.yaml`,
 * `values.schema.json`, `crds/` (each operator's CRDs, plain, as Helm installs them before the templates)
 * and `templates/<operatorName>/` (one template per other synthesized object, chart-templates.ts).
 *
 * Each operator goes into the release's namespace (`helm install -n NS`, `.Release.Namespace`) unless
 * its `namespace` value names one. At its default values, with `-n` naming the synthesized namespace
 * (and `createNamespace: true`), the chart renders exactly what `cdk8s synth` produces for the operators
 * (`helm template --include-crds`, object by object), the Namespace annotated `helm.sh/resource-policy:
 * keep`; the knobs and what they reach are in operator-values.ts and chart-templates.ts.
 *
 * Helm does not template or upgrade `crds/`: the CRDs are as synthesized, whatever the values (a
 * conversion webhook's Service namespace among them, which is why an operator with webhooks has a fixed
 * namespace).
 *
 * @see https://helm.sh/docs/topics/charts/
 * @see https://helm.sh/docs/chart_best_practices/custom_resource_definitions/
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Chart } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { stringifyManifests } from '../../operator/manifests/manifest-yaml.js';
import type { Operator } from '../../operator/operator.js';
import { operatorTemplates, type Manifest } from './chart-templates.js';
import { TOP_LEVEL_IMAGE_DEFAULTS, chartValuesJsonSchema, chartValuesSchema, operatorValueDefaults, operatorValueLimits, type OperatorValues } from './operator-values.js';

/** Chart.yaml's identity. */
export interface ChartMetadata {
  /** Chart name: lowercase letters, digits and dashes (Helm's convention), e.g. `memcached-operator`. */
  readonly name: string;
  /** Chart version, SemVer 2 (Helm requires it), e.g. `0.1.0`. */
  readonly version: string;
  /** Version of the app the chart deploys (free form), e.g. `0.1.0`. */
  readonly appVersion: string;
  /** One line. @default 'Operators built with cdk8s-operator-sdk: <names>' */
  readonly description?: string;
}

/** Chart metadata that Helm would refuse, as messages naming the field; empty when fine. */
export function chartMetadataProblems(metadata: ChartMetadata): string[] {
  const problems: string[] = [];
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(metadata.name)) problems.push(`chart name ${JSON.stringify(metadata.name)} must be lowercase letters, digits and dashes (Helm's chart naming)`);
  // SemVer 2.0.0, https://semver.org/#is-there-a-suggested-regular-expression-regex-to-check-a-semver-string
  if (!/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/.test(metadata.version)) {
    problems.push(`chart version ${JSON.stringify(metadata.version)} must be SemVer 2, e.g. 1.2.3 (Helm requires it)`);
  }
  if (metadata.appVersion.trim() === '') problems.push('appVersion must not be empty');
  return problems;
}

/** A chart name from an npm package name: `@team/memcached-operator` → `memcached-operator`. */
export function chartNameOf(packageName: string): string {
  return packageName.replace(/^@[^/]+\//, '').toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
}

/** The chart's files: path relative to the chart directory → content. */
export type ChartFiles = Map<string, string>;

/**
 * The synthesized objects of an operator: its own chart's and those of charts under it (as synth/main.ts).
 * @throws Error listing the construct validation errors, as synth/main.ts does
 */
export function synthesizedObjects(operator: Operator): Manifest[] {
  const isUnder = (construct: IConstruct): boolean => construct === operator || construct.node.scopes.includes(operator);
  const errors = operator.node.findAll().flatMap((construct) => construct.node.validate().map((error) => `${construct.node.path}: ${error}`));
  if (errors.length > 0) throw new Error(`synthesis failed:\n  ${errors.join('\n  ')}`);
  const charts = operator.node.root.node.findAll().filter((c): c is Chart => Chart.isChart(c) && isUnder(c));
  return charts.flatMap((chart) => chart.toJson() as Manifest[]);
}

/**
 * The chart of `operators` (at least one), as files.
 * @throws Error when the metadata is invalid (each problem named), an operator fails to synthesize, or
 *   a default value breaks the values schema (a bug: the message names the field)
 */
export function helmChartFiles(operators: readonly Operator[], metadata: ChartMetadata): ChartFiles {
  if (operators.length === 0) throw new Error('no operators to package');
  const problems = chartMetadataProblems(metadata);
  if (problems.length > 0) throw new Error(problems.join('; '));

  const files: ChartFiles = new Map();
  const values: Record<string, OperatorValues> = {};
  const entries: { name: string; limits: ReturnType<typeof operatorValueLimits> }[] = [];
  for (const operator of operators) {
    const objects = synthesizedObjects(operator);
    const defaults = operatorValueDefaults(operator, objects);
    values[operator.operatorName] = defaults;
    entries.push({ name: operator.operatorName, limits: operatorValueLimits(operator) });
    for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
      files.set(`crds/${crd.metadata.name}.yaml`, stringifyManifests([crd]));
    }
    for (const template of operatorTemplates({ operator, objects, defaults, single: operators.length === 1 })) files.set(`templates/${template.file}`, template.text);
  }

  const allValues = operators.length === 1 ? { image: { ...TOP_LEVEL_IMAGE_DEFAULTS }, operators: values } : { operators: values };
  const parsed = chartValuesSchema(entries).safeParse(allValues);
  if (!parsed.success) throw new Error(`the default values break the values schema: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);

  const names = operators.map((o) => o.operatorName);
  files.set('Chart.yaml', stringifyManifests([{
    apiVersion: 'v2',
    name: metadata.name,
    description: metadata.description ?? `Operators built with cdk8s-operator-sdk: ${names.join(', ')}`,
    type: 'application',
    version: metadata.version,
    appVersion: metadata.appVersion,
  }]));
  files.set('values.yaml', [
    '# Knobs of each operator, by operator name. Generated by `cdk8s-operator package helm` from what',
    '# `cdk8s synth` produces: at these defaults the chart renders exactly the synthesized objects.',
    '# values.schema.json lists every key and the values it accepts. Each operator goes into the',
    '# release\'s namespace (helm install -n NS --create-namespace) unless its `namespace` names one.',
    ...(operators.length === 1 ? [`# image.* (e.g. --set image.repository=… --set image.tag=…): each key set wins over operators.${names[0]}.image.*.`] : []),
    stringifyManifests([allValues]),
  ].join('\n'));
  files.set('values.schema.json', `${JSON.stringify(chartValuesJsonSchema(entries), null, 2)}\n`);
  return files;
}

/**
 * Writes the chart into `dir` (created if missing). `crds/` and `templates/` are wholly generated: they
 * are emptied first, so an operator or object removed since the last run leaves no stale file.
 * @returns the paths written, relative to `dir`
 */
export function writeHelmChart(dir: string, files: ChartFiles): string[] {
  for (const generated of ['crds', 'templates']) rmSync(join(dir, generated), { recursive: true, force: true });
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return [...files.keys()];
}
