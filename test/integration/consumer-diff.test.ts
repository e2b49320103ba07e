/**
 * `cdk8s-operator diff` from a user's own project (the SDK installed from its tarball; the CommonJS
 * `cdk8s init`-shaped one and the ESM one), against the run's shared control plane: it renders the
 * project's own operator module, dry-runs each child, prints what would be created, exits 1, and writes
 * nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { TEST_KUBECONFIG_ENV, createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { consumerProject, runIn } from '../support/consumer-project.js';

interface Consumer {
  readonly name: string;
  readonly module: string;
  readonly sample: string;
  readonly kind: string;
  /** The children the sample renders to: kind, name and their collection path under the namespace. */
  readonly children: readonly { kind: string; name: string; collection: string }[];
}

const CONSUMERS: Consumer[] = [
  {
    name: 'cdk8s-init-app',
    module: 'static-site-operator.ts',
    sample: 'site.yaml',
    kind: 'StaticSite',
    children: [
      { kind: 'Deployment', name: 'hello-web', collection: 'apis/apps/v1' },
      { kind: 'Service', name: 'hello-web-service', collection: 'api/v1' },
    ],
  },
  {
    name: 'esm-lowest-peers',
    module: 'greeting-operator.ts',
    sample: 'greeting.yaml',
    kind: 'Greeting',
    children: [{ kind: 'ConfigMap', name: 'hello-greetings', collection: 'api/v1' }],
  },
];

let admin: ApiClient;
beforeAll(() => {
  admin = new ApiClient({ kubeConfig: testKubeConfig(), userAgent: 'consumer-diff-test' });
});
afterAll(() => admin?.close());

describe.each(CONSUMERS)('consumer project $name', (consumer) => {
  test('GIVEN its sample CR in a namespace of the cluster WHEN `cdk8s-operator diff --module -f --kubeconfig` runs THEN it lists each child as a create, exits 1, and nothing was created', async () => {
    const dir = await consumerProject(consumer.name);
    const ns = await createTestNamespace('consumer-diff', admin);
    const sample = parseDocument(readFileSync(join(dir, consumer.sample), 'utf8'));
    sample.setIn(['metadata', 'namespace'], ns);
    const file = `diff-${ns}.yaml`;
    writeFileSync(join(dir, file), sample.toString());

    const result = await runIn(dir, 'npx', ['cdk8s-operator', 'diff', '--module', consumer.module, '-f', file, '--kubeconfig', process.env[TEST_KUBECONFIG_ENV]!]);

    expect({ code: result.code, stderr: result.stderr.split('\n').filter(Boolean).sort() }).toEqual({
      code: 1,
      stderr: consumer.children.map((c) => `${consumer.kind} ${ns}/hello: create ${c.kind} ${ns}/${c.name}`).sort(),
    });
    for (const child of consumer.children) {
      expect(result.stdout).toContain(`--- ${child.kind} ${ns}/${child.name} (absent)\n+++ ${child.kind} ${ns}/${child.name} (after apply)\n`);
      const plural = `${child.kind.toLowerCase()}s`;
      await expect(admin.request('GET', `/${child.collection}/namespaces/${ns}/${plural}/${child.name}`)).rejects.toMatchObject({ code: 404 });
    }
  }, 20 * 60_000);
});
