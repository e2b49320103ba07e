// runRender in process (in-memory io), with a test operator that reads a related ConfigMap, observes its
// StatefulSet and returns a status: `render -f` given the cluster state as extra documents.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { parse, parseAllDocuments } from 'yaml';
import { runRender, type RenderOptions } from '../../lib/cli/render-command.js';
import { STAND_IN_UID, renderForSnapshot } from '../../lib/testing/render-snapshot.js';
import { CONFIG_HASH_ANNOTATION, addOperators } from './fixtures/render-context-operator.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'test/cli/fixtures/render-context-operator.ts';

const tmp = mkdtempSync(join(tmpdir(), 'render-command-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let files = 0;
function file(...documents: string[]): string {
  const path = join(tmp, `input-${files++}.yaml`);
  writeFileSync(path, documents.join('---\n'));
  return path;
}

interface Result { code: number; stdout: string; stderr: string; objects: Record<string, any>[] }

async function render(filename: string[], options: Partial<RenderOptions> = {}, stdin = ''): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await runRender({ module: MODULE, filename, ...options }, {
    cwd: root,
    readStdin: async () => stdin,
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
  });
  const objects = options.output === 'json' || stdout === '' ? [] : parseAllDocuments(stdout).map((doc) => doc.toJS() as Record<string, any>);
  return { code, stdout, stderr, objects };
}

const cache = (name = 'demo', extra = '') => `apiVersion: render.example.com/v1
kind: Cache
metadata:
  name: ${name}
${extra}spec:
  configMapRef:
    name: settings
  replicas: 2
`;
const configMap = (data: string, namespace = 'default') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
${namespace === '' ? '' : `  namespace: ${namespace}\n`}data:
  ${data}
`;
const statefulSet = (name: string, readyReplicas: number, namespace = 'default') => `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  replicas: 2
status:
  replicas: 2
  readyReplicas: ${readyReplicas}
`;

const hashOf = (result: Result): string => {
  const sts = result.objects.find((o) => o.kind === 'StatefulSet');
  return sts?.spec.template.metadata.annotations[CONFIG_HASH_ANNOTATION];
};
const notes = (result: Result): string[] => result.stderr.split('\n').filter((line) => line.startsWith('note: '));

describe('runRender with cluster state (-f)', () => {
  test('GIVEN a CR and its ConfigMap WHEN rendered THEN exit 0, the children come out and the ConfigMap is not among them', async () => {
    const result = await render([file(cache(), configMap('mode: fast'))]);
    expect(result.code).toBe(0);
    expect(result.objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['StatefulSet default/demo-db', 'Job default/demo-migrate']);
    expect(result.stderr).not.toContain('error:');
  });

  test('GIVEN a CR without uid WHEN rendered THEN its children carry STAND_IN_UID, exactly as renderForSnapshot renders the same CR', async () => {
    const result = await render([file(cache(), configMap('mode: fast'))]);
    expect(result.code).toBe(0);
    for (const object of result.objects) {
      expect(object.metadata.ownerReferences.map((ref: { uid: string }) => ref.uid)).toEqual([STAND_IN_UID]);
      expect(object.metadata.labels['operator.cdk8s.io/owner-uid']).toBe(STAND_IN_UID);
    }
    const [operator] = addOperators(new App());
    const cr = { ...parse(cache()), metadata: { name: 'demo', namespace: 'default' } };
    expect(renderForSnapshot(operator as never, cr, { related: [parse(configMap('mode: fast'))] })).toEqual(result.objects);
  });

  test('GIVEN what `kubectl get -o yaml` prints (a v1 List of the CR and its ConfigMap) WHEN rendered THEN the same as the separate documents', async () => {
    const indent = (doc: string) => doc.trimEnd().split('\n').map((line, i) => (i === 0 ? `- ${line}` : `  ${line}`)).join('\n');
    const list = `apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: ""\nitems:\n${indent(cache())}\n${indent(configMap('mode: fast'))}\n`;
    const fromList = await render([file(list)]);
    const separate = await render([file(cache(), configMap('mode: fast'))]);
    expect(fromList.stderr).not.toContain('error:');
    expect(fromList.code).toBe(0);
    expect(fromList.stdout).toBe(separate.stdout);
    expect(hashOf(fromList)).toMatch(/^[0-9a-f]{16}$/);
    const bad = await render([file(`apiVersion: v1\nkind: List\nitems:\n${indent(cache())}\n- just a string\n`)]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: .*input-\d+\.yaml: document 1, item 2 is not a Kubernetes object \(apiVersion and kind are required\)\n$/);
  });

  test('GIVEN the ConfigMap data differs WHEN rendered THEN the config-hash annotation differs (render used the ConfigMap)', async () => {
    const fast = await render([file(cache()), file(configMap('mode: fast'))]);
    const slow = await render([file(cache()), file(configMap('mode: slow'))]);
    const fastAgain = await render([file(configMap('mode: fast'), cache())]);
    expect([fast.code, slow.code, fastAgain.code]).toEqual([0, 0, 0]);
    expect(hashOf(fast)).toMatch(/^[0-9a-f]{16}$/);
    expect(hashOf(slow)).toMatch(/^[0-9a-f]{16}$/);
    expect(hashOf(slow)).not.toBe(hashOf(fast));
    expect(hashOf(fastAgain)).toBe(hashOf(fast));
    expect(notes(fast)[0]).toBe(`note: Cache default/demo: status {"configHash":"${hashOf(fast)}","readyReplicas":0}`);
  });

  test('GIVEN a ConfigMap without namespace and -n WHEN rendered THEN it is looked up in that namespace, like the CR', async () => {
    const result = await render([file(cache(), configMap('mode: fast', ''))], { namespace: 'team-a' });
    expect(result.stderr).not.toContain('error:');
    expect(result.code).toBe(0);
    expect(result.objects.map((o) => o.metadata.namespace)).toEqual(['team-a', 'team-a']);
    const elsewhere = await render([file(cache(), configMap('mode: fast', 'other'))], { namespace: 'team-a' });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('ConfigMap team-a/settings');
  });

  test('GIVEN a CR in team-a and its ConfigMap without a namespace (so in default) WHEN rendered THEN the error says where the ConfigMap went and how to move it, not "add it with -f"', async () => {
    const result = await render([file(cache('demo', '  namespace: team-a\n'), configMap('mode: fast', ''))]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: render Cache team-a/demo: ConfigMap team-a/settings (spec.configMapRef.name) not found (-f gave ConfigMap settings without a namespace, so it is in default (-n): give it metadata.namespace: team-a, or pass -n team-a)\n');
    const other = await render([file(cache('demo', '  namespace: team-a\n'), configMap('mode: fast', 'other'))]);
    expect(other.stderr).toBe('error: render Cache team-a/demo: ConfigMap team-a/settings (spec.configMapRef.name) not found (-f gave ConfigMap other/settings, in namespace other, not team-a)\n');
  });

  test('GIVEN the ConfigMap missing WHEN rendered THEN exit 1, one error line naming it with a hint, empty stdout', async () => {
    const result = await render([file(cache())]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('error: render Cache default/demo: ConfigMap default/settings (spec.configMapRef.name) not found (add it with -f)\n');
  });

  test('GIVEN no observed StatefulSet WHEN rendered THEN notes: status with 0 ready, requeueAfter 300s, the Job waits for the StatefulSet', async () => {
    const result = await render([file(cache(), configMap('mode: fast'))]);
    expect(result.code).toBe(0);
    expect(notes(result)).toEqual([
      `note: Cache default/demo: status {"configHash":"${hashOf(result)}","readyReplicas":0}`,
      'note: Cache default/demo: requeueAfter 300s',
      'note: Cache default/demo: Job default/demo-migrate waits for StatefulSet default/demo-db',
    ]);
    expect(result.stderr).toBe(notes(result).map((line) => `${line}\n`).join(''));
  });

  test('GIVEN the StatefulSet as it exists, with status WHEN rendered THEN the status note reflects it (and no requeue once all are ready)', async () => {
    const partly = await render([file(cache(), configMap('mode: fast'), statefulSet('demo-db', 1))]);
    expect(partly.code).toBe(0);
    expect(notes(partly)).toContain(`note: Cache default/demo: status {"configHash":"${hashOf(partly)}","readyReplicas":1}`);
    expect(notes(partly)).toContain('note: Cache default/demo: requeueAfter 300s');

    const ready = await render([file(cache(), configMap('mode: fast')), file(statefulSet('demo-db', 2))]);
    expect(ready.code).toBe(0);
    expect(notes(ready)).toContain(`note: Cache default/demo: status {"configHash":"${hashOf(ready)}","readyReplicas":2}`);
    expect(notes(ready).some((line) => line.includes('requeueAfter'))).toBe(false);
    // the observed object is state, not output: only the rendered children come out
    expect(ready.objects.map((o) => o.kind)).toEqual(['StatefulSet', 'Job']);
    expect(ready.objects[0].status).toBeUndefined();
  });

  test('GIVEN StatefulSets that are not this CR\'s child (other name, other namespace) WHEN rendered THEN they are not observed', async () => {
    const result = await render([file(cache(), configMap('mode: fast'), statefulSet('other-db', 2), statefulSet('demo-db', 2, 'elsewhere'))]);
    expect(result.code).toBe(0);
    expect(notes(result)).toContain(`note: Cache default/demo: status {"configHash":"${hashOf(result)}","readyReplicas":0}`);
  });

  test('GIVEN two CRs and one StatefulSet WHEN rendered THEN each CR observes only its own child', async () => {
    const result = await render([file(cache('a'), cache('b'), configMap('mode: fast'), statefulSet('b-db', 2))]);
    expect(result.code).toBe(0);
    expect(notes(result).filter((line) => line.includes(': status '))).toEqual([
      `note: Cache default/a: status {"configHash":"${hashOf(result)}","readyReplicas":0}`,
      `note: Cache default/b: status {"configHash":"${hashOf(result)}","readyReplicas":2}`,
    ]);
    expect(result.objects.map((o) => o.metadata.name)).toEqual(['a-db', 'a-migrate', 'b-db', 'b-migrate']);
  });

  test('GIVEN documents that are neither CRs nor referenced WHEN rendered THEN they are accepted and ignored', async () => {
    const plain = await render([file(cache(), configMap('mode: fast'))]);
    const unrelated = [
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: unrelated\nstringData:\n  token: x\n',
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec: {}\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other-config\ndata:\n  mode: slow\n',
    ];
    const noisy = await render([file(unrelated[0], cache()), file(...unrelated.slice(1), configMap('mode: fast'))]);
    expect(noisy.code).toBe(0);
    expect(noisy.stderr).not.toContain('error:');
    expect(noisy.stdout).toBe(plain.stdout);
    expect(noisy.stderr).toBe(plain.stderr);
  });

  test('GIVEN state on stdin and -o json WHEN rendered THEN one v1 List of the children, notes on stderr', async () => {
    const result = await render([file(cache()), '-'], { output: 'json' }, configMap('mode: fast'));
    expect(result.code).toBe(0);
    const list = JSON.parse(result.stdout);
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map((o: { kind: string }) => o.kind)).toEqual(['StatefulSet', 'Job']);
    expect(notes(result)).toHaveLength(3);
  });

  test('GIVEN only state, no custom resource WHEN rendered THEN exit 1 with the known kinds', async () => {
    const result = await render([file(configMap('mode: fast'), statefulSet('demo-db', 2))]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('error: no custom resource in the input (no operator for kind ConfigMap (v1), StatefulSet (apps/v1)); known kinds: Cache (render.example.com/v1)\n');
    const empty = await render([file('')]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe('error: no custom resource in the input (the input is empty); known kinds: Cache (render.example.com/v1)\n');
  });

  test('GIVEN --operator WHEN rendered THEN documents of its kind in any version are its CRs and the others are state', async () => {
    const result = await render([file(cache('demo').replace('render.example.com/v1', 'render.example.com/v1beta1'), configMap('mode: fast'))], { operator: 'cache-operator' });
    // the version differs from the CRD's: it is taken as a Cache (and rejected by validation), not ignored as state
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: Cache\/demo: apiVersion/);
    const ok = await render([file(cache('demo'), configMap('mode: fast'))], { operator: 'cache-operator' });
    expect(ok.code).toBe(0);
    expect(ok.objects).toHaveLength(2);
  });

  test('GIVEN a state document without metadata.name WHEN rendered THEN exit 1 naming the document', async () => {
    const path = file(cache(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\ndata: {}\n');
    const result = await render([path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: ${path}: document 2 (ConfigMap v1) has no metadata.name\n`);
  });
});

test('GIVEN an operator whose render throws WHEN rendered THEN the error line starts with the module\'s file:line of the throw, exit 1', async () => {
  let stderr = '';
  const code = await runRender({ module: 'test/cli/fixtures/throwing-render-operator.ts', filename: [file(`apiVersion: throwing.example.com/v1
kind: Shard
metadata:
  name: broken
spec:
  shards: 0
`)] }, {
    cwd: root,
    readStdin: async () => '',
    writeStdout: () => undefined,
    writeStderr: (text) => { stderr += text; },
  });
  expect(code).toBe(1);
  expect(stderr).toBe(`error: ${join(root, 'test/cli/fixtures/throwing-render-operator.ts')}:10:30: render Shard default/broken: render() threw: spec.shards must be at least 1, got 0\n`);
});
