import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { BUILT_IN_KEYED_LISTS, keyedListProblems } from '../../lib/operator/schema/keyed-lists.js';

const pod = (spec: object) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });

describe('keyedListProblems', () => {
  test('GIVEN the built-in table THEN it covers the pod template lists of every workload kind', () => {
    for (const kind of ['apps/v1/Deployment', 'apps/v1/StatefulSet', 'apps/v1/DaemonSet', 'batch/v1/Job', 'batch/v1/CronJob', 'v1/Pod']) expect(BUILT_IN_KEYED_LISTS.kinds[kind]).toBeDefined();
    expect(BUILT_IN_KEYED_LISTS.definitions['io.k8s.api.core.v1.Container'].env.listMapKeys).toEqual(['name']);
  });

  test('GIVEN duplicates in containers, env, ports, volumeMounts and volumes THEN each is named with its path and key', () => {
    const problems = keyedListProblems(
      pod({
        containers: [
          { name: 'a', env: [{ name: 'X' }, { name: 'X' }], ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'TCP' }], volumeMounts: [{ mountPath: '/d' }, { mountPath: '/d' }] },
          { name: 'a' },
        ],
        volumes: [{ name: 'v' }, { name: 'v' }],
      }),
      'v1',
      'Pod',
    );
    expect(problems).toEqual([
      'spec.containers: duplicate entries for key name="a" (items 0 and 1)',
      'spec.containers[0].env: duplicate entries for key name="X" (items 0 and 1)',
      'spec.containers[0].ports: duplicate entries for key containerPort=80,protocol="TCP" (items 0 and 1)',
      'spec.containers[0].volumeMounts: duplicate entries for key mountPath="/d" (items 0 and 1)',
      'spec.volumes: duplicate entries for key name="v" (items 0 and 1)',
    ]);
  });

  test('GIVEN a CronJob THEN lists below jobTemplate.spec.template are checked; GIVEN duplicate finalizers THEN the set is reported', () => {
    const cronJob = {
      metadata: { finalizers: ['a', 'a'] },
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'E' }, { name: 'E' }] }] } } } } },
    };
    expect(keyedListProblems(cronJob, 'batch/v1', 'CronJob')).toEqual([
      'metadata.finalizers: duplicate value "a" (items 0 and 1)',
      'spec.jobTemplate.spec.template.spec.containers[0].env: duplicate entries for key name="E" (items 0 and 1)',
    ]);
  });

  test('GIVEN unique keys, or a kind outside the table (a custom resource) THEN no problem', () => {
    expect(keyedListProblems(pod({ containers: [{ name: 'a', ports: [{ containerPort: 80 }, { containerPort: 80, protocol: 'UDP' }] }] }), 'v1', 'Pod')).toEqual([]);
    expect(keyedListProblems({ spec: { containers: [{ name: 'a' }, { name: 'a' }] } }, 'example.com/v1', 'Widget')).toEqual([]);
  });
});

describe('keyed-lists.generated.ts', () => {
  const text = readFileSync(new URL('../../lib/operator/schema/keyed-lists.generated.ts', import.meta.url), 'utf8');

  test('GIVEN the generated table\'s source THEN it imports nothing (no import, export-from, import(), require or reference)', () => {
    const found = ts.preProcessFile(text, true, true);
    const references = [...found.importedFiles, ...found.referencedFiles, ...found.typeReferenceDirectives, ...found.libReferenceDirectives].map((r) => r.fileName);
    expect(references).toEqual([]);
  });

  test('GIVEN the generated table\'s source THEN it starts with the DO-NOT-EDIT header naming the npm script, then the Kubernetes version of tools/control-plane/kube/go.mod', () => {
    const goMod = readFileSync(new URL('../../tools/control-plane/kube/go.mod', import.meta.url), 'utf8');
    const kubernetes = /^\s*k8s\.io\/kubernetes (v\S+)$/m.exec(goMod)?.[1];
    const [header, source] = text.split('\n');
    // Go's convention for generated files (https://go.dev/s/generatedcode), as controller-runtime's zz_generated.*.go.
    expect(header).toMatch(/^\/\/ Code generated .* DO NOT EDIT\.$/);
    expect(header).toContain('npm run generate:keyed-lists');
    expect(kubernetes).toMatch(/^v1\.\d+\.\d+/);
    expect(source).toContain(`kube-apiserver ${kubernetes},`);
  });
});
