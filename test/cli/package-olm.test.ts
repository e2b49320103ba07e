// `package olm` without the validators: the CSV mapping (buildOlmBundle) of the example operators and of
// a single-namespace test operator, the files written, the CSV fields from flags and package.json, and
// the command's behaviour when the validator program is missing. The validators themselves run in
// test/integration/package-olm.test.ts.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { parse } from 'yaml';
import { csvMetadata, runPackageOlm, type PackageOlmOptions } from '../../lib/cli/package-olm-command.js';
import type { Operator } from '../../lib/operator/operator.js';
import { bundleDockerfile, writeOlmBundle } from '../../lib/package/olm/bundle-files.js';
import { buildOlmBundle, installModes, OlmBundleError, schemaDescriptors, type CsvMetadata, type Manifest } from '../../lib/package/olm/cluster-service-version.js';
import { startWebhookServer } from '../../lib/runtime/webhook/webhook-server.js';
import { createCertificateAuthority, issueServingCertificate } from '../../lib/runtime/webhook/x509.js';
import { MemcachedOperator } from '../../operators/index.js';
import { FakeKubeClient } from '../support/fake-kube-client.js';
import { ScopedOperator } from './fixtures/olm-operators.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'package-olm-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const META: CsvMetadata = { packageName: 'pkg', version: '1.2.3', channels: ['stable'], provider: 'Example Inc.' };

function objectsOf(app: App, operator: Operator): Manifest[] {
  return app.charts.filter((c) => c === operator || c.node.scopes.includes(operator)).flatMap((c) => c.toJson() as Manifest[]);
}

function memcached() {
  const app = new App();
  const operator = new MemcachedOperator(app);
  return { operator, objects: objectsOf(app, operator) };
}

function scoped(options: { withStatefulSet?: boolean } = {}) {
  const app = new App();
  const operator = new ScopedOperator(app, options);
  return { operator, objects: objectsOf(app, operator) };
}

