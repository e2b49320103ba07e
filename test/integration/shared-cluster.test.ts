import { ApiClient } from '../../lib/runtime/client/api-client.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';

test('GIVEN the run-wide control plane WHEN a test asks for a namespace THEN it gets a fresh one with a ready fake node', async () => {
  const client = new ApiClient({ kubeConfig: testKubeConfig() });
  const ns = await createTestNamespace('shared');
  const got = await client.request<{ metadata: { name: string } }>('GET', `/api/v1/namespaces/${ns}`);
  expect(got.metadata.name).toBe(ns);
  const nodes = await client.request<{ items: { status: { conditions: { type: string; status: string }[] } }[] }>('GET', '/api/v1/nodes');
  expect(nodes.items.some((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'))).toBe(true);
  client.close();
});
