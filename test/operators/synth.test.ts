import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import type { Operator } from 'cdk8s-operator-sdk';
import { renderExamplesForSnapshot } from 'cdk8s-operator-sdk/testing';
import { addOperators } from '../../operators/index.js';
import { synthesize } from '../../synth/main.js';

type Obj = Record<string, any>;

function readAll(yaml: string, version: '1.1' | '1.2'): Obj[] {
  return parseAllDocuments(yaml, { version }).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS() as Obj;
  });
}

describe('synth/main.ts', () => {
  const files = synthesize();

  test('GIVEN the project WHEN synthesized twice THEN the files are byte-identical', () => {
    expect([...synthesize()]).toEqual([...files]);
  });

  test('GIVEN the three operators WHEN synthesized THEN there is one file per operator, named after it', () => {
    expect([...files.keys()]).toEqual(['memcached-operator.k8s.yaml', 'app-operator.k8s.yaml', 'database-operator.k8s.yaml']);
  });

  test.each(['memcached-operator', 'app-operator', 'database-operator'])(
    'GIVEN %s WHEN synthesized THEN its file holds a CRD, ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment',
    (name) => {
      const objects = readAll(files.get(`${name}.k8s.yaml`)!, '1.1');
      const kinds = objects.map((o) => o.kind);
      for (const kind of ['CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Deployment']) {
        expect(kinds).toContain(kind);
      }
      const deployment = objects.find((o) => o.kind === 'Deployment')!;
      expect(deployment.metadata.name).toBe(name);
      const container = deployment.spec.template.spec.containers[0];
      // the repository's own image (Dockerfile): its CLI from the checkout, loading operators/index.ts
      expect(container).toMatchObject({ image: 'cdk8s-operator-sdk-examples:0.1.0', workingDir: '/app', command: ['node', 'bin/cdk8s-operator.js'] });
      expect(container.args.slice(0, 5)).toEqual(['run', '--module', 'operators/index.ts', '--operators', name]);
    },
  );

  test('GIVEN the files WHEN read back by a YAML 1.1 and a YAML 1.2 reader THEN both get exactly what the charts produced', () => {
    const app = new App();
    const operators = addOperators(app);
    for (const operator of operators) {
      const expected = JSON.parse(JSON.stringify(operator.toJson()));
      const yaml = files.get(`${operator.operatorName}.k8s.yaml`)!;
      expect(readAll(yaml, '1.1')).toEqual(expected);
      expect(readAll(yaml, '1.2')).toEqual(expected);
    }
  });

  test('GIVEN the database CRD WHEN written THEN its enum of version strings is quoted', () => {
    expect(files.get('database-operator.k8s.yaml')).toMatch(/enum:\n\s+- "15"\n\s+- "16"\n/);
  });

  test('GIVEN every operator WHEN synthesized THEN its ClusterRole grants each kind its examples render', () => {
    const app = new App();
    for (const operator of addOperators(app) as Operator[]) {
      const role = readAll(files.get(`${operator.operatorName}.k8s.yaml`)!, '1.1').find((o) => o.kind === 'ClusterRole')!;
      const rendered = Object.values(renderExamplesForSnapshot(operator)).flat();
      expect(rendered.length).toBeGreaterThan(0);
      for (const child of rendered) {
        const group = child.apiVersion.includes('/') ? child.apiVersion.split('/')[0] : '';
        const resource = operator.childKinds().find((k) => k.kind === child.kind && k.group === group)!.plural;
        const rule = role.rules.find((r: Obj) => r.apiGroups.includes(group) && r.resources.includes(resource));
        expect({ kind: child.kind, verbs: rule?.verbs }).toEqual({ kind: child.kind, verbs: expect.arrayContaining(['get', 'list', 'watch', 'create', 'patch', 'delete']) });
      }
    }
  });
});
