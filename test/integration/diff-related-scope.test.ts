/**
 * `cdk8s-operator diff` sees a related kind through the declaration's `scope`, as the runtime's cache
 * does, against the shared control plane: a CR names a ConfigMap that exists but lacks the scope's label,
 * so diff fails as the runtime would wait (ReferenceNotFound, naming the scope); once the ConfigMap
 * carries the label, diff renders with its data. The scoped read is a LIST the API server filters with
 * the scope's label selector and `metadata.name`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { EXIT_CHANGES, EXIT_FAILED, runDiff } from '../../lib/cli/diff-command.js';
import { ApiClient, type RequestRecord } from '../../lib/runtime/client/api-client.js';
import { installCRDs } from '../../lib/testing/control-plane.js';
import { TEST_KUBECONFIG_ENV, createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { addOperators } from './fixtures/scoped-copier-operators.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = 'test/integration/fixtures/scoped-copier-operators.ts';
const [copier] = addOperators(new App());

let admin: ApiClient;
let dir: string;
let ns: string;

beforeAll(async () => {
  const kubeConfig = testKubeConfig();
  admin = new ApiClient({ kubeConfig, userAgent: 'diff-related-scope-test' });
  dir = await mkdtemp(join(tmpdir(), 'diff-related-scope-'));
  const file = join(dir, 'crd.json');
  await writeFile(file, JSON.stringify(copier.customResourceDefinition.toJson()));
  await installCRDs(kubeConfig, [file]);
  ns = await createTestNamespace('diff-scope', admin);
  await admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { color: 'blue' } } });
  await admin.request('POST', `/apis/scoped.example.com/v1/namespaces/${ns}/scopedcopies`, {
    body: { apiVersion: 'scoped.example.com/v1', kind: 'ScopedCopy', metadata: { name: 'c', namespace: ns }, spec: { configMapName: 'settings' } },
  });
}, 5 * 60_000);

afterAll(async () => {
  admin?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function diff(): Promise<{ code: number; stdout: string; stderr: string; records: RequestRecord[] }> {
  let stdout = '';
  let stderr = '';
  const records: RequestRecord[] = [];
  const code = await runDiff({ module: MODULE, kubeconfig: process.env[TEST_KUBECONFIG_ENV], namespace: ns }, {
    cwd: root,
    readStdin: async () => '',
    writeStdout: (text) => { stdout += text; },
    writeStderr: (text) => { stderr += text; },
    onRequest: (record) => records.push(record),
  });
  return { code, stdout, stderr, records };
}

test('GIVEN a named ConfigMap without the scope label WHEN diff runs THEN it fails as the runtime would wait: not found, or outside the scope; with the label THEN it renders its data', async () => {
  const hidden = await diff();
  expect(hidden.code).toBe(EXIT_FAILED);
  expect(hidden.stderr).toContain(`ConfigMap ${ns}/settings (spec.configMapName) not found, or outside related.source.scope (labelSelector "team=a")`);
  // Read by a LIST of the namespace's ConfigMaps (filtered by the server), not a GET of the name.
  expect(hidden.records.some((r) => r.method === 'GET' && r.path === `/api/v1/namespaces/${ns}/configmaps`)).toBe(true);
  expect(hidden.records.some((r) => r.path === `/api/v1/namespaces/${ns}/configmaps/settings`)).toBe(false);

  await admin.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/settings`, {
    body: { metadata: { labels: { team: 'a' } } },
    contentType: 'application/merge-patch+json',
  });
  const visible = await diff();
  expect(visible.code).toBe(EXIT_CHANGES);
  expect(visible.stdout).toContain(`ConfigMap ${ns}/c-copy`);
  expect(visible.stdout).toContain('color: blue');
}, 120_000);