describe('buildOlmBundle: the example memcached operator (all namespaces, webhooks, two versions)', () => {
  const { operator, objects } = memcached();
  const bundle = buildOlmBundle(operator, objects, META);
  const spec = bundle.csv.spec as Record<string, any>;

  test('THEN the CSV is named <package>.v<version> and installs in all namespaces only', () => {
    expect(bundle.csv.metadata?.name).toBe('pkg.v1.2.3');
    expect(spec.installModes).toEqual([
      { type: 'OwnNamespace', supported: false }, { type: 'SingleNamespace', supported: false },
      { type: 'MultiNamespace', supported: false }, { type: 'AllNamespaces', supported: true },
    ]);
  });

  test('THEN the Deployment is the install strategy, without its namespace, its run serving the webhooks with the certificate OLM mounts', () => {
    const deployment = objects.find((o) => o.kind === 'Deployment')!;
    expect(spec.install.strategy).toBe('deployment');
    const expected = structuredClone(deployment.spec) as Record<string, any>;
    const args: string[] = expected.template.spec.containers[0].args;
    args.splice(args.indexOf('--webhook-bind-address=:9443') + 1, 0, '--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs');
    expect(spec.install.spec.deployments).toEqual([{ name: 'memcached-operator', label: deployment.metadata!.labels, spec: expected }]);
    expect((deployment.spec as any).template.spec.containers[0].args).not.toContainEqual(expect.stringMatching(/^--webhook-cert-dir/)); // synth's own is untouched
  });

  test('THEN the permissions hold no rule for a certificate of its own (its Secret, caBundle patches), but keep what the hooks read', () => {
    const rules = [...(spec.install.spec.permissions as any[]), ...(spec.install.spec.clusterPermissions as any[])].flatMap((p) => p.rules as any[]);
    expect(rules.filter((r) => r.resources.includes('secrets'))).toEqual([]);
    expect(rules.filter((r) => r.verbs.includes('patch') && r.apiGroups.some((g: string) => ['admissionregistration.k8s.io', 'apiextensions.k8s.io'].includes(g)))).toEqual([]);
    expect(rules).toContainEqual({ apiGroups: [''], resources: ['configmaps', 'services'], verbs: ['get'] });
  });

  test('THEN ClusterRoles bound to the service account are clusterPermissions, Roles bound to it permissions, and neither ships as a manifest', () => {
    const clusterRole = objects.find((o) => o.kind === 'ClusterRole' && o.metadata!.name === 'memcached-operator')!;
    const leaderElection = objects.find((o) => o.kind === 'Role' && o.metadata!.name === 'memcached-operator-leader-election')!;
    expect(spec.install.spec.clusterPermissions).toContainEqual({ serviceAccountName: 'memcached-operator', rules: clusterRole.rules });
    expect(spec.install.spec.permissions).toContainEqual({ serviceAccountName: 'memcached-operator', rules: leaderElection.rules });
    const shipped = [...bundle.manifests.values()];
    expect(shipped.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterServiceVersion', 'CustomResourceDefinition', 'Service']);
    // The one ClusterRole shipped is bound to no one here: the metrics reader, for scrapers.
    expect(shipped.find((o) => o.kind === 'ClusterRole')!.metadata!.name).toBe('memcached-operator-metrics-reader');
    expect(shipped.find((o) => o.kind === 'Service')!.metadata).not.toHaveProperty('namespace');
  });

  test('THEN the CRD is owned in each version, with descriptors from the schema descriptions', () => {
    const owned = spec.customresourcedefinitions.owned as Record<string, any>[];
    expect(owned.map((o) => [o.name, o.version, o.kind])).toEqual([
      ['memcacheds.cache.example.com', 'v1beta1', 'Memcached'], ['memcacheds.cache.example.com', 'v1alpha1', 'Memcached'],
    ]);
    expect(owned[0]!.specDescriptors).toEqual(expect.arrayContaining([
      { path: 'replicas', displayName: 'Replicas', description: 'Number of memcached pods (1..100).' },
      { path: 'cache.memoryMiB', displayName: 'Memory MiB', description: 'Item memory in MiB (memcached -m), 16..64.' },
    ]));
    expect(owned.every((o) => typeof o.description === 'string' && o.description.length > 0)).toBe(true);
    expect(bundle.manifests.get('cache.example.com_memcacheds.yaml')?.kind).toBe('CustomResourceDefinition');
  });

  test('THEN alm-examples holds the example in every served version, without a namespace', () => {
    const examples = JSON.parse((bundle.csv.metadata!.annotations as Record<string, string>)['alm-examples']!) as Manifest[];
    expect(examples.map((e) => e.apiVersion)).toEqual(['cache.example.com/v1beta1', 'cache.example.com/v1alpha1']);
    expect(examples[0]).toMatchObject({ kind: 'Memcached', metadata: { name: 'memcached-sample' }, spec: { replicas: 3 } });
    expect(examples[1]).toMatchObject({ spec: { size: 3 } });
    expect(examples[0]!.metadata).not.toHaveProperty('namespace');
  });

  test('THEN the admission and conversion webhooks are webhookdefinitions, and the webhook Service is left to OLM', () => {
    expect(spec.webhookdefinitions).toEqual([
      expect.objectContaining({ type: 'ValidatingAdmissionWebhook', deploymentName: 'memcached-operator', containerPort: 443, targetPort: 9443,
        webhookPath: '/validate-cache-example-com-v1beta1-memcached', sideEffects: 'None', admissionReviewVersions: ['v1'] }),
      expect.objectContaining({ type: 'MutatingAdmissionWebhook', webhookPath: '/mutate-cache-example-com-v1beta1-memcached', reinvocationPolicy: 'Never' }),
      expect.objectContaining({ type: 'ConversionWebhook', webhookPath: '/convert', conversionCRDs: ['memcacheds.cache.example.com'] }),
    ]);
    expect([...bundle.manifests.values()].some((o) => o.metadata?.name === 'memcached-operator-webhook')).toBe(false);
  });

  test('THEN the webhookdefinitions\' paths are exactly the paths the runtime\'s webhook server serves', async () => {
    const ca = createCertificateAuthority('paths-ca', { notAfter: new Date(Date.now() + 86_400_000) });
    const server = await startWebhookServer({ operators: [operator], client: new FakeKubeClient(), bindAddress: '127.0.0.1:0', certificate: issueServingCertificate(ca, ['127.0.0.1'], { notAfter: new Date(Date.now() + 86_400_000) }) });
    try {
      expect((spec.webhookdefinitions as any[]).map((d) => d.webhookPath).sort()).toEqual([...server.paths]);
    } finally {
      await server.close();
    }
  });

  test('THEN each admission webhookdefinition is the synthesized webhook (name, path, rules, policies), on the pod\'s webhook port', () => {
    const container = (objects.find((o) => o.kind === 'Deployment')!.spec as any).template.spec.containers[0];
    const webhookPort = container.ports.find((p: { name: string }) => p.name === 'webhook-server').containerPort;
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const hook = (objects.find((o) => o.kind === kind)!.webhooks as any[])[0];
      const definition = (spec.webhookdefinitions as any[]).find((d) => d.generateName === hook.name);
      expect(definition).toEqual({
        type: kind === 'ValidatingWebhookConfiguration' ? 'ValidatingAdmissionWebhook' : 'MutatingAdmissionWebhook',
        generateName: hook.name,
        deploymentName: 'memcached-operator',
        containerPort: 443,
        targetPort: webhookPort,
        webhookPath: hook.clientConfig.service.path,
        admissionReviewVersions: hook.admissionReviewVersions,
        sideEffects: hook.sideEffects,
        failurePolicy: hook.failurePolicy,
        matchPolicy: hook.matchPolicy,
        rules: hook.rules,
        timeoutSeconds: hook.timeoutSeconds,
        ...(hook.reinvocationPolicy ? { reinvocationPolicy: hook.reinvocationPolicy } : {}),
      });
      expect([operator.webhook!.validatePath, operator.webhook!.mutatePath]).toContain(definition.webhookPath);
    }
    const conversion = (objects.find((o) => o.kind === 'CustomResourceDefinition')!.spec as any).conversion.webhook;
    expect((spec.webhookdefinitions as any[]).find((d) => d.type === 'ConversionWebhook')).toMatchObject({
      containerPort: 443, targetPort: webhookPort, webhookPath: conversion.clientConfig.service.path, admissionReviewVersions: conversion.conversionReviewVersions,
    });
  });

  test('THEN the bundle annotations name the package and channels', () => {
    expect(bundle.annotations).toEqual({
      'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
      'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
      'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
      'operators.operatorframework.io.bundle.package.v1': 'pkg',
      'operators.operatorframework.io.bundle.channels.v1': 'stable',
    });
  });
});

