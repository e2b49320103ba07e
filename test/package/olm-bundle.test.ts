/**
 * `package olm` checked by Operator Framework's own validators (tools/olm-validate: operator-framework/api's
 * default bundle validators plus the operatorframework suite, as `operator-sdk bundle validate
 * --select-optional suite=operatorframework` runs them): the bundle of each example operator passes with
 * zero errors, and bundles the validators refuse fail the command with their messages.
 *
 * The validator is built (or taken from the cache) by tools/olm-validate/build.sh before the tests; when
 * it cannot be built the tests fail, they never skip (a cold build takes minutes: Go compiles
 * operator-framework/api and its Kubernetes dependencies). The bundle of an `init`-made project is
 * validated in test/integration/init-project.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { runPackageOlm, type PackageOlmOptions } from '../../lib/cli/package-olm-command.js';
import { reportErrors, runOlmValidator } from '../../lib/package/olm/olm-validator.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'olm-bundle-test-'));
let validator: string;

beforeAll(() => {
  const build = spawnSync('bash', [join(root, 'tools', 'olm-validate', 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const file = (build.stdout ?? '').trim().split('\n').at(-1);
  if (build.status !== 0 || !file) throw new Error(`tools/olm-validate/build.sh failed (${build.error?.message ?? `exit ${build.status}`}): Go >= 1.26 is needed to build Operator Framework's validators`);
  validator = file;
}, 20 * 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function packageOlm(options: Partial<PackageOlmOptions> & { out: string }) {
  let stdout = '';
  let stderr = '';
  const code = await runPackageOlm({ provider: 'Example Inc.', maintainer: ['Ops <ops@example.com>'], link: ['Source=https://example.com/operators'], requireValidation: true, ...options }, {
    cwd: root,
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
    env: { ...process.env, CDK8S_OPERATOR_OLM_VALIDATE: validator },
  });
  return { code, stdout, stderr };
}

describe.each(['memcached-operator', 'app-operator', 'database-operator'])('the bundle of the example operator %s', (operator) => {
  test('THEN Operator Framework\'s validators find zero errors', async () => {
    const out = join(tmp, operator);
    const result = await packageOlm({ out, operator });
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^validated by Operator Framework's validators \(operator-framework\/api v\d+\.\d+\.\d+\): 0 errors, \d+ warning\(s\)$/m);
    // And the program's own report, read directly: every validator ran and none reported an error.
    const report = await runOlmValidator(validator, out);
    expect(report.results.map((r) => r.name.split(':')[0])).toEqual(expect.arrayContaining(['bundle format', 'operatorhub', 'good-practices', 'alpha-deprecated-apis']));
    expect(reportErrors(report)).toEqual([]);
  }, 5 * 60_000);
});

test('GIVEN the example operator with webhooks (memcached: validating, mutating, conversion) THEN its CSV\'s Deployment runs with the certificate OLM mounts, its webhookdefinitions are what run serves, and the validators find zero errors', async () => {
  const out = join(tmp, 'memcached-webhooks');
  const result = await packageOlm({ out, operator: 'memcached-operator' });
  expect(result.code).toBe(0);
  expect(result.stderr).not.toMatch(/webhook/); // no warning about them any more
  const csv = parse(readFileSync(join(out, 'manifests', 'memcached-operator.clusterserviceversion.yaml'), 'utf8'));
  const [deployment] = csv.spec.install.spec.deployments;
  const container = deployment.spec.template.spec.containers[0];
  expect(container.args).toEqual(expect.arrayContaining(['--webhook-bind-address=:9443', '--webhook-cert-dir=/tmp/k8s-webhook-server/serving-certs']));
  expect(container.ports).toContainEqual({ name: 'webhook-server', containerPort: 9443, protocol: 'TCP' });
  const definitions = csv.spec.webhookdefinitions as Record<string, any>[];
  expect(definitions.map((d) => [d.type, d.generateName, d.webhookPath, d.deploymentName, d.containerPort, d.targetPort])).toEqual([
    ['ValidatingAdmissionWebhook', 'validate.memcacheds.cache.example.com', '/validate-cache-example-com-v1beta1-memcached', deployment.name, 443, 9443],
    ['MutatingAdmissionWebhook', 'mutate.memcacheds.cache.example.com', '/mutate-cache-example-com-v1beta1-memcached', deployment.name, 443, 9443],
    ['ConversionWebhook', 'cmemcacheds.cache.example.com', '/convert', deployment.name, 443, 9443],
  ]);
  for (const d of definitions.slice(0, 2)) {
    expect(d).toMatchObject({ sideEffects: 'None', failurePolicy: 'Fail', admissionReviewVersions: ['v1'], rules: [{ apiGroups: ['cache.example.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['memcacheds'], scope: 'Namespaced' }] });
  }
  expect(definitions[2]).toMatchObject({ conversionCRDs: ['memcacheds.cache.example.com'], admissionReviewVersions: ['v1'], sideEffects: 'None' });
  expect(reportErrors(await runOlmValidator(validator, out))).toEqual([]);
}, 5 * 60_000);

describe('bundles the validators refuse', () => {
  test('WHEN no provider is given THEN the command exits 2 with OperatorHub\'s message', async () => {
    const result = await packageOlm({ out: join(tmp, 'no-provider'), operator: 'app-operator', provider: undefined });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: operatorhub: app-operator\.v0\.1\.0: Error: Value : \(app-operator\.v0\.1\.0\) csv\.Spec\.Provider\.Name not specified$/m);
    expect(result.stderr).toMatch(/^error: Operator Framework's validators \(operator-framework\/api v[\d.]+\) refused the bundle in .*no-provider: 1 error\(s\)$/m);
  }, 5 * 60_000);

  test('WHEN a maintainer\'s email is invalid THEN the command exits 2 with the validator\'s message naming it', async () => {
    const result = await packageOlm({ out: join(tmp, 'bad-email'), operator: 'app-operator', maintainer: ['Ops <not-an-email>'] });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: operatorhub: .*csv\.Spec\.Maintainers email not-an-email is invalid/m);
  }, 5 * 60_000);

  test('WHEN the written bundle is broken by hand (alm-examples of an unknown kind, no annotations) THEN the validators name both', async () => {
    const out = join(tmp, 'broken');
    expect((await packageOlm({ out, operator: 'app-operator' })).code).toBe(0);
    const csvFile = join(out, 'manifests', 'app-operator.clusterserviceversion.yaml');
    const csv = parse(readFileSync(csvFile, 'utf8'));
    csv.metadata.annotations['alm-examples'] = JSON.stringify([{ apiVersion: 'nope.example.com/v1', kind: 'Nope', metadata: { name: 'x' }, spec: {} }]);
    writeFileSync(csvFile, stringify(csv));
    rmSync(join(out, 'metadata', 'annotations.yaml'));
    const errors = reportErrors(await runOlmValidator(validator, out));
    expect(errors).toEqual(expect.arrayContaining([
      expect.stringMatching(/^bundle format: Error: Value metadata\/annotations\.yaml: cannot read .*metadata\/annotations\.yaml/),
      'app-operator.v0.1.0: Error: Value nope.example.com/v1, Kind=Nope: example must have a provided API',
    ]));
  }, 5 * 60_000);
});
