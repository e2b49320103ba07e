/**
 * `npm run generate:keyed-lists`: regenerates lib/operator/schema/keyed-lists.generated.ts, the keyed-list
 * table of the built-in kinds, from the OpenAPI v3 of the local control plane.
 *
 * Steps: `tools/control-plane/build.sh` (builds or reuses the pinned binaries, k8s.io/kubernetes in
 * tools/control-plane/kube/go.mod; KUBEBUILDER_ASSETS is ignored so the table always comes from the
 * pinned version), start etcd and kube-apiserver only (lib/testing/control-plane.ts), derive the table
 * (keyed-lists/openapi-keyed-lists.ts), write the file (keyed-lists/keyed-lists-file.ts,
 * deterministic: on the same Kubernetes version the file comes out byte-identical), stop the plane.
 *
 * Run after bumping the Kubernetes version in tools/control-plane/kube/go.mod, or when
 * test/integration/server-limits-differential.test.ts says the table differs from the server.
 * Takes a few seconds with built binaries (a cold build.sh takes minutes). Exits 1 on any error.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { runControlPlaneBuild } from '../lib/testing/control-plane-binaries.js';
import { startControlPlane } from '../lib/testing/control-plane.js';
import { KEYED_LISTS_FILE, liveKeyedListsFile } from './keyed-lists/keyed-lists-file.js';

const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const env = { ...process.env };
  delete env.KUBEBUILDER_ASSETS;
  const binDir = await runControlPlaneBuild({ log, env });
  const plane = await startControlPlane({ binDir, components: { controllerManager: false, scheduler: false, kwok: false } });
  try {
    const { schema, kubernetesVersion, text } = await liveKeyedListsFile(plane.kubeConfig);
    const path = join(repositoryRoot, KEYED_LISTS_FILE);
    const before = await readFile(path, 'utf8').catch(() => undefined);
    await writeFile(path, text);
    const counts = `${Object.keys(schema.kinds).length} kinds, ${Object.keys(schema.definitions).length} definitions`;
    console.log(`${KEYED_LISTS_FILE}: ${before === text ? 'unchanged' : 'written'} (${counts}, from kube-apiserver ${kubernetesVersion})`);
  } finally {
    await plane.stop();
  }
}

main().catch((err: unknown) => {
  console.error(`generate-keyed-lists: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