describe('buildOlmBundle: an operator watching one namespace', () => {
  const { operator, objects } = scoped();
  const bundle = buildOlmBundle(operator, objects, META);
  const spec = bundle.csv.spec as Record<string, any>;

  test('THEN it installs in its own or a single namespace, watching the OperatorGroup\'s target namespace', () => {
    expect(spec.installModes).toEqual(installModes('team-a'));
    expect(spec.installModes.filter((m: { supported: boolean }) => m.supported).map((m: { type: string }) => m.type)).toEqual(['OwnNamespace', 'SingleNamespace']);
    const container = spec.install.spec.deployments[0].spec.template.spec.containers[0];
    expect(container.args).toContain('--namespace=$(WATCH_NAMESPACE)');
    expect(container.args).not.toContain('--namespace=team-a');
    expect(container.env).toContainEqual({ name: 'WATCH_NAMESPACE', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } });
  });

  test('THEN its namespaced RBAC (Role in the watched namespace) is in permissions, with no clusterPermissions for the kind', () => {
    const watchRole = objects.find((o) => o.kind === 'Role' && o.metadata!.namespace === 'team-a')!;
    expect(spec.install.spec.permissions).toContainEqual({ serviceAccountName: 'scoped-operator', rules: watchRole.rules });
    const clusterRules = (spec.install.spec.clusterPermissions ?? []).flatMap((p: { rules: { resources: string[] }[] }) => p.rules);
    expect(clusterRules.some((r: { resources: string[] }) => r.resources.includes('scopeds'))).toBe(false);
  });

  test('THEN nested descriptors have dotted paths, array items as [0]', () => {
    const schema = (objects.find((o) => o.kind === 'CustomResourceDefinition')!.spec as any).versions[0].schema.openAPIV3Schema.properties.spec;
    expect(schemaDescriptors(schema).map((d) => d.path)).toEqual(['replicas', 'storage', 'storage.sizeGiB', 'tags[0].name']);
  });

  test('WHEN its CRD had a conversion webhook THEN buildOlmBundle refuses: OLM installs those only in AllNamespaces mode', () => {
    const converting = objects.map((o) => (o.kind === 'CustomResourceDefinition'
      ? { ...o, spec: { ...(o.spec as object), conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { name: 's', namespace: 'n', path: '/convert' } } } } } }
      : o));
    expect(() => buildOlmBundle(operator, converting, META)).toThrow('CustomResourceDefinition scopeds.olm.example.com: OLM installs a conversion webhook only for an operator that supports the AllNamespaces install mode, and scoped-operator watches one namespace (deployment.watchNamespace team-a)');
  });

  test('WHEN the chart holds a kind no bundle can carry THEN buildOlmBundle names it', () => {
    const broken = scoped({ withStatefulSet: true });
    expect(() => buildOlmBundle(broken.operator, broken.objects, META)).toThrow(OlmBundleError);
    expect(() => buildOlmBundle(broken.operator, broken.objects, META)).toThrow(/StatefulSet team-a\/extra \(apps\/v1\): an OLM bundle cannot carry this kind/);
  });
});

