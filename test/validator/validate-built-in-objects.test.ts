// validateBuiltInObjects: Kubernetes' own create validation of built-in kinds, offline (the WebAssembly
// validator jest.config.js builds), and where it is wired in: renderForSnapshot and `render`.
// The verdicts are compared with the real API server in test/integration/validator-differential.test.ts.
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { runRender } from '../../lib/cli/render-command.js';
import { renderForSnapshot } from '../../lib/testing/render-snapshot.js';
import { ChildRefusedError } from '../../lib/validator/child-refused-error.js';
import { builtInValidatorKubernetesVersion, validateBuiltInObjects } from '../../lib/validator/validate-built-in-objects.js';
import { DbOperator } from '../cli/fixtures/refused-children-operator.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const db = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'refused.example.com/v1', kind: 'Db', metadata: { name: 'db', namespace: 'default' }, spec });

const deployment = (containers: unknown[]) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers } } },
});

describe('validateBuiltInObjects', () => {
  test('GIVEN the control plane\'s go.mod WHEN the validator reports its version THEN it is the k8s.io/kubernetes version pinned there', async () => {
    const { readFileSync } = await import('node:fs');
    const pinned = /k8s\.io\/kubernetes (v\S+)/.exec(readFileSync(`${root}/tools/control-plane/kube/go.mod`, 'utf8'))![1];
    expect(builtInValidatorKubernetesVersion()).toBe(pinned);
  });

  test('GIVEN valid and invalid objects of several kinds and a CRD kind WHEN validated in one call THEN each gets the server\'s verdict, in order', () => {
    const verdicts = validateBuiltInObjects([
      deployment([{ name: 'web', image: 'nginx' }]),
      deployment([{ name: 'Web', image: 'nginx', ports: [{ containerPort: 70000 }] }]),
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'tick', namespace: 'default' }, spec: { schedule: 'every minute', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { 'bad key': 'x' } },
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
    ]);
    expect(verdicts.map((v) => `${v.kind} ${v.name} ${v.verdict}`)).toEqual([
      'Deployment web valid', 'Deployment web invalid', 'CronJob tick invalid', 'ConfigMap settings invalid', 'Widget w unchecked',
    ]);
    expect(verdicts[1].errors.map((e) => e.field)).toEqual(['spec.template.spec.containers[0].name', 'spec.template.spec.containers[0].ports[0].containerPort']);
    expect(verdicts[2].errors.map((e) => `${e.field}: ${e.message}`)).toEqual([expect.stringMatching(/^spec\.schedule: Invalid value: "every minute"/)]);
    expect(verdicts[3].errors.map((e) => e.field)).toEqual(['data[bad key]']);
  });
});

describe('renderForSnapshot', () => {
  test('GIVEN a cdk8s-plus StatefulSet with two unnamed container ports WHEN rendered for a snapshot THEN it fails naming the headless Service and the server\'s words', () => {
    const operator = new DbOperator(new App());
    let error: unknown;
    try {
      renderForSnapshot(operator, db());
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ChildRefusedError);
    expect((error as ChildRefusedError).problems).toEqual([
      expect.stringMatching(/^Service default\/db-db-service: spec\.ports\[0\]\.name: Required value$/),
      expect.stringMatching(/^Service default\/db-db-service: spec\.ports\[1\]\.name: Required value$/),
    ]);
  });

  test('GIVEN the same StatefulSet with named ports WHEN rendered for a snapshot THEN the children come out; with validateChildren: false the refused one does too', () => {
    const operator = new DbOperator(new App());
    expect(renderForSnapshot(operator, db({ portName: 'metrics' })).map((c) => c.kind).sort()).toEqual(['Service', 'StatefulSet']);
    expect(renderForSnapshot(operator, db(), { validateChildren: false }).map((c) => c.kind).sort()).toEqual(['Service', 'StatefulSet']);
  });
});

describe('synth', () => {
  test('GIVEN an operator whose example renders a child the server would refuse WHEN synthesized THEN it fails naming the child and the server\'s words', () => {
    const operator = new DbOperator(new App());
    expect(() => operator.toJson()).toThrow(/the API server would refuse 1 child: Service default\/db-db-service: spec\.ports\[0\]\.name: Required value; Service default\/db-db-service: spec\.ports\[1\]\.name: Required value/);
  });
});

describe('cdk8s-operator render', () => {
  test('GIVEN a CR whose child the server would refuse WHEN rendered THEN exit 2, nothing on stdout, and the child, field path and message on stderr', async () => {
    let stdout = '';
    let stderr = '';
    const code = await runRender({ module: 'test/cli/fixtures/refused-children-operator.ts', filename: ['-'] }, {
      cwd: root,
      readStdin: async () => JSON.stringify(db()),
      writeStdout: (text) => { stdout += text; },
      writeStderr: (text) => { stderr += text; },
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^error: Service default\/db-db-service: spec\.ports\[1\]\.name: Required value \(rendered by Db default\/db\)$/m);
  });
});
