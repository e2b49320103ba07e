/**
 * The SDK from a user's own project, installed from its tarball: a CommonJS project made like
 * `cdk8s init typescript-app` (ts-node, ts-jest, cdk8s-plus-34, the newest), and an ESM project ("type": "module",
 * tsx, ts-jest's ESM preset) on the lowest versions of the peer ranges (cdk8s 2.68.12, constructs
 * 10.3.0, zod 4.1.0, cdk8s-plus-28). In each: `cdk8s synth`, the project's own jest tests and
 * `cdk8s-operator render --module`, unchanged; without Go on the PATH, the children's validator coming
 * from the installed package (test/support/consumer-project.ts runIn).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { consumerProject, runIn } from '../support/consumer-project.js';
import { REPO_ROOT } from '../support/sdk-tarball.js';
import { locateValidatorWasm } from '../../lib/validator/validator-wasm-file.js';
import { validatorFileKubernetesVersion } from '../../lib/validator/validator-version.js';

interface Consumer {
  /** Fixture folder under test/consumers/. */
  readonly name: string;
  /** The user's operator file, exporting addOperators. */
  readonly module: string;
  readonly operatorName: string;
  /** A valid CR of the operator's kind, and the kinds it renders to. */
  readonly sample: string;
  readonly renders: string[];
  /** An invalid CR's YAML, and the per-field error lines `render` must print. */
  readonly invalid: string;
  readonly errors: string[];
  /** Other module files that re-export addOperators, by extension, as this project's module system writes them. */
  readonly variants: Record<string, string>;
}

const CONSUMERS: Consumer[] = [
  {
    name: 'cdk8s-init-app',
    module: 'static-site-operator.ts',
    operatorName: 'static-site-operator',
    sample: 'site.yaml',
    renders: ['Deployment/hello-web', 'Service/hello-web-service'],
    invalid: 'apiVersion: sites.example.com/v1\nkind: StaticSite\nmetadata: { name: bad, namespace: web }\nspec: { message: "", replicas: 9 }\n',
    errors: [
      'error: StaticSite/bad: spec.message: Too small: expected string to have >=1 characters',
      'error: StaticSite/bad: spec.replicas: Too big: expected number to be <=5',
    ],
    variants: {
      'variant.cts': "module.exports = require('./static-site-operator');\n",
      'variant.mts': "export { addOperators } from './static-site-operator.ts';\n",
      'variant.js': "const { addOperators } = require('./static-site-operator');\nmodule.exports = { addOperators };\n",
    },
  },
  {
    name: 'esm-lowest-peers',
    module: 'greeting-operator.ts',
    operatorName: 'greeting-operator',
    sample: 'greeting.yaml',
    renders: ['ConfigMap/hello-greetings'],
    invalid: 'apiVersion: greetings.example.com/v1alpha1\nkind: Greeting\nmetadata: { name: bad, namespace: team-a }\nspec: { greetings: [{ language: e, text: x }] }\n',
    errors: ['error: Greeting/bad: spec.greetings[0].language: Too small: expected string to have >=2 characters'],
    variants: {
      'variant.mts': "export { addOperators } from './greeting-operator.js';\n",
      'variant.cts': "module.exports = require('./greeting-operator.ts');\n",
      'variant.js': "export { addOperators } from './greeting-operator.js';\n",
    },
  },
];

