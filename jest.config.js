// Jest runs the TypeScript sources as ESM (client-node 1.4 is ESM-only): ts-jest's ESM preset under
// NODE_OPTIONS=--experimental-vm-modules (see docs/contributing.md, "Tests").
//
// The built-in kinds' validator (tools/validator/build.sh: WebAssembly, built once into the same cache)
// is what renderForSnapshot and `render` check children with; its path goes to the tests in
// CDK8S_OPERATOR_VALIDATOR_WASM. Without it (no Go) the run fails: every render needs it.
//
// Integration tests (test/integration/) need the local control plane's binaries. This config builds
// them, or reuses the cache, through tools/control-plane/build.sh before any test starts; a cold
// build takes minutes and prints its progress. Without Go on PATH, or with
// CDK8S_OPERATOR_SDK_BINARIES=download, it downloads them instead (lib/testing/control-plane-download.ts,
// docs/concepts/testing.md, "Control-plane binaries"). When that fails:
//   - with CI=true the whole run fails (integration tests never skip silently in CI);
//   - elsewhere the integration tests are left out, with one loud line saying so.
//
// CDK8S_OPERATOR_TEST_KUBERNETES_VERSION=<minor> (e.g. 1.35) runs the control plane of that minor of the
// tested range instead of the newest (build.sh --kubernetes-version; docs/reference/kubernetes-versions.md).
// `npm run test:oldest` uses it for the suites that depend on the server's behaviour. Read here only.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathsToModuleNameMapper } from 'ts-jest';

// The package's self-reference (`import … from 'cdk8s-operator-sdk'` in operators/ and tests) resolves to
// the TypeScript sources, as tsconfig.json's `paths` say for tsc and tsx: the same module instances as a
// relative import of lib/ (test/layout/self-reference.test.ts).
const selfReference = pathsToModuleNameMapper(JSON.parse(readFileSync(new URL('./tsconfig.json', import.meta.url), 'utf8')).compilerOptions.paths, { prefix: '<rootDir>/' });

/** lib/testing/control-plane-binaries.ts, loaded through tsx as test/support/global-setup.js loads the sources. */
async function binariesModule() {
  const { register } = await import('tsx/esm/api');
  register();
  return await import('./lib/testing/control-plane-binaries.ts');
}

async function controlPlaneBinDir() {
  const binaries = await binariesModule();
  const kubernetesVersion = process.env.CDK8S_OPERATOR_TEST_KUBERNETES_VERSION || undefined;
  if (binaries.binariesSource(process.env) === 'download') {
    try {
      // The downloaded dir holds all five, even when etcd and kube-apiserver come from KUBEBUILDER_ASSETS.
      return dirname((await binaries.resolveControlPlaneBinaries({ kubernetesVersion })).kubeControllerManager);
    } catch (err) {
      if (process.env.CI === 'true') throw new Error(`CI=true and the control-plane binaries could not be downloaded: ${err.message}`, { cause: err });
      console.error(`\n!!! INTEGRATION TESTS LEFT OUT: no control-plane binaries (${err.message}). Install Go >= 1.26 or set KUBEBUILDER_ASSETS; see docs/concepts/testing.md, "Control-plane binaries".\n`);
      return undefined;
    }
  }
  const build = spawnSync('bash', ['tools/control-plane/build.sh', ...(kubernetesVersion ? ['--kubernetes-version', kubernetesVersion] : [])], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const lines = (build.stdout ?? '').trim().split('\n');
  if (build.status === 0 && lines.at(-1)) return lines.at(-1);
  const why = build.error ? build.error.message : `tools/control-plane/build.sh exited ${build.status}`;
  if (process.env.CI === 'true') throw new Error(`CI=true and the control-plane binaries are missing: ${why}`);
  console.error(`\n!!! INTEGRATION TESTS LEFT OUT: no control-plane binaries (${why}). Install Go >= 1.26 or set KUBEBUILDER_ASSETS; see docs/concepts/testing.md.\n`);
  return undefined;
}

function validatorWasm() {
  if (process.env.CDK8S_OPERATOR_VALIDATOR_WASM) return process.env.CDK8S_OPERATOR_VALIDATOR_WASM;
  const build = spawnSync('bash', ['tools/validator/build.sh'], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const file = (build.stdout ?? '').trim().split('\n').at(-1);
  if (build.status === 0 && file) return file;
  throw new Error(`cannot build the built-in kinds' validator: ${build.error ? build.error.message : `tools/validator/build.sh exited ${build.status}`} (Go >= 1.26 is needed; see docs/concepts/testing.md)`);
}

export default async () => {
  process.env.CDK8S_OPERATOR_VALIDATOR_WASM = validatorWasm();
  const binDir = await controlPlaneBinDir();
  if (binDir) process.env.CDK8S_OPERATOR_TEST_BIN_DIR = binDir;
  // One directory per run, for what test files share (test/support/once-per-run.ts: the SDK tarball,
  // installed consumer projects).
  if (!process.env.CDK8S_OPERATOR_TEST_RUN_DIR) {
    const runDir = mkdtempSync(join(tmpdir(), 'cdk8s-operator-test-run-'));
    process.env.CDK8S_OPERATOR_TEST_RUN_DIR = runDir;
    process.on('exit', () => rmSync(runDir, { recursive: true, force: true }));
  }
  return {
    preset: 'ts-jest/presets/default-esm',
    testEnvironment: 'node',
    // Default for tests and hooks that set none. A guard against hangs, not a timing assertion: on a busy
    // 2-core machine a hook that starts processes or removes an installed project takes well over
    // jest's 5 s default.
    testTimeout: 120_000,
    // Test files run in a worker process, restarted after a file that leaves it above 1 GB, never in
    // jest's own process. On a 2-core machine jest would otherwise run all 230 files in band, in one
    // process whose ESM module graphs and validator instances (66 MB of WebAssembly each) pile up; CI
    // once died there of a SIGSEGV inside Node with no file named (stop 45, 2026-12-05). In a worker a
    // crash fails the file it ran in, by name, and the other files still run.
    workerIdleMemoryLimit: '1GB',
    // The default reporter, plus one that names the files still running every 5 minutes and, should jest
    // not exit after the run (an open handle), prints what keeps it alive and exits with the run's result.
    reporters: ['default', '<rootDir>/test/support/progress-reporter.js'],
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.test.ts'],
    // test/consumers/ holds consumer projects with tests of their own; they run in those projects.
    testPathIgnorePatterns: binDir ? ['/node_modules/', '/test/consumers/'] : ['/node_modules/', '/test/consumers/', '/test/integration/'],
    modulePathIgnorePatterns: ['<rootDir>/test/consumers/'],
    moduleNameMapper: { ...selfReference, '^(\\.{1,2}/.*)\\.js$': '$1' },
    transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
    globalSetup: binDir ? '<rootDir>/test/support/global-setup.js' : undefined,
    globalTeardown: binDir ? '<rootDir>/test/support/global-teardown.js' : undefined,
  };
};
