import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { stringifyManifests } from '../../lib/cli/render-command.js';
import type { Operator } from '../../lib/operator/operator.js';
import { renderExamplesForSnapshot } from '../../lib/testing/render-snapshot.js';
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
      expect(deployment.spec.template.spec.containers[0].args.slice(0, 3)).toEqual(['run', '--operators', name]);
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

describe('stringifyManifests', () => {
  const ambiguous = ['yes', 'no', 'on', 'off', 'y', 'n', 'Y', 'N', 'Yes', 'NO', 'On', 'OFF', 'true', 'False', 'null', '~', '',
    '0755', '08', '010', '0o17', '0x1F', '0b101', '1_000', '1e3', '12:30', '12:30:00', '.inf', '-.Inf', '.nan', '1.0', '+1', '2001-12-14', ' padded', '#x'];

  test.each(ambiguous)('GIVEN the string %p WHEN written THEN it is double-quoted', (value) => {
    expect(stringifyManifests([{ data: { key: value } }])).toBe(`data:\n  key: ${JSON.stringify(value)}\n`);
  });

  test('GIVEN ambiguous strings WHEN written and read back by YAML 1.1 and 1.2 readers THEN they stay strings', () => {
    const doc = { data: Object.fromEntries(ambiguous.map((v, i) => [`k${i}`, v])), yes: 'on', '0755': 1 };
    const yaml = stringifyManifests([doc]);
    expect(readAll(yaml, '1.1')).toEqual([doc]);
    expect(readAll(yaml, '1.2')).toEqual([doc]);
  });

  test('GIVEN plain strings, numbers, booleans and multi-line text WHEN written THEN they are not quoted', () => {
    expect(stringifyManifests([{ a: 'memcached', b: '-m=64', c: '25%', d: 3, e: true, f: 'line 1\nline 2\n' }]))
      .toBe('a: memcached\nb: -m=64\nc: 25%\nd: 3\ne: true\nf: |\n  line 1\n  line 2\n');
  });

  test('GIVEN several manifests WHEN written THEN they are one stream separated by ---', () => {
    expect(stringifyManifests([{ kind: 'A' }, { kind: 'B' }])).toBe('kind: A\n---\nkind: B\n');
  });
});