describe('writeOlmBundle', () => {
  test('THEN manifests/, metadata/annotations.yaml and bundle.Dockerfile are written, and files of an earlier bundle are gone', () => {
    const { operator, objects } = memcached();
    const dir = join(tmp, 'bundle');
    writeOlmBundle(dir, buildOlmBundle(operator, objects, META));
    writeFileSync(join(dir, 'manifests', 'stale.yaml'), 'kind: Stale\n');
    const written = writeOlmBundle(dir, buildOlmBundle(operator, objects, META));
    expect(readdirSync(join(dir, 'manifests')).sort()).toEqual(written.filter((f) => f.startsWith('manifests/')).map((f) => f.slice('manifests/'.length)).sort());
    expect(readdirSync(join(dir, 'manifests'))).not.toContain('stale.yaml');
    expect(parse(readFileSync(join(dir, 'manifests', 'pkg.clusterserviceversion.yaml'), 'utf8')).kind).toBe('ClusterServiceVersion');
    expect(parse(readFileSync(join(dir, 'metadata', 'annotations.yaml'), 'utf8')).annotations['operators.operatorframework.io.bundle.package.v1']).toBe('pkg');
    const dockerfile = readFileSync(join(dir, 'bundle.Dockerfile'), 'utf8');
    expect(dockerfile).toBe(bundleDockerfile(buildOlmBundle(operator, objects, META).annotations));
    expect(dockerfile.split('\n')).toEqual(expect.arrayContaining(['FROM scratch', 'LABEL operators.operatorframework.io.bundle.package.v1=pkg', 'COPY manifests /manifests/', 'COPY metadata /metadata/']));
  });
});