describe.each(CONSUMERS)('consumer project $name', (consumer) => {
  let dir: string;
  beforeAll(async () => {
    dir = await consumerProject(consumer.name);
  }, 20 * 60_000);

  test('GIVEN the project WHEN `npx cdk8s synth` runs THEN the operator YAML names the user image and module', async () => {
    const result = await runIn(dir, 'npx', ['cdk8s', 'synth']);
    expect(result).toMatchObject({ code: 0 });
    const objects = parseAllDocuments(readFileSync(join(dir, 'dist', `${consumer.operatorName}.k8s.yaml`), 'utf8')).map((doc) => doc.toJS() as any);
    expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['CustomResourceDefinition', 'ClusterRole', 'ServiceAccount', 'Deployment']));
    const container = objects.find((o) => o.kind === 'Deployment').spec.template.spec.containers[0];
    expect(container.image).toBe(`registry.example.com/${consumer.operatorName}:0.1.0`);
    expect(container.args.slice(0, 5)).toEqual(['run', '--module', consumer.module, '--operators', consumer.operatorName]);
  }, 5 * 60_000);

  test('GIVEN the project WHEN its own jest runs THEN the renderForSnapshot tests match the committed snapshots', async () => {
    const result = await runIn(dir, 'npm', ['test', '--', '--ci']);
    expect(`${result.stdout}\n${result.stderr}`).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(result.stderr).not.toMatch(/written|obsolete|failed/i);
    expect(result.code).toBe(0);
  }, 5 * 60_000);

  test('GIVEN a valid CR WHEN `cdk8s-operator render --module` runs THEN it prints the children', async () => {
    const result = await runIn(dir, 'npx', ['cdk8s-operator', 'render', '--module', consumer.module, '-f', consumer.sample]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const children = parseAllDocuments(result.stdout).map((doc) => doc.toJS() as { kind: string; metadata: { name: string } });
    expect(children.map((child) => `${child.kind}/${child.metadata.name}`)).toEqual(consumer.renders);
  }, 2 * 60_000);

  test('GIVEN an invalid CR WHEN rendered THEN exit 2 with one line per field (the CLI recognises the other copy\'s error)', async () => {
    writeFileSync(join(dir, 'invalid.yaml'), consumer.invalid);
    const result = await runIn(dir, 'npx', ['cdk8s-operator', 'render', '--module', consumer.module, '-f', 'invalid.yaml']);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual(consumer.errors);
    expect(result.code).toBe(2);
  }, 2 * 60_000);

  test.each(['.cts', '.mts', '.js'])('GIVEN a %s module WHEN rendered through it THEN the same children', async (extension) => {
    const file = `variant${extension}`;
    writeFileSync(join(dir, file), consumer.variants[file]);
    const result = await runIn(dir, 'npx', ['cdk8s-operator', 'render', '--module', file, '-f', consumer.sample, '-o', 'json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`"managed-by": "${consumer.operatorName}"`.replace('"managed-by"', '"app.kubernetes.io/managed-by"'));
  }, 2 * 60_000);

  test('GIVEN the installed bin WHEN asked for its version THEN it prints the package version, the Kubernetes version of the control plane and of its validator', async () => {
    const result = await runIn(dir, 'npx', ['cdk8s-operator', '--version']);
    const { version } = JSON.parse(readFileSync(join(dir, 'node_modules', 'cdk8s-operator-sdk', 'package.json'), 'utf8')) as { version: string };
    const controlPlane = /k8s\.io\/kubernetes (v\S+)/.exec(readFileSync(join(REPO_ROOT, 'tools', 'control-plane', 'kube', 'go.mod'), 'utf8'))![1];
    const { file } = locateValidatorWasm();
    const validator = validatorFileKubernetesVersion(file!);
    expect(result).toEqual({ code: 0, stdout: `${version} (control plane Kubernetes ${controlPlane}, children validated by Kubernetes ${validator})\n`, stderr: '' });
  }, 2 * 60_000);
});

describe('consumer project esm-lowest-peers, every entry', () => {
  test('GIVEN an ESM project WHEN it imports all four entries THEN tsc type-checks them and node loads them', async () => {
    const dir = await consumerProject('esm-lowest-peers');
    // The pure entries' declarations (and their peers') type-check with the project's strict settings,
    // skipLibCheck off.
    expect(await runIn(dir, 'npx', ['tsc', '--noEmit', '-p', '.'])).toMatchObject({ code: 0, stdout: '' });
    writeFileSync(join(dir, 'entries.ts'), [
      "import { Operator, TerminalError } from 'cdk8s-operator-sdk';",
      "import { renderForSnapshot } from 'cdk8s-operator-sdk/testing';",
      "import { runOperators, type RunOperatorsOptions } from 'cdk8s-operator-sdk/runtime';",
      "import { startControlPlane, type ControlPlane } from 'cdk8s-operator-sdk/testing/control-plane';",
      'export const loaded: Record<string, unknown> = { Operator, TerminalError, renderForSnapshot, runOperators, startControlPlane };',
      'export type Types = [RunOperatorsOptions, ControlPlane];',
      '',
    ].join('\n'));
    // The runtime and control-plane entries expose client-node's KubeConfig, whose declarations import
    // 'ws' untyped: they need skipLibCheck (tsc --init's default) or @types/ws, as client-node itself does.
    const tsc = await runIn(dir, 'npx', ['tsc', '--noEmit', '-p', '.', '--skipLibCheck']);
    expect(tsc).toMatchObject({ code: 0, stdout: '' });
    const node = await runIn(dir, 'npx', ['tsx', '-e', "import('./entries.ts').then((m) => console.log(Object.entries(m.loaded).map(([k, v]) => `${k}:${typeof v}`).join(' ')))"]);
    expect(node.stdout.trim()).toBe('Operator:function TerminalError:function renderForSnapshot:function runOperators:function startControlPlane:function');
  }, 20 * 60_000);
});

describe('consumer project cdk8s-init-app, plain CommonJS', () => {
  test('GIVEN require() WHEN the pure entries load THEN no ESM-only module (client-node) is loaded', async () => {
    const dir = await consumerProject('cdk8s-init-app');
    const script = [
      "const sdk = require('cdk8s-operator-sdk');",
      "const testing = require('cdk8s-operator-sdk/testing');",
      "const loaded = Object.keys(require.cache).filter((path) => path.includes('client-node'));",
      'console.log(JSON.stringify({ operator: typeof sdk.Operator, render: typeof testing.renderForSnapshot, loaded }));',
    ].join('\n');
    const result = await runIn(dir, 'node', ['-e', script]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ operator: 'function', render: 'function', loaded: [] });
  }, 20 * 60_000);

  test('GIVEN require() on Node >= 20.19 WHEN the ESM-only entries load THEN they load (require of ESM)', async () => {
    const dir = await consumerProject('cdk8s-init-app');
    const script = [
      "const { runOperators } = require('cdk8s-operator-sdk/runtime');",
      "const { startControlPlane } = require('cdk8s-operator-sdk/testing/control-plane');",
      'console.log(typeof runOperators, typeof startControlPlane);',
    ].join('\n');
    const result = await runIn(dir, 'node', ['-e', script]);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('function function');
  }, 20 * 60_000);
});
