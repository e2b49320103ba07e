/**
 * ResourceClient.delete against the API server: a dry run stays a dry run when DeleteOptions go in the
 * body (the server reads a DELETE's options from the body when there is one, not from the query).
 */
import { ResourceClient } from '../../lib/runtime/client/resource-client.js';
import type { ResourceRef } from '../../lib/runtime/client/resource-path.js';
import { useApiServerOnly } from '../support/api-server-only.js';

const env = useApiServerOnly('rc-delete');
const CONFIG_MAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };

test('GIVEN a ConfigMap WHEN deleted as a dry run with and without DeleteOptions THEN it is still there, and a real delete with a UID precondition removes it', async () => {
  const resources = new ResourceClient(env.admin);
  const created = await resources.create(CONFIG_MAPS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep', namespace: env.namespace }, data: { a: '1' } });
  const uid = created.metadata!.uid!;

  await resources.delete(CONFIG_MAPS, env.namespace, 'keep', { dryRun: true });
  await resources.delete(CONFIG_MAPS, env.namespace, 'keep', { dryRun: true, propagationPolicy: 'Background', uid });
  const still = await resources.getIfExists(CONFIG_MAPS, env.namespace, 'keep');
  expect(still?.metadata?.uid).toBe(uid);

  await resources.delete(CONFIG_MAPS, env.namespace, 'keep', { propagationPolicy: 'Background', uid });
  expect(await resources.getIfExists(CONFIG_MAPS, env.namespace, 'keep')).toBeUndefined();
});