describe('csvMetadata', () => {
  const project = { version: '0.4.0', description: 'Caches.', author: 'Jo Doe <jo@example.com> (https://example.com)', homepage: 'https://example.com/caches', repository: { url: 'git+https://github.com/example/caches.git' }, keywords: ['cache'] };

  test('GIVEN no flags THEN the fields come from package.json', () => {
    expect(csvMetadata({ out: 'x' }, 'cache-operator', project)).toMatchObject({
      packageName: 'cache-operator', version: '0.4.0', channels: ['alpha'], description: 'Caches.', provider: 'Jo Doe',
      maintainers: [{ name: 'Jo Doe', email: 'jo@example.com' }],
      links: [{ name: 'Homepage', url: 'https://example.com/caches' }, { name: 'Source', url: 'https://github.com/example/caches' }],
      keywords: ['cache'],
    });
  });

  test('GIVEN flags THEN they win over package.json', () => {
    expect(csvMetadata({ out: 'x', version: '2.0.0', package: 'caches', channels: 'stable,fast', provider: 'ACME', maintainer: ['Al <al@acme.test>'], link: ['Docs=https://acme.test/docs'] }, 'cache-operator', project))
      .toMatchObject({ packageName: 'caches', version: '2.0.0', channels: ['stable', 'fast'], provider: 'ACME', maintainers: [{ name: 'Al', email: 'al@acme.test' }], links: [{ name: 'Docs', url: 'https://acme.test/docs' }] });
  });

  test('GIVEN malformed flags THEN the error names the flag', () => {
    expect(() => csvMetadata({ out: 'x', version: 'v1' }, 'op', {})).toThrow('--version: "v1" is not a semantic version (X.Y.Z)');
    expect(() => csvMetadata({ out: 'x' }, 'op', {})).toThrow(/^--version: no bundle version given/);
    expect(() => csvMetadata({ out: 'x', version: '1.0.0', maintainer: ['Al'] }, 'op', {})).toThrow('--maintainer: "Al" is not "Name <email>"');
    expect(() => csvMetadata({ out: 'x', version: '1.0.0', link: ['nourl'] }, 'op', {})).toThrow('--link: "nourl" is not name=url');
  });
});

describe('runPackageOlm without the validator program', () => {
  async function run(options: Partial<PackageOlmOptions>) {
    let stdout = '';
    let stderr = '';
    const code = await runPackageOlm({ out: join(tmp, 'cmd'), module: 'test/cli/fixtures/olm-operators.ts', version: '1.0.0', provider: 'Example', ...options }, {
      cwd: root,
      writeStdout: (text) => { stdout += text; },
      writeStderr: (text) => { stderr += text; },
      env: { CDK8S_OPERATOR_OLM_VALIDATE: join(tmp, 'no-such-olm-validate') },
    });
    return { code, stdout, stderr };
  }

  test('THEN the bundle is written and a warning says it was NOT validated, exit 0', async () => {
    const result = await run({});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('wrote the OLM bundle of scoped-operator (scoped-operator.v1.0.0)');
    expect(result.stderr).toMatch(/^warning: bundle NOT validated: Operator Framework's validator \(olm-validate\) was not found \(looked at .*no-such-olm-validate \(CDK8S_OPERATOR_OLM_VALIDATE\)\).*--require-validation/m);
    expect(readdirSync(join(tmp, 'cmd', 'manifests'))).toContain('scoped-operator.clusterserviceversion.yaml');
  });

  test('WHEN --require-validation THEN exit 1 with the same reason', async () => {
    const result = await run({ requireValidation: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: bundle NOT validated: Operator Framework's validator \(olm-validate\) was not found/m);
  });

  test('GIVEN an operator with webhooks THEN no warning about them: run reads the certificate OLM mounts', async () => {
    const result = await run({ module: undefined, operator: 'memcached-operator' });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/webhook/);
    expect(readFileSync(join(tmp, 'cmd', 'manifests', 'memcached-operator.clusterserviceversion.yaml'), 'utf8')).toContain('--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs');
  });

  test('WHEN the operator is unknown THEN exit 1 naming the known ones', async () => {
    const result = await run({ operator: 'nope' });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: unknown operator(s) nope; known: scoped-operator\n');
  });

  test('WHEN the module has several operators and none is named THEN exit 1 asking for --operator', async () => {
    const result = await run({ module: undefined });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: the module has 3 operators; name one with --operator (memcached-operator, app-operator, database-operator)\n');
  });
});
