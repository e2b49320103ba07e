/**
 * A kubeconfig user's `tokenFile` (client-go's key) and `token-file` (client-node's) are read at request
 * time and read again as the file changes, once `cdk8s-operator run` loaded the kubeconfig.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../lib/cli/kubeconfig-loader.js';
import { ClientCredentials } from '../../lib/runtime/client/client-credentials.js';
import { ManualClock } from '../../lib/runtime/clock.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-token-file-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kubeconfigWithUser(name: string, user: Record<string, unknown>): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

// client-node itself reads `token-file` once while loading, relative to the working directory: only an
// absolute `token-file` loads at all.
test.each([
  { key: 'tokenFile', relative: true },
  { key: 'token-file', relative: false },
])('GIVEN a user with $key (relative path: $relative) THEN each read of the rotated file is what requests send', async ({ key, relative }) => {
  const tokenPath = join(dir, `token-${key}`);
  await writeFile(tokenPath, 'first\n');
  const value = relative ? `token-${key}` : tokenPath;
  const kc = await loadKubeConfig(await kubeconfigWithUser(key, { [key]: value }), {});
  const clock = new ManualClock();
  const credentials = new ClientCredentials(kc, { clock });
  expect((await credentials.current()).headers.Authorization).toBe('Bearer first');

  await writeFile(tokenPath, 'second\n');
  clock.advance(50_000);
  expect((await credentials.current()).headers.Authorization).toBe('Bearer second');
});

test('GIVEN a user with both token and tokenFile THEN token wins, as in client-go', async () => {
  await writeFile(join(dir, 'unused-token'), 'from-file');
  const kc = await loadKubeConfig(await kubeconfigWithUser('both', { token: 'inline', tokenFile: 'unused-token' }), {});
  const credentials = new ClientCredentials(kc, { clock: new ManualClock() });
  expect((await credentials.current()).headers.Authorization).toBe('Bearer inline');
});

test('GIVEN a tokenFile that does not exist THEN the first request fails naming the user and the path', async () => {
  const kc = await loadKubeConfig(await kubeconfigWithUser('missing', { tokenFile: 'no-such-token' }), {});
  const credentials = new ClientCredentials(kc, { clock: new ManualClock() });
  await expect(credentials.current()).rejects.toThrow(`user "u" tokenFile ${join(dir, 'no-such-token')}: ENOENT`);
});
