/**
 * The pure parts of `cdk8s-operator package helm`: image splitting, chart naming and metadata checks,
 * the values schema (zod) against good and bad values, and the command's exit codes for bad flags.
 * Helm itself runs on the generated charts in test/integration/helm-chart.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';
import { runPackageHelm } from '../../lib/cli/package-helm-command.js';
import { chartMetadataProblems, chartNameOf, helmChartFiles, synthesizedObjects } from '../../lib/package/helm/helm-chart.js';
import { chartValuesJsonSchema, operatorValueDefaults, operatorValuesSchema, splitImage } from '../../lib/package/helm/operator-values.js';
import { addOperators } from '../../operators/index.js';

const REPO = new URL('../..', import.meta.url).pathname;

describe('splitImage', () => {
  test.each([
    ['memcached', { repository: 'memcached', tag: '', digest: '' }],
    ['memcached:1.6', { repository: 'memcached', tag: '1.6', digest: '' }],
    ['registry.example.com:5000/team/op:0.1.0', { repository: 'registry.example.com:5000/team/op', tag: '0.1.0', digest: '' }],
    ['registry.example.com:5000/team/op', { repository: 'registry.example.com:5000/team/op', tag: '', digest: '' }],
    [`op:1.0@sha256:${'a'.repeat(64)}`, { repository: 'op', tag: '1.0', digest: `sha256:${'a'.repeat(64)}` }],
  ])('GIVEN %s WHEN split THEN repository, tag and digest are as Helm charts spell them', (image, expected) => {
    expect(splitImage(image)).toEqual(expected);
  });
});

describe('chart metadata', () => {
  test('GIVEN package names WHEN turned into chart names THEN the scope is dropped and the name is lowercase', () => {
    expect(chartNameOf('@team/Memcached-Operator')).toBe('memcached-operator');
    expect(chartNameOf('my_ops')).toBe('my-ops');
  });

  test('GIVEN a version that is not SemVer 2 and a bad name WHEN checked THEN each problem names its field', () => {
    expect(chartMetadataProblems({ name: 'Ops', version: '1.0', appVersion: '1.0' })).toEqual([
      'chart name "Ops" must be lowercase letters, digits and dashes (Helm\'s chart naming)',
      'chart version "1.0" must be SemVer 2, e.g. 1.2.3 (Helm requires it)',
    ]);
    expect(chartMetadataProblems({ name: 'ops', version: '1.0.0-rc.1+build.5', appVersion: 'v1' })).toEqual([]);
  });
});

describe('values', () => {
  const [memcached, app] = addOperators(new App());
  const defaults = operatorValueDefaults(app, synthesizedObjects(app));

  test('GIVEN the app operator WHEN its defaults are read THEN they are what synth put in its Deployment, in the release namespace', () => {
    expect(defaults).toMatchObject({
      image: { repository: 'cdk8s-operator-sdk-examples', tag: '0.1.0', digest: '', pullPolicy: 'IfNotPresent' },
      replicas: 1,
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
      namespace: '',
      createNamespace: false,
      metrics: { port: 8443 },
      probes: { port: 8081 },
    });
    expect(defaults).not.toHaveProperty('webhook');
  });

  test('GIVEN bad values WHEN parsed by the schema THEN each fails at its field path', () => {
    const schema = operatorValuesSchema({ canWatchNamespace: true });
    const failure = (values: unknown): string[] => {
      const result = schema.safeParse(values);
      return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
    };
    expect(failure(defaults)).toEqual([]);
    expect(failure({ ...defaults, replicas: 0 })).toEqual(['replicas']);
    expect(failure({ ...defaults, resources: { limits: { memory: 'lots' } } })).toEqual(['resources.limits.memory']);
    expect(failure({ ...defaults, namespace: 'Not_A_Label' })).toEqual(['namespace']);
    expect(failure({ ...defaults, extra: true })).toEqual(['']);
  });

  test('GIVEN an operator with webhooks WHEN its JSON schema is generated THEN namespace and certificates are fixed to the synthesized ones', () => {
    const schema = chartValuesJsonSchema([{ name: 'memcached-operator', limits: { fixedNamespace: memcached.operatorNamespace, canWatchNamespace: true, webhookCertificates: 'self-managed' } }]) as any;
    const properties = schema.properties.operators.properties['memcached-operator'].properties;
    expect(properties.namespace.anyOf.map((a: { const: string }) => a.const)).toEqual(['', 'memcached-operator-system']);
    expect(properties.webhook.properties.certificates.const).toBe('self-managed');
    expect(properties.replicas).toMatchObject({ type: 'integer', minimum: 1 });
  });

  test('GIVEN the examples WHEN the chart files are made THEN the CRDs are in crds/ and each operator has templates of its own', () => {
    const files = helmChartFiles(addOperators(new App()), { name: 'examples', version: '0.1.0', appVersion: '0.1.0' });
    expect([...files.keys()].filter((f) => f.startsWith('crds/')).sort()).toEqual([
      'crds/apps.apps.example.com.yaml', 'crds/databases.databases.example.com.yaml', 'crds/memcacheds.cache.example.com.yaml',
    ]);
    expect(files.get('templates/memcached-operator/deployment-memcached-operator.yaml')).toContain('{{- $op := index .Values.operators "memcached-operator" }}');
    expect(files.get('Chart.yaml')).toContain('name: examples');
    expect(files.get('templates/memcached-operator/deployment-memcached-operator.yaml')).toContain('{{- if ne $ns "memcached-operator-system" }}{{- fail');
    expect(files.get('values.yaml')).not.toMatch(/^image:/m);
  });

  test('GIVEN one operator WHEN the chart files are made THEN it takes a top-level image, and its namespaced objects use the release namespace', () => {
    const [, app] = addOperators(new App());
    const files = helmChartFiles([app], { name: 'app', version: '0.1.0', appVersion: '0.1.0' });
    expect(files.get('values.yaml')).toMatch(/^image:\n {2}repository: ""\n {2}tag: ""\n/m);
    const schema = JSON.parse(files.get('values.schema.json')!);
    expect(Object.keys(schema.properties.image.properties).sort()).toEqual(['digest', 'pullPolicy', 'repository', 'tag']);
    const deployment = files.get('templates/app-operator/deployment-app-operator.yaml')!;
    expect(deployment).toContain('{{- $ns := $op.namespace | default .Release.Namespace }}');
    expect(deployment).toContain('namespace: {{ toJson $ns }}');
    expect(deployment).toContain('{{- with .Values.image }}');
    expect(files.get('templates/app-operator/clusterrolebinding-app-operator.yaml')).toMatch(/subjects:\n(.*\n)*? +namespace: \{\{ toJson \$ns \}\}/);
    expect(files.get('templates/app-operator/namespace-app-operator-system.yaml')).toContain('(merge (dict "helm.sh/resource-policy" "keep") $op.annotations)');
  });
});

describe('package helm flags', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'package-helm-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('GIVEN a chart version that is not SemVer WHEN package helm runs THEN it exits 2 naming it and writes nothing', async () => {
    const stderr: string[] = [];
    const code = await runPackageHelm({ out: join(dir, 'chart'), chartVersion: 'one' }, { cwd: REPO, stdout: () => {}, stderr: (t) => stderr.push(t) });
    expect(code).toBe(2);
    expect(stderr.join('')).toBe('error: chart version "one" must be SemVer 2, e.g. 1.2.3 (Helm requires it)\n');
  });

  test('GIVEN an unknown operator WHEN package helm runs THEN it exits 1 naming it', async () => {
    const stderr: string[] = [];
    const code = await runPackageHelm({ out: join(dir, 'chart'), operators: 'nope' }, { cwd: REPO, stdout: () => {}, stderr: (t) => stderr.push(t) });
    expect(code).toBe(1);
    expect(stderr.join('')).toContain('unknown operator(s) nope');
  });
});
